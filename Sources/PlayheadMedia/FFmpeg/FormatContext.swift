internal import CFFmpeg

/// Owns an `AVFormatContext` opened for reading, and closes it when released.
///
/// Not `Sendable`: a format context is used by one thread at a time (the thread that opened it,
/// or the thread it is handed to). Its blocking calls are interrupted through `relay`, which
/// forwards to whichever ``InterruptFlag`` the current owner attached, so one opened context can
/// serve a probe and then a session.
package final class FormatContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// The path or URL it was opened from, for error messages.
    let source: String
    /// Kept alive for as long as FFmpeg may call the interrupt callback.
    let relay: InterruptRelay
    /// What FFmpeg logged about this context.
    let evidence: LogEvidence
    /// The I/O the context reads from; released after the context is closed.
    let io: InputIO
    /// Bounds what the demuxer opens inside the source while it opens.
    let nestedOpens: NestedOpens?
    /// The byte position where reading the container's header ended (-1 if unknown): on a source
    /// that cannot seek, media the index places before it has already gone by.
    let headerEnd: Int64

    private init(
        pointer: UnsafeMutablePointer<AVFormatContext>, source: String, relay: InterruptRelay, evidence: LogEvidence, io: InputIO,
        nestedOpens: NestedOpens?
    ) {
        headerEnd = pointer.pointee.pb.map { avio_seek($0, 0, SEEK_CUR) } ?? -1
        self.pointer = pointer
        self.source = source
        self.relay = relay
        self.evidence = evidence
        self.io = io
        self.nestedOpens = nestedOpens
    }

    deinit {
        evidence.unregister(UnsafeRawPointer(pointer))
        var p: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&p)
    }

    /// Opens `input` for demuxing. Blocking.
    static func open(
        _ input: MediaInput, interrupt: InterruptFlag, options: AssetOptions = AssetOptions(), attempt: OpenAttempt? = nil
    ) throws(PlayheadError) -> FormatContext {
        FFmpegLogging.installCallback()
        let source = input.name
        let relay = InterruptRelay(interrupt, openTimeout: options.openTimeout)
        var callback = relay.callback
        let io: InputIO
        if let bytes = input.bytes {
            guard let custom = InputIO.custom(bytes, relay: relay, stall: options.stallTimeout) else {
                throw PlayheadError(code: .openFailed, message: "could not set up custom I/O", file: source)
            }
            io = custom
        } else if let stream = try StreamDescriptor.open(input, relay: relay, stall: options.stallTimeout) {
            guard let custom = InputIO.stream(stream) else {
                throw PlayheadError(code: .openFailed, message: "could not set up stream I/O", file: source)
            }
            io = custom
        } else if SourceOptions.readsInRanges(source) {
            if input.hasNUL { throw PlayheadError(code: .fileNotFound, message: "no such file: the location holds a NUL byte", file: source) }
            let reader = HTTPRangeReader(location: input.location, name: source, relay: relay, options: options)
            let (opened, result) = InputIO.http(reader)
            guard let opened else { throw reader.failure ?? openError(result, function: "avio_open2", source: source, relay: relay, io: nil) }
            io = opened
        } else {
            var dictionary = SourceOptions.dictionary(for: source, options)
            defer { av_dict_free(&dictionary) }
            if input.hasNUL { throw PlayheadError(code: .fileNotFound, message: "no such file: the location holds a NUL byte", file: source) }
            let (opened, result) = try input.withLocation { InputIO.open($0, interrupt: &callback, options: &dictionary) }
            guard let opened else { throw openError(result, function: "avio_open2", source: source, relay: relay, io: nil) }
            io = opened
        }
        guard let allocated = avformat_alloc_context() else {
            throw PlayheadError(code: .openFailed, message: "could not allocate a demuxer context", file: source)
        }
        let evidence = LogEvidence()
        evidence.register(UnsafeRawPointer(allocated))
        allocated.pointee.interrupt_callback = callback
        // Our I/O: avformat_open_input marks it custom and leaves it to us to free.
        allocated.pointee.pb = io.pointer
        let nestedOpens = NestedOpens.install(on: allocated)
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context and sets it to nil.
        // The location also gives the format probe its extension hint.
        let result = try input.withLocation { avformat_open_input(&context, $0, nil, nil) }
        guard result >= 0, let context else {
            evidence.unregister(UnsafeRawPointer(allocated))
            // Our I/O outlives the freed context: what it read is still counted.
            attempt?.note(bytesRead: io.pointer.pointee.bytes_read)
            if nestedOpens?.exceeded ?? false { throw NestedOpens.error(source: source, function: "avformat_open_input", result: result) }
            throw openError(result, function: "avformat_open_input", source: source, relay: relay, io: io)
        }
        return FormatContext(pointer: context, source: source, relay: relay, evidence: evidence, io: io, nestedOpens: nestedOpens)
    }

    /// Opens a path or an FFmpeg URL for demuxing. Blocking.
    static func open(_ source: String, interrupt: InterruptFlag, options: AssetOptions = AssetOptions()) throws(PlayheadError) -> FormatContext {
        try open(MediaInput(source), interrupt: interrupt, options: options)
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
        nestedOpens?.opening = false
        if nestedOpens?.exceeded ?? false { throw NestedOpens.error(source: source, function: "avformat_find_stream_info", result: result) }
        if result < 0 {
            if result == FFmpegError.exit || relay.shouldInterrupt {
                throw Self.interruptedError(source: source, interrupt: relay.current, function: "avformat_find_stream_info", result: result)
            }
            throw FFmpegError.error(
                .streamInfoFailed, "could not analyse the streams", function: "avformat_find_stream_info", result: result, file: source)
        }
    }

    /// The stream analysis can end on the open deadline (in a reconnect's back-off past the end of
    /// a short file) and still succeed; its `AVERROR_EXIT` stays in the I/O context and would come
    /// back from a later read as if someone had cancelled. Cleared when no one did.
    func clearStaleInterrupt() {
        guard let pb = pointer.pointee.pb, pb.pointee.error == FFmpegError.exit, !(relay.current?.isRaised ?? false) else { return }
        pb.pointee.error = 0
    }

    var streamCount: Int { Int(pointer.pointee.nb_streams) }

    /// The bytes of the source its I/O has read so far.
    var bytesRead: Int64 { pointer.pointee.pb?.pointee.bytes_read ?? 0 }

    /// Stream `index` (0 ..< streamCount).
    func stream(at index: Int) -> UnsafeMutablePointer<AVStream>? {
        guard index >= 0, index < streamCount else { return nil }
        return pointer.pointee.streams[index]
    }

    var streams: [UnsafeMutablePointer<AVStream>] { (0..<streamCount).compactMap { stream(at: $0) } }

    /// The format's short name (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `mpegts`, …).
    var formatName: String { pointer.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown" }

    private static func openError(_ result: Int32, function: String, source: String, relay: InterruptRelay, io: InputIO?) -> PlayheadError {
        // The probe reads the first bytes and calls a failed read "no data": the I/O knows better.
        if let io, result != FFmpegError.exit {
            if let failure = io.failure { return failure }
            if let failure = io.sourceError {
                return FFmpegError.error(.readFailed, "the byte source failed: \(failure)", function: function, result: result, file: source)
            }
            if io.error == FFmpegError.timedOut || io.hasStalled {
                return FFmpegError.stalled(function: function, result: io.error, file: source)
            }
            if io.error == FFmpegError.exit || relay.shouldInterrupt {
                return interruptedError(source: source, interrupt: relay.current, function: function, result: result)
            }
        }
        switch result {
        case FFmpegError.exit:
            return interruptedError(source: source, interrupt: relay.current, function: function, result: result)
        case FFmpegError.timedOut:
            return FFmpegError.stalled(function: function, result: result, file: source)
        case FFmpegError.noSuchFile:
            return FFmpegError.error(.fileNotFound, "no such file", function: function, result: result, file: source)
        case FFmpegError.accessDenied:
            return FFmpegError.error(.permissionDenied, "permission denied", function: function, result: result, file: source)
        case FFmpegError.isDirectory:
            return FFmpegError.error(.notARegularFile, "is a directory, not a media file", function: function, result: result, file: source)
        case FFmpegError.connectionRefused:
            return FFmpegError.error(.connectionFailed, "the server refused the connection", function: function, result: result, file: source)
        case FFmpegError.hostUnreachable, FFmpegError.networkUnreachable:
            return FFmpegError.error(.connectionFailed, "no route to the server", function: function, result: result, file: source)
        case FFmpegError.invalidData:
            if let format = FormatSniffer.recognizedFormat(path: source) {
                return FFmpegError.error(
                    .openFailed, "looks like \(format) but is damaged or truncated", function: function, result: result, file: source)
            }
            return FFmpegError.error(.unrecognizedFormat, "not a recognized media format", function: function, result: result, file: source)
        default:
            if relay.shouldInterrupt {
                return interruptedError(source: source, interrupt: relay.current, function: function, result: result)
            }
            if let status = HTTPStatus(result) {
                return FFmpegError.error(status.code, status.message, function: function, result: result, file: source)
            }
            return FFmpegError.error(.openFailed, "could not open the media", function: function, result: result, file: source)
        }
    }

    static func interruptedError(source: String, interrupt: InterruptFlag?, function: String, result: Int32) -> PlayheadError {
        if interrupt?.isRaised ?? false {
            return PlayheadError(code: .cancelled, message: "cancelled while opening", file: source, cause: FFmpegError.cause(function, result))
        }
        return PlayheadError(
            code: .timedOut, message: "did not open within the open timeout", file: source, cause: FFmpegError.cause(function, result))
    }
}
