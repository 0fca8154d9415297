import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The coordinator's pool and the looper, over real clips.
@Suite struct CoordinatorTests {
    let small = DecodeConfiguration(outputSize: PixelSize(width: 160, height: 90))

    @Test func loopingThreeTimesRepeatsEveryFrameExactlyThrice() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let reference = await SeekTests.allFrames(path)
        try #require(reference.count == 50)
        let sink = InMemorySink()
        let player = QueuePlayer(output: sink, configuration: PlayerConfiguration(decoding: small))
        let looper = PlayerLooper(player: player, templateItem: PlayerItem(asset: Asset(path: path)), loopCount: 3)
        player.play()
        await looper.waitUntilFinished()
        await player.waitUntilIdle()
        #expect(looper.loopsCompleted == 3)
        let frames = sink.frames
        #expect(frames.count == 150)
        // By content: no frame repeated or missing at the seams.
        for (i, frame) in frames.enumerated() {
            #expect(frame.bytes == reference[i % 50].bytes, "frame \(i) should be frame \(i % 50) of the clip")
        }
    }

    @Test func realtimeLoopSeamsAreMeasuredAndSeamless() async throws {
        let clock = ManualPlaybackClock()
        let player = QueuePlayer(
            output: NullSink(pixelFormat: .rgb24), configuration: PlayerConfiguration(realtime: true, decoding: small), clock: clock)
        let looper = PlayerLooper(player: player, templateItem: PlayerItem(asset: Asset(path: try Fixtures.clip("video-only.mp4"))), loopCount: 3)
        player.play()
        await player.waitUntilIdle()
        #expect(looper.loopsCompleted == 3)
        #expect(looper.measuredSeams.count == 2)
        #expect(looper.measuredSeams.maximum == 0)
        #expect(player.statistics.framesDropped == 0)
    }

    @Test func loopingATimeRange() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let sink = InMemorySink()
        let player = QueuePlayer(output: sink, configuration: PlayerConfiguration(decoding: small))
        // Frames 10 ..< 20, twice.
        let range = TimeRange(start: MediaTime(value: 10, timescale: 25), end: MediaTime(value: 20, timescale: 25))
        let looper = PlayerLooper(player: player, templateItem: PlayerItem(asset: Asset(path: path)), timeRange: range, loopCount: 2)
        player.play()
        await player.waitUntilIdle()
        #expect(looper.loopsCompleted == 2)
        let times = sink.frames.map(\.presentationTime)
        let once = (10..<20).map { MediaTime(value: Int64($0), timescale: 25) }
        #expect(times == once + once)
    }

    @Test(arguments: [4, 2])
    func poolNeverRunsMoreThanItsLimit(limit: Int) async throws {
        let clips = ["h264-aac.mp4", "hevc-aac.mkv", "vp9-opus.webm", "4x3.mp4", "portrait.mp4", "anamorphic.mp4"]
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: limit)
        let events = coordinator.events
        var ids: [SessionID] = []
        // Every session's frames wait until all six are submitted: the first `limit` overlap.
        let gate = WriteGate()
        for clip in clips {
            ids.append(await coordinator.submit(PlaybackRequest(source: try Fixtures.clip(clip), decoding: small)) { gate.sink() })
        }
        gate.open()
        var outcomes: [SessionOutcome] = []
        for id in ids { outcomes.append(try await coordinator.outcome(of: id)) }
        #expect(outcomes.allSatisfy { $0.status == .completed })
        #expect(outcomes.allSatisfy { $0.framesPresented == 50 })
        #expect(await coordinator.peakConcurrentSessions == limit)

        // Replaying the ordered events: running sessions never exceed the limit.
        var active = 0, peak = 0, finished = 0
        for await event in events {
            switch event {
            case .started:
                active += 1
                peak = max(peak, active)
            case .finished:
                active -= 1
                finished += 1
            case .queued: break
            }
            #expect(active <= limit)
            if finished == clips.count { break }
        }
        #expect(peak == limit)
    }

    @Test func backgroundLoopRunsWhileOthersPlayAndStopsOnRequest() async throws {
        let clock = ManualPlaybackClock()
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 4, clock: clock)
        let loop = await coordinator.submit(
            PlaybackRequest(source: try Fixtures.clip("video-only.mp4"), loop: .forever, realtime: true, decoding: small)
        ) { NullSink(pixelFormat: .rgb24) }
        let cancelledLoop = await coordinator.submit(
            PlaybackRequest(source: try Fixtures.clip("4x3.mp4"), loop: .forever, realtime: true, decoding: small)
        ) { NullSink(pixelFormat: .rgb24) }
        let once = [
            await coordinator.submit(PlaybackRequest(source: try Fixtures.clip("h264-aac.mp4"), decoding: small)) { NullSink(pixelFormat: .rgb24) },
            await coordinator.submit(PlaybackRequest(source: try Fixtures.clip("vp9-opus.webm"), decoding: small)) { NullSink(pixelFormat: .rgb24) },
        ]
        for id in once { #expect(try await coordinator.outcome(of: id).status == .completed) }
        // The loops are still going.
        #expect(await coordinator.runningSessions.contains(loop))
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while ContinuousClock.now < deadline {
            if await coordinator.progress().first(where: { $0.id == loop })?.loopsCompleted ?? 0 >= 2 { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        await coordinator.stopLooping(loop)
        await coordinator.cancel(cancelledLoop)
        let stopped = try await coordinator.outcome(of: loop)
        #expect(stopped.status == .completed)
        #expect(stopped.loopsCompleted >= 2)
        // Two realtime loops share one virtual clock here, so each one's sleeping makes the other
        // late: every frame is presented or counted as dropped.
        #expect(stopped.framesPresented + stopped.framesDropped == stopped.loopsCompleted * 50)
        #expect(try await coordinator.outcome(of: cancelledLoop).status == .cancelled)
        await coordinator.waitUntilIdle()
        #expect(await coordinator.runningSessions.isEmpty)
    }

    @Test func waitingRequestsCanBeCancelledAndFailuresAreReported() async throws {
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 1)
        // The first session's frames wait until the waiting one is cancelled: it cannot have
        // started meanwhile.
        let gate = WriteGate()
        let first = await coordinator.submit(PlaybackRequest(source: try Fixtures.clip("h264-aac.mp4"), decoding: small)) { gate.sink() }
        let waiting = await coordinator.submit(PlaybackRequest(source: try Fixtures.clip("4x3.mp4"), decoding: small)) { NullSink() }
        let bad = await coordinator.submit(PlaybackRequest(source: try Fixtures.clip("bad-text.mp4"), loop: .count(3), decoding: small)) {
            NullSink()
        }
        #expect(await coordinator.waitingSessions == [waiting, bad])
        await coordinator.cancel(waiting)
        let dropped = try await coordinator.outcome(of: waiting)
        #expect(dropped.status == .cancelled && dropped.framesPresented == 0)
        gate.open()
        #expect(try await coordinator.outcome(of: first).status == .completed)
        let failed = try await coordinator.outcome(of: bad)
        guard case .failed(let error) = failed.status else {
            Issue.record("a bad file must fail, got \(failed.status)")
            return
        }
        #expect(error.code == .unrecognizedFormat)
        #expect(failed.loopsCompleted == 0)
    }
}
