import Dispatch
import Glibc
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The one thread budget: jobs from outside wait behind the limit, helpers started from the pool's
/// own threads never do (queued behind it, a helper waited for a thread its own parent held).
@Suite struct WorkerPoolTests {
    /// A job on the only thread of a full pool starts a helper and waits for it: the helper runs.
    @Test func aHelperOfAJobAtTheLimitRuns() async {
        let pool = WorkerPool(maximumThreads: 1, parkedThreads: 0, idleTimeout: .seconds(1))
        let ran = await pool.value("parent") { () -> Bool in
            #expect(pool.isPoolThread)
            let helped = DispatchSemaphore(value: 0)
            pool.run("helper") { helped.signal() }
            return helped.wait(timeout: .now() + .seconds(5)) == .success
        }
        #expect(ran, "the helper waited behind the limit for the thread its parent held")
        #expect(!pool.isPoolThread, "a test's thread is not the pool's")
    }

    /// Many sessions at once, each a parent with three helpers it waits for (a decode session's
    /// stages): every one ends, on a pool limited to fewer threads than parents.
    @Test func manyParentsWithHelpersAllEnd() async {
        let pool = WorkerPool(maximumThreads: 4, parkedThreads: 0, idleTimeout: .seconds(1))
        let ended = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    await pool.value("parent") { () -> Bool in
                        let helpers = DispatchGroup()
                        for _ in 0..<3 {
                            helpers.enter()
                            pool.run("helper") { helpers.leave() }
                        }
                        return helpers.wait(timeout: .now() + .seconds(10)) == .success
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(ended == 12)
    }

    /// Jobs from outside the pool never run more at once than the limit: the rest wait their turn.
    @Test func outsideJobsWaitBehindTheLimit() async {
        let pool = WorkerPool(maximumThreads: 2, parkedThreads: 0, idleTimeout: .seconds(1))
        let running = Locked((now: 0, most: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await pool.value("outside") {
                        running.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        usleep(20_000)
                        running.withLock { $0.now -= 1 }
                    }
                }
            }
        }
        // At most the limit at once (how many overlap depends on when the second thread starts).
        #expect((1...2).contains(running.withLock { $0.most }))
        #expect((1...2).contains(pool.threadCount.peak), "never more threads than the limit: \(pool.threadCount.peak)")
    }

    /// As swift-nio's thread pool: a job whose caller was cancelled before it began never runs,
    /// and the caller gets `cancelled` at once, though every thread is busy.
    @Test func aJobWhoseCallerIsCancelledBeforeItBeginsNeverRuns() async {
        let pool = WorkerPool(maximumThreads: 1, parkedThreads: 0, idleTimeout: .seconds(1))
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        pool.run("holder") {
            holding.signal()
            release.wait()
        }
        holding.wait()
        let ran = Locked(false)
        let waiting = Task { () -> PlayheadError.Code? in
            do throws(PlayheadError) {
                try await pool.value("late") { () throws(PlayheadError) in ran.withLock { $0 = true } }
                return nil
            } catch {
                return error.code
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let code = await waiting.value
        #expect(code == .cancelled, "the cancelled caller waited for a thread: \(String(describing: code))")
        release.signal()
        try? await Task.sleep(for: .milliseconds(200))
        #expect(!ran.withLock { $0 }, "the dropped job ran")
    }

    /// A job already running when its caller is cancelled is told (its `onCancel`), and the caller
    /// has its result once it ends.
    @Test func aRunningJobIsToldOfTheCancellation() async {
        let pool = WorkerPool(maximumThreads: 2, parkedThreads: 0, idleTimeout: .seconds(1))
        let started = DispatchSemaphore(value: 0)
        let interrupt = InterruptFlag()
        let waiting = Task { () -> Bool in
            let value = try? await pool.value("running", onCancel: { interrupt.raise() }) { () throws(PlayheadError) -> Bool in
                started.signal()
                let until = DispatchTime.now() + .seconds(10)
                while !interrupt.isRaised, DispatchTime.now() < until { usleep(1000) }
                return interrupt.isRaised
            }
            return value ?? false
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        waiting.cancel()
        #expect(await waiting.value, "the running job was not told")
    }
}
