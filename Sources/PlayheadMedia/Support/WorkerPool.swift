import Dispatch
import Foundation

/// The one budget of dedicated threads for everything that blocks: opening and probing sources,
/// demuxing, decoding, converting, writing outputs, waiting on a playback clock. Nothing of that
/// runs on Swift's cooperative pool.
///
/// A job runs on an idle thread when there is one; otherwise a thread is started, up to
/// `maximumThreads`; past that, jobs wait in the order they came. A thread that finishes a job
/// parks and takes the next, so the number of threads follows the number of jobs running at once
/// (the sessions and requests that can run at once, times their stages) and never grows with
/// seeks, loops, queued items or image requests. Threads idle for `idleTimeout` end, down to
/// `parkedThreads`.
///
/// A job started from one of the pool's own threads — a session's video, audio and output stages,
/// a composition's output, a channel's encoder — is a helper of the job that started it, which
/// usually waits for it: a helper never waits behind the thread limit (it gets a parked thread or a
/// new one) and is taken before any waiting job. Queued behind the limit, it would wait for a
/// thread its own parent holds: with enough sessions started at once, every thread would wait.
package final class WorkerPool: Sendable {
    /// The process's pool.
    package static let shared = WorkerPool(maximumThreads: 512, parkedThreads: 8, idleTimeout: .seconds(10))

    private struct State {
        /// Waiting jobs from `head` on; a taken job's place is emptied at once (its closure holds
        /// what the job works on — a session's decoders — which must go when the job ends).
        var jobs: [(name: String, body: @Sendable () -> Void)?] = []
        var head = 0
        /// Helpers (jobs started from the pool's own threads), taken before `jobs`.
        var helpers: [(name: String, body: @Sendable () -> Void)] = []
        var threads = 0
        /// Parked threads no job has claimed yet. A job claims one (and signals) or starts one,
        /// so each job has its own thread even when several come at once.
        var idle = 0
        var peak = 0

        mutating func takeJob() -> (name: String, body: @Sendable () -> Void)? {
            if !helpers.isEmpty { return helpers.removeFirst() }
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    let maximumThreads: Int
    private let parkedThreads: Int
    private let idleTimeout: Duration
    private let state = Locked(State())
    private let available = DispatchSemaphore(value: 0)

    init(maximumThreads: Int, parkedThreads: Int, idleTimeout: Duration) {
        precondition(maximumThreads > 0)
        self.maximumThreads = maximumThreads
        self.parkedThreads = parkedThreads
        self.idleTimeout = idleTimeout
    }

    /// Threads alive now, those running a job now, and the most there ever were.
    var threadCount: (now: Int, busy: Int, peak: Int) { state.withLock { ($0.threads, $0.threads - $0.idle, $0.peak) } }

    /// Runs `job` on one of the pool's threads. `name` names the thread while it runs (it shows in
    /// debuggers and `top -H`). Called from one of the pool's threads, the job is a helper: it
    /// starts at once, past the thread limit if need be.
    package func run(_ name: String, _ job: @escaping @Sendable () -> Void) {
        enum Wake { case parked, new, later }
        let helper = isPoolThread
        let wake = state.withLock { s -> Wake in
            if helper { s.helpers.append((name, job)) } else { s.jobs.append((name, job)) }
            if s.idle > 0 {
                s.idle -= 1
                return .parked
            }
            guard helper || s.threads < maximumThreads else { return .later }
            s.threads += 1
            s.peak = max(s.peak, s.threads)
            return .new
        }
        switch wake {
        case .parked:
            available.signal()
        case .new:
            let thread = Thread { [self] in workLoop() }
            thread.stackSize = 1 << 20
            thread.start()
        case .later:
            // Every thread is busy and the pool is full: the first to finish takes it.
            break
        }
    }

    /// Runs `body` on a pool thread and returns its result to the awaiting task.
    ///
    /// The wait ends when the awaiting task is cancelled, as swift-nio's thread pool does it: a
    /// job not begun yet is dropped (it never runs) and the task gets `cancelled` at once; a job
    /// already running is told through `onCancel` (which should make it end: raise its interrupt)
    /// and the task waits for it, so what it holds is let go before the call returns.
    /// - Parameters:
    ///   - name: the thread's name while the job runs.
    ///   - onCancel: called once if the task is cancelled while the job runs.
    ///   - body: the blocking work.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; `cancelled` when the task was cancelled before the job began.
    package func value<T: Sendable>(
        _ name: String, onCancel: @escaping @Sendable () -> Void = {}, _ body: @escaping @Sendable () throws(PlayheadError) -> T
    ) async throws(PlayheadError) -> T {
        let gate = Locked(CancellableJob<T>())
        let result: Result<T, PlayheadError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, PlayheadError>, Never>) in
                guard gate.withLock({ $0.wait(continuation) }) else {
                    continuation.resume(returning: .failure(.cancelled()))
                    return
                }
                run(name) {
                    guard let waiting = gate.withLock({ $0.begin() }) else { return }
                    let outcome: Result<T, PlayheadError>
                    do throws(PlayheadError) {
                        outcome = .success(try body())
                    } catch {
                        outcome = .failure(error)
                    }
                    waiting.resume(returning: outcome)
                }
            }
        } onCancel: {
            switch gate.withLock({ $0.cancel() }) {
            case .resume(let waiting): waiting.resume(returning: .failure(.cancelled()))
            case .tellRunningJob: onCancel()
            case .nothing: break
            }
        }
        return try result.get()
    }

    /// Runs `body` on a pool thread, for work that cannot fail and must run whatever becomes of
    /// the awaiting task (an output given up, a folder read back): a cancel neither drops it nor
    /// ends the wait; it returns when `body` has run.
    /// - Parameters:
    ///   - name: the thread's name while the job runs.
    ///   - body: the blocking work.
    /// - Returns: what `body` returns.
    package func value<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            run(name) { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on a pool thread whatever becomes of the awaiting task, and returns or throws
    /// what it did: for work that must happen once it is asked for — completing an output file
    /// (a trailer, a rename) that a cancel must not leave neither finished nor given up.
    /// - Parameters:
    ///   - name: the thread's name while the job runs.
    ///   - body: the blocking work.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (never `cancelled` for the awaiting task's cancel).
    package func mustRun<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws(PlayheadError) -> T) async throws(PlayheadError) -> T {
        let result: Result<T, PlayheadError> = await value(name) { () -> Result<T, PlayheadError> in
            do throws(PlayheadError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Whether the calling thread is one of this pool's.
    var isPoolThread: Bool { pthread_getspecific(Self.threadKey) == Unmanaged.passUnretained(self).toOpaque() }

    /// Marks each thread with the pool it belongs to.
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private func workLoop() {
        pthread_setspecific(Self.threadKey, Unmanaged.passUnretained(self).toOpaque())
        Thread.current.name = "playhead.worker"
        var parked = false
        while true {
            if !parked {
                let job = state.withLock { s -> (name: String, body: @Sendable () -> Void)? in
                    if let job = s.takeJob() { return job }
                    s.idle += 1
                    return nil
                }
                if let job {
                    Thread.current.name = job.name
                    job.body()
                    Thread.current.name = "playhead.worker"
                    continue
                }
                parked = true
            }
            let timeout = DispatchTime.now() + .nanoseconds(Int(idleTimeout.components.seconds) * 1_000_000_000)
            if available.wait(timeout: timeout) == .success {
                // A job claimed this thread (it took us off the idle count).
                parked = false
                continue
            }
            // Idle for long: end, unless the pool is down to its parked threads. When every idle
            // thread was claimed meanwhile, a wake-up is on its way: wait for it.
            let retire = state.withLock { s -> Bool in
                guard s.idle > 0, s.threads > parkedThreads else { return false }
                s.idle -= 1
                s.threads -= 1
                return true
            }
            if retire { return }
        }
    }
}

/// A job run for an awaiting task (``WorkerPool/value(_:onCancel:_:)``): who resumes the task —
/// the job, or the cancellation before the job began — decided under one lock, once.
struct CancellableJob<T: Sendable>: Sendable {
    private enum Phase {
        case initial
        case waiting(CheckedContinuation<Result<T, PlayheadError>, Never>)
        case running
        case cancelled
    }

    enum CancelAction {
        case resume(CheckedContinuation<Result<T, PlayheadError>, Never>)
        case tellRunningJob
        case nothing
    }

    private var phase = Phase.initial

    /// The task waits: false when it was cancelled already (the caller resumes it at once).
    mutating func wait(_ continuation: CheckedContinuation<Result<T, PlayheadError>, Never>) -> Bool {
        guard case .initial = phase else { return false }
        phase = .waiting(continuation)
        return true
    }

    /// The job begins: the continuation it resumes, or nil when the task was cancelled first.
    mutating func begin() -> CheckedContinuation<Result<T, PlayheadError>, Never>? {
        guard case .waiting(let continuation) = phase else { return nil }
        phase = .running
        return continuation
    }

    mutating func cancel() -> CancelAction {
        switch phase {
        case .initial:
            phase = .cancelled
            return .nothing
        case .waiting(let continuation):
            phase = .cancelled
            return .resume(continuation)
        case .running:
            return .tellRunningJob
        case .cancelled:
            return .nothing
        }
    }
}
