import PlayheadMedia

/// The presentation timeline shared by a player's item presenters: one continuous media position
/// across items (so the next item starts exactly where the previous one ended), mapped onto the
/// clock by an anchor and the rate. Also the statistics of what was presented.
///
/// Audio is the master clock: audio that reaches the output late moves the anchor (the timeline
/// follows the audio), while video that is late against the timeline is dropped.
final class PlaybackTimeline: Sendable {
    struct Statistics: Sendable, Hashable {
        var presented = 0
        var dropped = 0
        var lateness = LatenessHistogram()
        /// For each item after the first: how late its first frame came after the previous item's
        /// last frame ended (realtime only; 0 is a perfect seam).
        var seams = LatenessHistogram()
        /// Audio samples per channel presented.
        var audioFrames = 0
        /// Times the timeline was moved to follow late audio (realtime only).
        var audioResyncs = 0
    }

    /// How late audio may reach the output before the timeline follows it.
    static let audioSlack = 0.04

    private struct State {
        var rate: Double = 0
        /// Clock time and timeline position that correspond; nil until the first frame after a
        /// start, seek or resume sets it.
        var anchor: (clock: Duration, position: Double)?
        /// Where the next item begins: the end of the last presented frame.
        var cursor: Double = 0
        /// Where the timeline stands while it is not anchored (paused, or before the first
        /// frame after a start or seek): where it stopped, or was sought to.
        var held: Double?
        /// The current item's place on the timeline (its frames' position less their item
        /// time), from the last frame presented; nil after a seek until the next.
        var itemOffset: Double?
        /// The current item ended here (it stays current): its time goes no further, however
        /// far the clock moves; nil while it plays.
        var end: Double?
        var statistics = Statistics()
    }

    let clock: any PlaybackClock
    let realtime: Bool
    private let state = Locked(State())

    init(clock: any PlaybackClock, realtime: Bool) {
        self.clock = clock
        self.realtime = realtime
    }

    var rate: Double { state.withLock { $0.rate } }
    var cursor: Double { state.withLock { $0.cursor } }
    var statistics: Statistics { state.withLock { $0.statistics } }

    /// A new rate; the position reached so far is kept.
    func setRate(_ rate: Double) {
        let now = clock.now()
        state.withLock { s in
            if let anchor = s.anchor, s.rate > 0 {
                s.anchor = (now, anchor.position + (now - anchor.clock).seconds * s.rate)
                s.held = s.anchor?.position
            }
            if rate == 0 || s.rate == 0 { s.anchor = nil }
            s.rate = rate
        }
    }

    /// Forget the anchor: the next frame re-anchors (after a seek).
    func reanchor(at position: Double) {
        state.withLock { s in
            s.anchor = nil
            s.cursor = position
            s.held = position
            s.itemOffset = nil
            s.end = nil
        }
    }

    /// Another item became current: its place on the timeline is known at its first frame.
    func itemChanged() {
        state.withLock {
            $0.itemOffset = nil
            $0.end = nil
        }
    }

    /// The current item played to its end and stays current (`actionAtItemEnd` `.pause` or
    /// `.none`): its time goes to the end of what was presented and stands there, as a player's
    /// does at an item's end (paused there: at once), until a seek or another item.
    func itemEnded() {
        state.withLock { s in
            s.end = s.cursor
            // Nothing is presented from here: the next frame (a seek's, the next item's) anchors anew.
            s.held = s.cursor
            s.anchor = nil
        }
    }

    /// The current item's time at `hostTime` on the clock (realtime only): where the timeline is
    /// then — following its anchor at its rate, standing still while paused — less the item's
    /// place on it. Nil in as-fast-as-possible mode, and until a frame was presented (after a
    /// seek: until its first frame).
    /// - Parameter hostTime: a time of ``clock`` (``PlaybackClock/now()``), past or future.
    /// - Returns: the item time, in seconds.
    func itemTime(atHostTime hostTime: Duration) -> Double? {
        guard realtime else { return nil }
        return state.withLock { s -> Double? in
            guard let offset = s.itemOffset else { return nil }
            let position: Double
            if let anchor = s.anchor, s.rate > 0 {
                position = min(anchor.position + (hostTime - anchor.clock).seconds * s.rate, s.end ?? .infinity)
            } else {
                position = s.end ?? s.held ?? s.cursor
            }
            return position - offset
        }
    }

    /// When the frame at `position` is due on the clock; anchors on the first call. Nil while paused.
    func due(_ position: Double) -> Duration? {
        let now = clock.now()
        return state.withLock { s -> Duration? in
            guard s.rate > 0 else { return nil }
            guard let anchor = s.anchor else {
                s.anchor = (now, position)
                return now
            }
            return anchor.clock + .seconds((position - anchor.position) / s.rate)
        }
    }

    /// Audio from `position` to `position + duration` was handed to the output just now. In
    /// realtime mode, if that is later than its end was due by more than the slack, the output
    /// has it only now: the timeline is re-anchored there, and everything after follows.
    func audioPresented(position: Double, duration: Double, frames: Int) {
        let now = realtime ? clock.now() : .zero
        state.withLock { s in
            s.cursor = max(s.cursor, position + duration)
            s.statistics.audioFrames += frames
            guard realtime, s.rate > 0, let anchor = s.anchor else { return }
            let due = anchor.clock + .seconds((position + duration - anchor.position) / s.rate)
            if (now - due).seconds > Self.audioSlack {
                s.anchor = (now, position + duration)
                s.statistics.audioResyncs += 1
            }
        }
    }

    /// Sleeps (in short steps, to notice pause and cancellation) until `position` is due. Returns
    /// how late it is, or nil when cancelled.
    func waitUntilDue(_ position: Double, cancelled: () -> Bool) -> Double? {
        while !cancelled() {
            guard let due = due(position) else {
                clock.sleep(for: .milliseconds(5))  // paused
                continue
            }
            let remaining = due - clock.now()
            if remaining <= .zero { return (Duration.zero - remaining).seconds }
            clock.sleep(for: min(remaining, .milliseconds(10)))
        }
        return nil
    }

    /// As-fast-as-possible mode: returns at once unless paused; false when cancelled meanwhile.
    func waitWhilePaused(cancelled: () -> Bool) -> Bool {
        while rate == 0 {
            if cancelled() { return false }
            clock.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// A frame of item time `itemTime` was presented at `position`, for `duration` (late by
    /// `lateness` in realtime).
    func presented(position: Double, itemTime: Double, duration: Double, lateness: Double?) {
        state.withLock { s in
            s.itemOffset = position - itemTime
            s.cursor = max(s.cursor, position + duration)
            s.statistics.presented += 1
            if let lateness { s.statistics.lateness.record(lateness) }
        }
    }

    func seam(_ lateness: Double) {
        state.withLock { $0.statistics.seams.record(lateness) }
    }

    func dropped(position: Double, duration: Double) {
        state.withLock { s in
            s.cursor = max(s.cursor, position + duration)
            s.statistics.dropped += 1
        }
    }
}
