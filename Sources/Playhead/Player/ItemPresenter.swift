import PlayheadMedia

/// The sink of one item's decode session inside a player. It holds frames back until the item is
/// allowed to present (pre-roll), then hands them to the player's output: at once in
/// as-fast-as-possible mode, or at their time on the playback clock in realtime mode, dropping
/// frames that are more than a frame late.
final class ItemPresenter: FrameSink, SegmentFollowing, PictureEndFollowing, Sendable {
    let pixelFormat: OutputPixelFormat
    private let output: SharedOutput
    private let timeline: PlaybackTimeline
    let item: PlayerItem
    private let gate: PresentationGate
    private let continuity: PresentationContinuity
    private let events: @Sendable (PresenterEvent) -> Void

    enum PresenterEvent: Sendable {
        /// The first frame arrived (decoded at its start or seek position).
        case firstFrameReady(MediaTime)
        /// The first frame was shown.
        case firstFramePresented
        case timeReached(MediaTime)
    }

    private struct State {
        var info: FrameStreamInfo?
        var offset: Double?
        var firstFrameSeen = false
        /// The next frame is the first of a seek's segment (placed anew, never dropped).
        var segmentFresh = false
        var stalled = false
    }
    private let state = Locked(State())

    init(
        item: PlayerItem, output: SharedOutput, timeline: PlaybackTimeline, gate: PresentationGate, continuity: PresentationContinuity,
        events: @escaping @Sendable (PresenterEvent) -> Void
    ) {
        self.item = item
        self.continuity = continuity
        self.output = output
        self.timeline = timeline
        self.gate = gate
        self.pixelFormat = output.pixelFormat
        self.events = events
    }

    private var isCancelled: Bool { gate.isCancelled }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        state.withLock { $0.info = info }
    }

    /// A seek's segment is placed where the player put it on the timeline; the item's first
    /// segment is placed where its gate opens.
    func segmentBegins(_ start: SegmentStart) {
        continuity.restart(segment: start.segment.number, followsForwardJumps: state.withLock { $0.info?.timestampsMayJump } ?? false)
        guard let position = start.segment.presentationPosition else { return }
        state.withLock {
            $0.offset = position - start.timelineStart.seconds
            $0.segmentFresh = true
        }
    }

    func write(_ frame: VideoFrame) throws(PlayheadError) {
        let (first, fresh) = state.withLock { s -> (Bool, Bool) in
            defer {
                s.firstFrameSeen = true
                s.segmentFresh = false
            }
            return (!s.firstFrameSeen, s.segmentFresh)
        }
        if first {
            events(.firstFrameReady(frame.presentationTime))
            // Pre-roll ends here: wait until this item may present.
            guard let start = gate.wait(), let info = state.withLock({ $0.info }) else { return }
            try output.begin(info)
            state.withLock { if $0.offset == nil { $0.offset = start - info.timelineStart.seconds } }
        }
        let gone = { self.isCancelled || frame.isSuperseded }
        if gone() { return }
        let offset = state.withLock { $0.offset } ?? 0
        let duration = frame.duration.isNumeric ? frame.duration.seconds : 0
        // A jump in the source's timestamps is followed, not waited out.
        let time = frame.presentationTime.seconds
        let position = offset + time + continuity.offset(.video, time: time, duration: duration, frameDuration: duration)
        var lateness: Double?
        if timeline.realtime {
            guard let late = timeline.waitUntilDue(position, cancelled: gone) else { return }
            if late > max(duration, 0.001), !first, !fresh {
                // The frame came after its time: decoding fell behind (an underrun). Say so once
                // per episode, and drop it.
                if !state.withLock({ s in
                    defer { s.stalled = true }
                    return s.stalled
                }) {
                    item.post(.stalled)
                }
                timeline.dropped(position: position, duration: duration)
                return
            }
            state.withLock { $0.stalled = false }
            lateness = late
            if first, timeline.statistics.presented > 0 { timeline.seam(late) }
        } else {
            // As fast as possible, but a paused player holds its frames.
            guard timeline.waitWhilePaused(cancelled: gone) else { return }
        }
        var placed = frame
        placed.timelinePosition = position
        // Paced on the clock, the sound went with the picture: a stop cuts none of it (a picture
        // frozen while its decoder waits for the data's end must not take the sound with it).
        if timeline.realtime { placed.keepsSoundPast = true }
        try output.write(placed)
        timeline.presented(position: position, itemTime: time, duration: duration, lateness: lateness)
        item.notePresented(frameAt: frame.presentationTime)
        if first { events(.firstFramePresented) }
        events(.timeReached(frame.presentationTime))
    }

    /// The item's picture reached its end: the player's sound past it is its own (not cut when
    /// the outputs are given up).
    func pictureEnded() { output.pictureEnded() }

    func finish() throws(PlayheadError) {}
    func abort() {}
}
