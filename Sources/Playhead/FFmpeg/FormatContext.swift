import CFFmpeg

/// Owns an `AVFormatContext` opened for reading, and closes it when released.
///
/// Not `Sendable`: a format context is used by one thread at a time (the thread that opened it,
/// or the thread it is handed to). Its blocking calls are interrupted through `relay`, which
/// forwards to whichever ``InterruptFlag`` the current owner attached, so one opened context can
/// serve a probe and then a session.
final class FormatContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// The path or URL it was opened from, for error messages.
    let source: String
    /// Kept alive for as long as FFmpeg may call the interrupt callback.
    let relay: InterruptRelay
    /// What FFmpeg logged about this context.
    let evidence: LogEvidence

    private init(pointer: UnsafeMutablePointer<AVFormatContext>, source: String, relay: InterruptRelay, evidence: LogEvidence) {
        self.pointer = pointer
        self.source = source
        self.relay = relay
        self.evidence = evidence
    }

    deinit {
        evidence.unregister(UnsafeRawPointer(pointer))
        var p: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&p)
    }

    /// Opens `source` (a path or an FFmpeg URL) for demuxing. Blocking.
    static func open(_ source: String, interrupt: InterruptFlag) throws(PlayheadError) -> FormatContext {
        FFmpegLogging.installCallback()
        guard let allocated = avformat_alloc_context() else {
            throw PlayheadError(code: .openFailed, message: "could not allocate a demuxer context", file: source)
        }
        let relay = InterruptRelay(interrupt)
        let evidence = LogEvidence()
        evidence.register(UnsafeRawPointer(allocated))
        allocated.pointee.interrupt_callback = relay.callback
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context and sets it to nil.
        let result = avformat_open_input(&context, source, nil, nil)
        guard result >= 0, let context else {
            evidence.unregister(UnsafeRawPointer(allocated))
            throw openError(result, source: source, interrupt: interrupt)
        }
        return FormatContext(pointer: context, source: source, relay: relay, evidence: evidence)
    }

    /// Reads enough of the file to know every stream's parameters. Blocking. The decoders FFmpeg
    /// opens for this get the same picture-size cap as ours, so a small file declaring a huge
    /// picture cannot make the analysis allocate it.
    func findStreamInfo() throws(PlayheadError) {
        let count = Int(pointer.pointee.nb_streams)
        let options = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(1, count))
        options.initialize(repeating: nil, count: max(1, count))
        for i in 0..<count { av_dict_set(options + i, "max_pixels", String(StreamDecoder.defaultMaximumPixels), 0) }
        defer {
            for i in 0..<max(1, count) { av_dict_free(options + i) }
            options.deallocate()
        }
        let result = avformat_find_stream_info(pointer, count > 0 ? options : nil)
        if result < 0 {
            if result == FFmpegError.exit || relay.shouldInterrupt {
                throw Self.interruptedError(source: source, interrupt: relay.current, function: "avformat_find_stream_info", result: result)
            }
            throw FFmpegError.error(.streamInfoFailed, "could not analyse the streams", function: "avformat_find_stream_info", result: result, file: source)
        }
    }

    var streamCount: Int { Int(pointer.pointee.nb_streams) }

    /// Stream `index` (0 ..< streamCount).
    func stream(at index: Int) -> UnsafeMutablePointer<AVStream>? {
        guard index >= 0, index < streamCount else { return nil }
        return pointer.pointee.streams[index]
    }

    var streams: [UnsafeMutablePointer<AVStream>] { (0..<streamCount).compactMap { stream(at: $0) } }

    /// The format's short name (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `mpegts`, …).
    var formatName: String { pointer.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown" }

    private static func openError(_ result: Int32, source: String, interrupt: InterruptFlag) -> PlayheadError {
        let function = "avformat_open_input"
        switch result {
        case FFmpegError.exit:
            return interruptedError(source: source, interrupt: interrupt, function: function, result: result)
        case FFmpegError.noSuchFile:
            return FFmpegError.error(.fileNotFound, "no such file", function: function, result: result, file: source)
        case FFmpegError.accessDenied:
            return FFmpegError.error(.permissionDenied, "permission denied", function: function, result: result, file: source)
        case FFmpegError.isDirectory:
            return FFmpegError.error(.notARegularFile, "is a directory, not a media file", function: function, result: result, file: source)
        case FFmpegError.invalidData:
            if let format = FormatSniffer.recognizedFormat(path: source) {
                return FFmpegError.error(.openFailed, "looks like \(format) but is damaged or truncated", function: function, result: result, file: source)
            }
            return FFmpegError.error(.unrecognizedFormat, "not a recognized media format", function: function, result: result, file: source)
        default:
            if interrupt.shouldInterrupt {
                return interruptedError(source: source, interrupt: interrupt, function: function, result: result)
            }
            return FFmpegError.error(.openFailed, "could not open the media", function: function, result: result, file: source)
        }
    }

    static func interruptedError(source: String, interrupt: InterruptFlag?, function: String, result: Int32) -> PlayheadError {
        if interrupt?.isRaised ?? true {
            return PlayheadError(code: .cancelled, message: "cancelled while opening", file: source, cause: FFmpegError.cause(function, result))
        }
        return PlayheadError(code: .readFailed, message: "timed out while opening", file: source, cause: FFmpegError.cause(function, result))
    }
}
