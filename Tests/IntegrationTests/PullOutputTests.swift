import Foundation
import Playhead
import Testing

/// Frames pulled by the app: a render loop that asks a ``VideoOutput`` for the frame of an item
/// time, and a consumer of a ``FrameStream`` that sets the pace. Checked against ffmpeg's frames.
@Suite struct PullOutputTests {
    /// Every frame, in order, the bytes and times ffmpeg decodes; at most `bufferingLimit` wait for
    /// a consumer that does not read, and the session waits for it. Three runs.
    @Test(arguments: 0..<3) func aFrameStreamGivesEveryFrameAtTheConsumersPace(run: Int) async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let reference = try await Reference.allFrames(path, pixelFormat: "yuv420p")
        let times = try await Reference.frameTimes(path)
        let stream = FrameStream(pixelFormat: .yuv420p, bufferingLimit: 3)
        let done = Locked(false)
        let session = Task {
            let result = await DecodeSession(source: path).run(into: stream)
            done.withLock { $0 = true }
            return result
        }
        // Nobody reads yet: three frames wait, and the session waits with them.
        let filled = await withDeadline(Bound.seconds(20), "the first three frames") {
            while stream.bufferedFrameCount < 3 { try? await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        #expect(filled == true)
        try await Task.sleep(for: .milliseconds(300))
        #expect(stream.bufferedFrameCount == 3, "no more than the buffering limit waits")
        #expect(!done.withLock { $0 }, "the session ran on without its consumer")

        var frames: [CapturedFrame] = []
        var mostWaiting = 0
        for await frame in stream {
            frames.append(frame)
            mostWaiting = max(mostWaiting, stream.bufferedFrameCount)
            if frames.count % 7 == 0 { try await Task.sleep(for: .milliseconds(15)) }
        }
        let result = await session.value
        #expect(result.status == .completed, "\(result)")
        #expect(mostWaiting <= 3)
        #expect(frames.count == reference.count && frames.count == times.count, "\(frames.count) frames, ffmpeg decodes \(reference.count)")
        #expect(frames.map(\.index) == Array(0..<frames.count))
        #expect(frames.map(\.itemTime) == times, "the frames' times are ffprobe's")
        for (i, frame) in frames.enumerated() where i < reference.count {
            #expect(frame.planes.flatMap { $0 } == reference[i], "frame \(i) differs from ffmpeg's")
        }
        #expect(frames.first?.playerTime == nil, "no player placed them")
        #expect(stream.streamInfo?.size == PixelSize(width: 320, height: 180))
    }

    /// A render loop asks the output for the item time on its player's clock (as
    /// `AVPlayerItemVideoOutput`'s `itemTime(forHostTime:)`): none before a frame is shown; while
    /// playing, the time moves with the clock at rate 1 and the newest frame is at or before it,
    /// less than a frame behind; paused, it stands still however far the clock moves, the player's
    /// `currentTime()` the same and the frame for it the one shown last. Outputs of a session or an
    /// as-fast-as-possible player have no clock to follow. On a virtual clock held at set times.
    @Test func theItemTimeFollowsThePlayersClock() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let times = try await Reference.frameTimes(path)
        let clock = GatedClock()
        let output = VideoOutput(pixelFormat: .yuv420p)
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: output, configuration: PlayerConfiguration(realtime: true), clock: clock)
        #expect(output.currentItemTime == nil && output.itemTime(forHostTime: clock.now()) == nil, "nothing shown yet")
        // Half a second of play: the frames due by then are shown, and the clock stops there.
        clock.open(until: .milliseconds(500))
        player.play()
        let held = await withDeadline(Bound.seconds(20), "half a second of frames") {
            while clock.now() < .milliseconds(500) || output.latestFrame.map({ $0.itemTime.seconds < 0.44 }) ?? true {
                try? await Task.sleep(for: .milliseconds(1))
            }
            return true
        }
        #expect(held == true)
        let host = clock.now()
        let playing = try #require(output.itemTime(forHostTime: host))
        let later = try #require(output.itemTime(forHostTime: host + .milliseconds(250)))
        #expect(abs((later - playing).seconds - 0.25) < 1e-6, "at rate 1 the time moves with the clock: \((later - playing).seconds) s")
        let latest = try #require(output.latestFrame)
        #expect(
            latest.itemTime <= playing && (playing - latest.itemTime).seconds < 0.04 + 1e-6,
            "\(latest.itemTime.seconds) s shown at \(playing.seconds) s")
        #expect(output.copyFrame(forItemTime: playing)?.index == latest.index)
        // Paused: the time stands still while the clock runs on.
        player.pause()
        let paused = try #require(output.currentItemTime)
        #expect(abs(paused.seconds - playing.seconds) < 1e-6, "the pause keeps the time reached: \(paused.seconds) s, not \(playing.seconds) s")
        for limit in [Duration.seconds(5), .seconds(3600)] {
            clock.open(until: limit)
            try await Task.sleep(for: .milliseconds(30))
            let now = try #require(output.itemTime(forHostTime: clock.now()))
            #expect(abs(now.seconds - paused.seconds) < 1e-6, "paused, the time stands still: \(now.seconds) s, not \(paused.seconds) s")
            #expect(abs(player.currentTime().seconds - paused.seconds) < 1e-6, "the player's time: \(player.currentTime().seconds) s")
            #expect(output.copyFrame(forItemTime: now)?.index == output.latestFrame?.index)
        }
        // Played on, the clip runs to its end.
        clock.open(until: .seconds(1_000_000))
        player.play()
        let ended = await withDeadline(Bound.seconds(20), "the end") {
            while output.latestFrame?.itemTime != times.last { try? await Task.sleep(for: .milliseconds(1)) }
            return true
        }
        #expect(ended == true)

        let session = VideoOutput()
        _ = await DecodeSession(source: path).run(into: session)
        #expect(session.latestFrame != nil && session.currentItemTime == nil, "a session has no clock")
        let fast = VideoOutput()
        let unpaced = Player(item: PlayerItem(asset: Asset(path: path)), output: fast)
        unpaced.play()
        await unpaced.waitUntilIdle()
        #expect(fast.latestFrame != nil && fast.currentItemTime == nil, "an as-fast-as-possible player has no clock")
        #expect(unpaced.currentTime() == times.last, "its time is its last frame's")
        #expect(Player(item: nil, output: VideoOutput()).currentTime() == .invalid)
    }

    /// An item that ends and stays current (`actionAtItemEnd` `.pause` or `.none`): its time
    /// stands at its end — the end of its last frame — however far the clock moves (before, it ran
    /// on at rate 1 past the end with `.none`); a seek moves it again. On a virtual clock.
    @Test(arguments: [ActionAtItemEnd.pause, .none])
    func theItemTimeStandsAtTheEndOfAnItemThatEnded(action: ActionAtItemEnd) async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let times = try await Reference.frameTimes(path)
        let end = try #require(times.last) + MediaTime(value: 1, timescale: 25)
        let clock = GatedClock()
        clock.open(until: .seconds(1_000_000))
        let output = VideoOutput(pixelFormat: .yuv420p)
        let player = QueuePlayer(
            items: [PlayerItem(asset: Asset(path: path))], output: output, configuration: PlayerConfiguration(realtime: true), clock: clock,
            actionAtItemEnd: action)
        player.play()
        // Once the item ended, an hour later on the clock is still its end.
        let deadline = ContinuousClock.now + Bound.seconds(30)
        var later: MediaTime?
        while ContinuousClock.now < deadline {
            later = output.itemTime(forHostTime: clock.now() + .seconds(3600))
            if output.latestFrame?.itemTime == times.last, let later, later <= end { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(later == end, "\(later?.seconds ?? -1) s an hour after an item of \(end.seconds) s ended")
        clock.sleep(for: .seconds(10))
        #expect(player.currentTime() == end, "the player's time: \(player.currentTime().seconds) s")
        // A seek moves it again (the clock held where it is, so that the item stays short of its end).
        clock.open(until: clock.now())
        _ = await player.seek(to: MediaTime(value: 1, timescale: 2))
        player.play()
        let deadline2 = ContinuousClock.now + Bound.seconds(30)
        while ContinuousClock.now < deadline2, output.currentItemTime.map({ $0 >= end }) ?? true { try await Task.sleep(for: .milliseconds(5)) }
        let sought = try #require(output.currentItemTime)
        #expect(sought < end, "after a seek to 0.5 s: \(sought.seconds) s")
    }

    /// A consumer that stops early — breaks out, is cancelled, or never iterates what it made —
    /// never holds the session: it runs to its end. A second iterator ends at once.
    @Test func aConsumerThatLeavesNeverHoldsTheSession() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        // Breaks out after five frames.
        let broken = FrameStream(bufferingLimit: 2)
        let first = Task { await DecodeSession(source: path).run(into: broken) }
        var taken = 0
        for await _ in broken {
            taken += 1
            if taken == 5 { break }
        }
        let afterBreak = await withDeadline(Bound.seconds(20), "a session whose consumer broke out") { await first.value }
        #expect(afterBreak?.status == .completed && afterBreak?.framesDelivered == 50, "\(String(describing: afterBreak))")
        var again = broken.makeAsyncIterator()
        #expect(await again.next() == nil, "a stream is consumed once")

        // Its task cancelled while it reads slowly.
        let cancelled = FrameStream(bufferingLimit: 2)
        let second = Task { await DecodeSession(source: path).run(into: cancelled) }
        let consumer = Task {
            var count = 0
            for await _ in cancelled {
                count += 1
                // Slow enough (10 s for the clip) that the cancel lands part way however loaded the machine.
                try? await Task.sleep(for: .milliseconds(200))
            }
            return count
        }
        try await Task.sleep(for: .milliseconds(150))
        consumer.cancel()
        let afterCancel = await withDeadline(Bound.seconds(20), "a session whose consumer was cancelled") { await second.value }
        #expect(afterCancel?.status == .completed, "\(String(describing: afterCancel))")
        #expect(await consumer.value < 50, "the cancelled consumer stopped")

        // An iterator made and dropped without a call to next().
        let dropped = FrameStream(bufferingLimit: 1)
        do { _ = dropped.makeAsyncIterator() }
        let afterDrop = await withDeadline(Bound.seconds(20), "a session whose iterator was dropped") {
            await DecodeSession(source: path).run(into: dropped)
        }
        #expect(afterDrop?.status == .completed && afterDrop?.framesDelivered == 50, "\(String(describing: afterDrop))")

        // Two iterators at once: the second ends at once, the first gets every frame.
        let shared = FrameStream(bufferingLimit: 2)
        var owner = shared.makeAsyncIterator()
        var other = shared.makeAsyncIterator()
        let third = Task { await DecodeSession(source: path).run(into: shared) }
        #expect(await other.next() == nil)
        var count = 0
        while await owner.next() != nil { count += 1 }
        #expect(count == 50)
        #expect(await third.value.status == .completed)
    }

    /// A player whose stream nobody reads is held at its buffering limit, yet a seek returns (the
    /// waiting frame is given up) and the frames that follow are the seek's.
    @Test func aSeekIsNotHeldByAConsumerThatDoesNotRead() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let times = try await Reference.frameTimes(path)
        let stream = FrameStream(pixelFormat: .rgb24, bufferingLimit: 2)
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: stream,
            configuration: PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18))))
        player.play()
        let filled = await withDeadline(Bound.seconds(20), "the player's first frames") {
            while stream.bufferedFrameCount < 2 { try? await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        #expect(filled == true)
        let target = times[60]
        let landed = await withDeadline(Bound.seconds(20), "a seek while the stream is full") { await player.seek(to: target) }
        #expect(landed == .some(target), "\(String(describing: landed))")
        var seen: [CapturedFrame] = []
        let reader = Task {
            var frames: [CapturedFrame] = []
            for await frame in stream { frames.append(frame) }
            return frames
        }
        _ = await withDeadline(Bound.seconds(30), "the rest of the item") { await player.waitUntilIdle() }
        try await player.finishOutput()
        seen = await reader.value
        let afterSeek = seen.drop { $0.itemTime < target }
        #expect(seen.prefix(2).allSatisfy { $0.itemTime < target }, "the two frames that waited come first")
        #expect(afterSeek.map(\.itemTime) == Array(times[60...]), "from the seek's frame to the end, each once")
        #expect(afterSeek.allSatisfy { $0.playerTime != nil }, "a player placed them")
    }

    /// A composition into a stream nobody reads is held at the limit; cancelling the render frees
    /// it (its frames had no session to abandon them).
    @Test func aCancelledCompositionIsNotHeldByAConsumerThatDoesNotRead() async throws {
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        _ = try compositor.add(
            CompositionLayer(assets: [Asset(path: try Fixtures.clip("h264-aac.mp4"))], rect: PixelRect(x: 0, y: 0, width: 64, height: 36)))
        let stream = FrameStream(pixelFormat: .rgb24, bufferingLimit: 1)
        let render = Task { await compositor.render(frames: 500, into: stream) }
        let filled = await withDeadline(Bound.seconds(20), "the composition's first frame") {
            while stream.bufferedFrameCount < 1 { try? await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        #expect(filled == true)
        try await Task.sleep(for: .milliseconds(200))
        render.cancel()
        let report = await withDeadline(Bound.seconds(10), "a cancelled composition whose stream is full") { await render.value }
        #expect(report?.error?.code == .cancelled, "\(String(describing: report?.error))")
        #expect((report?.framesWritten ?? 500) < 500)
    }

    /// A session's refused second run ends the stream it was given; a kept iterator whose task was
    /// cancelled outside `next()` leaves the stream (the producer never waits for it); a
    /// `VideoOutput` given up is finished.
    @Test func endsThatAreToldToTheConsumer() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let session = DecodeSession(source: path, configuration: DecodeConfiguration(frameLimit: 3))
        #expect(await session.run(into: NullSink()).status == .completed)
        let refused = FrameStream()
        let second = await session.run(into: refused)
        #expect(second.framesDelivered == 0)
        var iterator = refused.makeAsyncIterator()
        let end = await withDeadline(Bound.seconds(5), "the end of a refused run's stream") { () -> Bool in
            var copy = refused.makeAsyncIterator()
            return await copy.next() == nil
        }
        #expect(end == true)
        #expect(await iterator.next() == nil)

        // Kept past its task's cancellation.
        let kept = FrameStream(bufferingLimit: 1)
        let holder = IteratorHolder(kept.makeAsyncIterator())
        let producer = Task { await DecodeSession(source: path).run(into: kept) }
        let consumer = Task { () -> Bool in
            _ = await holder.next()
            while !Task.isCancelled { await Task.yield() }
            return await holder.next() == nil
        }
        try await Task.sleep(for: .milliseconds(100))
        consumer.cancel()
        #expect(await consumer.value, "a cancelled task's next() is nil")
        let result = await withDeadline(Bound.seconds(20), "a session whose consumer was cancelled but kept") { await producer.value }
        #expect(result?.status == .completed && result?.framesDelivered == 50, "\(String(describing: result))")
        withExtendedLifetime(holder) {}

        let output = VideoOutput()
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: output)
        player.play()
        await player.waitUntilIdle()
        player.abortOutput()
        #expect(output.isFinished, "given up is ended too")
    }

    /// A player the app lets go of while it plays or while it is paused, without finishing or
    /// giving up its outputs: its session stops, the stream's consumer and an events iterator get
    /// their end, and the WAV file keeps what was written, marked partial (nothing passes for a
    /// whole file).
    @Test(arguments: [false, true]) func aPlayerLetGoEndsWhatWaitsOnIt(paused: Bool) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A copy of its own: no other test opens it.
        let path = folder + "/clip.mp4"
        try FileManager.default.copyItem(atPath: try Fixtures.clip("h264-aac.mp4"), toPath: path)
        let stream = FrameStream(bufferingLimit: 2)
        let wav = WAVSink(path: folder + "/sound.wav")
        // The consumer takes five frames, then reads no more until the player is let go of: the
        // player is held mid-item by the stream, whatever the machine's load.
        let taken = Locked(0), letGo = Locked(false)
        let consumer = Task { () -> Int in
            for await _ in stream {
                let count = taken.withLock { n in
                    n += 1
                    return n
                }
                while count >= 5, !letGo.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            }
            return taken.withLock { $0 }
        }
        let events: AsyncStream<PlayerEvent>
        do {
            let player = Player(item: PlayerItem(asset: Asset(path: path)), output: stream, audioOutput: wav)
            events = player.events
            player.play()
            // Its first frames taken and its sound begun (on a loaded machine the sound may
            // begin after the fifth frame: a WAV let go before it begins has nothing to keep).
            let playing = await withDeadline(Bound.seconds(20), "the first frames") {
                while taken.withLock({ $0 }) < 5 || wav.framesWritten == 0 { try? await Task.sleep(for: .milliseconds(5)) }
                return true
            }
            #expect(playing == true)
            if paused { player.pause() }
        }
        letGo.withLock { $0 = true }
        // The frames taken and those queued, then the end.
        let frames = await withDeadline(Bound.seconds(10), "the end of a let-go player's stream") { await consumer.value }
        #expect(frames != nil && frames ?? 50 < 10, "\(String(describing: frames)) frames")
        let ended = await withDeadline(Bound.seconds(10), "the end of a let-go player's events") {
            for await _ in events {}
            return true
        }
        #expect(ended == true)
        let partial = await withDeadline(Bound.seconds(10), "the WAV file given up") {
            while !wav.isPartial { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        #expect(partial == true && FileManager.default.fileExists(atPath: wav.path), "the WAV file kept, marked partial")
        // Its session stopped, nothing left reading the file for nobody.
        let closed = await withDeadline(Bound.seconds(10), "the let-go player's file closed") {
            while LibraryMisuseTests.descriptors(to: path) > 0 { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        #expect(closed == true, "\(LibraryMisuseTests.descriptors(to: path)) descriptor(s) to the file stay open")
    }
}

/// Keeps an iterator alive beyond the task that uses it, as an app's object would.
/// `@unchecked Sendable` is safe here: only one task at a time calls `next()` (the test's consumer).
private final class IteratorHolder: @unchecked Sendable {
    private var iterator: FrameStream.AsyncIterator

    init(_ iterator: FrameStream.AsyncIterator) { self.iterator = iterator }

    func next() async -> CapturedFrame? { await iterator.next() }
}

/// A render loop on the machine's clock pulling from a realtime player: run apart from the
/// parallel batch (its ticks are the wall clock's), with the other realtime suites.
@Suite struct RealtimePullTests {
    /// A render loop at about 100 ticks a second asks a ``VideoOutput`` of a realtime player for
    /// the frame of the item time the player shows at each tick (``VideoOutput/currentItemTime``,
    /// on the player's clock): it always gets the newest frame at or before that time, each frame
    /// once, in order, with ffmpeg's pixels; the time moves on with the clock, and the player's
    /// `currentTime()` agrees.
    @Test func aRenderLoopPullsTheFrameOfEachTick() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let reference = try await Reference.allFrames(path, pixelFormat: "rgb24")
        let times = try await Reference.frameTimes(path)
        let output = VideoOutput(pixelFormat: .rgb24)
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: output, configuration: PlayerConfiguration(realtime: true))
        player.play()
        let started = await withDeadline(Bound.seconds(20), "the first frame") {
            while output.latestFrame == nil { try? await Task.sleep(for: .milliseconds(1)) }
            return ContinuousClock.now
        }
        let start = try #require(started)
        var pulled: [CapturedFrame] = []
        var asked: [MediaTime] = []
        var previous = MediaTime.zero
        while ContinuousClock.now - start < .milliseconds(2300) {
            let now = try #require(output.currentItemTime, "a frame was shown: the player's clock gives the item time")
            let said = player.currentTime()
            #expect(now >= previous, "the item time never goes back: \(now.seconds) s after \(previous.seconds) s")
            #expect(abs((said - now).seconds) < 0.05, "the player says \(said.seconds) s, the output \(now.seconds) s")
            previous = now
            if output.hasNewFrame(forItemTime: now) {
                let frame = try #require(output.copyFrame(forItemTime: now))
                #expect(!output.hasNewFrame(forItemTime: now), "the frame just handed out is not new")
                pulled.append(frame)
                asked.append(now)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        _ = await withDeadline(Bound.seconds(10), "the player's end") { await player.waitUntilIdle() }
        try await player.finishOutput()
        #expect(output.isFinished)
        // How many a loop sees depends on the machine's load (its sleeps run long, a realtime
        // player drops what comes late): every one seen must be right, and a loop that ticks
        // through 2 s of video sees it move.
        #expect(pulled.count >= 5, "a 100 Hz loop over 2 s of 25 fps video sees the frames move: \(pulled.count)")
        #expect(zip(pulled, pulled.dropFirst()).allSatisfy { $0.index < $1.index }, "each frame once, in order")
        for (frame, time) in zip(pulled, asked) {
            #expect(frame.itemTime <= time, "frame at \(frame.itemTime.seconds) s handed out for \(time.seconds) s")
            #expect(frame.itemTime == times[frame.index])
            #expect(frame.image?.pixels == reference[frame.index], "frame \(frame.index) differs from ffmpeg's")
        }
        #expect(output.copyFrame(forItemTime: .positiveInfinity)?.index == times.count - 1, "the last frame stays")
        #expect("\(output.latestFrame.map { $0 } as Any)".count < 200, "a frame prints as a line, never its pixels")
    }
}

/// A virtual clock that stops at a set time: a realtime player presents what is due by then and
/// waits, so a test reads the player's time at a known moment however loaded the machine is.
final class GatedClock: PlaybackClock {
    private let state = Locked((now: Duration.zero, limit: Duration.zero))

    func now() -> Duration { state.withLock { $0.now } }

    /// Moves the time on by `duration`, up to the limit; at the limit, waits a moment instead.
    func sleep(for duration: Duration) {
        let stopped = state.withLock { s -> Bool in
            let target = s.now + max(duration, .zero)
            s.now = max(s.now, min(target, s.limit))
            return target > s.limit
        }
        usleep(stopped ? 1000 : 50)
    }

    /// Lets the time run up to `limit`.
    func open(until limit: Duration) { state.withLock { $0.limit = limit } }
}
