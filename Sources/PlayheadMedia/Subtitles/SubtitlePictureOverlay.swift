internal import CFFmpeg

/// A bitmap subtitle track (PGS, DVB, DVD) drawn into pictures, as `ffmpeg -filter_complex
/// "[0:v][0:s]overlay"` draws it: the cue showing at each picture's time — the latest one begun
/// and not ended, its pictures placed on a transparent canvas of the size the stream declares (the
/// picture's own when it declares none) — laid on the picture by libavfilter's `overlay`
/// (``FilterGraph`` with a second source). The cues come from a demuxer of the file of its own,
/// read ahead of the pictures (``SubtitleCueReader``), and again from the start when a picture
/// comes before the last one (a seek back). Used by the ``SubtitleBurner``'s thread.
final class SubtitlePictureOverlay {
    private let choice: TrackChoice
    private let demuxer: Demuxer
    private var reader: SubtitleCueReader
    private let timeBase: AVRational
    /// Ticks taken off each picture's time before its cue is looked for (a file beside the played
    /// one counts from the played file's start).
    private let shift: Int64
    private let source: String
    /// Begun, not yet known to be over, in the order they began.
    private var showing: [SubtitleCue] = []
    /// The next cue, read ahead: it begins after the last picture's time.
    private var upcoming: SubtitleCue?
    private var readAll = false
    private var lastTime: MediaTime?
    /// The canvas of the cue drawn last, and which cue it is.
    private var canvas: (cue: SubtitleCue, frame: OwnedFrame)?
    private var graph: FilterGraph?
    private var graphKey: (size: PixelSize, format: Int32, canvas: PixelSize)?
    /// The time stamped on both of the overlay's inputs: its own count, one a picture.
    private var tick: Int64 = 0
    private let main: OwnedFrame
    private let side: OwnedFrame
    private let output: OwnedFrame

    /// An overlay of the bitmap track `choice` of `file`.
    /// - Parameters:
    ///   - file: the file (the played one, or one beside it), opened again here.
    ///   - choice: its subtitle track.
    ///   - timeBase: the pictures' time base.
    ///   - shift: ticks of `timeBase` taken off each picture's time.
    ///   - source: what errors name.
    /// - Throws: the open's failure, `demux.trackNotFound`, `decode.decoderNotFound`.
    init(file: String, choice: TrackChoice, timeBase: AVRational, shift: Int64, source: String) throws(PlayheadError) {
        demuxer = try Demuxer.open(file, interrupt: InterruptFlag())
        reader = try SubtitleCueReader(choice, demuxer: demuxer, pictures: true)
        self.choice = choice
        self.timeBase = timeBase
        self.shift = shift
        self.source = source
        main = try OwnedFrame()
        side = try OwnedFrame()
        output = try OwnedFrame()
    }

    /// `frame` with the cue showing at its time drawn in: a frame of the overlay's own, valid until
    /// the next call, or `frame` itself when no cue shows.
    /// - Throws: the subtitle file's read failure; `decode.decodeFailed` when the overlay fails.
    func burn(_ frame: OwnedFrame) throws(PlayheadError) -> OwnedFrame {
        var pts = frame.pointer.pointee.pts
        if pts == FFmpegConstants.noPTS { pts = frame.pointer.pointee.best_effort_timestamp }
        guard pts != FFmpegConstants.noPTS else { return frame }
        guard let cue = try cue(at: MediaTime(ffmpegTimestamp: pts - shift, timeBase: timeBase)), !cue.pictures.isEmpty else { return frame }
        let size = frame.size
        let format = frame.pointer.pointee.format
        let canvasSize = reader.canvasSize ?? size
        if canvas?.cue != cue || canvas?.frame.size != canvasSize { canvas = (cue, try Self.canvas(of: cue, size: canvasSize)) }
        if graphKey?.size != size || graphKey?.format != format || graphKey?.canvas != canvasSize {
            graph = try makeGraph(size: size, format: format, canvas: canvasSize, aspect: frame.pointer.pointee.sample_aspect_ratio)
            graphKey = (size, format, canvasSize)
            tick = 0
        }
        guard let graph, let canvas else { return frame }
        av_frame_unref(side.pointer)
        av_frame_unref(main.pointer)
        guard av_frame_ref(side.pointer, canvas.frame.pointer) >= 0 else { throw PlayheadError.outOfMemory("av_frame_ref") }
        guard av_frame_ref(main.pointer, frame.pointer) >= 0 else { throw PlayheadError.outOfMemory("av_frame_ref") }
        // Both inputs at one time, so the overlay lays this canvas on this picture at once.
        side.pointer.pointee.pts = tick
        main.pointer.pointee.pts = tick
        tick += 1
        try graph.push(side.pointer, side: true)
        try graph.push(main.pointer)
        av_frame_unref(output.pointer)
        guard try graph.pull(into: output) else {
            throw PlayheadError(code: .decodeFailed, message: "the subtitle overlay kept a picture back", file: source)
        }
        output.pointer.pointee.pts = frame.pointer.pointee.pts
        return output
    }

