import CFFmpeg

/// Owns an `AVFormatContext` opened for reading, and closes it when released.
///
/// Not `Sendable`: a format context is used by one thread at a time (the thread that opened it,
/// or the demux thread it is handed to).
final class FormatContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// The path or URL it was opened from, for error messages.
    let source: String
    /// Kept alive for as long as FFmpeg may call the interrupt callback.
    let interrupt: InterruptFlag

    private init(pointer: UnsafeMutablePointer<AVFormatContext>, source: String, interrupt: InterruptFlag) {
        self.pointer = pointer
        self.source = source
        self.interrupt = interrupt
    }

    deinit {
        var p: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&p)
    }

    /// Opens `source` (a path or an FFmpeg URL) for demuxing. Blocking.
    static func open(_ source: String, interrupt: InterruptFlag) throws(PlayheadError) -> FormatContext {
        FFmpegLogging.installCallback()
        guard let allocated = avformat_alloc_context() else {
            throw PlayheadError(code: .openFailed, message: "could not allocate a demuxer context", file: source)
        }
        allocated.pointee.interrupt_callback = interrupt.callback
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context and sets it to nil.
        let result = avformat_open_input(&context, source, nil, nil)
        guard result >= 0, let context else {
            throw openError(result, source: source, interrupt: interrupt)
        }
        return FormatContext(pointer: context, source: source, interrupt: interrupt)
    }

    /// Reads enough of the file to know every stream's parameters. Blocking.
    func findStreamInfo() throws(PlayheadError) {
        let result = avformat_find_stream_info(pointer, nil)
        if result < 0 {
            if result == FFmpegError.exit || interrupt.shouldInterrupt {
                throw Self.interruptedError(source: source, interrupt: interrupt, function: "avformat_find_stream_info", result: result)
            }
            throw FFmpegError.error(.streamInfoFailed, "could not analyse the streams", function: "avformat_find_stream_info", result: result, file: source)
        }
    }

    var streamCount: Int { Int(pointer.pointee.nb_streams) }

    func stream(at index: Int) -> UnsafeMutablePointer<AVStream> {
        precondition(index >= 0 && index < streamCount)
        return pointer.pointee.streams[index]!
    }

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

    static func interruptedError(source: String, interrupt: InterruptFlag, function: String, result: Int32) -> PlayheadError {
        if interrupt.isRaised {
            return PlayheadError(code: .cancelled, message: "cancelled while opening", file: source, cause: FFmpegError.cause(function, result))
        }
        return PlayheadError(code: .readFailed, message: "timed out while opening", file: source, cause: FFmpegError.cause(function, result))
    }
}
