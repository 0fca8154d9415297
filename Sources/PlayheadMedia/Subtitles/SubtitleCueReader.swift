internal import CFFmpeg

/// The one cue rule, one cue at a time: the subtitle stream a ``TrackChoice`` names, read alone
/// from an opened demuxer and decoded by its ``StreamDecoder``; a cue is given once the next
/// subtitle (or the stream's end) says where it ends — a cue left open ends where the next
/// begins, and an empty subtitle (a bitmap stream's clearing of the screen) ends the one before
/// it, if that one was to last longer. Used by every list of cues (``SubtitleTrackReader``) and
/// by the pictures drawn into a film (``SubtitleBurner``). Blocking; not `Sendable`: used by the
/// thread that owns the demuxer.
final class SubtitleCueReader {
    /// The stream read.
    let index: Int32
    private let demuxer: Demuxer
    private let decoder: StreamDecoder
    private let pictures: Bool
    private let packet: OwnedPacket
    /// The cue whose end the next subtitle may still change.
    private var pending: SubtitleCue?
    /// Cues complete, to give.
    private var ready: [SubtitleCue] = []
    private var ended = false

    /// A reader of the subtitle stream `choice` names, from the start of `demuxer`'s data.
    /// - Parameters:
    ///   - choice: the track (``SubtitleTrackReader/stream(_:in:text:)``).
    ///   - demuxer: the opened source: rewound, and left reading that stream alone.
    ///   - pictures: whether a bitmap cue carries its pictures (``SubtitleCue/pictures``).
    /// - Throws: `demux.trackNotFound`, `decode.decoderNotFound`, the rewind's failure.
    init(_ choice: TrackChoice, demuxer: Demuxer, pictures: Bool) throws(PlayheadError) {
        index = try SubtitleTrackReader.stream(choice, in: demuxer)
        guard let stream = demuxer.context.stream(at: Int(index)) else {
            throw PlayheadError(code: .trackNotFound, message: "no stream #\(index)", file: demuxer.source)
        }
        decoder = try StreamDecoder(stream: stream, threads: 1, source: demuxer.source)
        self.demuxer = demuxer
        self.pictures = pictures
        packet = try OwnedPacket()
        // That stream alone, from the start, whoever read the demuxer before (a kept one is handed
        // on where it stopped): chosen first, so that the rewind checks its start.
        demuxer.select([index], alone: true)
        try demuxer.rewind()
    }

    /// The picture size the stream's places count in, as its decoder reads it (nil: none declared).
    var canvasSize: PixelSize? {
        let (width, height) = (Int(decoder.context.pointee.width), Int(decoder.context.pointee.height))
        return width > 0 && height > 0 ? PixelSize(width: width, height: height) : nil
    }

    /// The damage passed over so far (the demuxer's and the decoder's).
    var damage: DamageTally {
        var damage = demuxer.damage
        damage.add(decoder.damage)
        return damage
    }

    /// The next cue, in the container's order, on the file's timeline; nil at the stream's end.
    /// - Throws: the source's read failure (`io.truncated`, …), `state.cancelled`,
    ///   `output.conversionFailed` when a picture cannot be converted.
    func next() throws(PlayheadError) -> SubtitleCue? {
        while ready.isEmpty, !ended {
            switch demuxer.read(into: packet) {
            case .packet:
                defer { packet.unref() }
                guard packet.streamIndex == index else { continue }
                try decoder.decodeSubtitle(packet.pointer) { (subtitle) throws(PlayheadError) in try take(subtitle) }
            case .end(let end):
                if case .cancelled = end { throw .cancelled(file: demuxer.source) }
                if let failure = end.failure { throw failure }
                // A decoder that holds a cue back gives it now (an empty packet drains it).
                try decoder.decodeSubtitle(packet.pointer) { (subtitle) throws(PlayheadError) in try take(subtitle) }
                ended = true
                if let last = pending { ready.append(last) }
                pending = nil
            }
        }
        return ready.isEmpty ? nil : ready.removeFirst()
    }

    /// One decoded subtitle: ends the pending cue where it says, and becomes the pending one.
    private func take(_ subtitle: UnsafeMutablePointer<AVSubtitle>) throws(PlayheadError) {
        let cue = try SubtitleTrackReader.cue(subtitle.pointee, pictures: pictures, source: demuxer.source)
        guard cue.start.isNumeric else { return }
        if var last = pending, !last.end.isNumeric || (subtitle.pointee.num_rects == 0 && last.end > cue.start) {
            last.end = max(last.start, cue.start)
            pending = last
        }
        guard subtitle.pointee.num_rects > 0 else { return }
        if let last = pending { ready.append(last) }
        pending = cue
    }
}