    /// The cue showing at `time`: the latest begun at or before it and not ended by it.
    private func cue(at time: MediaTime) throws(PlayheadError) -> SubtitleCue? {
        if let lastTime, time < lastTime {
            // A picture before the last: the cues again from the start.
            reader = try SubtitleCueReader(choice, demuxer: demuxer, pictures: true)
            (showing, upcoming, readAll) = ([], nil, false)
        }
        lastTime = time
        while true {
            if upcoming == nil, !readAll {
                upcoming = try reader.next()
                if upcoming == nil { readAll = true }
            }
            guard let next = upcoming, next.start <= time else { break }
            showing.append(next)
            upcoming = nil
        }
        showing.removeAll { $0.end.isNumeric && $0.end <= time }
        return showing.last
    }

    /// A transparent canvas of `size` with the cue's pictures in their places (clipped to it).
    private static func canvas(of cue: SubtitleCue, size: PixelSize) throws(PlayheadError) -> OwnedFrame {
        let frame = try OwnedFrame(size: size, format: AV_PIX_FMT_RGBA, filled: false)
        guard let base = frame.pointer.pointee.data.0 else { return frame }
        let stride = Int(frame.pointer.pointee.linesize.0)
        for row in 0..<size.height { (base + row * stride).update(repeating: 0, count: size.width * 4) }
        for picture in cue.pictures {
            let rect = picture.rect
            let left = max(0, rect.x), right = min(size.width, rect.x + rect.width)
            let top = max(0, rect.y), bottom = min(size.height, rect.y + rect.height)
            guard left < right, top < bottom, SubtitlePicture.byteCount(of: rect.size) == picture.pixels.count else { continue }
            picture.pixels.withUnsafeBufferPointer { pixels in
                guard let from = pixels.baseAddress else { return }
                for y in top..<bottom {
                    let start = ((y - rect.y) * rect.width + (left - rect.x)) * 4
                    (base + y * stride + left * 4).update(from: from + start, count: (right - left) * 4)
                }
            }
        }
        return frame
    }

    private func makeGraph(size: PixelSize, format: Int32, canvas: PixelSize, aspect: AVRational) throws(PlayheadError) -> FilterGraph {
        let sar = aspect.num > 0 && aspect.den > 0 ? aspect : AVRational(num: 1, den: 1)
        let buffer = { (size: PixelSize, format: Int32, sar: AVRational) in
            FilterGraph.Filter(
                "buffer",
                options: [
                    "video_size": "\(size.width)x\(size.height)", "pix_fmt": String(format), "time_base": "1/25",
                    "pixel_aspect": "\(sar.num)/\(sar.den)",
                ])
        }
        return try FilterGraph(
            [buffer(size, format, sar), .init("overlay", options: ["format": "auto"]), .init("buffersink")],
            side: (buffer(canvas, AV_PIX_FMT_RGBA.rawValue, AVRational(num: 1, den: 1)), 1), code: .decodeFailed, file: source,
            failure: "could not draw the subtitle pictures of \(source)")
    }
}
