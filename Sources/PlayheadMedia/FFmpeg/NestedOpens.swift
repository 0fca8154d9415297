internal import CFFmpeg

/// Counts the inputs a demuxer opens inside its own (HLS playlists and segments, DASH, a
/// playlist's variants), through `AVFormatContext.io_open`. While the source is being opened, at
/// most ``limit`` are allowed: two playlists that name each other open without end (and grow
/// without end), where a real master playlist with its variants and first segments opens a few
/// dozen. Once open, playback opens segments as long as it runs, unbounded.
///
/// Not `Sendable`: called on the thread that owns the format context.
final class NestedOpens {
    static let limit = 200

    typealias Open =
        @convention(c) (
            UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
            UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?
        ) -> Int32

    private let original: Open
    private var count = 0
    /// While true, opens count against the limit.
    var opening = true
    /// The limit was reached.
    private(set) var exceeded = false

    private init(original: Open) { self.original = original }

    /// Installs the counter on `context` (before `avformat_open_input`); the caller keeps the
    /// returned object alive for as long as the context lives. Nil when the context has no opener.
    static func install(on context: UnsafeMutablePointer<AVFormatContext>) -> NestedOpens? {
        guard let original = context.pointee.io_open else { return nil }
        let counter = NestedOpens(original: original)
        context.pointee.opaque = Unmanaged.passUnretained(counter).toOpaque()
        context.pointee.io_open = { context, pb, url, flags, options in
            guard let context, let opaque = context.pointee.opaque else { return playhead_averror(EINVAL) }
            return Unmanaged<NestedOpens>.fromOpaque(opaque).takeUnretainedValue().open(context, pb, url, flags, options)
        }
        return counter
    }

    private func open(
        _ context: UnsafeMutablePointer<AVFormatContext>, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
        _ url: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?
    ) -> Int32 {
        if opening {
            count += 1
            if count > Self.limit {
                exceeded = true
                return playhead_averror(ELOOP)
            }
        }
        return original(context, pb, url, flags, options)
    }

    /// The error for a source that hit the limit.
    static func error(source: String, function: String, result: Int32) -> PlayheadError {
        FFmpegError.error(
            .openFailed, "opening it opened more than \(limit) playlists and segments (playlists that name each other?)",
            function: function, result: result, file: source)
    }
}
