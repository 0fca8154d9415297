import Foundation
import PlayheadMedia
import Synchronization

/// The answers of ``AssetImageGenerator/images(for:)``: one per requested time, in ascending time
/// order, whichever decoder finished first. The work starts at the first `next()` (a sequence
/// never iterated costs nothing); stop iterating (or cancel the iterating task, or drop the
/// iterator) to cancel the work left.
///
/// Memory stays bounded however many times are asked for: a decoder that runs ahead of the
/// consumer waits once the images it holds back reach ``bufferBudget`` bytes (the one the consumer
/// waits for is always taken). Iterate once: the answers go to the first iterator made; another
/// iterator (a second `for await` over the same results) gets none — `nil` at once — and neither
/// stops the first one's work nor takes its answers.
public struct ImageResults: AsyncSequence, Sendable {
    public typealias Element = AssetImageGenerator.Result

    /// Bytes of images held back for a consumer that has not asked for them yet, per request.
    public static let bufferBudget = 16 << 20

    let channel: ResultChannel
    let starter: StartOnce
    /// The first iterator made is the consumer.
    let consumerTaken = OnceFlag()

    init(channel: ResultChannel, starter: StartOnce) {
        self.channel = channel
        self.starter = starter
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: consumerTaken.take() ? Consumer(channel: channel, starter: starter) : nil)
    }

    public struct Iterator: AsyncIteratorProtocol {
        /// Nil for an iterator made after the first: it gets no answers.
        let consumer: Consumer?

        public mutating func next() async -> AssetImageGenerator.Result? {
            await consumer?.next()
        }
    }

    /// Ends the work when the iterator goes away before the last answer.
    final class Consumer: Sendable {
        let channel: ResultChannel
        let starter: StartOnce
        init(channel: ResultChannel, starter: StartOnce) {
            self.channel = channel
            self.starter = starter
        }
        deinit { channel.terminate() }

        func next() async -> AssetImageGenerator.Result? {
            starter.start()
            let channel = self.channel
            return await withTaskCancellationHandler {
                await channel.next()
            } onCancel: {
                channel.terminate()
            }
        }
    }
}

/// Says yes once: to the first caller of ``take()``.
final class OnceFlag: Sendable {
    private let taken = Atomic<Bool>(false)

    /// - Returns: `true` for the first call only.
    func take() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}

/// Runs a body once, the first time it is asked to (the work behind a sequence, at its first
/// `next()`).
final class StartOnce: Sendable {
    private let started = OnceFlag()
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    func start() {
        if started.take() { body() }
    }
}

/// Hands answers from the decoding threads to the one consumer in index order, holding back at
/// most a budget of image bytes. Producers (worker threads) block while they are ahead and over
/// budget; the consumer suspends on a continuation the state keeps, so every exit path —
/// an answer, the end, termination — decides what it gets.
///
/// `@unchecked Sendable` is safe: `state` is read and written only while `condition`'s lock is
/// held (every access is between `lock()` and `unlock()`), and `condition` is thread-safe.
final class ResultChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State
    private let onTerminate: @Sendable () -> Void

    struct State {
        let count: Int
        var held: [Int: AssetImageGenerator.Result] = [:]
        var heldBytes = 0
        /// The index the consumer takes next.
        var next = 0
        var consumer: CheckedContinuation<AssetImageGenerator.Result?, Never>?
        var finished = false
        var terminated = false
    }

    init(count: Int, onTerminate: @escaping @Sendable () -> Void) {
        state = State(count: count)
        self.onTerminate = onTerminate
    }

    private static func bytes(_ result: AssetImageGenerator.Result) -> Int { result.image?.pixels.count ?? 0 }

    /// Gives the answer for `index`; blocks while the consumer is behind and the held images are
    /// over budget. Never blocks for an answer without an image (so it may be called from a task).
    func put(_ index: Int, _ result: AssetImageGenerator.Result) {
        let size = Self.bytes(result)
        condition.lock()
        while !state.terminated, size > 0, index > state.next, state.heldBytes + size > ImageResults.bufferBudget {
            condition.wait()
        }
        guard !state.terminated, index >= state.next, index < state.count else {
            condition.unlock()
            return
        }
        if index == state.next, let consumer = state.consumer {
            state.consumer = nil
            state.next += 1
            condition.broadcast()
            condition.unlock()
            consumer.resume(returning: result)
            return
        }
        state.held[index] = result
        state.heldBytes += size
        condition.unlock()
    }

    /// The next answer in order, or nil at the end.
    func next() async -> AssetImageGenerator.Result? {
        await withCheckedContinuation { (continuation: CheckedContinuation<AssetImageGenerator.Result?, Never>) in
            condition.lock()
            if let ready = state.held.removeValue(forKey: state.next) {
                state.heldBytes -= Self.bytes(ready)
                state.next += 1
                condition.broadcast()
                condition.unlock()
                continuation.resume(returning: ready)
                return
            }
            // One wait at a time: a second iterator's next() while one waits ends at once (it
            // would have replaced the first's continuation, which then never resumed).
            if state.terminated || state.next >= state.count || state.finished || state.consumer != nil {
                condition.unlock()
                continuation.resume(returning: nil)
                return
            }
            state.consumer = continuation
            condition.unlock()
        }
    }

    /// Every producer is done: a consumer waiting for an answer that never came gets the end.
    func finish() {
        condition.lock()
        state.finished = true
        let waiting = state.held[state.next] == nil ? state.consumer : nil
        if waiting != nil { state.consumer = nil }
        condition.unlock()
        waiting?.resume(returning: nil)
    }

    /// The consumer went away: producers stop waiting and drop what they have; the work is
    /// interrupted.
    func terminate() {
        condition.lock()
        let first = !state.terminated
        state.terminated = true
        state.held = [:]
        state.heldBytes = 0
        let waiting = state.consumer
        state.consumer = nil
        condition.broadcast()
        condition.unlock()
        waiting?.resume(returning: nil)
        if first { onTerminate() }
    }
}
