import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Player and QueuePlayer over real clips, timed by a virtual clock (no sleeping in tests).
@Suite struct PlayerTests {
    let small = DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18))

    @Test func queuePlaysEveryItemInOrderAndSkipsABadOne() async throws {
        let names = ["h264-aac.mp4", "bad-random.mp4", "vp9-opus.webm", "4x3.mp4"]
        let items = try names.map { PlayerItem(asset: Asset(path: try Fixtures.clip($0))) }
        let observers = items.map { _ in RecordingObserver() }
        for (item, observer) in zip(items, observers) { item.addObserver(observer) }
        let sink = InMemorySink()
        let player = QueuePlayer(items: items, output: sink, configuration: PlayerConfiguration(decoding: small))
        let events = player.events
        player.play()
        await player.waitUntilIdle()

        // Every good item: ready, then played to its end; the bad one: failed, never ready.
        for index in [0, 2, 3] {
            let seen = observers[index].events
            let ready = try #require(seen.firstIndex(of: .statusChanged(.readyToPlay)), "\(names[index]) never ready")
            let end = try #require(seen.firstIndex { if case .playedToEnd = $0 { return true } else { return false } }, "\(names[index]) never ended")
            #expect(ready < end)
        }
        #expect(observers[1].events.contains { if case .statusChanged(.failed) = $0 { return true } else { return false } })
        #expect(!observers[1].events.contains(.statusChanged(.readyToPlay)))

        // The player's own account, in order: each advance follows the item's end.
        var log: [PlayerEvent] = []
        for await event in events {
            log.append(event)
            if case .currentItemChanged(_, nil) = event { break }
        }
        let advances = log.compactMap { event -> PlayerItem?? in
            if case .currentItemChanged(_, let to) = event { return .some(to) } else { return nil }
        }
        // The bad item fails while pre-rolled (then it never becomes current) or once current.
        #expect(advances.filter { $0 != items[1] } == [items[2], items[3], nil])
        for item in [items[0], items[2], items[3]] {
            let ended = try #require(log.firstIndex(of: .itemEnded(item)))
            let advanced = try #require(
                log.firstIndex { if case .currentItemChanged(let from, _) = $0 { return from === item } else { return false } })
            #expect(ended < advanced, "each advance follows the item's end")
        }
        #expect(log.contains { if case .itemFailed(let item, _) = $0 { return item === items[1] } else { return false } })

        // Every frame of every good clip, in order, none twice.
        let counts = try [0, 2, 3].map {
            try #require(try Fixtures.ffprobe(names[$0]).streams.first { $0.codec_type == "video" }?.nb_read_frames.flatMap(Int.init))
        }
        #expect(sink.frames.count == counts.reduce(0, +))
        #expect(player.statistics.framesPresented == counts.reduce(0, +))
        #expect(player.items().isEmpty)
    }

    @Test func realtimePlaybackTakesTheClipsDurationOnTheClock() async throws {
        let clock = ManualPlaybackClock()
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let times = TimeLog(clock: clock)
        let player = Player(
            item: item, output: TimestampSink(log: times), configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        player.play()
        await player.waitUntilIdle()
        let presented = times.entries
        #expect(presented.count == 50)
        #expect(player.statistics.framesDropped == 0)
        // Frame k is shown k/25 s after frame 0, exactly.
        for (k, entry) in presented.enumerated() {
            #expect(abs((entry.clock - presented[0].clock).seconds - Double(k) / 25) < 1e-6, "frame \(k)")
        }
        #expect(player.statistics.latenessPercentile(0.99) == 0)
    }

    @Test func queueTransitionsAddNoGap() async throws {
        let clock = ManualPlaybackClock()
        let items = try ["h264-aac.mp4", "video-only.mp4"].map { PlayerItem(asset: Asset(path: try Fixtures.clip($0))) }
        let times = TimeLog(clock: clock)
        let player = QueuePlayer(
            items: items, output: TimestampSink(log: times), configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        player.play()
        await player.waitUntilIdle()
        let presented = times.entries
        #expect(presented.count == 100)
        // The first frame of the second clip follows the last of the first by one frame interval.
        let step = (presented[50].clock - presented[49].clock).seconds
        #expect(abs(step - 1.0 / 25) < 1e-6, "transition took \(step) s")
        #expect(player.statistics.seams.count == 1)
        #expect(player.statistics.seams.maximum == 0)
    }

    @Test func lateFramesAreDroppedAndCounted() async throws {
        let clock = ManualPlaybackClock()
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        // A consumer that takes 100 ms a frame (2.5 frame intervals).
        let slow = TimestampSink(log: TimeLog(clock: clock), cost: .milliseconds(100), clock: clock)
        let player = Player(item: item, output: slow, configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        player.play()
        await player.waitUntilIdle()
        let statistics = player.statistics
        #expect(statistics.framesDropped > 0)
        #expect(statistics.framesPresented + statistics.framesDropped == 50)
    }

    @Test func rateTwoPresentsTwiceAsFast() async throws {
        let clock = ManualPlaybackClock()
        let times = TimeLog(clock: clock)
        let player = Player(
            item: PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4"))), output: TimestampSink(log: times),
            configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        player.rate = 2
        #expect(player.rate == 2)
        await player.waitUntilIdle()
        let presented = times.entries
        #expect(presented.count == 50)
        #expect(abs((presented[49].clock - presented[0].clock).seconds - 49.0 / 50) < 1e-6)
    }

    @Test func pauseHoldsFramesAndResumeGoesOnWithoutDrops() async throws {
        let clock = ManualPlaybackClock()
        let times = TimeLog(clock: clock)
        let player = Player(
            item: PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4"))), output: TimestampSink(log: times),
            configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        // Weakly: the player keeps its observer blocks, so a block holding the player would be a cycle.
        player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 2)) { [weak player] time in
            if time >= MediaTime(value: 1, timescale: 2), time < MediaTime(value: 14, timescale: 25) { player?.pause() }
        }
        player.play()
        // Paused at 0.5 s: frames stop arriving.
        let deadline = ContinuousClock.now + Bound.seconds(20)
        while player.timeControlStatus != .paused, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        // Required: a pause that comes only after the play below would leave the player paused,
        // and the wait for its end would never return.
        try #require(player.timeControlStatus == .paused)
        try await Task.sleep(for: .milliseconds(50))
        let heldAt = times.entries.count
        try await Task.sleep(for: .milliseconds(50))
        #expect(times.entries.count == heldAt, "no frame is presented while paused")
        #expect(heldAt < 50)
        player.play()
        await player.waitUntilIdle()
        #expect(times.entries.count == 50)
        #expect(player.statistics.framesDropped == 0)
    }

    @Test func replaceCurrentItemPlaysTheNewOne() async throws {
        let sink = InMemorySink()
        let first = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let second = PlayerItem(asset: Asset(path: try Fixtures.clip("4x3.mp4")))
        let player = Player(item: first, output: sink, configuration: PlayerConfiguration(decoding: small))
        player.replaceCurrentItem(with: second)
        #expect(player.currentItem === second)
        player.play()
        await player.waitUntilIdle()
        #expect(sink.frames.count == 50)
        #expect(second.status == .readyToPlay)
        #expect(first.status == .unknown, "the replaced item was never loaded")
    }

    @Test func fallingBehindIsReportedAsAStall() async throws {
        let clock = ManualPlaybackClock()
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let observer = RecordingObserver()
        item.addObserver(observer)
        let slow = TimestampSink(log: TimeLog(clock: clock), cost: .milliseconds(100), clock: clock)
        let player = Player(item: item, output: slow, configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        player.play()
        await player.waitUntilIdle()
        #expect(observer.events.contains(.stalled))
    }

    @Test func exactSeekShowsFrameKFirst() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let reference = await SeekTests.allFrames(path)
        let sink = InMemorySink()
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: sink,
            configuration: PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 160, height: 90))))
        let landed = await player.seek(to: MediaTime(value: 37, timescale: 25))
        #expect(landed == MediaTime(value: 37, timescale: 25))
        player.play()
        await player.waitUntilIdle()
        let frames = sink.frames
        #expect(frames.first?.presentationTime == MediaTime(value: 37, timescale: 25))
        #expect(frames.first?.bytes == reference[37].bytes)
        #expect(frames.count == 50 - 37)
    }

    @Test func keyframeSeekLandsInsideTheToleranceAndSaysWhere() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let observer = RecordingObserver()
        item.addObserver(observer)
        let player = Player(item: item, output: NullSink(pixelFormat: .rgb24), configuration: PlayerConfiguration(decoding: small))
        let target = MediaTime(value: 13, timescale: 10)
        let tolerance = MediaTime(value: 1, timescale: 2)
        let landed = try #require(await player.seek(to: target, toleranceBefore: tolerance, toleranceAfter: tolerance))
        #expect(landed == MediaTime(value: 1, timescale: 1), "the keyframe at 1 s")
        #expect(observer.events.contains(.timeJumped(from: .zero, to: landed)))
        player.play()
        await player.waitUntilIdle()
    }

    /// Pause, seek, play: once frames flow again the player says `playing` (it said
    /// `waitingToPlay` for the rest of the item while frames played). On a virtual clock held at
    /// set times, so that no frame is late however loaded the machine is (a late frame is a stall,
    /// rightly `waitingToPlay`). The waits end when the player says so; their 60 s only bound a
    /// hang (CI's first seconds, every suite loading at once on two cores, once took over 10 s
    /// to present the first frame).
    @Test func pauseSeekPlayPlaysAgain() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let clock = GatedClock()
        clock.open(until: .milliseconds(500))
        let player = Player(
            item: item, output: NullSink(pixelFormat: .rgb24), configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        func waitFor(_ status: TimeControlStatus) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while player.timeControlStatus != status, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        }
        player.play()
        try await waitFor(.playing)
        #expect(player.timeControlStatus == .playing)
        player.pause()
        #expect(player.timeControlStatus == .paused)
        let target = MediaTime(value: 1, timescale: 5)
        _ = await player.seek(to: target)
        // 0.6 s more: frames to about 0.8 s, then the clock stands (the item does not end).
        clock.open(until: clock.now() + .milliseconds(600))
        player.play()
        try await waitFor(.playing)
        #expect(player.timeControlStatus == .playing, "frames play again: \(player.timeControlStatus)")
        // Frames after the seek's flow, and the player still says it plays.
        let deadline = ContinuousClock.now + .seconds(60)
        while item.currentTime <= target + MediaTime(value: 1, timescale: 5), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(item.currentTime > target + MediaTime(value: 1, timescale: 5) && player.timeControlStatus == .playing, "\(item.currentTime)")
        player.pause()
    }

    @Test func pauseAtEndAndPeriodicTime() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("video-only.mp4")))
        let player = Player(item: item, output: NullSink(pixelFormat: .rgb24), configuration: PlayerConfiguration(decoding: small))
        let ticks = TickLog()
        player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 2)) { ticks.add($0) }
        #expect(player.timeControlStatus == .paused)
        player.play()
        await player.waitUntilIdle()
        #expect(player.timeControlStatus == .paused)
        #expect(player.rate == 0)
        #expect(player.currentItem === item)
        #expect(item.currentTime == MediaTime(value: 49, timescale: 25))
        // The frames at or just past 0, 0.5, 1 and 1.5 s (frames are 0.04 s apart).
        #expect(ticks.times == [0, 0.52, 1.0, 1.52])
    }
}
