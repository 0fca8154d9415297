internal import CFFmpeg

/// Where decoding starts delivering after a start or a seek, in the stream's time base: the first
/// frame that starts inside `[low, high]` — or, when none does, the frame displayed at `target`.
///
/// - frame-exact at `t`: `[t, t]`, target `t` (the frame displayed at `t`);
/// - within a tolerance: `[t - before, t + after]`, target `t`;
/// - from a keyframe at `k`: `[k, +∞)`;
/// - from the beginning: everything.
package struct StartSelection: Sendable, Hashable {
    package var low: Int64
    var target: Int64
    var high: Int64

    package static let everything = StartSelection(low: .min, target: .min, high: .max)
    static func displayed(at t: Int64) -> StartSelection { StartSelection(low: t, target: t, high: t) }
    static func from(keyframe k: Int64) -> StartSelection { StartSelection(low: k, target: k, high: .max) }

    /// Which of the window's frames to start from, once the window can tell: the index into
    /// `[candidate] + following` (nil: decode more). `late` is true when every frame decoded so
    /// far comes after the window (decoding began too late, or the stream starts after `low`).
    static func choose<F>(
        _ answer: DisplayedFrameWindow<F>.Answer, following: [DisplayedFrameWindow<F>.Held],
        selection: StartSelection
    ) -> (startAtCandidate: Bool, late: Bool)? {
        switch answer {
        case .needFrames, .noFrames:
            return nil
        case .beforeFirstFrame:
            return (false, selection.low != .min)
        case .frame(let candidate):
            if candidate.pts >= selection.low { return (true, false) }
            if let next = following.first, next.pts <= selection.high { return (false, false) }
            return (true, false)
        }
    }
}

