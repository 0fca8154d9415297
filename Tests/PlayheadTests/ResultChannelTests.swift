import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The channel between the image decoders and the one consumer: answers in index order, the
/// budget of image bytes held back, and what a waiting consumer or producer gets on every exit
/// (an answer, the end, termination, cancellation).
@Suite struct ResultChannelTests {
    typealias Result = AssetImageGenerator.Result

    static let budget = ImageResults.bufferBudget
    /// An image size of which two exceed the budget and one does not (9 MiB, a multiple of 3).
    static let big = 9 << 20

    /// The answer for index `i`: its requested time is `i` seconds; with `bytes` (a multiple of 3),
    /// an image of that many bytes.
    static func result(_ i: Int, bytes: Int = 0) -> Result {
        let time = MediaTime(value: Int64(i), timescale: 1)
        guard bytes > 0 else {
            return Result(requestedTime: time, error: PlayheadError(code: .decodeFailed, message: "no image for \(i)"))
        }
        return Result(
            requestedTime: time, actualTime: time,
            image: GeneratedImage(checkedSize: PixelSize(width: bytes / 3, height: 1), pixels: [UInt8](repeating: 7, count: bytes / 3 * 3)))
    }

    /// What a consumer got: the index of its answer, or nil at the end.
    static func index(_ result: Result?) -> Int? { result.map { Int($0.requestedTime.seconds) } }

    /// A channel and the number of times it told the work to stop.
    static func channel(count: Int) -> (ResultChannel, Locked<Int>) {
        let terminations = Locked(0)
        return (ResultChannel(count: count, onTerminate: { terminations.withLock { $0 += 1 } }), terminations)
    }

