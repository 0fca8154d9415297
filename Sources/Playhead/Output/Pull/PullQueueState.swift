import PlayheadMedia

/// What a pull queue with back-pressure (a ``FrameStream``'s elements, a ``SubtitleCueStream``'s
/// cues) knows, without locks or threads: the elements waiting for the consumer, whether the
/// consumer is there or gone, the consumer's suspended `next()` if any, and how the producer
/// ended. Every method returns what the caller must do (resume a continuation, wait for room)
/// outside the lock.
struct PullQueueState<Element: Sendable> {
    /// What a consumer's `next()` gets.
    enum Pull: Sendable {
        case element(Element)
        case end
    }

    /// What becomes of an element offered by the producer.
    enum Offer {
        /// Queued; nothing to do.
        case queued
        /// The consumer was waiting: resume it with the element.
        case handOver(CheckedContinuation<Pull, Never>)
        /// The queue is full: wait for room, then offer it again.
        case full
        /// Nobody will take it (the consumer is gone, or the stream ended): drop it.
        case dropped
    }

    private enum Consumer: Equatable {
        /// No iterator yet: elements queue up for the first one.
        case notYet
        case active(UInt64)
        /// The iterator was dropped or its task cancelled: elements are dropped, the producer never waits.
        case gone
    }

    /// How many elements wait for the consumer at most before the producer waits.
    let limit: Int
    private(set) var queue: [Element] = []
    private var consumer = Consumer.notYet
    private var ended = false
    private var waiting: (key: UInt64, continuation: CheckedContinuation<Pull, Never>)?
    /// The producer found the queue full and waits for room: the next take (or leave, or end) wakes it.
    private var producerWaits = false
    private var consumers: UInt64 = 0
    /// Why the producer ended early (a read that failed), until the consumer takes it.
    private var failure: PlayheadError?

    /// - Parameter limit: at least 1.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Whether the producer has ended (its last element given, or it stopped).
    var hasEnded: Bool { ended }

    /// Whether the producer's elements still have a consumer to go to.
    var isOpen: Bool { !ended && consumer != .gone }

    // MARK: Producer

    /// An element presented by the producer.
    mutating func offer(_ element: Element) -> Offer {
        guard isOpen else { return .dropped }
        if let waiter = waiting {
            waiting = nil
            return .handOver(waiter.continuation)
        }
        guard queue.count < limit else {
            producerWaits = true
            return .full
        }
        queue.append(element)
        return .queued
    }

    /// The producer's last element has come (`finish`, `abort`, a failure): the consumer gets
    /// what is queued, then the end (and the failure, once: ``takeFailure()``).
    /// - Parameter failure: why the producer stopped early, if it did (the first one is kept).
    /// - Returns: a suspended `next()` to resume with `.end`.
    mutating func end(failure: PlayheadError? = nil) -> CheckedContinuation<Pull, Never>? {
        if !ended { self.failure = failure }
        ended = true
        defer { waiting = nil }
        return waiting?.continuation
    }

    /// The producer's failure, for the consumer that has reached the end; nil afterwards, and
    /// while elements are still queued.
    mutating func takeFailure() -> PlayheadError? {
        guard ended, queue.isEmpty else { return nil }
        defer { failure = nil }
        return failure
    }

    // MARK: Consumer

    /// A new iterator: the stream's one consumer, or nil when it already has (or had) one.
    mutating func startConsumer() -> UInt64? {
        guard consumer == .notYet else { return nil }
        consumers += 1
        consumer = .active(consumers)
        return consumers
    }

    /// The consumer `id` asks for its next element.
    /// - Returns: the answer now, or nil when there is none yet: the caller keeps its continuation
    ///   with ``wait(key:continuation:)`` under the same lock.
    mutating func next(consumer id: UInt64?) -> Pull? {
        guard let id, consumer == .active(id) else { return .end }
        // A copy of the iterator already waits: one wait at a time (the other copy ends).
        if waiting != nil { return .end }
        if !queue.isEmpty { return .element(queue.removeFirst()) }
        if ended { return .end }
        return nil
    }

    /// Keeps the consumer's continuation (under `key`) until an element or the end comes.
    mutating func wait(key: UInt64, continuation: CheckedContinuation<Pull, Never>) {
        waiting = (key, continuation)
    }

    /// Whether the consumer waits for an element.
    var consumerWaits: Bool { waiting != nil }

    /// The consumer's task was cancelled while it waited under `key`: it is gone.
    /// - Returns: the continuation to resume with `.end`.
    mutating func cancelWait(key: UInt64) -> CheckedContinuation<Pull, Never>? {
        guard let waiter = waiting, waiter.key == key else { return nil }
        waiting = nil
        leave()
        return waiter.continuation
    }

    /// The consumer's iterator was dropped (or its task cancelled): its elements are dropped and the
    /// producer no longer waits.
    mutating func consumerGone(_ id: UInt64) {
        guard consumer == .active(id) else { return }
        leave()
    }

    /// Whether a producer waiting for room must be woken now (an element was taken, the consumer
    /// left, the stream ended); it is woken once.
    mutating func takeProducerWake() -> Bool {
        defer { producerWaits = false }
        return producerWaits
    }

    private mutating func leave() {
        consumer = .gone
        queue.removeAll()
    }
}

/// A ``FrameStream``'s queue: its frames.
typealias FrameStreamState = PullQueueState<CapturedFrame>
