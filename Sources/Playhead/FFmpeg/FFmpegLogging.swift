import CFFmpeg
import Logging

/// Where FFmpeg's own messages go. FFmpeg logs through one process-wide callback; by default
/// Playhead installs one that drops every message, so the library never prints. Route them to a
/// `Logger` to see them.
public enum FFmpegLogging {
    private static let destination = Locked<Logger?>(nil)

    /// Sends FFmpeg's messages at `Logger.Level.warning` and above (FFmpeg's `AV_LOG_WARNING`) to
    /// `logger`, or drops them all when `logger` is nil. Process-wide.
    public static func route(to logger: Logger?) {
        installCallback()
        destination.withLock { $0 = logger }
    }

    /// Installs the callback once, before the first FFmpeg call that may log.
    static func installCallback() {
        _ = callbackInstalled
    }

    private static let callbackInstalled: Void = {
        av_log_set_level(AV_LOG_WARNING)
        av_log_set_callback { _, level, format, arguments in
            guard level <= AV_LOG_WARNING, let format, let arguments else { return }
            guard let logger = FFmpegLogging.destination.withLock({ $0 }) else { return }
            var buffer = [CChar](repeating: 0, count: 1024)
            let written = buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
            guard written > 0 else { return }
            let text = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = Logger.Message(stringLiteral: text.hasSuffix("\n") ? String(text.dropLast()) : text)
            switch level {
            case ...AV_LOG_ERROR: logger.error(message, metadata: ["source": "ffmpeg"])
            default: logger.warning(message, metadata: ["source": "ffmpeg"])
            }
        }
    }()
}
