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

    /// The threads outside the pool (FFmpeg's decoder threads, the test's own): these would grow
    /// if a session left a codec open.
    var threadsOutsidePool: Int { processThreadCount - WorkerPool.shared.threadCount.now }

    /// Waits (up to 5 s) for the threads outside the pool to come back down to `limit`.
    func outsideSettles(to limit: Int) async throws -> Int {
        for _ in 0..<500 {
            if threadsOutsidePool <= limit { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return threadsOutsidePool
    }

    /// The middle value of `samples` (0 when there are none).
    func median(_ samples: [Int]) -> Int {
        let sorted = samples.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    @Test func threadsStayBoundedAcrossSeeksAndLoops() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let before = processThreadCount
        let outsideBefore = threadsOutsidePool
        let busyBefore = WorkerPool.shared.threadCount.busy
        var peak = before
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: NullSink(pixelFormat: .rgb24), audioOutput: NullAudioSink(),
            configuration: tiny)
        var random = SeededGenerator()
        // The threads outside the pool after each of the first 50 seeks and each of the last 50;
        // loops are sampled every 2 ms, over the first 50 loops and the last 50. Their medians are
        // compared: a peak over more samples catches more of the moments when one session's
        // decoder threads end as the next one's start, which is no growth.
        var early = (seeks: [Int](), loops: [Int]()), late = (seeks: [Int](), loops: [Int]())
        for i in 0..<200 {
            if i == 100 { player.play() }
            let target = MediaTime(value: Int64.random(in: 0..<3900, using: &random), timescale: 1000)
            _ = await withDeadline(Bound.seconds(10), "seek \(i) to \(target.seconds) s") { await player.seek(to: target) }
            let now = processThreadCount
            peak = max(peak, now)
            if i < 50 { early.seeks.append(threadsOutsidePool) } else if i >= 150 { late.seeks.append(threadsOutsidePool) }
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
            if looper.loopsCompleted < 50 {
                early.loops.append(threadsOutsidePool)
            } else if looper.loopsCompleted >= 150 {
                late.loops.append(threadsOutsidePool)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(looper.loopsCompleted == 200)
        let busyAfterLoops = try await poolSettles(to: busyBefore)
        queue.removeAllItems()
        let outsideAfter = try await outsideSettles(to: outsideBefore)
        print(
            "threads: \(before) before, peak \(peak); outside the pool over seeks (median) \(median(early.seeks)), then \(median(late.seeks)); over loops \(median(early.loops)), then \(median(late.loops)); "
                + "busy pool threads \(busyBefore) → \(busyAfterSeeks) → \(busyAfterLoops); outside the pool \(outsideBefore) → \(outsideAfter); "
                + "pool \(WorkerPool.shared.threadCount)")
        // One player holds two sessions at most (the current item and the next, pre-rolled), each
        // with four stages and FFmpeg's decoder threads: a few dozen threads, whatever the count
        // of seeks or loops — and no more after 200 than after 50.
        #expect(peak - before < 40, "threads grew from \(before) to \(peak)")
        #expect(
            median(late.seeks) <= median(early.seeks) + 2,
            "threads kept growing with seeks: \(median(early.seeks)) → \(median(late.seeks))")
        #expect(!early.loops.isEmpty && !late.loops.isEmpty, "loops were not sampled")
        #expect(
            median(late.loops) <= median(early.loops) + 2,
            "threads kept growing with loops: \(median(early.loops)) → \(median(late.loops))")
        #expect(outsideAfter <= outsideBefore, "decoder threads outlive their sessions: \(outsideBefore) → \(outsideAfter)")
        #expect(busyAfterSeeks <= busyBefore, "sessions still hold pool threads after their player was emptied")
        #expect(busyAfterLoops <= busyBefore, "sessions still hold pool threads after looping ended")
    }
}
