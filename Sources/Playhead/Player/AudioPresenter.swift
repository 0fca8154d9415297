import PlayheadMedia

/// The audio sink of one item's decode session inside a player. Like ``ItemPresenter`` for video,
/// it holds audio back until the item may present (pre-roll), then hands it to the player's audio
/// output: at once in as-fast-as-possible mode, or at its time in realtime mode. Audio is never
/// dropped: it is the master clock. When a buffer reaches the output later than its time (decoding
/// or the output fell behind), the timeline is moved to follow the audio, and the video, which is
/// presented against the timeline, follows it too.
final class AudioPresenter: AudioFormatNegotiating, SegmentFollowing, Sendable {
    private let output: SharedAudioOutput
    private let timeline: PlaybackTimeline
    private let gate: PresentationGate
    private let continuity: PresentationContinuity
    private let item: PlayerItem
    private let events: @Sendable (ItemPresenter.PresenterEvent) -> Void

    private struct State {
        var info: AudioStreamInfo?
        var offset: Double?
        /// An item without video: its audio drives the item's time and the player's events.
        var drivesItem = false
        var presentedAny = false
        /// The gate was passed and the output told about the stream.
        var begun = false
    }
    private let state = Locked(State())

    init(
        item: PlayerItem, output: SharedAudioOutput, timeline: PlaybackTimeline, gate: PresentationGate, continuity: PresentationContinuity,
        events: @escaping @Sendable (ItemPresenter.PresenterEvent) -> Void
    ) {
        self.item = item
        self.continuity = continuity
        self.output = output
        self.timeline = timeline
        self.gate = gate
        self.events = events
    }

    /// The player's format (called on the session's audio thread before any audio is resampled).
    /// The first item whose audio starts while it may present fixes it; an item pre-rolling before
    /// that waits until it is fixed or until its own gate opens (its video pre-rolls meanwhile).
    func outputFormat(for source: AudioStreamInfo) throws(PlayheadError) -> AudioFormat {
        while true {
            if let format = output.format { return format }
            if gate.isCancelled { throw .cancelled(file: source.source) }
            if gate.isOpen { return output.fix(from: source) }
            _ = gate.wait(timeout: .milliseconds(5))
        }
    }

    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {
        state.withLock { $0.info = info }
    }

    /// A seek's segment is placed where the player put it on the timeline (as its video is).
    func segmentBegins(_ start: SegmentStart) {
        continuity.restart(segment: start.segment.number, followsForwardJumps: state.withLock { $0.info?.timestampsMayJump } ?? false)
        guard let position = start.segment.presentationPosition else { return }
        state.withLock { $0.offset = position - start.timelineStart.seconds }
    }

    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        if !state.withLock({ $0.begun }) {
            // Pre-roll ends here: wait until this item may present.
            guard let start = gate.wait(), let info = state.withLock({ $0.info }) else { return }
            try output.begin(info)
            let drives = item.presentationSize == nil
            state.withLock {
                // A seek before the first buffer has placed the segment already.
                if $0.offset == nil { $0.offset = start - info.timelineStart.seconds }
                $0.drivesItem = drives
                $0.begun = true
            }
            if drives { events(.firstFrameReady(buffer.presentationTime)) }
        }
        let offset = state.withLock { $0.offset }
        let gone = { self.gate.isCancelled || buffer.isSuperseded }
        guard let offset, !gone() else { return }
        let duration = Double(buffer.frameCount) / Double(buffer.sampleRate)
        let time = buffer.presentationTime.seconds
        let position = offset + time + continuity.offset(.audio, time: time, duration: duration, frameDuration: duration)
        if timeline.realtime {
            guard timeline.waitUntilDue(position, cancelled: gone) != nil else { return }
        } else {
            guard timeline.waitWhilePaused(cancelled: gone) else { return }
        }
        var placed = buffer
        placed.timelinePosition = position
        try output.write(placed)
        timeline.audioPresented(position: position, duration: duration, frames: buffer.frameCount)
        item.notePresented(audioFrames: buffer.frameCount)
        let (drives, first) = state.withLock { s in
            defer { s.presentedAny = true }
            return (s.drivesItem, !s.presentedAny)
        }
        if drives {
            item.setCurrentTime(buffer.presentationTime)
            if first { events(.firstFramePresented) }
            events(.timeReached(buffer.presentationTime))
        }
    }

    func finish() throws(PlayheadError) {}
    func abort() {}
}
