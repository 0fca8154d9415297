internal import CFFmpeg
import Logging

/// Where FFmpeg's own messages go. FFmpeg logs through one process-wide callback; by default
/// Playhead installs one that drops every message, so the library never prints. Route them to a
/// `Logger` to see them.
///
/// The callback also hands each message to the `LogEvidence` registered for the context that
/// logged it: a demuxer's own words ("File ended prematurely") are part of how Playhead tells a
/// truncated file from a complete one.
public enum FFmpegLogging {
    private static let destination = Locked<Logger?>(nil)

    /// Sends FFmpeg's messages at `Logger.Level.warning` and above (FFmpeg's `AV_LOG_WARNING`) to
    /// `logger`, or drops them all when `logger` is nil. Process-wide.
    /// - Parameter logger: where the messages go; nil drops them.
    public static func route(to logger: Logger?) {
        installCallback()
        destination.withLock { $0 = logger }
    }

    /// Installs the callback once, before the first FFmpeg call that may log.
    package static func installCallback() {
        _ = callbackInstalled
    }

    private static let callbackInstalled: Void = {
        av_log_set_level(AV_LOG_WARNING)
        av_log_set_callback { context, level, format, arguments in
            guard level <= AV_LOG_WARNING, let format, let arguments else { return }
            let logger = FFmpegLogging.destination.withLock { $0 }
            let evidence = context.flatMap { LogEvidence.registered(for: UnsafeRawPointer($0)) }
            guard logger != nil || evidence != nil else { return }
            var buffer = [CChar](repeating: 0, count: 1024)
            let written = buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
            guard written > 0 else { return }
            var text = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            evidence?.note(text, isError: level <= AV_LOG_ERROR)
            guard let logger else { return }
            // FFmpeg's messages may quote a URL (a playlist's segment, a redirect's target).
            let message = Logger.Message(stringLiteral: SourceRedaction.redactingURLs(in: text))
            switch level {
            case ...AV_LOG_ERROR: logger.error(message, metadata: ["source": "ffmpeg"])
            default: logger.warning(message, metadata: ["source": "ffmpeg"])
            }
        }
    }()
}

/// What FFmpeg said, at warning level and above, about one demuxer: kept per format context so
/// that the reader can look for a container's own account of how its data ended.
final class LogEvidence: Sendable {
    /// Keyed by the context's address (an address is a number; the pointer itself is not `Sendable`).
    private static let registry = Locked<[UInt: LogEvidence]>([:])
    private let state = Locked<(messages: [String], errors: [String], errorCount: Int)>(([], [], 0))
    /// Messages kept at most (the first ones; later errors are still counted).
    static let capacity = 64

    static func registered(for context: UnsafeRawPointer) -> LogEvidence? {
        registry.withLock { $0[UInt(bitPattern: context)] }
    }

    /// Starts collecting what is logged for `context`.
    func register(_ context: UnsafeRawPointer) {
        Self.registry.withLock { $0[UInt(bitPattern: context)] = self }
    }

    /// Stops collecting (before the context is freed: its address may be reused).
    func unregister(_ context: UnsafeRawPointer) {
        Self.registry.withLock { registry in
            if registry[UInt(bitPattern: context)] === self { registry[UInt(bitPattern: context)] = nil }
        }
    }

    /// Warnings that say data was lost: a playlist's segment that could not be fetched (HLS
    /// skips it and goes on, so the media has a hole), whether while opening or later.
    static let lostDataWarnings = ["Failed to open segment"]
    private let lost = Locked<(count: Int, first: String?)>((0, nil))

    func note(_ message: String, isError: Bool) {
        if Self.lostDataWarnings.contains(where: { message.hasPrefix($0) }) {
            lost.withLock { lost in
                lost.count += 1
                if lost.first == nil { lost.first = message }
            }
        }
        state.withLock { s in
            if s.messages.count < Self.capacity { s.messages.append(message) }
            if isError {
                s.errorCount += 1
                if s.errors.count < Self.capacity { s.errors.append(message) }
            }
        }
    }

    /// The first message containing `fragment`, if any.
    func first(containing fragment: String) -> String? {
        state.withLock { $0.messages.first { $0.contains(fragment) } }
    }

    /// Data lost so far (``lostDataWarnings``), and the first such message.
    var lostData: (count: Int, first: String?) { lost.withLock { $0 } }

    /// Error-level messages so far.
    var errorCount: Int { state.withLock { $0.errorCount } }

    /// The error-level message number `index` (0-based), when kept.
    func error(at index: Int) -> String? {
        state.withLock { index < $0.errors.count ? $0.errors[index] : nil }
    }
}
