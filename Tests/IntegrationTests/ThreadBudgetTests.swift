import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The threads a player uses come from one pool and are reused: they do not grow with seeks or
/// loop iterations, and every session gives its threads back when it ends. Run alone (see
/// scripts/test.sh): the count is process-wide, and other tests' threads would blur it.
@Suite(.serialized) struct ThreadBudgetTests {
    let tiny = PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9)))

    /// Waits (up to 5 s) for the pool's busy threads to come back down to `limit`.
    func poolSettles(to limit: Int) async throws -> Int {
        for _ in 0..<500 {
            if WorkerPool.shared.threadCount.busy <= limit { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return WorkerPool.shared.threadCount.busy
    }

    @Test func threadsStayBoundedAcrossSeeksAndLoops() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let before = processThreadCount
        let busyBefore = WorkerPool.shared.threadCount.busy
        var peak = before
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: NullSink(pixelFormat: .rgb24), audioOutput: NullAudioSink(),
            configuration: tiny)
        var random = SeededGenerator()
        // The peak over the first 50 seeks (or loops), and over the 150 after them.
        var early = (seeks: 0, loops: 0), late = (seeks: 0, loops: 0)
        for i in 0..<200 {
            if i == 100 { player.play() }
            let target = MediaTime(value: Int64.random(in: 0..<3900, using: &random), timescale: 1000)
            _ = await withDeadline(Bound.seconds(10), "seek \(i) to \(target.seconds) s") { await player.seek(to: target) }
            let now = processThreadCount
            peak = max(peak, now)
            if i < 50 { early.seeks = max(early.seeks, now) } else { late.seeks = max(late.seeks, now) }
        }
        player.replaceCurrentItem(with: nil)
        let busyAfterSeeks = try await poolSettles(to: busyBefore)

        let queue = QueuePlayer(output: NullSink(pixelFormat: .rgb24), audioOutput: NullAudioSink(), configuration: tiny)
        let looper = PlayerLooper(
            player: queue, templateItem: PlayerItem(asset: Asset(path: path)),
            timeRange: TimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 10)), loopCount: 200)
        queue.play()
        while !looper.isFinished {
            let now = processThreadCount
            peak = max(peak, now)
            if looper.loopsCompleted < 50 { early.loops = max(early.loops, now) } else { late.loops = max(late.loops, now) }
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(looper.loopsCompleted == 200)
        let busyAfterLoops = try await poolSettles(to: busyBefore)
        print(
            "threads: \(before) before; seeks peak \(early.seeks) over the first 50, \(late.seeks) over the next 150; loops \(early.loops), then \(late.loops); "
                + "busy pool threads \(busyBefore) → \(busyAfterSeeks) → \(busyAfterLoops); pool \(WorkerPool.shared.threadCount)")
        // One player holds two sessions at most (the current item and the next, pre-rolled), each
        // with four stages and FFmpeg's decoder threads: a few dozen threads, whatever the count
        // of seeks or loops — and no more after 200 than after 50.
        #expect(peak - before < 40, "threads grew from \(before) to \(peak)")
        #expect(late.seeks <= early.seeks + 4, "threads kept growing with seeks: \(early.seeks) → \(late.seeks)")
        #expect(late.loops <= early.loops + 4, "threads kept growing with loops: \(early.loops) → \(late.loops)")
        #expect(busyAfterSeeks <= busyBefore, "sessions still hold pool threads after their player was emptied")
        #expect(busyAfterLoops <= busyBefore, "sessions still hold pool threads after looping ended")
    }
}
