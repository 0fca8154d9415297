internal import CFFmpeg
import Foundation

/// Owns the `AVIOContext` a format context reads from: opened by FFmpeg's protocols from a path
/// or URL, or built over a caller's ``ByteSource``. Owning it (rather than letting
/// `avformat_open_input` open and free it) keeps the I/O error of a failed open readable: a
/// source that stalls while its first bytes are probed is a timeout, not "not a media format".
///
/// Not `Sendable`: used by the thread that owns its format context.
final class InputIO {
    let pointer: UnsafeMutablePointer<AVIOContext>
    /// Set for a custom source: freed differently, and holds the caller's last error.
    private let reader: ByteSourceReader?
    /// The bytes come from the caller's byte source (no path or URL FFmpeg could open again).
    var isByteSource: Bool { reader != nil }
    /// Set for a stream read through our own descriptor (a FIFO, standard input).
    let stream: StreamDescriptor?
    /// Set for an HTTP(S) file read through bounded range requests.
    let http: HTTPRangeReader?

    private init(
        pointer: UnsafeMutablePointer<AVIOContext>, reader: ByteSourceReader?, stream: StreamDescriptor? = nil, http: HTTPRangeReader? = nil
    ) {
        self.pointer = pointer
        self.reader = reader
        self.stream = stream
        self.http = http
    }

    deinit {
        if reader != nil || stream != nil || http != nil {
            var buffer: UnsafeMutablePointer<UInt8>? = pointer.pointee.buffer
            av_freep(&buffer)
            var p: UnsafeMutablePointer<AVIOContext>? = pointer
            avio_context_free(&p)
        } else {
            var p: UnsafeMutablePointer<AVIOContext>? = pointer
            avio_closep(&p)
        }
    }

    /// The I/O error the context met (a stall timeout, a dropped connection), 0 if none.
    var error: Int32 { pointer.pointee.error }

    /// What the caller's byte source threw, if it did.
    var sourceError: String? { reader?.failure }

    /// Why an HTTP source failed, in its own words (its server ended the file early, kept
    /// failing requests), if it did.
    var failure: PlayheadError? { http?.failure }

    /// A stream (FIFO, standard input) or a byte source (blocking or async) that sent nothing for the stall timeout.
    var hasStalled: Bool { (stream?.stalled ?? false) || (reader?.stalled ?? false) }

    /// Opens a path or URL for reading with FFmpeg's protocols. Blocking.
    /// Returns the context, or nil and FFmpeg's error code.
    static func open(_ location: UnsafePointer<CChar>, interrupt: inout AVIOInterruptCB, options: inout OpaquePointer?) -> (InputIO?, Int32) {
        var pb: UnsafeMutablePointer<AVIOContext>?
        let result = avio_open2(&pb, location, AVIO_FLAG_READ, &interrupt, &options)
        guard result >= 0, let pb else { return (nil, result < 0 ? result : playhead_averror(EIO)) }
        return (InputIO(pointer: pb, reader: nil), 0)
    }

