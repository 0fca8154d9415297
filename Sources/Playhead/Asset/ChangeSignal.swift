import Foundation

/// A wake-up for waiters that look at state kept elsewhere (under its own lock) and wait for it to
/// change: ``wait(until:)`` sleeps until ``signal()`` or a short slice has passed, so a change made
/// between a waiter's look and its wait is seen at its next look. Used by the source reading (a
/// second open waiting for one under way) and the item preparer (a layer waiting for an open).
final class ChangeSignal: Sendable {
    /// The longest one wait sleeps before its caller looks again.
    static let slice: TimeInterval = 0.05

    private let condition = NSCondition()

    /// Sleeps until the next ``signal()``, `deadline`, or one slice, whichever comes first.
    /// - Parameter deadline: the latest wake-up.
    func wait(until deadline: Date = .distantFuture) {
        condition.lock()
        _ = condition.wait(until: min(deadline, Date().addingTimeInterval(Self.slice)))
        condition.unlock()
    }

    /// Wakes every waiter.
    func signal() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
