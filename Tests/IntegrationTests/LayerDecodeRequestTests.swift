import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A realtime layer's decode on a worker: its answer once it ends, a deadline that passes first,
/// and a reader let go while the decode is out (given back by the worker when it ends, never
/// touched by two threads).
@Suite struct LayerDecodeRequestTests {
    static func reader() throws -> MediaReader {
        let demuxer = try Demuxer.open(try Fixtures.clip("h264-aac.mp4"), interrupt: InterruptFlag())
        return try MediaReader(demuxer: demuxer, threads: 0)
    }

    @Test func anAnswerOnceTheDecodeEnds() throws {
        let request = LayerDecodeRequest(reader: try Self.reader(), target: MediaTime(value: 1, timescale: 1))
        request.start()
        #expect(request.wait(until: nil) && request.isFinished)
        // The frame displayed at 1 s: the one of that time, at 25 fps.
        let held = try #require(try request.answer())
        #expect(held.pts >= 0)
        let cleaned = Locked(false)
        request.abandon { cleaned.withLock { $0 = true } }
        #expect(cleaned.withLock { $0 }, "let go after the decode ended: at once")
    }

    /// A deadline already passed: the wait answers at once, the decode goes on; let go, the
    /// worker gives the reader back when the decode ends.
    @Test func aPassedDeadlineLeavesTheDecodeToItsWorker() async throws {
        let clock = ManualPlaybackClock()
        clock.advance(by: .seconds(10))
        let request = LayerDecodeRequest(reader: try Self.reader(), target: MediaTime(value: 19, timescale: 10))
        let started = ContinuousClock.now
        // Before the decode starts, so that the first wait surely finds it out.
        #expect(!request.wait(until: FrameDeadline(clock: clock, due: .seconds(1))))
        request.start()
        #expect(ContinuousClock.now - started < .seconds(5))
        let cleaned = Locked<Bool?>(nil)
        request.abandon { cleaned.withLock { $0 = true } }
        let deadline = ContinuousClock.now + Bound.seconds(20)
        while cleaned.withLock({ $0 }) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(cleaned.withLock { $0 } != nil, "the worker let go of the reader when its decode ended")
        #expect(!request.isFinished, "an abandoned decode is not read")
        #expect(throws: PlayheadError.self) { try request.answer() }
    }
}
