internal import CFFmpeg

/// The one media reader, for one thread: a ``Demuxer`` opened once, the video decoding half (a
/// ``VideoFrameStepper``), positioned by the one ``SeekRule``, saying how it ended.
///
/// The image generator drives one per decoder: `seek(to:)` for each requested time (decoding
/// forward when that is cheaper), then `selectedFrame()`. Sessions run the same halves on their
/// own threads (the demuxer on one, the stepper on another).
package final class MediaReader {
    package let demuxer: Demuxer
    package let video: VideoFrameStepper
    private let packet: OwnedPacket
    private let scratch: OwnedPacket
    private var lastPacketDTS: Int64?
    /// How reading ended, once it has.
    package private(set) var end: DataEnd?
    /// The last seek chose a keyframe: its image is decoded alone, then the decoder drained.
    private var keyframeOnly = false
    /// Decoding cannot go on from where it is (drained for a keyframe, or after an error): the
    /// next request seeks.
    private var mustSeek = false
    /// Decoding of the current selection began at the start of the data (a late landing retried).
    private var startedAtTheBeginning = false

    package var source: String { demuxer.source }
    package var facts: VideoStreamFacts { video.facts }

    /// A reader of `demuxer`'s best video stream, decoding with `threads` threads.
    package init(demuxer: Demuxer, threads: Int) throws(PlayheadError) {
        packet = try OwnedPacket()
        scratch = try OwnedPacket()
        guard let facts = demuxer.video, let stream = demuxer.context.stream(at: Int(facts.index)) else {
            throw demuxer.missingVideo()
        }
        self.demuxer = demuxer
        demuxer.select([facts.index])
        video = try VideoFrameStepper(decoder: try StreamDecoder(stream: stream, threads: threads, source: demuxer.source), facts: facts)
        video.restart(.everything, flush: false)
    }

    /// Positions the reader for `request`: decoding forward from where it is when that reaches the
    /// time without passing a better keyframe, seeking otherwise.
    package func seek(to request: SeekRequest) throws(PlayheadError) {
        let window = video.window
        let position =
            mustSeek
            ? .unknown
            : DecodePosition(
                atStart: demuxer.isFresh, oldestHeld: window.candidate?.pts ?? window.following.first?.pts,
                newestHeld: window.newestPTS, lastPacketDTS: lastPacketDTS)
        mustSeek = true
        let (selection, moved) = try SeekRule.position(demuxer, facts: facts, request: request, from: position, scratch: scratch)
        startedAtTheBeginning = position.atStart && !moved
        if moved || position == .unknown {
            video.restart(selection)
            end = nil
            lastPacketDTS = nil
        } else {
            video.retarget(selection)
        }
        keyframeOnly = moved && selection.high == .max && selection.low == selection.target && selection.low != .min
        mustSeek = false
    }

    /// The frame the current selection asks for, decoding as far as needed. It stays held by the
    /// reader (valid until the next `seek`), so later requests can be answered from it. Nil when
    /// the stream has no frame to show (none decoded, or reading failed).
    package func selectedFrame() throws(PlayheadError) -> DisplayedFrameWindow<OwnedFrame>.Held? {
        guard let selection = video.selection else { return nil }
        mustSeek = true
        let held = keyframeOnly ? try keyframeFrame(selection) : try decode(to: selection)
        // After a keyframe alone the decoder was drained: decoding cannot go on from there.
        mustSeek = keyframeOnly
        return held
    }

    private func decode(to selection: StartSelection) throws(PlayheadError) -> DisplayedFrameWindow<OwnedFrame>.Held? {
        var retried = false
        while true {
            let answer = video.answer(at: selection.target)
            var fromTheStart = false
            if let choice = StartSelection.choose(answer, following: video.window.following, selection: selection) {
                // Decoding began after the window: the seek landed too late. Once, from the start.
                if choice.late, !retried, !startedAtTheBeginning {
                    fromTheStart = true
                } else {
                    if choice.startAtCandidate, let candidate = video.window.candidate { return candidate }
                    return video.window.following.first
                }
            }
            if case .noFrames = answer {
                guard !retried, !startedAtTheBeginning else { return nil }
                fromTheStart = true
            }
            if fromTheStart, demuxer.canSeek {
                retried = true
                try demuxer.rewind()
                video.restart(selection)
                end = nil
                lastPacketDTS = nil
                startedAtTheBeginning = true
                continue
            }
            if fromTheStart { return answer.heldFrame }
            try step()
        }
    }

    /// The keyframe the seek landed on, decoded alone: non-keyframes are skipped, and the decoder
    /// is drained right after it so that it comes out now rather than after its reorder delay.
    private func keyframeFrame(_ selection: StartSelection) throws(PlayheadError) -> DisplayedFrameWindow<OwnedFrame>.Held? {
        video.keyframesOnly = true
        defer { video.keyframesOnly = false }
        while end == nil {
            switch demuxer.read(into: packet.pointer) {
            case .packet:
                defer { av_packet_unref(packet.pointer) }
                let p = packet.pointer.pointee
                // The keyframe chosen, not one before it where the seek may have landed.
                guard p.flags & AV_PKT_FLAG_KEY != 0, p.pts == FFmpegConstants.noPTS || p.pts >= selection.low else { continue }
                try video.decode(packet.pointer)
                try video.decode(nil)
                let answer = video.answer(at: selection.target)
                guard let choice = StartSelection.choose(answer, following: video.window.following, selection: selection) else { return nil }
                return choice.startAtCandidate ? video.window.candidate : video.window.following.first
            case .end(let reason):
                end = reason
                if case .cancelled = reason { throw .cancelled(file: source) }
                if case .failed(let error) = reason { throw error }
            }
        }
        return nil
    }

    /// Reads one packet and decodes it; at the end of the data, drains the decoder.
    private func step() throws(PlayheadError) {
        if end != nil {
            try video.decode(nil)
            return
        }
        switch demuxer.read(into: packet.pointer) {
        case .packet:
            defer { av_packet_unref(packet.pointer) }
            let dts = packet.pointer.pointee.dts
            if dts != FFmpegConstants.noPTS { lastPacketDTS = dts }
            try video.decode(packet.pointer)
        case .end(let reason):
            end = reason
            if case .cancelled = reason { throw .cancelled(file: source) }
            if case .failed(let error) = reason { throw error }
            try video.decode(nil)
        }
    }

    /// What the answer just given is worth, by the one rule sessions apply (``DataEnd/failure``,
    /// ``DamageTally/failure(strict:file:)``): when reading reached an end that is not complete
    /// (data cut short, reading that failed), an answer that needed the data there — the last
    /// frame that exists, taken as the one displayed — is that failure; in a strict run, so is
    /// any damage met so far.
    package func verdict(for held: DisplayedFrameWindow<OwnedFrame>.Held, strict: Bool) -> PlayheadError? {
        // It needed the end when it is the last frame there is.
        if let failure = end?.failure, isLastFrame(held) { return failure }
        return damage.failure(strict: strict, file: source)
    }

    // MARK: The last frame (one rule for images, layers and their passes)

    /// Whether `held` is the last frame of the data: reading reached the data's end, the decoder
    /// was drained, and no frame after it is known.
    /// - Parameter held: the frame just taken.
    package func isLastFrame(_ held: DisplayedFrameWindow<OwnedFrame>.Held) -> Bool {
        end != nil && video.window.ended && held.pts >= (video.window.newestPTS ?? held.pts)
    }

    /// Where the last frame `held` ends, by evidence: it lasts its own duration, or as long as the
    /// frame before it did when that is longer (a declared 1 ms, as phone Matroska files give every
    /// packet, is not the last frame's length).
    /// - Parameter held: the last frame.
    /// - Returns: its end, on the stream's timeline.
    package func lastFrameEnd(_ held: DisplayedFrameWindow<OwnedFrame>.Held) -> MediaTime {
        MediaTime(ticks: Self.lastFrameEnd(pts: held.pts, duration: held.duration, previousInterval: video.lastInterval), timeBase: facts.timeBase)
    }

    /// The one rule for where a stream's last frame ends, in its ticks: its own duration, or the
    /// interval from the frame before it when that is longer.
    /// - Parameters:
    ///   - pts: the last frame's presentation time.
    ///   - duration: its declared duration.
    ///   - previousInterval: the time from the frame before it (0: none known).
    package static func lastFrameEnd(pts: Int64, duration: Int64, previousInterval: Int64) -> Int64 {
        pts + max(duration, previousInterval)
    }

    /// Where the data's pictures end when `target` lies at or past the end of the last frame
    /// `held` (a pass through the item is over there); nil while a frame is displayed at `target`.
    /// - Parameters:
    ///   - held: the frame taken for `target`.
    ///   - target: the time asked for, on the stream's timeline.
    package func picturesEnd(after held: DisplayedFrameWindow<OwnedFrame>.Held, target: MediaTime) -> MediaTime? {
        guard isLastFrame(held) else { return nil }
        return Self.passEnd(lastFrameEnd: lastFrameEnd(held), target: target)
    }

    /// Whether a frame asked for at `target` is past the last frame, which ends at `lastFrameEnd`:
    /// the one rule for a decoded last frame and a recorded one.
    /// - Returns: where the pictures end when `target` is at or past it, else nil.
    package static func passEnd(lastFrameEnd end: MediaTime, target: MediaTime) -> MediaTime? {
        target < end ? nil : end
    }

    /// Damage met so far: the demuxer's and the decoder's.
    package var damage: DamageTally {
        var tally = demuxer.damage
        tally.add(video.decoder.damage)
        return tally
    }
}
