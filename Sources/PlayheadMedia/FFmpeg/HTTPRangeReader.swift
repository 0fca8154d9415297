internal import CFFmpeg
import Glibc

/// An HTTP(S) file read through bounded range requests: each request is opened with FFmpeg's
/// own HTTP protocol (`offset`/`end_offset`), and ``RangePlan`` decides which range comes next
/// and what a failed one gets. The demuxer reads it through custom I/O (``InputIO/http(_:)``).
///
/// Why not FFmpeg's HTTP context alone: its requests are open-ended (a seek abandons whatever the
/// network had in flight of the rest of the file), and its reconnects have no budget of their
/// own (a server that ignores `Range` and overstates its length made it send hundreds of requests
/// a second). See docs/decisions/ (HTTP range requests).
///
/// Not `Sendable`: used by the thread that owns its format context. Its waits and reads end when
/// `relay` says so (a cancellation, the open timeout, the stall watchdog).
final class HTTPRangeReader {
    private let location: [CChar]
    private let name: String
    private let relay: InterruptRelay
    private let stallMicroseconds: Int64?
    private var plan: RangePlan
    /// The request being read, the position of its next byte, and where it ends.
    private var connection: UnsafeMutablePointer<AVIOContext>?
    private var connectionPosition: Int64 = 0
    private var connectionEnd: Int64?
    /// Where the request being read began delivering (for an answer that stops short).
    private var connectionFirst: Int64 = 0
    /// Where the demuxer reads next.
    private var position: Int64 = 0
    /// Why the source failed, when it did: requests that kept failing (every read after fails
    /// at once), or answers that stop before the announced end (reads past it fail at once).
    private(set) var failure: PlayheadError?
    private var gaveUp = false
    /// Requests made so far.
    private(set) var requests = 0
    private var scratch = [UInt8](repeating: 0, count: 64 << 10)

    init(location: [UInt8], name: String, relay: InterruptRelay, options: AssetOptions) {
        self.location = location.map { CChar(bitPattern: $0) } + [0]
        self.name = name
        self.relay = relay
        stallMicroseconds = options.stallTimeout.map { max(1, SourceOptions.microseconds($0)) }
        plan = RangePlan(longestWait: min(options.reconnectDelayLimit, options.stallTimeout ?? options.reconnectDelayLimit))
    }

    deinit { close() }

    /// The file's size, once an answer told it.
    var size: Int64? { plan.size }

    /// Makes the first request (from byte 0). Returns 0, or FFmpeg's error for the open (a
    /// refused connection, an HTTP error status), which the caller reports as an open error.
    func open() -> Int32 {
        guard let request = plan.request(at: 0) else { return FFmpegError.eof }
        return connect(request)
    }

    // MARK: Custom I/O

    /// Up to `count` bytes from the position on; 0 bytes never (EOF instead).
    func read(into data: UnsafeMutablePointer<UInt8>, count: Int32) -> Int32 {
        while true {
            if relay.shouldInterrupt { return FFmpegError.exit }
            if gaveUp { return playhead_averror(EIO) }
            if let end = connectionEnd ?? plan.size, connection != nil, connectionPosition >= end { close() }
            if connection == nil || connectionPosition != position {
                close()
                guard let request = plan.request(at: position) else {
                    if let known = plan.knownEnd, position >= known { return endedEarly(at: known) }
                    return FFmpegError.eof
                }
                let opened = connect(request)
                if opened == FFmpegError.exit { return opened }
                if gaveUp { return playhead_averror(EIO) }
                if opened < 0 {
                    // A range refused (416 and other 4xx) where the data stopped: nothing is there.
                    let refused = request.start > 0 && HTTPStatus.isClientError(opened)
                    if let outcome = failed(closedEarly: refused, result: opened) { return outcome }
                    continue
                }
                if connectionPosition < position, let outcome = skipToPosition() { return outcome }
                if connection == nil { continue }
            }
            guard let connection else { continue }
            var wanted = count
            if let end = connectionEnd { wanted = Int32(min(Int64(count), end - connectionPosition)) }
            let got = avio_read_partial(connection, data, wanted)
            if got > 0 {
                position += Int64(got)
                connectionPosition += Int64(got)
                plan.delivered(upTo: position)
                return got
            }
            if got == FFmpegError.exit { return got }
            // The end of the request's range, or of a file that gave no size: the data's end.
            if got == 0 || got == FFmpegError.eof {
                if let end = connectionEnd ?? plan.size, connectionPosition >= end {
                    close()
                    if let size = plan.size, position >= size { return FFmpegError.eof }
                    continue
                }
                if connectionEnd == nil, plan.size == nil {
                    close()
                    return FFmpegError.eof
                }
            }
            // Cut short: closed before the promised bytes (FFmpeg says EIO, "ends prematurely"),
            // or an error on the connection.
            let delivered = connectionPosition - connectionFirst
            close()
            let closedEarly = got == 0 || got == FFmpegError.eof || got == playhead_averror(EIO)
            let outcome =
                closedEarly
                ? settle(plan.endedShort(at: position, delivered: delivered), result: got)
                : failed(closedEarly: false, result: got)
            if let outcome { return outcome }
        }
    }

