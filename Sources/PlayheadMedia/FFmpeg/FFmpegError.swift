internal import CFFmpeg

/// Turns FFmpeg return codes into ``PlayheadError`` values: one place that knows `av_strerror`.
package enum FFmpegError {
    static let eagain = playhead_averror(EAGAIN)
    static let eof = playhead_averror_eof()
    static let exit = playhead_averror_exit()
    static let invalidData = playhead_averror_invaliddata()
    static let decoderNotFound = playhead_averror_decoder_not_found()
    static let noSuchFile = playhead_averror(ENOENT)
    static let accessDenied = playhead_averror(EACCES)
    static let isDirectory = playhead_averror(EISDIR)
    static let noSpace = playhead_averror(ENOSPC)
    static let timedOut = playhead_averror(ETIMEDOUT)
    static let connectionRefused = playhead_averror(ECONNREFUSED)
    static let hostUnreachable = playhead_averror(EHOSTUNREACH)
    static let networkUnreachable = playhead_averror(ENETUNREACH)

    /// `av_strerror`'s text for `code`.
    static func text(_ code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress else { return "error \(code)" }
            if av_strerror(code, base, buffer.count) < 0 {
                return "error \(code)"
            }
            return String(cString: base)
        }
    }

    static func cause(_ function: String, _ code: Int32) -> PlayheadError.FFmpegCause {
        PlayheadError.FFmpegCause(function: function, errorNumber: code, text: text(code))
    }

    /// A ``PlayheadError`` for a failed FFmpeg call.
    package static func error(_ code: PlayheadError.Code, _ message: String, function: String, result: Int32, file: String?) -> PlayheadError {
        PlayheadError(code: code, message: message, file: file, cause: cause(function, result))
    }

    /// The one error of a source that stalled: `io.timedOut` when no byte came within the stall
    /// timeout during `function`. Its cause is `result` when the call failed, else `ETIMEDOUT` (a
    /// call the stall interrupted may still return success: "Success (0)" would mislead).
    static func stalled(function: String, result: Int32, file: String?) -> PlayheadError {
        error(.timedOut, "no data arrived within the stall timeout", function: function, result: result < 0 ? result : timedOut, file: file)
    }
}
