internal import CFFmpeg
import Foundation

/// Measures an item's integrated loudness (EBU R128, in LUFS) with libavfilter's `ebur128`
/// filter: the item's best audio stream decoded (the reader's read rule and decoder), through
/// `abuffer → ebur128=metadata=1 → abuffersink`, the last frame's `lavfi.r128.I` taken. Blocking;
/// `interrupt` stops it.
enum LoudnessMeter {
    /// The integrated loudness of `asset`'s sound, nil when it has none (or is silent: the
    /// measure is −70 LUFS or less, where R128 gates everything out).
    static func integratedLoudness(of asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> Double? {
        let demuxer = try asset.openDemuxer(interrupt: interrupt)
        defer { asset.giveBack(demuxer) }
        guard let audio = demuxer.audio, let stream = demuxer.context.stream(at: Int(audio.index)) else { return nil }
        try demuxer.rewind()
        demuxer.select([audio.index])
        let decoder = try StreamDecoder(stream: stream, threads: 1, source: demuxer.source)
        let graph = try Graph(decoder: decoder.context, timeBase: stream.pointee.time_base, source: demuxer.source)
        let packet = try OwnedPacket()
        let frame = try OwnedFrame()
        let filtered = try OwnedFrame()
        var loudness: Double?
        func pull() throws(PlayheadError) {
            while true {
                let result = av_buffersink_get_frame(graph.sink, filtered.pointer)
                if result == FFmpegError.eagain || result == FFmpegError.eof { return }
                guard result >= 0 else {
                    throw FFmpegError.error(
                        .decodeFailed, "loudness measurement failed", function: "av_buffersink_get_frame", result: result, file: demuxer.source)
                }
                if let entry = av_dict_get(filtered.pointer.pointee.metadata, "lavfi.r128.I", nil, 0),
                    let value = Double(String(cString: entry.pointee.value))
                {
                    loudness = value
                }
                av_frame_unref(filtered.pointer)
            }
        }
        func push(_ decoded: UnsafeMutablePointer<AVFrame>?) throws(PlayheadError) {
            let result = av_buffersrc_add_frame_flags(graph.source, decoded, 0)
            guard result >= 0 else {
                throw FFmpegError.error(
                    .decodeFailed, "loudness measurement failed", function: "av_buffersrc_add_frame_flags", result: result, file: demuxer.source)
            }
            try pull()
        }
        reading: while true {
            switch demuxer.read(into: packet.pointer) {
            case .packet:
                defer { av_packet_unref(packet.pointer) }
                _ = try decoder.decode(packet.pointer, into: frame) { (decoded) throws(PlayheadError) -> Bool in
                    defer { av_frame_unref(decoded.pointer) }
                    try push(decoded.pointer)
                    return true
                }
            case .end(let end):
                if case .cancelled = end { throw .cancelled(file: demuxer.source) }
                if let failure = end.failure { throw failure }
                break reading
            }
        }
        _ = try decoder.decode(nil, into: frame) { (decoded) throws(PlayheadError) -> Bool in
            defer { av_frame_unref(decoded.pointer) }
            try push(decoded.pointer)
            return true
        }
        try push(nil)
        guard let loudness, loudness > -70 else { return nil }
        return loudness
    }

    /// `abuffer → ebur128 → abuffersink` for the decoder's sound.
    private final class Graph {
        let graph: UnsafeMutablePointer<AVFilterGraph>
        let source: UnsafeMutablePointer<AVFilterContext>
        let sink: UnsafeMutablePointer<AVFilterContext>

        init(decoder: UnsafeMutablePointer<AVCodecContext>, timeBase: AVRational, source name: String) throws(PlayheadError) {
            guard let graph = avfilter_graph_alloc() else { throw PlayheadError.outOfMemory("avfilter_graph_alloc") }
            self.graph = graph
            var layout = decoder.pointee.ch_layout
            if layout.order == AV_CHANNEL_ORDER_UNSPEC || layout.nb_channels <= 0 { av_channel_layout_default(&layout, max(1, layout.nb_channels)) }
            let description = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer -> String in
                guard let base = buffer.baseAddress, av_channel_layout_describe(&layout, base, buffer.count) > 0 else { return "stereo" }
                return String(cString: base)
            }
            let format = av_get_sample_fmt_name(decoder.pointee.sample_fmt).map { String(cString: $0) } ?? "fltp"
            let arguments =
                "time_base=\(timeBase.num)/\(timeBase.den):sample_rate=\(decoder.pointee.sample_rate):sample_fmt=\(format):channel_layout=\(description)"
            var made: UnsafeMutablePointer<AVFilterContext>?
            var result = avfilter_graph_create_filter(&made, avfilter_get_by_name("abuffer"), "in", arguments, nil, graph)
            guard result >= 0, let input = made else {
                var g: UnsafeMutablePointer<AVFilterGraph>? = graph
                avfilter_graph_free(&g)
                throw FFmpegError.error(
                    .decodeFailed, "could not set up the loudness measurement", function: "avfilter_graph_create_filter", result: result, file: name)
            }
            var meter: UnsafeMutablePointer<AVFilterContext>?
            result = avfilter_graph_create_filter(&meter, avfilter_get_by_name("ebur128"), "meter", "metadata=1", nil, graph)
            var output: UnsafeMutablePointer<AVFilterContext>?
            if result >= 0 { result = avfilter_graph_create_filter(&output, avfilter_get_by_name("abuffersink"), "out", nil, nil, graph) }
            if result >= 0, let meter, let output {
                result = avfilter_link(input, 0, meter, 0)
                if result >= 0 { result = avfilter_link(meter, 0, output, 0) }
                if result >= 0 { result = avfilter_graph_config(graph, nil) }
            }
            guard result >= 0, let output else {
                var g: UnsafeMutablePointer<AVFilterGraph>? = graph
                avfilter_graph_free(&g)
                throw FFmpegError.error(
                    .decodeFailed, "could not set up the loudness measurement (ebur128)", function: "avfilter_graph_config", result: result,
                    file: name)
            }
            self.source = input
            self.sink = output
        }

        deinit {
            var g: UnsafeMutablePointer<AVFilterGraph>? = graph
            avfilter_graph_free(&g)
        }
    }
}

