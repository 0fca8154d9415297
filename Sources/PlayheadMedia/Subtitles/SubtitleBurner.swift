internal import CFFmpeg

/// Subtitles drawn into the picture, before it is fitted: a track of the played file, or a
/// subtitle file beside it (`.srt`, `.ass`, `.vtt`, `.sup`). Text is rendered by libavfilter's
/// `subtitles` filter (libass) as `ffmpeg -vf subtitles=FILE:si=N` renders it; a bitmap track
/// (PGS, DVB, DVD) is laid on the picture by its `overlay` filter, each picture where the stream
/// places it, as `ffmpeg -filter_complex "[0:v][0:s]overlay"` lays it. The played file is opened
/// again for its subtitles, by its path or URL (not a byte source or a pipe).
public enum SubtitleBurnIn: Sendable, Hashable {
    /// A subtitle track of the played file (an index as `probe` prints it, a language, its default).
    case track(TrackChoice)
    /// The first subtitle track of another file (a sidecar `.srt`).
    case file(String)
}

/// Draws a ``SubtitleBurnIn``'s cues into decoded pictures before they are fitted (the one
/// place, for every path a ``FrameConverter`` serves): a `buffer → subtitles → buffersink`
/// ``FilterGraph``, made at the first picture (its size and format), remade when they change.
/// Each picture is drawn at its own time (its timestamp on the stream's time base, the file's
/// own timeline, as the subtitle file's cues are). Used by the converter's thread.
package final class SubtitleBurner {
    /// The file the filter reads and which of its subtitle tracks (among its subtitle tracks).
    private let file: String
    private let subtitleTrack: Int?
    private let timeBase: AVRational
    /// Ticks taken off each picture's time before it is drawn: a subtitle file beside the played
    /// one counts its cues from the played file's start (as `ffmpeg`, which starts every input at
    /// 0, draws it); a track of the played file shares its timeline (nothing taken off).
    private var shift: Int64 = 0
    private let source: String
    private var graph: FilterGraph?
    private var graphKey: (size: PixelSize, format: Int32)?
    private let input: OwnedFrame
    private let output: OwnedFrame
    /// A bitmap track's overlay (nil: text, through the `subtitles` filter).
    private var pictures: SubtitlePictureOverlay?

    /// A burner of `burnIn` for the pictures of `demuxer`'s stream timed in `timeBase`.
    /// - Parameters:
    ///   - burnIn: the subtitles.
    ///   - demuxer: the played source (a track of it is chosen among its streams).
    ///   - timeBase: the decoded pictures' time base (their stream's).
    /// - Throws: `demux.trackNotFound` when the played file has no such subtitle track.
    package init(_ burnIn: SubtitleBurnIn, demuxer: Demuxer, timeBase: Rational) throws(PlayheadError) {
        switch burnIn {
        case .track(let choice):
            let index = try SubtitleTrackReader.stream(choice, in: demuxer)
            // The filter reads the file itself: a source read once cannot be read by it too.
            guard demuxer.canSeek, !demuxer.context.io.isByteSource else {
                throw PlayheadError(
                    code: .invalidArgument,
                    message:
                        "its own subtitles cannot be drawn: drawing them opens the file again, and a pipe, standard input or a byte source cannot be (give a subtitle file)",
                    file: demuxer.source)
            }
            file = demuxer.source
            subtitleTrack =
                demuxer.context.streams.filter {
                    $0.pointee.index < index && $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
                }.count
            if let stream = demuxer.context.stream(at: Int(index)), !SubtitleTrackReader.isText(stream.pointee.codecpar.pointee.codec_id) {
                pictures = try SubtitlePictureOverlay(
                    file: file, choice: .index(Int(index)), timeBase: timeBase.ffmpeg, shift: 0, source: demuxer.source)
            }
        case .file(let path):
            file = path
            subtitleTrack = nil
            let start = demuxer.containerStart
            if start.isNumeric { shift = start.ffmpegTimestamp(in: timeBase.ffmpeg) }
            // A file of pictures (a `.sup`) is laid on as a bitmap track is; text goes to libass.
            if Self.holdsPictures(path) {
                pictures = try SubtitlePictureOverlay(file: path, choice: .default, timeBase: timeBase.ffmpeg, shift: shift, source: path)
            }
        }
        self.timeBase = timeBase.ffmpeg
        source = demuxer.source
        input = try OwnedFrame()
        output = try OwnedFrame()
    }

    /// Whether the subtitle file at `path` holds a bitmap track first (its first subtitle stream,
    /// as its header says); false when it cannot be opened (the `subtitles` filter then says why).
    private static func holdsPictures(_ path: String) -> Bool {
        guard let demuxer = try? Demuxer.open(path, interrupt: InterruptFlag()),
            let stream = demuxer.context.streams.first(where: { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE })
        else { return false }
        return !SubtitleTrackReader.isText(stream.pointee.codecpar.pointee.codec_id)
    }

    /// `frame` with the cues showing at its time drawn in: a frame of the burner's own, valid
    /// until the next call; `frame` itself is left as it was.
    /// - Throws: `decode.decodeFailed` naming the subtitle file when it cannot be read or drawn.
    func burn(_ frame: OwnedFrame) throws(PlayheadError) -> OwnedFrame {
        if let pictures { return try pictures.burn(frame) }
        let size = frame.size
        let format = frame.pointer.pointee.format
        if graphKey?.size != size || graphKey?.format != format {
            graph = try makeGraph(size: size, format: format, aspect: frame.pointer.pointee.sample_aspect_ratio)
            graphKey = (size, format)
        }
        guard let graph else { return frame }
        av_frame_unref(input.pointer)
        let referenced = av_frame_ref(input.pointer, frame.pointer)
        guard referenced >= 0 else { throw PlayheadError.outOfMemory("av_frame_ref") }
        // The filter draws by the picture's time: its presentation time, else its best guess.
        if input.pointer.pointee.pts == FFmpegConstants.noPTS { input.pointer.pointee.pts = input.pointer.pointee.best_effort_timestamp }
        if input.pointer.pointee.pts != FFmpegConstants.noPTS { input.pointer.pointee.pts -= shift }
        try graph.push(input.pointer)
        av_frame_unref(output.pointer)
        guard try graph.pull(into: output) else {
            throw PlayheadError(code: .decodeFailed, message: "the subtitles filter kept a picture back", file: source)
        }
        return output
    }

    private func makeGraph(size: PixelSize, format: Int32, aspect: AVRational) throws(PlayheadError) -> FilterGraph {
        let sar = aspect.num > 0 && aspect.den > 0 ? aspect : AVRational(num: 1, den: 1)
        var options = ["filename": file]
        if let subtitleTrack { options["si"] = String(subtitleTrack) }
        return try FilterGraph(
            [
                .init(
                    "buffer",
                    options: [
                        "video_size": "\(size.width)x\(size.height)", "pix_fmt": String(format),
                        "time_base": "\(timeBase.num)/\(timeBase.den)", "pixel_aspect": "\(sar.num)/\(sar.den)",
                    ]),
                .init("subtitles", options: options, missing: "this FFmpeg has no subtitles filter (libass): subtitles cannot be drawn"),
                .init("buffersink"),
            ], code: .decodeFailed, file: file, failure: "could not draw the subtitles of \(file)")
    }
}
