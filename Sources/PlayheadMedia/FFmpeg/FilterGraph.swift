internal import CFFmpeg

/// One libavfilter chain — a source (`buffer`, `abuffer`), filters, a sink (`buffersink`,
/// `abuffersink`) — owned whole: made, configured, fed and drained here, freed in `deinit`; a
/// second source may feed one filter's second input (an `overlay`'s picture).
/// Every filter graph Playhead runs (a contact sheet's text, a loudness measure, subtitles drawn
/// in) is one of these.
///
/// Not `Sendable`: used by the one thread that runs it.
final class FilterGraph {
    /// One filter of the chain: its name, and either an argument string or options set one by
    /// one (text that must reach the filter literally, such as `drawtext`'s, goes as options).
    struct Filter {
        var name: String
        var arguments: String?
        var options: [String: String] = [:]
        /// What the error says when this FFmpeg lacks the filter.
        var missing: String?

        init(_ name: String, _ arguments: String? = nil) {
            self.name = name
            self.arguments = arguments
        }

        init(_ name: String, options: [String: String], missing: String? = nil) {
            self.name = name
            self.options = options
            self.missing = missing
        }
    }

    private let graph: UnsafeMutablePointer<AVFilterGraph>
    private let source: UnsafeMutablePointer<AVFilterContext>
    /// A second source, into a filter's second input (the picture an `overlay` lays on).
    private let sideSource: UnsafeMutablePointer<AVFilterContext>?
    private let sink: UnsafeMutablePointer<AVFilterContext>
    private let code: PlayheadError.Code
    private let file: String

    /// Builds and configures the chain `filters` (the first a source, the last a sink).
    /// - Parameters:
    ///   - filters: at least two: the source, any filters, the sink.
    ///   - side: a second source and the filter of the chain (its index) whose second input it
    ///     feeds (``push(_:side:)``).
    ///   - code: the error code of a failure (`output.encodeFailed`, `decode.decodeFailed`).
    ///   - file: what errors name.
    ///   - failure: what a failure to set it up is called in its error's message.
    /// - Throws: `code` when a filter is missing or refuses its options, or the chain does not configure.
    init(
        _ filters: [Filter], side: (source: Filter, into: Int)? = nil, code: PlayheadError.Code, file: String, failure: String
    ) throws(PlayheadError) {
        // The library never prints: FFmpeg's messages (a font's fallback) go where routed, or nowhere.
        FFmpegLogging.installCallback()
        guard let graph = avfilter_graph_alloc() else { throw PlayheadError.outOfMemory("avfilter_graph_alloc") }
        self.graph = graph
        self.code = code
        self.file = file
        var made: [UnsafeMutablePointer<AVFilterContext>] = []
        var sideMade: UnsafeMutablePointer<AVFilterContext>?
        do throws(PlayheadError) {
            guard filters.count >= 2 else { throw PlayheadError(code: code, message: "\(failure): a chain needs a source and a sink", file: file) }
            for (i, filter) in filters.enumerated() {
                let context = try Self.make(filter, in: graph, name: "f\(i)", code: code, file: file, failure: failure)
                if let previous = made.last {
                    let result = avfilter_link(previous, 0, context, 0)
                    guard result >= 0 else { throw FFmpegError.error(code, failure, function: "avfilter_link", result: result, file: file) }
                }
                made.append(context)
            }
            if let side {
                guard made.indices.contains(side.into) else {
                    throw PlayheadError(code: code, message: "\(failure): no filter #\(side.into) to feed", file: file)
                }
                let context = try Self.make(side.source, in: graph, name: "side", code: code, file: file, failure: failure)
                let result = avfilter_link(context, 0, made[side.into], 1)
                guard result >= 0 else { throw FFmpegError.error(code, failure, function: "avfilter_link", result: result, file: file) }
                sideMade = context
            }
            let result = avfilter_graph_config(graph, nil)
            guard result >= 0 else { throw FFmpegError.error(code, failure, function: "avfilter_graph_config", result: result, file: file) }
        } catch {
            var owned: UnsafeMutablePointer<AVFilterGraph>? = graph
            avfilter_graph_free(&owned)
            throw error
        }
        source = made[0]
        sink = made[made.count - 1]
        sideSource = sideMade
    }

    /// One filter made and set up in `graph`.
    private static func make(
        _ filter: Filter, in graph: UnsafeMutablePointer<AVFilterGraph>, name: String, code: PlayheadError.Code, file: String, failure: String
    ) throws(PlayheadError) -> UnsafeMutablePointer<AVFilterContext> {
        guard let kind = avfilter_get_by_name(filter.name), let context = avfilter_graph_alloc_filter(graph, kind, name) else {
            throw PlayheadError(code: code, message: filter.missing ?? "\(failure): this FFmpeg has no \(filter.name) filter", file: file)
        }
        var result: Int32
        let function = filter.arguments == nil ? "avfilter_init_dict" : "avfilter_init_str"
        if let arguments = filter.arguments {
            result = avfilter_init_str(context, arguments)
        } else {
            var options: OpaquePointer?
            defer { av_dict_free(&options) }
            for (key, value) in filter.options { av_dict_set(&options, key, value, 0) }
            result = avfilter_init_dict(context, &options)
        }
        guard result >= 0 else { throw FFmpegError.error(code, "\(failure) (\(filter.name))", function: function, result: result, file: file) }
        return context
    }

    deinit {
        var owned: UnsafeMutablePointer<AVFilterGraph>? = graph
        avfilter_graph_free(&owned)
    }

    /// Feeds `frame` to the source, taking its content (the frame is left blank); nil ends the input.
    /// - Throws: `code` when the graph refuses it.
    func push(_ frame: UnsafeMutablePointer<AVFrame>?, side: Bool = false) throws(PlayheadError) {
        guard let target = side ? sideSource : source else {
            throw PlayheadError(code: code, message: "this filter graph has no second source", file: file)
        }
        let result = av_buffersrc_add_frame_flags(target, frame, 0)
        guard result >= 0 else {
            throw FFmpegError.error(code, "filtering failed", function: "av_buffersrc_add_frame_flags", result: result, file: file)
        }
    }

    /// Takes the next filtered frame into `frame`.
    /// - Returns: false when none is ready (more input is needed, or the graph has ended).
    /// - Throws: `code` when filtering failed.
    func pull(into frame: OwnedFrame) throws(PlayheadError) -> Bool {
        let result = av_buffersink_get_frame(sink, frame.pointer)
        if result == FFmpegError.eagain || result == FFmpegError.eof { return false }
        guard result >= 0 else { throw FFmpegError.error(code, "filtering failed", function: "av_buffersink_get_frame", result: result, file: file) }
        return true
    }
}