/// The decoding half of the media reader for one video stream: sends packets to the decoder with
/// the skip policy of the current start selection (non-reference frames that end well before the
/// start are left out), times the frames that come out, and holds them in a
/// ``DisplayedFrameWindow`` until the start frame is known — then hands them on in order.
/// Owned by one thread at a time.
package final class VideoFrameStepper {
    package let decoder: StreamDecoder
    let facts: VideoStreamFacts
    private let scratch: OwnedFrame
    private var spare: [OwnedFrame] = []
    private var released: [OwnedFrame] = []
    package private(set) var window = DisplayedFrameWindow<OwnedFrame>()
    /// The current start selection; nil once the start frame was delivered (everything passes).
    private(set) var selection: StartSelection?
    /// `true` when the start frame came after the selection's window (see ``StartSelection/choose``).
    package private(set) var startedLate = false
    /// A start that lands late delivers nothing (``startedLate`` says so): the caller retries it
    /// from the start of the data — the same decision the image reader makes (``MediaReader``).
    package var retriesLateStart = false
    private var lastPTS: Int64?
    private var lastDuration: Int64 = 0
    /// The presentation time of the last frame taken, and how far after the one before it it
    /// came: evidence of how long the last frame of a stream lasts, where its declared duration
    /// may say 1 ms.
    private var previousTaken: Int64?
    package private(set) var lastInterval: Int64 = 0
    /// The latest presentation time at or before the selection's start among the packets sent
    /// since the last restart (see `applySkipPolicy`).
    private var latestStartBeforeLow: Int64?
    /// Frames out of the decoder since the last restart.
    package private(set) var framesDecoded = 0
    /// Decode keyframes only (a keyframe image: nothing else is needed).
    var keyframesOnly = false
    /// Decode every frame, leaving none out by the skip policy: for a caller that keeps every
    /// picture (a layer's loop recording), not only those displayed at the times asked.
    package var decodesEveryFrame = false
    /// Told of every frame out of the decoder before the window takes it, and of every restart: a
    /// loop recording's feed.
    package var recorder: (any DecodedFrameRecorder)?

    /// A stepper over a decoder of its own for `facts`' stream of `demuxer`.
    /// - Parameters:
    ///   - demuxer: the source.
    ///   - facts: the video stream's facts.
    ///   - threads: decoder threads (0: FFmpeg chooses).
    /// - Throws: `decode.noStreams` when the stream is missing; the decoder's failure to open.
    package convenience init(demuxer: Demuxer, facts: VideoStreamFacts, threads: Int) throws(PlayheadError) {
        guard let stream = demuxer.context.stream(at: Int(facts.index)) else { throw demuxer.missingVideo(what: "no video track to decode") }
        try self.init(decoder: try StreamDecoder(stream: stream, threads: threads, source: demuxer.source), facts: facts)
    }

    package init(decoder: StreamDecoder, facts: VideoStreamFacts) throws(PlayheadError) {
        scratch = try OwnedFrame()
        self.decoder = decoder
        self.facts = facts
    }

    /// Starts over: after a seek (the decoder is flushed and held frames dropped), or at the start.
    package func restart(_ selection: StartSelection, flush: Bool = true) {
        if flush { decoder.flush() }
        recorder?.restarted()
        recycle(window.reset())
        self.selection = selection
        startedLate = false
        lastPTS = nil
        lastDuration = 0
        latestStartBeforeLow = nil
        previousTaken = nil
    }

    /// A new selection without flushing (decoding forward to a later time): held frames stay.
    func retarget(_ selection: StartSelection) {
        // What was sent before still counts for a later start (it only moves forward).
        if let old = self.selection?.low, selection.low < old { latestStartBeforeLow = nil }
        self.selection = selection
        startedLate = false
    }

    // MARK: Decoding into the window

    /// Decodes `packet` (nil: the end of the data; drains the decoder) and offers every frame to
    /// the window.
    func decode(_ packet: UnsafeMutablePointer<AVPacket>?) throws(PlayheadError) {
        if let packet { applySkipPolicy(for: packet) }
        _ = try decoder.decode(packet, into: scratch) { frame throws(PlayheadError) in
            try self.take(frame)
            return true
        }
        if packet == nil { window.end() }
    }

    private func take(_ frame: OwnedFrame) throws(PlayheadError) {
        framesDecoded += 1
        let (pts, duration) = timing(of: frame.pointer)
        if let previous = previousTaken, pts > previous { lastInterval = pts - previous }
        previousTaken = pts
        try recorder?.record(frame, pts: pts, duration: duration)
        let holder = if let spare = spare.popLast() { spare } else { try OwnedFrame() }
        av_frame_move_ref(holder.pointer, frame.pointer)
        // Past the start every frame queues behind the others (a target before them all).
        let target = selection?.target ?? .min
        if let old = window.offer(holder, pts: pts, duration: duration, target: target) { recycle(old) }
    }

    /// A packet whose frame is certainly not shown at or after where delivery starts — a later
    /// frame, starting at or before that point, is already known from a packet sent since the
    /// restart — is needed only as a reference of later frames: the decoder may leave it out if
    /// it is not one (`AVDISCARD_NONREF`). Decided from presentation times seen, never from a
    /// packet's declared duration (phone Matroska and FLV files declare 1 ms for every packet,
    /// which made the rule drop the B-frame displayed at the time asked).
    private func applySkipPolicy(for packet: UnsafeMutablePointer<AVPacket>) {
        let p = packet.pointee
        if keyframesOnly {
            if decoder.skip != AVDISCARD_NONKEY { decoder.skip = AVDISCARD_NONKEY }
            return
        }
        guard !decodesEveryFrame, let low = selection?.low, low != .min, p.pts != FFmpegConstants.noPTS else {
            if decoder.skip != AVDISCARD_DEFAULT { decoder.skip = AVDISCARD_DEFAULT }
            return
        }
        let skip = latestStartBeforeLow.map { p.pts < $0 } == true ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
        if p.pts <= low, p.pts > (latestStartBeforeLow ?? .min) { latestStartBeforeLow = p.pts }
        if decoder.skip != skip { decoder.skip = skip }
    }

    /// A frame's presentation time and duration: its best-effort timestamp (or, without one, where
    /// the previous frame ended) and its duration (or the stream's frame duration).
    private func timing(of frame: UnsafeMutablePointer<AVFrame>) -> (Int64, Int64) {
        let f = frame.pointee
        let duration = f.pkt_duration > 0 ? f.pkt_duration : facts.frameDurationTicks
        var pts = f.best_effort_timestamp
        if pts == FFmpegConstants.noPTS { pts = lastPTS.map { $0 + lastDuration } ?? 0 }
        lastPTS = pts
        lastDuration = duration
        return (pts, duration)
    }

    /// The window's answer for `target` (frames it lets go are recycled).
    func answer(at target: Int64) -> DisplayedFrameWindow<OwnedFrame>.Answer {
        let answer = window.answer(at: target, releasing: &released)
        recycle(released)
        released.removeAll(keepingCapacity: true)
        return answer
    }

    func recycle(_ frame: OwnedFrame) {
        av_frame_unref(frame.pointer)
        spare.append(frame)
    }

    func recycle(_ frames: [OwnedFrame]) { for frame in frames { recycle(frame) } }

    // MARK: Sessions: the start frame, then every frame

    /// Decodes `packet` (nil: the end of the data) and calls `deliver` with each frame to deliver,
    /// in order: nothing until the start frame is known, then it and every frame after it.
    /// `deliver` borrows the frame for the call (it may move its content out) and returns false
    /// to stop. Returns false when `deliver` stopped.
    /// Sends `packet` (nil: the end of the data) as ``feed(_:deliver:)-(UnsafeMutablePointer<AVPacket>?,_)`` does.
    package func feed(
        _ packet: OwnedPacket?, deliver: (OwnedFrame, _ pts: Int64, _ duration: Int64) throws(PlayheadError) -> Bool
    ) throws(PlayheadError) -> Bool {
        try feed(packet?.pointer, deliver: deliver)
    }

    func feed(
        _ packet: UnsafeMutablePointer<AVPacket>?,
        deliver: (OwnedFrame, _ pts: Int64, _ duration: Int64) throws(PlayheadError) -> Bool
    ) throws(PlayheadError) -> Bool {
        if selection == nil, let packet {
            // Past the start: frames go straight through, none held.
            if decoder.skip != AVDISCARD_DEFAULT { decoder.skip = AVDISCARD_DEFAULT }
            return try decoder.decode(packet, into: scratch) { frame throws(PlayheadError) in
                framesDecoded += 1
                let (pts, duration) = timing(of: frame.pointer)
                defer { av_frame_unref(frame.pointer) }
                return try deliver(frame, pts, duration)
            }
        }
        try decode(packet)
        return try release(deliver)
    }

    /// Once the start frame is known, delivers the held frames from it on and lets everything
    /// after pass.
    private func release(_ deliver: (OwnedFrame, Int64, Int64) throws(PlayheadError) -> Bool) throws(PlayheadError) -> Bool {
        if let selection {
            let answer = window.answer(at: selection.target, releasing: &released)
            recycle(released)
            released.removeAll(keepingCapacity: true)
            guard let choice = StartSelection.choose(answer, following: window.following, selection: selection) else { return true }
            startedLate = choice.late
            if choice.late, retriesLateStart {
                // The caller starts again from the data's start: nothing of this start is delivered.
                recycle(window.reset())
                return false
            }
            if !choice.startAtCandidate, let dropped = window.dropCandidate() { recycle(dropped) }
            self.selection = nil
        }
        // Held frames go out in order (more can be held when a drain yields several at once).
        var go = true
        for held in window.drain() {
            if go { go = try deliver(held.frame, held.pts, held.duration) }
            recycle(held.frame)
        }
        return go
    }
}

/// What is told of every frame a ``VideoFrameStepper`` decodes, in presentation order, and of every
/// restart (after which frames start again from wherever decoding resumes).
package protocol DecodedFrameRecorder: AnyObject {
    /// A frame out of the decoder, borrowed for the call.
    func record(_ frame: OwnedFrame, pts: Int64, duration: Int64) throws(PlayheadError)
    /// Decoding starts over (a seek): frames recorded so far are not followed by the next ones.
    func restarted()
}
