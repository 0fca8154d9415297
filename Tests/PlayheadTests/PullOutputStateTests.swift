import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The pull outputs' state, without threads or FFmpeg: which frame a render loop gets for a time,
/// and who waits for whom in a frame stream.
@Suite struct PullOutputStateTests {
    static func frame(_ index: Int, at seconds: Double, source: String = "a.mp4") -> CapturedFrame {
        CapturedFrame(
            itemTime: MediaTime(seconds: seconds), duration: MediaTime(seconds: 0.04), index: index, source: source,
            size: PixelSize(width: 2, height: 2), pixelFormat: .rgb24, pixelFormatName: "rgb24",
            planes: [[UInt8](repeating: UInt8(index & 0xff), count: 12)], bytesPerRow: [6])
    }

    @Test func theNewestFrameAtOrBeforeTheTimeIsHandedOutOnce() {
        var window = LatestFrameWindow(capacity: 4)
        #expect(window.frame(forItemTime: MediaTime(seconds: 1)) == nil, "nothing yet")
        for i in 0..<6 { window.receive(Self.frame(i, at: Double(i) * 0.04)) }
        #expect(window.frames.map(\.index) == [2, 3, 4, 5], "the last four kept")
        #expect(!window.hasNewFrame(forItemTime: MediaTime(seconds: 0.05)), "frames 0 and 1 were dropped: none at or before 0.05 s")
        #expect(window.hasNewFrame(forItemTime: MediaTime(seconds: 0.13)))
        #expect(window.frame(forItemTime: MediaTime(seconds: 0.13))?.index == 3, "0.12 ≤ 0.13 < 0.16")
        #expect(!window.hasNewFrame(forItemTime: MediaTime(seconds: 0.15)), "frame 3 was handed out already")
        #expect(window.frames.map(\.index) == [3, 4, 5], "frames before the one handed out are dropped")
        #expect(window.frame(forItemTime: MediaTime(seconds: 0.15))?.index == 3, "asked again: the same frame")
        #expect(window.frame(forItemTime: MediaTime(seconds: 0.16))?.index == 4, "exactly at its time")
        #expect(window.frame(forItemTime: .positiveInfinity)?.index == 5)
        #expect(window.frame(forItemTime: .invalid) == nil)
        #expect(window.frame(forItemTime: .negativeInfinity) == nil)
        #expect(window.frame(forItemTime: .indefinite) == nil)
    }

    @Test func aTimeGoingBackStartsANewTimeline() {
        var window = LatestFrameWindow(capacity: 8)
        for i in 0..<4 { window.receive(Self.frame(i, at: 1 + Double(i) * 0.04)) }
        // A loop's next pass (or a seek back): its first frame is earlier than the last one.
        window.receive(Self.frame(4, at: 0))
        #expect(window.frames.map(\.index) == [4])
        #expect(window.frame(forItemTime: MediaTime(seconds: 0.02))?.index == 4)
        // The next item of a queue starts a timeline too, even at a later time.
        window.receive(Self.frame(0, at: 5, source: "b.mp4"))
        #expect(window.frames.map(\.source) == ["b.mp4"])
    }

    @Test func capacityIsAtLeastOne() {
        var window = LatestFrameWindow(capacity: -3)
        window.receive(Self.frame(0, at: 0))
        window.receive(Self.frame(1, at: 0.04))
        #expect(window.frames.map(\.index) == [1])
    }

    @Test func framesQueueForTheFirstConsumerUpToTheLimit() {
        var state = FrameStreamState(limit: 2)
        guard case .queued = state.offer(Self.frame(0, at: 0)) else {
            Issue.record("first frame not queued")
            return
        }
        guard case .queued = state.offer(Self.frame(1, at: 0.04)) else {
            Issue.record("second frame not queued")
            return
        }
        guard case .full = state.offer(Self.frame(2, at: 0.08)) else {
            Issue.record("a third frame did not make the producer wait")
            return
        }
        let id = state.startConsumer()
        #expect(id != nil)
        #expect(state.startConsumer() == nil, "one consumer")
        let indices = (0..<2).compactMap { _ -> Int? in
            guard case .element(let f) = state.next(consumer: id) else { return nil }
            return f.index
        }
        #expect(indices == [0, 1], "queued frames, in order")
        #expect(state.next(consumer: nil).map(Self.isEnd) == true, "an iterator that is not the consumer ends at once")
        #expect(state.end() == nil)
        #expect(state.next(consumer: id).map(Self.isEnd) == true, "ended and drained")
        guard case .dropped = state.offer(Self.frame(3, at: 0.12)) else {
            Issue.record("a frame after the end was kept")
            return
        }
    }