/// Items' measured loudness, each measured once on a worker thread when first asked for; until
/// a measurement is done its item plays at unity gain.
final class LoudnessTable: Sendable {
    /// The target, in LUFS (EBU R128 broadcast: −23).
    let target: Double
    /// The gain applied at most, either way, in dB (a near-silent item is not raised into noise).
    static let maximumGain = 20.0
    /// Keyed by the source's version: a file replaced in place is measured again.
    private let measured = Locked<[SourceVersion: Measure]>([:])

    enum Measure: Sendable {
        case pending
        case done(Double?)
    }

    init(target: Double) { self.target = target }

    /// The measured loudness of `asset` (nil: not measured yet, or no sound), starting the
    /// measurement if none is under way.
    func loudness(of asset: Asset) -> Double? {
        let version = SourceVersion(asset)
        let state = measured.withLock { table -> Measure? in
            if let known = table[version] { return known }
            table[version] = .pending
            return nil
        }
        switch state {
        case .done(let value)?: return value
        case .pending?: return nil
        case nil:
            WorkerPool.shared.run("playhead.loudness") { [measured] in
                let value = try? LoudnessMeter.integratedLoudness(of: asset, interrupt: InterruptFlag())
                measured.withLock { $0[version] = .done(value ?? nil) }
            }
            return nil
        }
    }

    /// Measures `assets` now (those not measured yet), on worker threads, and returns when every
    /// one is measured: a channel's first items are brought to the target from their first sample.
    func measure(_ assets: [Asset]) async {
        let versions = assets.map(SourceVersion.init)
        let todo = measured.withLock { table -> [(Asset, SourceVersion)] in
            var fresh: [(Asset, SourceVersion)] = []
            for (asset, version) in zip(assets, versions) where table[version] == nil {
                table[version] = .pending
                fresh.append((asset, version))
            }
            return fresh
        }
        await withTaskGroup(of: Void.self) { group in
            for (asset, version) in todo {
                group.addTask { [measured] in
                    let value = await WorkerPool.shared.value("playhead.loudness") {
                        try? LoudnessMeter.integratedLoudness(of: asset, interrupt: InterruptFlag())
                    }
                    measured.withLock { $0[version] = .done(value ?? nil) }
                }
            }
        }
    }

    /// The linear gain that brings `asset` to the target (1 until it is measured).
    func gain(for asset: Asset) -> Float {
        guard let loudness = loudness(of: asset) else { return 1 }
        let decibels = max(-Self.maximumGain, min(Self.maximumGain, target - loudness))
        return Float(pow(10, decibels / 20))
    }
}
