/// How one of a channel's targets is written, decided without FFmpeg, threads or a clock: which
/// packets are queued, which are written, when the target is opened, what a failure does, and the
/// counts its status reports. The ``TargetWriter`` holds it under its lock and performs what it
/// returns; the tests drive it alone (`TargetWriterStateMachineTests`).
///
/// - A target opens (again) only at a video keyframe, and not before its retry time.
/// - A network stream or an HLS folder that fails is reopened with back-off (1, 2, 4 … 30 s) while
///   the channel goes on; a recording or standard output that fails is given up for good (its
///   writer ends; what it had is kept, as the muxer keeps it).
/// - A target reopened after a failure is on probation: it counts as back up (no longer down,
///   its back-off starting over) only once it has been written to for `provingSeconds` without
///   failing again. An open alone proves nothing (an HLS folder on a full disk opens, then fails
///   at its first segment's end), so a target that keeps failing stays down however often it
///   reopens, and `/health` says so.
/// - The queue between the channel and the writer is bounded: beyond it packets are dropped and
///   the target resumes at the next video keyframe, so nothing waits without bound.
package struct TargetWriterStateMachine: Sendable {
    /// What a failure does.
    package enum Recovery: Sendable, Hashable {
        /// Reopened with back-off (network streams, HLS).
        case reconnects
        /// Given up for good (recordings, standard output).
        case givesUp
    }

    /// Where the writer is.
    package enum Phase: Sendable, Hashable {
        /// Not open: opens at the next video keyframe at or after `retryAt` (nil: the next
        /// keyframe); `backoff` is the wait after the next failure.
        case closed(retryAt: Double?, backoff: Double)
        /// Open: packets are written. `provenAt`: on probation after a failure, the time from
        /// which a write proves it back up (nil: it is).
        case open(backoff: Double, provenAt: Double?)
        /// Given up for good: every packet is dropped until the channel ends.
        case failed
        /// Completed, given up at the end, or stopped: nothing more is written.
        case ended
    }

    /// What the writer thread does with the packet it took.
    package enum Step: Sendable, Hashable {
        case drop
        /// Open the target (then, if it opened, write the packet).
        case open
        case write
    }

    /// What the writer thread does once the channel has ended (the queue is empty).
    package enum Ending: Sendable, Hashable {
        /// Write the trailer; a recording takes its name.
        case complete
        /// Close without completing (a stop, or nothing open).
        case abandon
    }

    package static let firstBackoff = 1.0
    package static let longestBackoff = 30.0

    package let recovery: Recovery
    /// How long a target reopened after a failure must be written to before it counts as up.
    package let provingSeconds: Double
    package private(set) var phase = Phase.closed(retryAt: nil, backoff: firstBackoff)
    package private(set) var status: ChannelTargetStatus
    /// The queue overflowed (or the writer is resuming): packets are dropped until a video keyframe.
    private var queueResumesAtKeyframe = true
    /// Since when the target has not been connected (nil: it is, or it ended).
    package private(set) var downSince: Double?

    /// A machine for the target `name`, made at `now`.
    /// - Parameters:
    ///   - name: what the status calls the target.
    ///   - recovery: what a failure does.
    ///   - now: when it begins connecting.
    ///   - provingSeconds: how long a target reopened after a failure must be written to before
    ///     it counts as up (an HLS folder: past its first segment's end).
    package init(name: String, recovery: Recovery, now: Double = 0, provingSeconds: Double = 2) {
        self.recovery = recovery
        self.provingSeconds = max(0, provingSeconds.isFinite ? provingSeconds : 0)
        status = ChannelTargetStatus(target: name, state: .connecting)
        downSince = now
    }

    // MARK: The channel's side

    /// Whether the channel's thread queues a packet: not once the target is given up or ended,
    /// not past `limit` packets waiting, not before a video keyframe after an overflow.
    /// - Parameters:
    ///   - video: a picture packet.
    ///   - keyframe: a picture packet that starts a group of pictures.
    ///   - queued: packets waiting now.
    ///   - limit: packets that may wait.
    /// - Returns: true to queue it.
    package mutating func admit(video: Bool, keyframe: Bool, queued: Int, limit: Int) -> Bool {
        switch phase {
        case .failed, .ended:
            if video { status.framesDropped += 1 }
            return false
        case .closed, .open:
            break
        }
        if queued >= limit { queueResumesAtKeyframe = true }
        if queueResumesAtKeyframe && !(video && keyframe && queued < limit) {
            if video { status.framesDropped += 1 }
            return false
        }
        queueResumesAtKeyframe = false
        return true
    }

    // MARK: The writer's side

    /// What to do with the packet taken from the queue at time `now` (seconds on any monotonic clock).
    package mutating func step(video: Bool, keyframe: Bool, now: Double) -> Step {
        switch phase {
        case .open:
            return .write
        case .closed(let retryAt, _):
            // A target opens (again) at a keyframe, not before its retry time.
            if let retryAt, now < retryAt {
                if video { status.framesDropped += 1 }
                return .drop
            }
            guard video, keyframe else {
                if video { status.framesDropped += 1 }
                return .drop
            }
            return .open
        case .failed, .ended:
            if video { status.framesDropped += 1 }
            return .drop
        }
    }

    /// The target opened at `now`. The first time, it is up (`connected`); after a failure it is
    /// on probation — still `reconnecting` and down, its back-off and last error kept — until a
    /// write proves it (``wrote(video:now:)``).
    package mutating func opened(now: Double) {
        guard case .closed(_, let backoff) = phase else { return }
        status.connects += 1
        if status.lastError == nil {
            phase = .open(backoff: Self.firstBackoff, provenAt: nil)
            downSince = nil
            status.state = .connected
        } else {
            phase = .open(backoff: backoff, provenAt: now + provingSeconds)
        }
    }

    /// Opening failed at `now`: a reconnecting target waits its back-off, another is given up.
    /// - Parameters:
    ///   - error: what failed.
    ///   - now: when.
    ///   - stopping: the channel is stopping (nothing is counted or retried).
    package mutating func openFailed(_ error: String, now: Double, stopping: Bool) {
        guard case .closed(_, let backoff) = phase else { return }
        if stopping { return }
        status.lastError = error
        status.framesDropped += 1
        fail(now: now, backoff: backoff)
    }

    /// A packet was written at `now`: a target on probation whose time has come is up again (no
    /// longer down, its back-off starting over, its last error cleared).
    package mutating func wrote(video: Bool, now: Double) {
        if video { status.framesWritten += 1 }
        guard case .open(_, let provenAt?) = phase, now >= provenAt else { return }
        phase = .open(backoff: Self.firstBackoff, provenAt: nil)
        downSince = nil
        status.lastError = nil
        status.state = .connected
    }

    /// A write failed at `now`: the connection is given up (the writer abandons it); a
    /// reconnecting target waits its back-off, another is given up.
    package mutating func writeFailed(_ error: String, now: Double, stopping: Bool) {
        guard case .open(let backoff, _) = phase else { return }
        if stopping {
            phase = .closed(retryAt: nil, backoff: backoff)
            return
        }
        status.lastError = error
        status.drops += 1
        fail(now: now, backoff: backoff)
    }

    private mutating func fail(now: Double, backoff: Double) {
        if downSince == nil { downSince = now }
        switch recovery {
        case .givesUp:
            phase = .failed
            status.state = .failed
        case .reconnects:
            phase = .closed(retryAt: now + backoff, backoff: min(Self.longestBackoff, backoff * 2))
            status.state = .reconnecting
        }
        // What waits now is of a connection that is gone: the queue resumes at a keyframe.
        queueResumesAtKeyframe = true
    }

    /// Packets dropped from the queue without being written (a target given up drains it).
    package mutating func dropped(pictures: Int) {
        status.framesDropped += pictures
    }

    /// The channel ended (`stopping`: stopped without completing): what to do with the connection.
    package mutating func end(stopping: Bool) -> Ending {
        let ending: Ending
        switch phase {
        case .open: ending = stopping ? .abandon : .complete
        case .closed, .failed, .ended: ending = .abandon
        }
        switch phase {
        case .failed: break
        // Down at the end after a failure (still reconnecting): the output did not finish, and
        // its state says so (`reconnecting`, with its last error), never `finished`; one that
        // never connected failed.
        case .closed where status.lastError != nil: if status.connects == 0 { status.state = .failed }
        // Reopened but not yet proven: still down, unless its completion proves it
        // (``completed(at:asked:)``).
        case .open(_, _?): break
        default: if status.state != .failed { status.state = .finished }
        }
        phase = .ended
        downSince = nil
        return ending
    }

    /// The completion failed.
    package mutating func completionFailed(_ error: String) {
        status.state = .failed
        status.lastError = error
    }

    /// The completion left the output somewhere other than its name (a recording whose name was
    /// taken meanwhile, kept beside it).
    package mutating func completed(at path: String, asked: String) {
        // A target on probation at the end whose file was completed is up after all.
        if status.state == .reconnecting {
            status.state = .finished
            status.lastError = nil
        }
        if path != asked { status.lastError = "the name was taken: kept as \(SourceRedaction.redacted(path))" }
    }
}