    /// Moves the position (`whence` as for `lseek`, or `AVSEEK_SIZE`): the next read asks for a
    /// new range unless the request open now is already there.
    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let target = CustomSeek.target(offset, whence: whence, position: position, size: plan.size)
        if target >= 0, whence & AVSEEK_SIZE == 0 { position = target }
        return target
    }

    // MARK: Requests

    /// Opens `request` with FFmpeg's HTTP protocol. Returns 0 or FFmpeg's error.
    private func connect(_ request: RangePlan.Request) -> Int32 {
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "offset", String(request.start), 0)
        if let end = request.end { av_dict_set(&options, "end_offset", String(end), 0) }
        if let stallMicroseconds { av_dict_set(&options, "rw_timeout", String(stallMicroseconds), 0) }
        // Reconnecting is ours (the plan's budget), not the protocol's.
        av_dict_set(&options, "reconnect", "0", 0)
        var callback = relay.callback
        var opened: UnsafeMutablePointer<AVIOContext>?
        requests += 1
        let result = location.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return playhead_averror(EINVAL) }
            return avio_open2(&opened, base, AVIO_FLAG_READ, &callback, &options)
        }
        guard result >= 0, let opened else {
            // A range answered with the whole file: FFmpeg's protocol refuses the answer (the
            // offset it got is not the one asked for). Read from the start from now on.
            if request.start > 0, result == playhead_averror(EPERM), !plan.ignoresRanges {
                plan.rangesIgnored()
                return plan.request(at: position).map(connect) ?? FFmpegError.eof
            }
            if result == playhead_averror(EPERM) {
                // Not the bytes asked for, and not the whole file either (a Content-Range from
                // another offset): nothing it sends can be placed.
                gaveUp = true
                failure = PlayheadError(
                    code: .readFailed, message: "the server answered a request for bytes from \(request.start) with bytes from elsewhere",
                    file: name, cause: FFmpegError.cause("avio_open2", result))
            }
            return result < 0 ? result : playhead_averror(EIO)
        }
        connection = opened
        connectionPosition = request.start
        // Bytes before the position (skipped from a server that ignores ranges) are no progress.
        connectionFirst = max(request.start, position)
        connectionEnd = request.end
        let size = avio_size(opened)
        if size > 0, let known = plan.size, size != known, !plan.ignoresRanges {
            // Another file now answers at the URL: what was read of the first cannot be pieced
            // together with it.
            close()
            gaveUp = true
            failure = PlayheadError(
                code: .readFailed, message: "the file changed on the server while it was read (its size went from \(known) to \(size) bytes)",
                file: name)
            return playhead_averror(EIO)
        }
        if size > 0, request.start == 0 || plan.size == nil { plan.learned(size: size) }
        return 0
    }

    /// Reads and drops what a request from the start brings before the position (a server that
    /// ignores ranges). Returns nil when the position was reached, else what `read` returns.
    private func skipToPosition() -> Int32? {
        while let connection, connectionPosition < position {
            if relay.shouldInterrupt { return FFmpegError.exit }
            let wanted = Int32(min(Int64(scratch.count), position - connectionPosition))
            let got = scratch.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { avio_read_partial(connection, $0, wanted) } ?? playhead_averror(EINVAL)
            }
            if got > 0 {
                connectionPosition += Int64(got)
                continue
            }
            if got == FFmpegError.exit { return got }
            close()
            let closedEarly = got == 0 || got == FFmpegError.eof || got == playhead_averror(EIO)
            // The bytes skipped were delivered once already: a failure here is one at the position.
            return failed(closedEarly: closedEarly, result: got)
        }
        return nil
    }

    /// A request failed: waits and returns nil to try again, or gives up (returns the error for
    /// the read).
    private func failed(closedEarly: Bool, result: Int32) -> Int32? {
        settle(plan.failed(at: position, closedEarly: closedEarly), result: result)
    }

    /// Carries out what the plan said after a failure: nil to try again (after its wait), else
    /// what the read returns.
    private func settle(_ decision: RangePlan.AfterFailure, result: Int32) -> Int32? {
        switch decision {
        case .retry(let wait):
            return pause(wait) ? nil : FFmpegError.exit
        case .giveUp(.endsEarly(let at, _)):
            return endedEarly(at: at)
        case .giveUp(.keepsFailing(let failures)):
            gaveUp = true
            let unreachable = [FFmpegError.connectionRefused, FFmpegError.hostUnreachable, FFmpegError.networkUnreachable].contains(result)
            failure = PlayheadError(
                code: unreachable ? .connectionFailed : .readFailed,
                message: "the server failed \(failures) requests in a row (last: \(FFmpegError.text(result))): giving up",
                file: name, cause: FFmpegError.cause("avio_open2", result))
            return playhead_averror(EIO)
        }
    }

    /// The server's answers stop at `at`: the end of the data when no size was announced
    /// (nothing is missing), else the file was cut there.
    private func endedEarly(at: Int64) -> Int32 {
        guard plan.size != nil else { return FFmpegError.eof }
        let announced = plan.size.map { " of the \($0) it announced" } ?? ""
        failure = PlayheadError(
            code: .truncated,
            message: "the server ends the file at byte \(at)\(announced): each request for the rest was closed early or refused",
            file: name)
        return playhead_averror(EIO)
    }

    /// Waits `duration` in short slices; false when the wait was interrupted.
    private func pause(_ duration: Duration) -> Bool {
        var left = SourceOptions.microseconds(duration)
        while left > 0 {
            if relay.shouldInterrupt { return false }
            let slice = min(left, 10_000)
            usleep(UInt32(slice))
            left -= slice
        }
        return !relay.shouldInterrupt
    }

    private func close() {
        guard connection != nil else { return }
        avio_closep(&connection)
    }
}
