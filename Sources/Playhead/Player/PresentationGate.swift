import Foundation
import PlayheadMedia

/// Where an item's presenters (video and audio) wait until the item may present. It opens once,
/// at a position of the player's timeline where the item's session timeline begins, so the two
/// presenters place their frames and samples from one origin and stay in sync.
///
/// `@unchecked Sendable` is safe because `state` is read and written only while `condition`'s lock
/// is held (every access below is between `lock()` and `unlock()`), and `condition` is itself
/// thread-safe.
final class PresentationGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: (startPosition: Double?, cancelled: Bool) = (nil, false)

    /// Lets the item present, starting at `position` on the timeline. Later calls change nothing.
    func open(at position: Double) {
        condition.lock()
        if state.startPosition == nil { state.startPosition = position }
        condition.broadcast()
        condition.unlock()
    }

    /// Releases every waiter: the item's session is being cancelled.
    func cancel() {
        condition.lock()
        state.cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.cancelled
    }

    var isOpen: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.startPosition != nil
    }

    /// Waits until open or cancelled, or until `timeout` passes. Returns the start position, or nil
    /// (cancelled, or still closed after the timeout).
    func wait(timeout: Duration? = nil) -> Double? {
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0.seconds) }
        condition.lock()
        defer { condition.unlock() }
        while state.startPosition == nil, !state.cancelled {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return state.cancelled ? nil : state.startPosition
    }
}
