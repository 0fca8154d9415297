internal import CFFmpeg

/// The one subtitle read: every cue of one subtitle stream of an opened demuxer, decoded by its
/// ``StreamDecoder``, in the container's order — for a list of cues, or written as a file by
/// FFmpeg's text subtitle encoder and muxer (``SubtitleEncoder``, ``Muxer``), as `ffmpeg -map 0:s
/// out.srt` writes it. Blocking; runs on the thread that owns the demuxer.
package enum SubtitleTrackReader {
    /// Every cue of the subtitle stream `choice` names (``TrackChoice/default``: the file's
    /// default one, as FFmpeg picks it), in the container's times. A cue a bitmap stream leaves
    /// open (PGS, DVB: it lasts until the next, often empty, subtitle) ends where the next begins.
    /// - Parameters:
    ///   - choice: the subtitle track.
    ///   - demuxer: the opened source; its reading position is used up.
    /// - Returns: the track's index and cues.
    /// - Throws: `demux.trackNotFound` (no such subtitle track, naming what the file holds),
    ///   `decode.decoderNotFound`, the source's read failure (`io.truncated`, …), `state.cancelled`.
    package static func cues(_ choice: TrackChoice, demuxer: Demuxer) throws(PlayheadError) -> SubtitleTrack {
        var cues: [SubtitleCue] = []
        var track = try read(choice, demuxer: demuxer, pictures: false) { (cue) throws(PlayheadError) in cues.append(cue) }
        track.cues = cues
        return track
    }

    /// Every cue of the subtitle stream `choice` names, handed to `each` one at a time as it is
    /// read (a cue is held back until the next subtitle, or the end, says where it ends: by the
    /// rule of ``cues(_:demuxer:)``), so that a track of pictures is never held whole.
    /// - Parameters:
    ///   - choice: the subtitle track.
    ///   - demuxer: the opened source; its reading position is used up.
    ///   - pictures: whether a bitmap cue carries its pictures (``SubtitleCue/pictures``).
    ///   - each: takes each cue, in the container's order; what it throws ends the read.
    /// - Returns: the track's index, damage and canvas (its cues empty: they went to `each`).
    /// - Throws: as ``cues(_:demuxer:)``; `output.conversionFailed` when a picture cannot be
    ///   converted; what `each` throws.
    package static func read(
        _ choice: TrackChoice, demuxer: Demuxer, pictures: Bool, each: (SubtitleCue) throws(PlayheadError) -> Void
    ) throws(PlayheadError) -> SubtitleTrack {
        let reader = try SubtitleCueReader(choice, demuxer: demuxer, pictures: pictures)
        while let cue = try reader.next() { try each(cue) }
        return SubtitleTrack(trackIndex: Int(reader.index), cues: [], damagedPackets: reader.damage.count, canvasSize: reader.canvasSize)
    }

    /// Writes the subtitle stream `choice` names as a file of `format` (srt, vtt, ass) at `path`,
    /// its times counted from `origin` (the asset's start, as `ffmpeg` counts them): complete, or
    /// not at all (a failure leaves no file).
    /// - Parameters:
    ///   - choice: the subtitle track.
    ///   - demuxer: the opened source.
    ///   - format: the file's form (not JSON).
    ///   - path: where the file goes (through a temporary name).
    ///   - replacing: whether a file already at `path` may be replaced.
    ///   - origin: the time written as 0.
    /// - Returns: the track's index, the path and the cues written.
    /// - Throws: as ``cues(_:demuxer:)``; `output.encodeFailed` for a bitmap track (it has no
    ///   text); the write's failure (`output.diskFull`, `output.outputExists`, …).
    package static func write(
        _ choice: TrackChoice, demuxer: Demuxer, format: SubtitleFormat, to path: String, replacing: Bool, origin: MediaTime
    ) throws(PlayheadError) -> SubtitleFile {
        let index = try stream(choice, in: demuxer, text: true)
        guard let stream = demuxer.context.stream(at: Int(index)) else {
            throw PlayheadError(code: .trackNotFound, message: "no stream #\(index)", file: demuxer.source)
        }
        guard Self.isText(stream.pointee.codecpar.pointee.codec_id) else {
            throw PlayheadError(
                code: .encodeFailed,
                message:
                    "subtitle #\(index) (\(StreamDecoder.codecName(stream.pointee.codecpar.pointee))) is pictures, not text: it cannot be written as \(format.rawValue) (its cues' times can, as JSON)",
                file: demuxer.source)
        }
        let container: Muxer.Container
        switch format {
        case .srt: container = .srt
        case .vtt: container = .webvtt
        case .ass: container = .ass
        case .json: throw PlayheadError(code: .invalidArgument, message: "JSON cues are written by the caller, not a muxer", file: path)
        }
        let decoder = try StreamDecoder(stream: stream, threads: 1, source: demuxer.source)
        let encoder = try SubtitleEncoder(format, header: decoder.subtitleHeader, target: path)
        let muxer = try Muxer(container, to: .file(path: path, replacing: replacing))
        try muxer.addStream(from: encoder.context)
        try muxer.writeHeader()
        let packet = try OwnedPacket()
        let microseconds = AVRational(num: 1, den: Int32(AV_TIME_BASE))
        let shift = origin.isNumeric ? origin.ffmpegTimestamp(in: microseconds) : 0
        var count = 0
        let damage = try read(index, of: demuxer, decoder: decoder) { (subtitle) throws(PlayheadError) in
            // As `ffmpeg` hands a cue to its encoder: its start in `pts`, its length in the end time.
            guard subtitle.pointee.num_rects > 0, subtitle.pointee.pts != FFmpegConstants.noPTS else { return }
            let start = subtitle.pointee.start_display_time
            subtitle.pointee.pts += Int64(start) * 1000 - shift
            if subtitle.pointee.end_display_time >= start { subtitle.pointee.end_display_time -= start }
            subtitle.pointee.start_display_time = 0
            try encoder.encode(subtitle, into: packet.pointer)
            try muxer.write(packet.pointer, stream: 0, from: microseconds)
            packet.unref()
            count += 1
        }
        let written = try muxer.finish()
        return SubtitleFile(trackIndex: Int(index), path: written, cueCount: count, damagedPackets: damage.count)
    }

    /// A text subtitle codec (SRT, ASS, WebVTT, mov_text…), not pictures (PGS, DVB, DVD).
    static func isText(_ codec: AVCodecID) -> Bool {
        guard let descriptor = avcodec_descriptor_get(codec) else { return false }
        return descriptor.pointee.props & AV_CODEC_PROP_TEXT_SUB != 0
    }

    /// The subtitle stream `choice` names (``TrackChoice/resolve(kind:among:best:file:)``); with
    /// `text`, the default is a text track when the file has one (as ffmpeg matches text to text).
    static func stream(_ choice: TrackChoice, in demuxer: Demuxer, text: Bool = false) throws(PlayheadError) -> Int32 {
        if case .none = choice {
            throw PlayheadError(code: .invalidArgument, message: "no subtitle track asked for (none): nothing to read", file: demuxer.source)
        }
        let found = av_find_best_stream(demuxer.context.pointer, AVMEDIA_TYPE_SUBTITLE, -1, -1, nil, 0)
        var best = found >= 0 ? Int(found) : nil
        if text, let picked = best, let stream = demuxer.context.stream(at: picked), !isText(stream.pointee.codecpar.pointee.codec_id) {
            let texts = demuxer.context.streams.filter {
                $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE && isText($0.pointee.codecpar.pointee.codec_id)
            }
            let marked = texts.first { $0.pointee.disposition & AV_DISPOSITION_DEFAULT != 0 } ?? texts.first
            if let marked { best = Int(marked.pointee.index) }
        }
        let chosen = try choice.resolve(kind: .subtitle, among: demuxer.context.streams.map(Demuxer.candidate), best: best, file: demuxer.source)
        guard let chosen else {
            throw PlayheadError(code: .trackNotFound, message: "no subtitle track (\(demuxer.holdings))", file: demuxer.source)
        }
        return Int32(chosen)
    }

    /// Reads stream `index` to its end, handing each decoded subtitle, as `decoder` gives it, to
    /// `body` (for the text encoder, which takes FFmpeg's subtitles themselves; a list of cues is
    /// the ``SubtitleCueReader``'s).
    /// - Returns: the damage passed over.
    private static func read(
        _ index: Int32, of demuxer: Demuxer, decoder: StreamDecoder, _ body: (UnsafeMutablePointer<AVSubtitle>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) -> DamageTally {
        // That stream alone, from the start, whoever read the demuxer before (a kept one is handed
        // on where it stopped): chosen first, so that the rewind checks its start.
        demuxer.select([index], alone: true)
        try demuxer.rewind()
        let packet = try OwnedPacket()
        reading: while true {
            switch demuxer.read(into: packet) {
            case .packet:
                defer { packet.unref() }
                guard packet.streamIndex == index else { continue }
                try decoder.decodeSubtitle(packet.pointer, body)
            case .end(let end):
                if case .cancelled = end { throw .cancelled(file: demuxer.source) }
                if let failure = end.failure { throw failure }
                break reading
            }
        }
        // A decoder that holds a cue back gives it now (an empty packet drains it).
        try decoder.decodeSubtitle(packet.pointer, body)
        var damage = demuxer.damage
        damage.add(decoder.damage)
        return damage
    }

    /// What a decoded subtitle shows, on the container's timeline.
    static func cue(_ subtitle: AVSubtitle, pictures wanted: Bool, source: String) throws(PlayheadError) -> SubtitleCue {
        let microseconds = AVRational(num: 1, den: Int32(AV_TIME_BASE))
        let base = MediaTime(ffmpegTimestamp: subtitle.pts, timeBase: microseconds)
        let milliseconds = { (value: UInt32) in MediaTime(value: Int64(value), timescale: 1000) }
        var texts: [String] = [], styled: [String] = []
        var pictures = 0
        var images: [SubtitlePicture] = []
        var forced = false
        for i in 0..<Int(subtitle.num_rects) {
            guard let rect = subtitle.rects?[i]?.pointee else { continue }
            if rect.flags & AV_SUBTITLE_FLAG_FORCED != 0 { forced = true }
            switch rect.type {
            case SUBTITLE_ASS:
                let text = rect.ass.map { ASSText.styled(event: String(cString: $0)) } ?? ""
                styled.append(text)
                texts.append(ASSText.plain(text))
            case SUBTITLE_TEXT:
                let text = rect.text.map { String(cString: $0) } ?? ""
                styled.append(text)
                texts.append(text)
            default:
                pictures += 1
                if wanted, rect.type == SUBTITLE_BITMAP, let image = try SubtitlePicture.converting(rect, source: source) { images.append(image) }
            }
        }
        return SubtitleCue(
            start: base + milliseconds(subtitle.start_display_time),
            // No end (0: no duration; a wrapped negative one): the stream does not say.
            end: subtitle.end_display_time == 0 || subtitle.end_display_time >= UInt32(Int32.max)
                || subtitle.end_display_time < subtitle.start_display_time ? .indefinite : base + milliseconds(subtitle.end_display_time),
            text: texts.joined(separator: "\n"), styledText: styled.isEmpty ? nil : styled.joined(separator: "\n"), pictureCount: pictures,
            isForced: forced, pictures: images)
    }
}