    /// Custom I/O over an HTTP(S) file read in bounded ranges (see ``HTTPRangeReader``); the first
    /// request is made here. Returns the context, or nil and FFmpeg's error for that request.
    static func http(_ reader: HTTPRangeReader) -> (InputIO?, Int32) {
        let opened = reader.open()
        guard opened >= 0 else { return (nil, opened) }
        let size: Int32 = 64 * 1024
        guard let buffer = av_malloc(Int(size)) else { return (nil, playhead_averror(ENOMEM)) }
        let opaque = Unmanaged.passUnretained(reader).toOpaque()
        let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), size, 0, opaque,
            { opaque, data, count in
                guard let opaque, let data else { return playhead_averror(EINVAL) }
                return Unmanaged<HTTPRangeReader>.fromOpaque(opaque).takeUnretainedValue().read(into: data, count: count)
            }, nil,
            { opaque, offset, whence in
                guard let opaque else { return -1 }
                return Unmanaged<HTTPRangeReader>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence: whence)
            })
        guard let context else {
            av_free(buffer)
            return (nil, playhead_averror(ENOMEM))
        }
        return (InputIO(pointer: context, reader: nil, http: reader), 0)
    }

    /// Custom I/O over a stream's descriptor: not seekable, each read polled (see ``StreamDescriptor``).
    static func stream(_ stream: StreamDescriptor) -> InputIO? {
        let size: Int32 = 64 * 1024
        guard let buffer = av_malloc(Int(size)) else { return nil }
        let opaque = Unmanaged.passUnretained(stream).toOpaque()
        let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), size, 0, opaque,
            { opaque, data, count in
                guard let opaque, let data else { return playhead_averror(EINVAL) }
                return Unmanaged<StreamDescriptor>.fromOpaque(opaque).takeUnretainedValue().read(into: data, count: count)
            }, nil, nil)
        guard let context else {
            av_free(buffer)
            return nil
        }
        return InputIO(pointer: context, reader: nil, stream: stream)
    }

    /// Custom I/O over `bytes`: each read runs apart from the I/O thread (``AsyncRead``), so
    /// `relay` (a cancellation, the open timeout) and `stall` end the wait for it, blocking source
    /// or async alike.
    static func custom(_ bytes: CustomBytes, relay: InterruptRelay, stall: Duration?) -> InputIO? {
        let reader = ByteSourceReader(bytes: bytes, relay: relay, stall: stall)
        // An async source's read is a task and often a request: fewer, larger ones.
        let size: Int32 = if case .async = bytes { 256 * 1024 } else { 64 * 1024 }
        guard let buffer = av_malloc(Int(size)) else { return nil }
        let opaque = Unmanaged.passUnretained(reader).toOpaque()
        let seek: (@convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64)? =
            bytes.isSeekable
            ? { opaque, offset, whence in
                guard let opaque else { return -1 }
                return Unmanaged<ByteSourceReader>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence: whence)
            } : nil
        let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), size, 0, opaque,
            { opaque, data, count in
                guard let opaque, let data else { return playhead_averror(EINVAL) }
                return Unmanaged<ByteSourceReader>.fromOpaque(opaque).takeUnretainedValue().read(into: data, count: count)
            }, nil, seek)
        guard let context else {
            av_free(buffer)
            return nil
        }
        return InputIO(pointer: context, reader: reader)
    }
}

/// The cursor of one reader over a caller's bytes, called by FFmpeg's custom I/O.
private final class ByteSourceReader {
    let bytes: CustomBytes
    let relay: InterruptRelay
    let stallNanos: UInt64?
    private var position: Int64 = 0
    private(set) var failure: String?
    /// A read brought nothing for the stall timeout.
    private(set) var stalled = false

    init(bytes: CustomBytes, relay: InterruptRelay, stall: Duration?) {
        self.bytes = bytes
        self.relay = relay
        stallNanos = stall.map(SourceOptions.nanoseconds)
    }

    func read(into data: UnsafeMutablePointer<UInt8>, count: Int32) -> Int32 {
        if relay.shouldInterrupt { return FFmpegError.exit }
        if let size = bytes.size, position >= size { return FFmpegError.eof }
        let buffer = UnsafeMutableRawBufferPointer(start: data, count: Int(count))
        let outcome: AsyncRead.Outcome
        switch bytes {
        case .blocking(let source):
            outcome = AsyncRead.perform(source, at: position, maxLength: Int(count), relay: relay, stallNanos: stallNanos)
        case .async(let source):
            outcome = AsyncRead.perform(source, at: position, maxLength: Int(count), relay: relay, stallNanos: stallNanos)
        }
        let copied: Int
        switch outcome {
        case .bytes(let got):
            // More than asked for would not fit the buffer: the source broke its contract.
            guard got.count <= Int(count) else {
                failure = "the byte source returned \(got.count) bytes when asked for at most \(count)"
                return playhead_averror(EIO)
            }
            got.copyBytes(to: buffer)
            copied = got.count
        case .failed(let error):
            failure = String(describing: error)
            return playhead_averror(EIO)
        case .interrupted:
            return FFmpegError.exit
        case .stalled:
            stalled = true
            return FFmpegError.timedOut
        }
        if copied == 0 { return FFmpegError.eof }
        position += Int64(copied)
        return Int32(copied)
    }

    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let target = CustomSeek.target(offset, whence: whence, position: position, size: bytes.size)
        if target >= 0, whence & AVSEEK_SIZE == 0 { position = target }
        return target
    }
}

/// The one rule of a custom reader's seek callback (`whence` as for `lseek`, or `AVSEEK_SIZE`).
enum CustomSeek {
    /// The new position, the size for `AVSEEK_SIZE`, or a negative FFmpeg error (`ENOSYS` for
    /// what needs an unknown size, `EINVAL` for a position before the start).
    static func target(_ offset: Int64, whence: Int32, position: Int64, size: Int64?) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return size ?? Int64(playhead_averror(ENOSYS)) }
        let target: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position + offset
        case SEEK_END:
            guard let size else { return Int64(playhead_averror(ENOSYS)) }
            target = size + offset
        default: return Int64(playhead_averror(EINVAL))
        }
        return target >= 0 ? target : Int64(playhead_averror(EINVAL))
    }
}
