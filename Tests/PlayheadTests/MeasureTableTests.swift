import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The measures a compositor takes ahead: taken once per source version, a failure only for a
/// while (a source down for a moment is measured again later).
@Suite struct MeasureTableTests {
    /// A table whose measure fails the first `failures` times, counting its calls.
    static func table(failures: Int, lifetime: Duration) -> (MeasureTable<Int>, Locked<Int>) {
        let calls = Locked(0)
        let table = MeasureTable<Int>(name: "test.measure", failureLifetime: lifetime) { (asset, _) throws(PlayheadError) -> Int in
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            if call <= failures { throw PlayheadError(code: .timedOut, message: "down for a moment", file: asset.source) }
            return 42
        }
        return (table, calls)
    }

    @Test func aSuccessIsTakenOnce() throws {
        let (table, calls) = Self.table(failures: 0, lifetime: .zero)
        let asset = Asset(path: "/nowhere/a.mp4")
        #expect(try table.value(of: asset, interrupt: InterruptFlag()) == 42)
        #expect(try table.value(of: asset, interrupt: InterruptFlag()) == 42)
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func aFailureStandsForItsLifetimeOnly() throws {
        let asset = Asset(path: "/nowhere/b.mp4")
        // Within its lifetime: the failure is the answer, not measured again.
        let (kept, keptCalls) = Self.table(failures: 1, lifetime: .seconds(3600))
        #expect(throws: PlayheadError.self) { try kept.value(of: asset, interrupt: InterruptFlag()) }
        #expect(throws: PlayheadError.self) { try kept.value(of: asset, interrupt: InterruptFlag()) }
        #expect(keptCalls.withLock { $0 } == 1)
        // Past it: measured again, and the success kept.
        let (expiring, calls) = Self.table(failures: 1, lifetime: .zero)
        #expect(throws: PlayheadError.self) { try expiring.value(of: asset, interrupt: InterruptFlag()) }
        #expect(try expiring.value(of: asset, interrupt: InterruptFlag()) == 42)
        #expect(try expiring.value(of: asset, interrupt: InterruptFlag()) == 42)
        #expect(calls.withLock { $0 } == 2)
    }

    /// `measured(_:)` (the render thread's, never blocking) starts a new measure of an expired
    /// failure on a worker, and has it once it is taken.
    @Test func theRenderThreadsAskRestartsAnExpiredFailure() async throws {
        let (table, calls) = Self.table(failures: 1, lifetime: .zero)
        let asset = Asset(path: "/nowhere/c.mp4")
        #expect(throws: PlayheadError.self) { try table.value(of: asset, interrupt: InterruptFlag()) }
        var answer = table.measured(asset)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, (try? answer?.get()) != 42 {
            try await Task.sleep(for: .milliseconds(5))
            answer = table.measured(asset)
        }
        #expect((try? answer?.get()) == 42 && calls.withLock { $0 } == 2)
    }
}