    @Test func aConsumerThatLeavesFreesTheProducer() {
        var state = FrameStreamState(limit: 1)
        let id = state.startConsumer()
        _ = state.offer(Self.frame(0, at: 0))
        guard case .full = state.offer(Self.frame(1, at: 0.04)) else {
            Issue.record("not full")
            return
        }
        state.consumerGone(id ?? 0)
        #expect(state.queue.isEmpty, "its frames are dropped")
        #expect(!state.isOpen)
        guard case .dropped = state.offer(Self.frame(1, at: 0.04)) else {
            Issue.record("the producer would wait for a consumer that left")
            return
        }
        #expect(state.startConsumer() == nil, "a stream is consumed once")
    }

    static func isEnd(_ pull: FrameStreamState.Pull) -> Bool {
        if case .end = pull { return true }
        return false
    }

    @Test func aWaitingConsumerIsHandedTheFrameAndTheEnd() async throws {
        let state = Locked(FrameStreamState(limit: 1))
        let id = state.withLock { $0.startConsumer() }
        #expect(state.withLock { $0.next(consumer: id) } == nil, "nothing queued: the consumer must wait")
        async let pulled = withCheckedContinuation { (continuation: CheckedContinuation<FrameStreamState.Pull, Never>) in
            state.withLock { $0.wait(key: 1, continuation: continuation) }
        }
        while !state.withLock({ $0.consumerWaits }) { await Task.yield() }
        guard case .handOver(let continuation) = state.withLock({ $0.offer(Self.frame(7, at: 0.28)) }) else {
            Issue.record("a waiting consumer was not handed the frame")
            return
        }
        continuation.resume(returning: .element(Self.frame(7, at: 0.28)))
        guard case .element(let frame) = await pulled else {
            Issue.record("no frame")
            return
        }
        #expect(frame.index == 7)
        #expect(state.withLock { $0.queue.isEmpty }, "a handed-over frame is not queued too")

        async let ended = withCheckedContinuation { (continuation: CheckedContinuation<FrameStreamState.Pull, Never>) in
            state.withLock { $0.wait(key: 2, continuation: continuation) }
        }
        while !state.withLock({ $0.consumerWaits }) { await Task.yield() }
        let waiter = try #require(state.withLock { $0.end() }, "the end resumes the waiting consumer")
        waiter.resume(returning: .end)
        #expect(Self.isEnd(await ended))
    }

    @Test func aCancelledWaitEndsTheConsumer() async {
        let state = Locked(FrameStreamState(limit: 2))
        let id = state.withLock { $0.startConsumer() }
        _ = state.withLock { $0.next(consumer: id) }
        async let pulled = withCheckedContinuation { (continuation: CheckedContinuation<FrameStreamState.Pull, Never>) in
            state.withLock { $0.wait(key: 5, continuation: continuation) }
        }
        while !state.withLock({ $0.consumerWaits }) { await Task.yield() }
        #expect(state.withLock { $0.cancelWait(key: 4) } == nil, "another key takes nothing")
        state.withLock { $0.cancelWait(key: 5) }?.resume(returning: .end)
        #expect(Self.isEnd(await pulled))
        #expect(!state.withLock { $0.isOpen }, "the producer no longer waits for it")
    }

    /// Two copies of one iterator: while one waits, the other's `next()` ends at once (a second
    /// wait would have replaced the first, which then never resumed).
    @Test func oneWaitAtATime() async {
        let state = Locked(FrameStreamState(limit: 2))
        let id = state.withLock { $0.startConsumer() }
        async let first = withCheckedContinuation { (continuation: CheckedContinuation<FrameStreamState.Pull, Never>) in
            state.withLock { $0.wait(key: 1, continuation: continuation) }
        }
        while !state.withLock({ $0.consumerWaits }) { await Task.yield() }
        #expect(state.withLock { $0.next(consumer: id) }.map(Self.isEnd) == true, "the second copy ends")
        #expect(state.withLock { $0.isOpen }, "the first copy is still the consumer")
        guard case .handOver(let continuation) = state.withLock({ $0.offer(Self.frame(3, at: 0.12)) }) else {
            Issue.record("the waiting copy was not handed the frame")
            return
        }
        continuation.resume(returning: .element(Self.frame(3, at: 0.12)))
        guard case .element(let frame) = await first else {
            Issue.record("the first copy got no frame")
            return
        }
        #expect(frame.index == 3)
    }

    /// A producer that waited for room is woken once, by the next take; no wake-ups pile up while
    /// none waits.
    @Test func theProducerIsWokenOnlyWhenItWaits() {
        var state = FrameStreamState(limit: 1)
        let id = state.startConsumer()
        _ = state.offer(Self.frame(0, at: 0))
        _ = state.next(consumer: id)
        let early = state.takeProducerWake()
        #expect(!early, "nobody waited")
        _ = state.offer(Self.frame(1, at: 0.04))
        guard case .full = state.offer(Self.frame(2, at: 0.08)) else {
            Issue.record("not full")
            return
        }
        _ = state.next(consumer: id)
        let woken = state.takeProducerWake(), again = state.takeProducerWake()
        #expect(woken)
        #expect(!again, "woken once")
    }
}