    /// Polls `condition` until it holds or `seconds` pass; true when it held.
    static func eventually(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    /// Gives something that should stay blocked time to get past its wait if it would.
    static func settle() async { try? await Task.sleep(for: .milliseconds(150)) }

    /// What a consumer suspended in `next()` got, watched without waiting for it forever.
    enum Outcome: Equatable {
        case waiting
        case end
        case answer(Int)
    }

    /// A consumer calling `next()` in its own task (a wait that never ends leaves the test, not
    /// the run, stuck: the test goes on and reports it).
    static func consumer(_ channel: ResultChannel, started: Locked<Bool> = Locked(false)) -> Locked<Outcome> {
        let outcome = Locked(Outcome.waiting)
        Task {
            started.withLock { $0 = true }
            let result = await channel.next()
            outcome.withLock { $0 = index(result).map(Outcome.answer) ?? .end }
        }
        return outcome
    }

    /// A consumer suspended in `next()`: returns once it is (very likely) waiting.
    static func waitingConsumer(_ channel: ResultChannel) async -> Locked<Outcome> {
        let started = Locked(false)
        let outcome = consumer(channel, started: started)
        _ = await eventually { started.withLock { $0 } }
        await settle()
        return outcome
    }

    /// What the consumer's next `next()` gives within `seconds` (`.waiting`: nothing by then).
    static func take(_ channel: ResultChannel, within seconds: Double = 10) async -> Outcome {
        let outcome = consumer(channel)
        _ = await eventually(within: seconds) { outcome.withLock { $0 } != .waiting }
        return outcome.withLock { $0 }
    }

    /// What a consumer got, given `seconds` to get something (`.waiting`: nothing by then).
    static func got(_ outcome: Locked<Outcome>, within seconds: Double = 10) async -> Outcome {
        _ = await eventually(within: seconds) { outcome.withLock { $0 } != .waiting }
        return outcome.withLock { $0 }
    }

    /// A producer thread putting `result` at `index`; the flag turns true when `put` returned.
    static func producer(_ channel: ResultChannel, _ index: Int, _ result: Result) -> Locked<Bool> {
        let done = Locked(false)
        Thread {
            channel.put(index, result)
            done.withLock { $0 = true }
        }.start()
        return done
    }

    /// Answers put in any order come out in index order, then the end, again and again.
    @Test func answersComeOutInIndexOrder() async {
        let (channel, terminations) = Self.channel(count: 3)
        defer { channel.terminate() }
        channel.put(2, Self.result(2))
        channel.put(0, Self.result(0))
        channel.put(1, Self.result(1))
        var got: [Outcome] = []
        for _ in 0..<5 { got.append(await Self.take(channel)) }
        #expect(got == [.answer(0), .answer(1), .answer(2), .end, .end])
        #expect(terminations.withLock { $0 } == 0, "an end reached is not a termination")
    }

    /// A request of no times ends at once.
    @Test func anEmptyRequestEndsAtOnce() async {
        let (channel, _) = Self.channel(count: 0)
        defer { channel.terminate() }
        #expect(await Self.take(channel) == .end)
    }

    /// Answers for an index outside the request, or already taken, are dropped.
    @Test func answersOutsideTheRequestOrAlreadyTakenAreDropped() async {
        let (channel, _) = Self.channel(count: 2)
        defer { channel.terminate() }
        channel.put(2, Self.result(2))
        channel.put(-1, Self.result(9))
        channel.put(0, Self.result(0))
        #expect(await Self.take(channel) == .answer(0))
        channel.put(0, Self.result(5))
        channel.put(1, Self.result(1))
        #expect(await Self.take(channel) == .answer(1))
        #expect(await Self.take(channel) == .end)
    }

    /// A consumer waiting for an answer gets it when it comes, and not one put ahead of it.
    @Test func aWaitingConsumerGetsTheAnswerItWaitsFor() async {
        let (channel, _) = Self.channel(count: 3)
        defer { channel.terminate() }
        let first = await Self.waitingConsumer(channel)
        channel.put(1, Self.result(1))
        await Self.settle()
        #expect(first.withLock { $0 } == .waiting, "1 is not the next answer")
        channel.put(0, Self.result(0))
        #expect(await Self.got(first) == .answer(0))
        #expect(await Self.take(channel) == .answer(1))
        let third = await Self.waitingConsumer(channel)
        channel.put(2, Self.result(2))
        #expect(await Self.got(third) == .answer(2))
        #expect(await Self.take(channel) == .end)
    }

    /// When every producer is done, a consumer waiting for an answer that never came gets the end.
    @Test func finishEndsAWaitingConsumer() async {
        let (channel, terminations) = Self.channel(count: 2)
        let waiting = await Self.waitingConsumer(channel)
        channel.finish()
        #expect(await Self.got(waiting) == .end)
        #expect(await Self.take(channel) == .end)
        #expect(terminations.withLock { $0 } == 0)
        channel.terminate()
    }

    /// After the producers finished, the answers held still come out in order, up to the first
    /// one that never came (order is kept: nothing after a gap).
    @Test func finishStillHandsOverWhatIsHeldInOrder() async {
        let (channel, _) = Self.channel(count: 4)
        defer { channel.terminate() }
        channel.put(1, Self.result(1))
        channel.put(0, Self.result(0))
        channel.put(3, Self.result(3))
        channel.finish()
        var got: [Outcome] = []
        for _ in 0..<3 { got.append(await Self.take(channel)) }
        #expect(got == [.answer(0), .answer(1), .end], "2 never came")
    }

    /// Termination ends a waiting consumer, and tells the work to stop once however often it comes.
    @Test func terminationEndsAWaitingConsumerAndStopsTheWorkOnce() async {
        let (channel, terminations) = Self.channel(count: 2)
        let waiting = await Self.waitingConsumer(channel)
        channel.terminate()
        #expect(await Self.got(waiting) == .end)
        #expect(terminations.withLock { $0 } == 1)
        channel.terminate()
        channel.finish()
        #expect(terminations.withLock { $0 } == 1)
        #expect(await Self.take(channel) == .end)
    }

    /// After termination the answers held and those put later are dropped.
    @Test func terminationDropsHeldAndLaterAnswers() async {
        let (channel, terminations) = Self.channel(count: 3)
        channel.put(0, Self.result(0))
        channel.put(1, Self.result(1))
        channel.terminate()
        #expect(await Self.take(channel) == .end)
        channel.put(2, Self.result(2))
        #expect(await Self.take(channel) == .end)
        #expect(terminations.withLock { $0 } == 1)
    }

    /// A producer ahead of the consumer waits while the images held back would pass the budget, until
    /// the consumer takes enough of them; answers without an image never wait.
    @Test func aProducerAheadWaitsOnceTheHeldImagesReachTheBudget() async {
        let (channel, _) = Self.channel(count: 4)
        defer { channel.terminate() }
        #expect(2 * Self.big > Self.budget && Self.big <= Self.budget)
        let one = Self.producer(channel, 1, Self.result(1, bytes: Self.big))
        #expect(await Self.eventually { one.withLock { $0 } }, "9 MiB held: under the budget")
        let two = Self.producer(channel, 2, Self.result(2, bytes: Self.big))
        let three = Self.producer(channel, 3, Self.result(3))
        #expect(await Self.eventually { three.withLock { $0 } }, "no image: never waits")
        await Self.settle()
        #expect(!two.withLock { $0 }, "18 MiB would be held")
        channel.put(0, Self.result(0))
        #expect(await Self.take(channel) == .answer(0))
        await Self.settle()
        #expect(!two.withLock { $0 }, "still 9 MiB held, and 2 is not the next answer")
        #expect(await Self.take(channel) == .answer(1))
        #expect(await Self.eventually { two.withLock { $0 } }, "1 taken: room for 2")
        #expect(await Self.take(channel) == .answer(2))
        #expect(await Self.take(channel) == .answer(3))
        #expect(await Self.take(channel) == .end)
    }

    /// The answer the consumer waits for is always taken, however much is held back.
    @Test func theNextAnswerIsNeverHeldBack() async {
        let (channel, _) = Self.channel(count: 2)
        defer { channel.terminate() }
        let one = Self.producer(channel, 1, Self.result(1, bytes: Self.big))
        #expect(await Self.eventually { one.withLock { $0 } })
        let zero = Self.producer(channel, 0, Self.result(0, bytes: Self.big))
        #expect(await Self.eventually { zero.withLock { $0 } }, "0 is the next answer")
        #expect(await Self.take(channel) == .answer(0))
        #expect(await Self.take(channel) == .answer(1))
    }

    /// An image larger than the whole budget, ahead of the consumer, waits until it is the next
    /// answer, then goes through.
    @Test func anImageLargerThanTheBudgetWaitsUntilItIsNext() async {
        let (channel, _) = Self.channel(count: 2)
        defer { channel.terminate() }
        let huge = Self.budget + 2
        #expect(huge % 3 == 0)
        let one = Self.producer(channel, 1, Self.result(1, bytes: huge))
        await Self.settle()
        #expect(!one.withLock { $0 })
        channel.put(0, Self.result(0))
        #expect(await Self.take(channel) == .answer(0))
        #expect(await Self.eventually { one.withLock { $0 } })
        #expect(await Self.take(channel) == .answer(1))
    }

    /// Termination frees a producer waiting for room, and its answer is dropped.
    @Test func terminationFreesAWaitingProducer() async {
        let (channel, terminations) = Self.channel(count: 3)
        let one = Self.producer(channel, 1, Self.result(1, bytes: Self.big))
        #expect(await Self.eventually { one.withLock { $0 } })
        let two = Self.producer(channel, 2, Self.result(2, bytes: Self.big))
        await Self.settle()
        #expect(!two.withLock { $0 })
        channel.terminate()
        #expect(await Self.eventually { two.withLock { $0 } })
        #expect(terminations.withLock { $0 } == 1)
        #expect(await Self.take(channel) == .end)
    }

    /// Cancelling the task that iterates the sequence ends its wait with the end and stops the work
    /// once; the work had started at the first `next()`.
    @Test func cancellingTheIteratingTaskEndsTheSequence() async {
        let (channel, terminations) = Self.channel(count: 2)
        defer { channel.terminate() }
        let starts = Locked(0)
        let results = ImageResults(channel: channel, starter: StartOnce { starts.withLock { $0 += 1 } })
        let started = Locked(false), outcome = Locked(Outcome.waiting)
        let task = Task {
            var iterator = results.makeAsyncIterator()
            started.withLock { $0 = true }
            let result = await iterator.next()
            outcome.withLock { $0 = Self.index(result).map(Outcome.answer) ?? .end }
        }
        _ = await Self.eventually { started.withLock { $0 } }
        await Self.settle()
        task.cancel()
        #expect(await Self.got(outcome) == .end)
        #expect(terminations.withLock { $0 } == 1)
        #expect(starts.withLock { $0 } == 1)
    }

    /// An iterator dropped before its first `next()` stops the work and never starts it.
    @Test func droppingTheIteratorStopsTheWork() async {
        let (channel, terminations) = Self.channel(count: 2)
        defer { channel.terminate() }
        let starts = Locked(0)
        let results = ImageResults(channel: channel, starter: StartOnce { starts.withLock { $0 += 1 } })
        do {
            let iterator = results.makeAsyncIterator()
            _ = iterator
        }
        #expect(terminations.withLock { $0 } == 1)
        #expect(starts.withLock { $0 } == 0)
        #expect(await Self.take(channel) == .end)
    }

    /// Two consumers at once (two iterators of one sequence, documented as "iterate once"): the
    /// second's `next()` ends at once rather than replacing the first's wait (which then never
    /// resumed), and termination ends the first.
    @Test func aSecondWaitEndsAtOnceAndTerminationEndsTheFirst() async {
        let (channel, _) = Self.channel(count: 2)
        let first = await Self.waitingConsumer(channel)
        let second = await Self.waitingConsumer(channel)
        #expect(await Self.got(second, within: 10) == .end, "the second ends before any termination")
        #expect(first.withLock { $0 } == .waiting, "the first still waits")
        channel.terminate()
        #expect(await Self.got(first, within: 10) == .end, "the first waiter is resumed")
    }
}
