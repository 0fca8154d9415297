internal import CFFmpeg
import Foundation

/// Measures an item's integrated loudness (EBU R128, in LUFS) with libavfilter's `ebur128`
/// filter: the item's best audio stream decoded whole (``WholeStreamAudio``), through the
/// ``FilterGraph`` `abuffer → ebur128=metadata=1 → abuffersink`, the last frame's
/// `lavfi.r128.I` taken. Blocking; the demuxer owner's interrupt stops it.
package enum LoudnessMeter {
    /// The integrated loudness of the sound `demuxer` reads, nil when it has none (or is silent:
    /// the measure is −70 LUFS or less, where R128 gates everything out).
    /// - Parameter demuxer: the source, read from its start; its owner's interrupt stops the measure.
    /// - Returns: the loudness in LUFS, or nil.
    /// - Throws: a failure of the data or the decoder, `cancelled` when interrupted.
    package static func integratedLoudness(of demuxer: Demuxer) throws(PlayheadError) -> Double? {
        var graph: FilterGraph?
        let filtered = try OwnedFrame()
        var loudness: Double?
        func pull() throws(PlayheadError) {
            guard let graph else { return }
            while try graph.pull(into: filtered) {
                if let entry = av_dict_get(filtered.pointer.pointee.metadata, "lavfi.r128.I", nil, 0),
                    let value = Double(String(cString: entry.pointee.value))
                {
                    loudness = value
                }
                av_frame_unref(filtered.pointer)
            }
        }
        let audio = try WholeStreamAudio.decodeFrames(
            demuxer,
            opened: { (decoder, timeBase) throws(PlayheadError) in
                graph = try FilterGraph(
                    [
                        FilterGraph.Filter("abuffer", sourceArguments(decoder.context, timeBase: timeBase)),
                        FilterGraph.Filter("ebur128", "metadata=1"),
                        FilterGraph.Filter("abuffersink"),
                    ],
                    code: .decodeFailed, file: demuxer.source, failure: "could not set up the loudness measurement")
            },
            { (decoded, _) throws(PlayheadError) in
                try graph?.push(decoded.pointer)
                try pull()
            },
            drained: { () throws(PlayheadError) in
                try graph?.push(nil)
                try pull()
            })
        guard audio != nil, let loudness, loudness > -70 else { return nil }
        return loudness
    }

    /// `abuffer`'s arguments for the decoder's sound.
    private static func sourceArguments(_ decoder: UnsafeMutablePointer<AVCodecContext>, timeBase: AVRational) -> String {
        var layout = decoder.pointee.ch_layout
        if layout.order == AV_CHANNEL_ORDER_UNSPEC || layout.nb_channels <= 0 { av_channel_layout_default(&layout, max(1, layout.nb_channels)) }
        let description = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer -> String in
            guard let base = buffer.baseAddress, av_channel_layout_describe(&layout, base, buffer.count) > 0 else { return "stereo" }
            return String(cString: base)
        }
        let format = av_get_sample_fmt_name(decoder.pointee.sample_fmt).map { String(cString: $0) } ?? "fltp"
        return
            "time_base=\(timeBase.num)/\(timeBase.den):sample_rate=\(decoder.pointee.sample_rate):sample_fmt=\(format):channel_layout=\(description)"
    }
}
