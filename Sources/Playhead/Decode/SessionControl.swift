import Foundation
import PlayheadMedia
import Synchronization

/// A session's control, shared by its stages and its owner: the latest segment (read without a
/// lock on every frame, to drop what a seek superseded), the session's state machine under a
/// lock, and the wake-up of the demux thread when a seek or a stop comes.
///
/// `@unchecked Sendable` because of `wake`: an `NSCondition` is thread-safe (every use here is
/// `lock`/`wait`/`broadcast`/`unlock`), it is just not marked `Sendable`; everything else is
/// `Locked` or atomic.
final class SessionControl: SegmentWatch, @unchecked Sendable {
    typealias Machine = SessionStateMachine<CheckedContinuation<MediaTime?, Never>, DecodeResult>

    private let machine: Locked<Machine>
    private let latest = Atomic<Int>(0)
    private let numbers = Atomic<Int>(0)
    /// Wakes the threads waiting for a new segment or the stop. Its lock is only held to wait and
    /// to broadcast (taken before the machine's lock, never while holding it).
    private let wake = NSCondition()
    /// Called (outside the lock) when the session stops: raise the interrupt, cancel the channels.
    private let onStop: Locked<(@Sendable () -> Void)?> = Locked(nil)
    /// Called (outside the lock) for every segment that ends, in interactive mode.
    private let onSegmentEnd: Locked<(@Sendable (DecodeResult) -> Void)?> = Locked(nil)

    init(mode: Machine.Mode, routes: SegmentRoutes, first: Segment) {
        machine = Locked(Machine(mode: mode, routes: routes, first: first))
    }

    /// Sets how the session runs, what it does when it stops and when a segment ends.
    func configure(mode: Machine.Mode, onStop: @escaping @Sendable () -> Void, onSegmentEnd: (@Sendable (DecodeResult) -> Void)?) {
        machine.withLock { $0.mode = mode }
        self.onStop.withLock { $0 = onStop }
        self.onSegmentEnd.withLock { $0 = onSegmentEnd }
    }

    /// The stages each segment ends in, once the streams are known.
    func setRoutes(_ routes: SegmentRoutes) { machine.withLock { $0.routes = routes } }

    /// The number of the latest segment: anything of an older one is dropped.
    var latestSegment: Int { latest.load(ordering: .acquiring) }

    func isSuperseded(_ segment: Int) -> Bool { segment != latestSegment }

    var segment: Segment { machine.withLock { $0.segment } }
    var isStopped: Bool { machine.withLock { $0.isStopped } }

    /// Starts a new segment from `start` and waits until its first frame is out (the time it
    /// shows), or until it is superseded, ends without a frame, or the session stops (nil).
    /// Cancelling the waiting task ends the wait (nil); the segment goes on.
    func seek(_ start: SeekRequest, end: MediaTime?, frameLimit: Int?, presentationPosition: Double?) async -> MediaTime? {
        let number = numbers.add(1, ordering: .relaxed).newValue
        let segment = Segment(number: number, start: start, end: end, frameLimit: frameLimit, presentationPosition: presentationPosition)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let actions = machine.withLock { m -> Machine.Actions in
                    var actions = m.seek(segment, waiter: continuation)
                    if !m.isStopped { latest.store(number, ordering: .releasing) }
                    // Cancelled before the seek was registered: it is made, and its wait ends now.
                    if Task.isCancelled { actions.resume += m.abandonSeek(number).resume }
                    return actions
                }
                perform(actions)
                broadcast()
            }
        } onCancel: {
            perform(machine.withLock { $0.abandonSeek(number) })
        }
    }

    /// Segment `number` landed late: it starts again from the start of the data (once), as a new
    /// segment the stages take up like a seek's; what it delivered so far (nothing) is dropped.
    func retryFromTheStart(_ number: Int) {
        let retried = machine.withLock { m -> Bool in
            var next = m.segment
            next.number = numbers.add(1, ordering: .relaxed).newValue
            next.fromTheStart = true
            guard m.retryFromTheStart(number, as: next) else { return false }
            latest.store(next.number, ordering: .releasing)
            return true
        }
        if retried { broadcast() }
    }

    func firstFrame(of segment: Int, at time: MediaTime) {
        perform(machine.withLock { $0.firstFrame(of: segment, at: time) })
    }

    func routeEnded(_ route: SegmentRoutes, of segment: Int, report: DecodeResult) {
        perform(machine.withLock { $0.routeEnded(route, of: segment, report: report) })
    }

    func failed(report: DecodeResult) {
        perform(machine.withLock { $0.failed(report: report) })
    }

    func stop() {
        perform(machine.withLock { $0.stop() })
    }

    /// The demux thread's wait between segments: returns the segment after `current` once there
    /// is one, or nil once the session stops.
    func waitForSegment(after current: Int) -> Segment? {
        wake.lock()
        defer { wake.unlock() }
        while true {
            let (segment, stopped) = machine.withLock { ($0.segment, $0.isStopped) }
            if stopped { return nil }
            if segment.number != current { return segment }
            wake.wait()
        }
    }

    /// Blocks until the session stops (for a stage with nothing to do).
    func waitUntilStopped() {
        wake.lock()
        defer { wake.unlock() }
        while !isStopped { wake.wait() }
    }

    private func broadcast() {
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    private func perform(_ actions: Machine.Actions) {
        for (waiter, time) in actions.resume { waiter.resume(returning: time) }
        // A segment that a seek superseded between its end and now is not told as ended (the
        // player would take its item for ended although the seek's segment is playing).
        if let report = actions.segmentEnded, !(actions.endedSegment.map(isSuperseded) ?? false),
            let handler = onSegmentEnd.withLock({ $0 })
        {
            handler(report)
        }
        if actions.stop {
            // The handlers are done with: dropping them ends any cycle through their captures.
            onSegmentEnd.withLock { $0 = nil }
            onStop.withLock { handler in
                defer { handler = nil }
                return handler
            }?()
            broadcast()
        }
    }
}
