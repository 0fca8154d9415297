import PlayheadMedia

/// One stretch of a session's playback: from its start, or from a seek, to the end of the data,
/// the end time or the frame limit. Numbered: every packet, frame and buffer in flight carries
/// its segment's number, and whatever belongs to an older segment than the latest is dropped.
struct Segment: Sendable, Hashable {
    var number: Int
    /// Where to start; nil plays from the beginning.
    var start: SeekRequest?
    /// Frames at or after this time are not delivered.
    var end: MediaTime?
    var frameLimit: Int?
    /// For a player: where on its timeline the segment's start is placed (nil: where the item's
    /// gate opens).
    var presentationPosition: Double?
    /// Decode from the start of the data, never seeking: the retry of a start whose seek landed
    /// after the frame asked for (see ``SessionStateMachine/retryFromTheStart(_:as:)``).
    var fromTheStart = false
}

/// Which stages a segment ends in: the video (its last frame written) and the audio.
struct SegmentRoutes: OptionSet, Sendable, Hashable {
    let rawValue: Int
    static let video = SegmentRoutes(rawValue: 1)
    static let audio = SegmentRoutes(rawValue: 2)
}

/// The pure rules of a session's life: its segments, who waits for what, and what each event
/// means for them. It holds the waiters (a seek waiting for its first frame, the caller waiting
/// for the session's end), so every exit path — a first frame, a newer seek, a segment that ends
/// without a frame, a failure, a stop — must say what each of them gets. Performs nothing; each
/// event returns the actions its owner carries out outside its lock.
struct SessionStateMachine<Waiter, Report> {
    enum Mode: Sendable {
        /// Ends after its first segment (`DecodeSession.run`).
        case once
        /// Lives until stopped; each segment's end is reported (a player's item).
        case interactive
    }

    struct Actions {
        /// Seek waiters to resume, with where the seek landed (nil: superseded, no frame, stopped).
        var resume: [(Waiter, MediaTime?)] = []
        /// A segment ended with this report.
        var segmentEnded: Report?
        /// Which segment ended, when it ended at its end (not by a failure): a seek may supersede
        /// it before the report is delivered, and a superseded segment's end is not told.
        var endedSegment: Int?
        /// Stop every stage (the session is over).
        var stop = false
    }

    var mode: Mode
    /// The stages a segment ends in; set once the source is open and its streams known.
    var routes: SegmentRoutes
    private(set) var segment: Segment
    private(set) var isStopped = false
    /// Each seek's waiter, under the segment it waits for (a retry moves it) and the number of
    /// the seek's own segment (its key, which a cancellation names).
    private var seekWaiters: [(segment: Int, key: Int, waiter: Waiter)] = []
    private var ended: SegmentRoutes = []
    private var firstFrameSeen = false
    private var report: Report?

    init(mode: Mode, routes: SegmentRoutes, first: Segment) {
        self.mode = mode
        self.routes = routes
        self.segment = first
    }

    /// A new segment replaces the current one (a seek). Earlier seek waiters are superseded.
    mutating func seek(_ next: Segment, waiter: Waiter) -> Actions {
        var actions = Actions()
        guard !isStopped else {
            actions.resume.append((waiter, nil))
            return actions
        }
        actions.resume = seekWaiters.map { ($0.waiter, nil) }
        seekWaiters = [(next.number, next.number, waiter)]
        segment = next
        ended = []
        firstFrameSeen = false
        report = nil
        return actions
    }

    /// Segment `number`'s seek landed after the frame it asks for (every frame decoded came after
    /// it): it is started again as `next`, from the start of the data, once. Its seek waiters wait
    /// for `next`'s first frame.
    mutating func retryFromTheStart(_ number: Int, as next: Segment) -> Bool {
        guard number == segment.number, !isStopped, !segment.fromTheStart, !firstFrameSeen else { return false }
        seekWaiters = seekWaiters.map { ($0.segment == number ? next.number : $0.segment, $0.key, $0.waiter) }
        segment = next
        ended = []
        report = nil
        return true
    }

    /// The first frame (or, without video, the first audio) of segment `number` reached the output.
    mutating func firstFrame(of number: Int, at time: MediaTime) -> Actions {
        var actions = Actions()
        guard number == segment.number, !firstFrameSeen else { return actions }
        firstFrameSeen = true
        actions.resume = seekWaiters.filter { $0.segment == number }.map { ($0.waiter, time) }
        seekWaiters.removeAll { $0.segment == number }
        return actions
    }

    /// The caller of the seek that made segment `number` stopped waiting (its task was
    /// cancelled): it gets nil now, also when the seek was retried as a later segment; the
    /// segment goes on.
    mutating func abandonSeek(_ number: Int) -> Actions {
        var actions = Actions()
        actions.resume = seekWaiters.filter { $0.key == number }.map { ($0.waiter, nil) }
        seekWaiters.removeAll { $0.key == number }
        return actions
    }

    /// A stage finished its part of segment `number`. `report` is the segment's account so far
    /// (the last stage to end gives the complete one).
    mutating func routeEnded(_ route: SegmentRoutes, of number: Int, report: Report) -> Actions {
        var actions = Actions()
        guard number == segment.number, !isStopped else { return actions }
        ended.insert(route)
        self.report = report
        guard ended.isSuperset(of: routes) else { return actions }
        // A seek whose segment ended without showing anything lands nowhere.
        actions.resume = seekWaiters.filter { $0.segment == number }.map { ($0.waiter, nil) }
        seekWaiters.removeAll { $0.segment == number }
        actions.segmentEnded = report
        actions.endedSegment = number
        if mode == .once {
            isStopped = true
            actions.stop = true
        }
        return actions
    }

    /// A stage failed: the session is over.
    mutating func failed(report: Report) -> Actions {
        var actions = stop()
        actions.segmentEnded = report
        return actions
    }

    /// Stops the session (cancelled, or its owner is done with it). Every waiter is resumed.
    mutating func stop() -> Actions {
        var actions = Actions()
        guard !isStopped else { return actions }
        isStopped = true
        actions.stop = true
        actions.resume = seekWaiters.map { ($0.waiter, nil) }
        seekWaiters.removeAll()
        return actions
    }
}
