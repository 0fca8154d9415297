import Dispatch

/// Hands slot numbers from one thread to another, in order. A pipeline stage owns a slot (a
/// preallocated packet or canvas) from the moment it receives its number until it sends it on, so
/// the slots themselves need no lock: the channel's mutex orders every hand-over.
///
/// Sending never blocks (a channel is made as large as the number of slots in circulation);
/// receiving blocks until a slot arrives, the channel is closed and empty, or it is cancelled.
/// The bounded number of slots is the back-pressure: a producer that has used them all waits on
/// the channel that returns them.
package final class SlotChannel: Sendable {
    private struct State {
        var ring: [Int]
        var head = 0
        var count = 0
        var closed = false
        var cancelled = false
    }

    private let state: Locked<State>
    private let available = DispatchSemaphore(value: 0)

    package init(capacity: Int, filledWith initial: Range<Int> = 0..<0) {
        precondition(capacity > 0 && initial.count <= capacity)
        var s = State(ring: Array(repeating: 0, count: capacity))
        for (i, slot) in initial.enumerated() { s.ring[i] = slot }
        s.count = initial.count
        state = Locked(s)
        for _ in initial { available.signal() }
    }

    package func send(_ slot: Int) {
        state.withLock { s in
            precondition(s.count < s.ring.count, "SlotChannel over capacity")
            s.ring[(s.head + s.count) % s.ring.count] = slot
            s.count += 1
        }
        available.signal()
    }

    /// The next slot, or nil once the channel is closed and drained, or cancelled.
    package func receive() -> Int? {
        available.wait()
        return takeAfterWakeUp()
    }

    /// The next slot if one is queued now or within `patience`; nil otherwise (or when closed and
    /// drained, or cancelled).
    /// - Parameter patience: how long to wait for a slot (none: never waits).
    package func tryReceive(within patience: DispatchTimeInterval = .nanoseconds(0)) -> Int? {
        guard available.wait(timeout: .now() + patience) == .success else { return nil }
        return takeAfterWakeUp()
    }

    /// After a wake-up: the oldest slot, or nil when cancelled or closed and empty (then the
    /// wake-up is left for any later receive).
    private func takeAfterWakeUp() -> Int? {
        state.withLock { s -> Int? in
            guard !s.cancelled, s.count > 0 else { return nil }
            let slot = s.ring[s.head]
            s.head = (s.head + 1) % s.ring.count
            s.count -= 1
            return slot
        } ?? wakeNextAndReturnNil()
    }

    /// Whether no slot is queued: a receiver finds nothing and waits.
    package var isEmpty: Bool { state.withLock { $0.count == 0 } }

    private func wakeNextAndReturnNil() -> Int? {
        available.signal()
        return nil
    }

    /// No more sends: the receiver gets what is queued, then nil.
    package func close() {
        state.withLock { $0.closed = true }
        available.signal()
    }

    /// The receiver gets nil at once.
    package func cancel() {
        state.withLock { $0.cancelled = true }
        available.signal()
    }
}
