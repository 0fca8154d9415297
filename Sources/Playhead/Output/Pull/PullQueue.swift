import Dispatch
import PlayheadMedia

/// A queue with back-pressure between one producer thread and one consumer task — the
/// ``PullQueueState`` under a lock, the consumer's cancel-safe wait, the producer's wait for room
/// — shared by ``FrameStream`` (frames) and ``SubtitleCueStream`` (cues).
final class PullQueue<Element: Sendable>: Sendable {
    let state: Locked<PullQueueState<Element>>
    /// Signalled when the consumer takes an element or leaves while the producer waits for room.
    private let room = DispatchSemaphore(value: 0)

    /// - Parameter limit: elements that may wait for the consumer (at least 1).
    init(limit: Int) {
        state = Locked(PullQueueState(limit: limit))
    }

    /// What became of an element the producer offered.
    enum Offered {
        /// The consumer has it, or will (queued).
        case taken
        /// Nobody will take it: the consumer is gone, or the queue ended.
        case dropped
        /// The queue stayed full and `giveUp` said to stop waiting.
        case gaveUp
    }

    // MARK: Producer

    /// Queues `element`, or hands it to the consumer waiting for it; while the queue is full,
    /// waits for room, looking every `poll` whether to give up.
    /// - Parameters:
    ///   - element: what the producer made.
    ///   - poll: how long one wait for room lasts at most.
    ///   - giveUp: asked before each wait: true stops waiting (an abandoned frame, a stopped read).
    /// - Returns: what became of it.
    func offer(_ element: Element, poll: DispatchTimeInterval, giveUp: () -> Bool) -> Offered {
        while true {
            switch state.withLock({ $0.offer(element) }) {
            case .queued:
                return .taken
            case .handOver(let continuation):
                continuation.resume(returning: .element(element))
                return .taken
            case .dropped:
                return .dropped
            case .full:
                if giveUp() { return .gaveUp }
                _ = room.wait(timeout: .now() + poll)
            }
        }
    }

    /// Ends the queue: the consumer gets what is queued, then the end (and `failure`, once).
    /// - Parameter failure: why the producer stopped early, if it did.
    func end(failure: PlayheadError? = nil) {
        state.withLock { $0.end(failure: failure) }?.resume(returning: .end)
    }

    // MARK: Consumer

    /// The queue's one consumer, or nil when it already has (or had) one.
    func startConsumer() -> UInt64? { state.withLock { $0.startConsumer() } }

    /// The consumer `id`'s next element, waiting for it when none is queued.
    /// - Returns: the element, or nil at the end, when the calling task is cancelled (the consumer
    ///   then leaves for good), or for an iterator that is not the consumer (`id` nil or another).
    func next(consumer id: UInt64?) async -> Element? {
        let answer = await cancellableWait(state, cancelled: PullQueueState<Element>.Pull.end) { state, key, continuation in
            if let now = state.next(consumer: id) { return now }
            state.wait(key: key, continuation: continuation)
            return nil
        } unregister: { state, key in
            state.cancelWait(key: key)
        }
        switch answer {
        case .element(let element):
            wakeProducerIfWaiting()
            return element
        case .end:
            // Cancelled before it could wait: the consumer leaves as if it had waited.
            if Task.isCancelled, let id { state.withLock { $0.consumerGone(id) } }
            wakeProducerIfWaiting()
            return nil
        }
    }

    /// The consumer `id` is gone (its iterator dropped): its elements are dropped and the producer
    /// no longer waits.
    func consumerGone(_ id: UInt64) {
        state.withLock { $0.consumerGone(id) }
        wakeProducerIfWaiting()
    }

    /// The producer's failure, once the consumer has reached the end.
    func takeFailure() -> PlayheadError? { state.withLock { $0.takeFailure() } }

    /// Wakes a producer that waits for room, once (no wake-ups pile up while none waits).
    func wakeProducerIfWaiting() {
        if state.withLock({ $0.takeProducerWake() }) { room.signal() }
    }

    /// Ends the consumer (through `onGone`) when its iterator — every copy of it — is dropped.
    final class Consumer: Sendable {
        let id: UInt64?
        private let onGone: @Sendable (UInt64) -> Void

        /// - Parameters:
        ///   - id: the consumer's id (nil: an iterator that is not the consumer).
        ///   - onGone: told the id when the last copy of the iterator goes.
        init(id: UInt64?, onGone: @escaping @Sendable (UInt64) -> Void) {
            self.id = id
            self.onGone = onGone
        }

        deinit {
            guard let id else { return }
            onGone(id)
        }
    }
}
