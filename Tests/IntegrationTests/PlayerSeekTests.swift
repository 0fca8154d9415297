import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Seeks move the live reader in place and land on the frame displayed at the target; every seek
/// returns, whatever happens to its item meanwhile; waiting for a pool slot always ends; threads
/// do not grow with seeks or loops.
@Suite struct PlayerSeekTests {
    let tiny = PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9)))

    @Test func liveSeeksLandOnTheFrameDisplayedAtRandomTimes() async throws {
        let path = try Fixtures.reader("bframes-25.mp4")
        let frames = try await Reference.frameTimes(path)
        let reference = try await Reference.allFrames(path)
        let sink = InMemorySink(pixelFormat: .rgb24)
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: sink)
        var random = SeededGenerator()
        let end = try await Asset(path: path).load(.duration)
        let times = ExactTimeTests.randomTimes(frames, end: end, count: 25, using: &random)
        for t in times {
            let landed = await withDeadline(Bound.seconds(10), "seek to \(t.seconds) s") { await player.seek(to: t) }
            let k = ExactTimeTests.displayed(at: t, frames)
            #expect(landed == .some(frames[k]), "seek to \(t.seconds) s (seed \(random.seed)): landed at \(String(describing: landed))")
        }
        let last = try #require(times.last)
        let k = ExactTimeTests.displayed(at: last, frames)
        player.play()
        _ = await withDeadline(Bound.seconds(10), "playing after the seeks") { await player.waitUntilIdle() }
        // Nothing was written while paused; playing shows the last seek's frame and what follows.
        #expect(sink.frames.map(\.presentationTime) == Array(frames[k...]), "seed \(random.seed)")
        #expect(sink.frames.first?.bytes == reference[k])
    }

    /// A player whose configuration starts items part way, sought while paused before it ever
    /// played, then played: one run from the seek's frame on (none started beside it from the
    /// configured start), and nothing left reading the file once it is let go of.
    @Test func aSeekBeforePlayingWithAConfiguredStartRunsOnce() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/clip.mp4"
        try FileManager.default.copyItem(atPath: try Fixtures.reader("bframes-25.mp4"), toPath: path)
        let frames = try await Reference.frameTimes(path)
        let sink = InMemorySink(pixelFormat: .rgb24)
        let target = MediaTime(value: 3, timescale: 2)
        let k = ExactTimeTests.displayed(at: target, frames)
        do {
            var configuration = tiny
            configuration.decoding.startTime = MediaTime(value: 1, timescale: 2)
            let player = Player(item: PlayerItem(asset: Asset(path: path)), output: sink, configuration: configuration)
            let landed = await withDeadline(Bound.seconds(10), "the seek") { await player.seek(to: target) }
            #expect(landed == .some(frames[k]))
            player.play()
            _ = await withDeadline(Bound.seconds(10), "playing after the seek") { await player.waitUntilIdle() }
            #expect(sink.frames.map(\.presentationTime) == Array(frames[k...]))
        }
        let closed = await withDeadline(Bound.seconds(10), "the let-go player's file closed") {
            while LibraryMisuseTests.descriptors(to: path) > 0 { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        #expect(closed == true, "\(LibraryMisuseTests.descriptors(to: path)) descriptor(s) to the file stay open")
    }

    /// A seek whose item fails, is removed, skipped or emptied away, or whose target lies past the
    /// end, still returns — at whatever moment the interruption comes.
    @Test(arguments: ["fails", "remove", "advance", "removeAll", "pastEnd", "superseded"])
    func everySeekReturns(outcome: String) async throws {
        let good = try Fixtures.reader("audio-video-4s.mp4")
        let bad = try Fixtures.clip("bad-random.mp4")
        var random = SeededGenerator()
        for round in 0..<12 {
            let delay = Int.random(in: 0...3000, using: &random)
            let first = PlayerItem(asset: Asset(path: outcome == "fails" ? bad : good))
            let second = PlayerItem(asset: Asset(path: good))
            let player = QueuePlayer(
                items: [first, second], output: NullSink(pixelFormat: .rgb24), audioOutput: NullAudioSink(), configuration: tiny)
            if round % 2 == 1 { player.play() }
            let target = outcome == "pastEnd" ? MediaTime(value: 100, timescale: 1) : MediaTime(value: 3, timescale: 1)
            let seek = Task { await player.seek(to: target) }
            usleep(UInt32(delay))
            switch outcome {
            case "remove": player.remove(first)
            case "advance": player.advanceToNextItem()
            case "removeAll": player.removeAllItems()
            case "superseded": _ = await player.seek(to: MediaTime(value: 1, timescale: 1))
            default: break
            }
            let landed = await withDeadline(Bound.seconds(10), "\(outcome) (round \(round), \(delay) µs, seed \(random.seed))") { await seek.value }
            if outcome == "fails" { #expect(landed == .some(nil), "a seek on an item that fails lands nowhere") }
            if outcome == "pastEnd", case .some(.some(let time)) = landed {
                #expect(time.seconds > 3.9, "past the end shows the last frame, not \(time.seconds) s")
            }
            player.removeAllItems()
            _ = await withDeadline(Bound.seconds(10), "emptying the player") { await player.waitUntilIdle() }
        }
    }

    @Test func waitingForASlotAlwaysEnds() async throws {
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 1)
        let release = Locked(false)
        let holder = Task {
            try await coordinator.withSlot {
                while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
                return 1
            }
        }
        while await coordinator.runningSessions.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
        let waiting = (0..<3).map { _ in Task { try await coordinator.withSlot { 2 } } }
        let cancelledByTask = Task { try await coordinator.withSlot { 3 } }
        while await coordinator.waitingSessions.count < 4 { try await Task.sleep(for: .milliseconds(2)) }
        cancelledByTask.cancel()
        let byTask = await withDeadline(Bound.seconds(5), "a cancelled waiting task") { await cancelledByTask.result }
        #expect(byTask.map { (try? $0.get()) == nil } == true, "a waiter whose task is cancelled throws")
        await coordinator.cancelAll()
        for task in waiting {
            let result = await withDeadline(Bound.seconds(5), "a waiter after cancelAll") { await task.result }
            #expect(result.map { (try? $0.get()) == nil } == true, "cancelAll refuses every waiting request")
        }
        release.withLock { $0 = true }
        #expect(try await holder.value == 1, "the running body finishes")
        _ = await withDeadline(Bound.seconds(5), "the pool going idle") { await coordinator.waitUntilIdle() }
    }
}
