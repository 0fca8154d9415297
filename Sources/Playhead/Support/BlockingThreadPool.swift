import Dispatch
import Foundation

/// A fixed set of dedicated threads for blocking FFmpeg calls (opening files, probing), so that
/// they never occupy Swift's cooperative thread pool.
///
/// Jobs are taken in submission order. Threads are started lazily, up to `threadCount`, and stay
/// parked on a semaphore when idle.
final class BlockingThreadPool: Sendable {
    /// The pool for opening and probing media. Opening is mostly waiting on I/O, so it is wider
    /// than the core count.
    static let io = BlockingThreadPool(name: "playhead.io", threadCount: max(4, ProcessInfo.processInfo.activeProcessorCount * 2))

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var threadsStarted = 0
        var idle = 0
    }

    private let name: String
    private let threadCount: Int
    private let state = Locked(State())
    private let available = DispatchSemaphore(value: 0)

    init(name: String, threadCount: Int) {
        precondition(threadCount > 0)
        self.name = name
        self.threadCount = threadCount
    }

    /// Queues `job` to run on one of the pool's threads.
    func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = state.withLock { s -> Bool in
            s.jobs.append(job)
            if s.idle == 0, s.threadsStarted < threadCount {
                s.threadsStarted += 1
                return true
            }
            return false
        }
        if startThread {
            let thread = Thread { [self] in self.workLoop() }
            thread.name = "\(name)-\(state.withLock { $0.threadsStarted })"
            thread.start()
        }
        available.signal()
    }

    /// Runs `body` on one of the pool's threads and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(PlayheadError) -> T) async throws(PlayheadError) -> T {
        let result: Result<T, PlayheadError> = await withCheckedContinuation { continuation in
            submit {
                do throws(PlayheadError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    private func workLoop() {
        while true {
            state.withLock { $0.idle += 1 }
            available.wait()
            let job = state.withLock { s -> @Sendable () -> Void in
                s.idle -= 1
                let job = s.jobs[s.head]
                s.head += 1
                if s.head > 64, s.head * 2 > s.jobs.count {
                    s.jobs.removeFirst(s.head)
                    s.head = 0
                }
                return job
            }
            job()
        }
    }
}
