internal import CFFmpeg
import Foundation

/// A local source that is a stream rather than a file — a FIFO, a character device, standard
/// input (`-`, `pipe:N`) — read through our own descriptor, never through a blocking `open(2)` or
/// `read(2)` inside FFmpeg: a FIFO nobody writes to would block the open in the kernel, where
/// neither the open timeout nor a cancellation can reach it, and a writer that falls silent would
/// block a read for ever.
///
/// The FIFO is opened non-blocking (which never waits for a writer), and every read first polls
/// the descriptor in slices of ``slice``, asking the interrupt relay between slices: so the open
/// timeout, the stall timeout (no byte for that long: `ETIMEDOUT`) and a cancellation all end a
/// wait within a slice. A read happens only once poll says data or a hang-up is there, so it never
/// blocks, whatever the descriptor's own flags (standard input's are left as they are: the
/// description is shared with the shell).
///
/// Not `Sendable`: called by FFmpeg on the thread that owns the format context.
final class StreamDescriptor {
    /// How long one poll waits before the relay is asked again.
    static let slice: Int32 = 50
    let descriptor: Int32
    private let owned: Bool
    private let relay: InterruptRelay
    private let stallNanos: UInt64?
    /// The wait for bytes ran past the stall timeout.
    private(set) var stalled = false

    private init(descriptor: Int32, owned: Bool, relay: InterruptRelay, stall: Duration?) {
        self.descriptor = descriptor
        self.owned = owned
        self.relay = relay
        stallNanos = stall.map(SourceOptions.nanoseconds)
    }

    deinit {
        if owned { close(descriptor) }
    }

    /// The descriptor `input` names when it is a stream: `pipe:` / `pipe:N` (standard input or
    /// an inherited descriptor, not ours to close), or a path to a FIFO or a character device
    /// (opened here, non-blocking). Nil for anything else (files, URLs), which FFmpeg's
    /// protocols open. Throws the open's error for a stream that cannot be opened.
    static func open(_ input: MediaInput, relay: InterruptRelay, stall: Duration?) throws(PlayheadError) -> StreamDescriptor? {
        switch stream(named: input) {
        case nil:
            return nil
        case .inherited(let descriptor):
            return StreamDescriptor(descriptor: descriptor, owned: false, relay: relay, stall: stall)
        case .node(let kind):
            return try openNode(input, kind: kind, relay: relay, stall: stall)
        }
    }

    /// The stream a local input names, looked at (`stat`) but not opened.
    enum Named {
        /// `pipe:` / `pipe:N`: a descriptor this process inherited.
        case inherited(Int32)
        /// A path to a FIFO or a character device (its `st_mode & S_IFMT`).
        case node(mode_t)
    }

    /// Which stream `input` names; nil for a caller's bytes, files and URLs.
    static func stream(named input: MediaInput) -> Named? {
        guard input.bytes == nil else { return nil }
        let text = String(decoding: input.location, as: UTF8.self)
        if text.hasPrefix("pipe:") {
            let number = text.dropFirst("pipe:".count)
            guard number.isEmpty || number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber),
                let descriptor = Int32(number.isEmpty ? "0" : String(number))
            else {
                return nil
            }
            return .inherited(descriptor)
        }
        guard input.isPath, !input.hasNUL else { return nil }
        var info = stat()
        guard (try? input.withLocation({ stat($0, &info) })) == 0 else { return nil }
        let kind = info.st_mode & S_IFMT
        return kind == S_IFIFO || kind == S_IFCHR ? .node(kind) : nil
    }

    private static func openNode(_ input: MediaInput, kind: mode_t, relay: InterruptRelay, stall: Duration?) throws(PlayheadError) -> StreamDescriptor
    {
        let descriptor = try input.withLocation { Glibc.open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else {
            let code = errno
            let kindName = kind == S_IFIFO ? "FIFO" : "device"
            throw PlayheadError(
                code: code == EACCES ? .permissionDenied : .openFailed, message: "could not open the \(kindName)",
                file: input.name, cause: FFmpegError.cause("open", playhead_averror(code)))
        }
        return StreamDescriptor(descriptor: descriptor, owned: true, relay: relay, stall: stall)
    }

    /// FFmpeg's read callback: waits (in slices) until bytes or the end are there, then reads.
    func read(into data: UnsafeMutablePointer<UInt8>, count: Int32) -> Int32 {
        let started = DispatchTimeNanos.now()
        while true {
            if relay.shouldInterrupt { return FFmpegError.exit }
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Self.slice)
            if ready < 0, errno != EINTR { return playhead_averror(errno) }
            if ready > 0 {
                if request.revents & Int16(POLLNVAL) != 0 { return playhead_averror(EBADF) }
                let got = Glibc.read(descriptor, data, Int(count))
                if got > 0 { return Int32(got) }
                // No writer left (a hang-up, or poll's end of a pipe): the end of the data.
                if got == 0 { return FFmpegError.eof }
                if errno != EAGAIN, errno != EINTR { return playhead_averror(errno) }
            }
            if let stallNanos, DispatchTimeNanos.now() - started >= stallNanos {
                stalled = true
                return FFmpegError.timedOut
            }
        }
    }
}

extension MediaInput {
    /// Whether its bytes can be read only once, so that a second open would read from where the
    /// first one stands: a stream (`pipe:N`, a FIFO, a device) or a caller's bytes that cannot
    /// seek. Looked at now (`stat`), never opened. A URL is not (a server is asked again, and a
    /// live one answers with what it sends now).
    package var isReadOnce: Bool {
        if let bytes { return !bytes.isSeekable }
        return StreamDescriptor.stream(named: self) != nil
    }
}
