import PlayheadMedia

/// The answer to a caller waiting for a run on worker threads (a session's, a render's): the
/// run's result when it ends, or — once the run is cancelled and it has not ended within a
/// patience (a stage is inside a sink whose `write` does not return) — the result so far, as
/// cancelled. Answered once; the later of the two is dropped. Whoever holds the outputs lets go
/// of them when the run truly ends, not when the caller is answered.
final class RunAnswer<Answer: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Answer, Never>?
        /// An answer that came before the caller began waiting.
        var early: Answer?
        var answered = false
        var abandoning = false
        /// The patience's wait, cancelled when the run answers first (so that it holds nothing of
        /// the run for the rest of the second).
        var patienceWait: Task<Void, Never>?
    }

    private let state = Locked(State())
    private let soFar: @Sendable () -> Answer

    /// How long a cancelled run has to end before it is answered without its stages.
    static var patience: Duration { .seconds(1) }

    /// - Parameter soFar: the run's answer so far, as cancelled, for an answer without the stages.
    init(soFar: @escaping @Sendable () -> Answer) {
        self.soFar = soFar
    }

    /// Runs `body` on a worker thread and waits for its answer, or for the answer so far once the
    /// calling task is cancelled and `body` has not returned within ``patience``.
    /// - Parameters:
    ///   - name: the worker thread's name.
    ///   - onCancel: tells the run to stop (called when the calling task is cancelled).
    ///   - soFar: the answer so far, as cancelled.
    ///   - body: the run; it returns when it has let go of everything it holds.
    /// - Returns: the run's answer, or the answer so far.
    static func value(
        _ name: String, onCancel: @escaping @Sendable () -> Void, soFar: @escaping @Sendable () -> Answer,
        _ body: @escaping @Sendable () -> Answer
    ) async -> Answer {
        let answer = RunAnswer(soFar: soFar)
        return await withTaskCancellationHandler {
            await answer.wait {
                WorkerPool.shared.run(name) { answer.answer(body()) }
            }
        } onCancel: {
            onCancel()
            answer.abandon()
        }
    }

    /// The caller waits here for the answer; `start` begins the run once the wait is set up.
    /// - Parameter start: begins the run.
    /// - Returns: the answer.
    func wait(_ start: () -> Void) async -> Answer {
        await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            let early = state.withLock { s -> Answer? in
                if let early = s.early { return early }
                s.continuation = continuation
                return nil
            }
            // The run starts whatever happened meanwhile: it is what lets go of the outputs.
            start()
            if let early { continuation.resume(returning: early) }
        }
    }

    /// Answers with `result`, unless answered already.
    /// - Parameter result: the run's answer.
    func answer(_ result: Answer) {
        let (waiting, patienceWait) = state.withLock { s -> (CheckedContinuation<Answer, Never>?, Task<Void, Never>?) in
            guard !s.answered else { return (nil, nil) }
            s.answered = true
            defer { s.patienceWait = nil }
            guard let continuation = s.continuation else {
                s.early = result
                return (nil, s.patienceWait)
            }
            s.continuation = nil
            return (continuation, s.patienceWait)
        }
        patienceWait?.cancel()
        waiting?.resume(returning: result)
    }

    /// Answers with the answer so far after ``patience`` — unless the run answers first. Asked
    /// again, it does nothing more.
    func abandon() {
        let first = state.withLock { s -> Bool in
            defer { s.abandoning = true }
            return !s.answered && !s.abandoning
        }
        guard first else { return }
        let soFar = self.soFar
        let wait = Task { [weak self] in
            // Cancelled when the run answers first.
            guard (try? await Task.sleep(for: Self.patience)) != nil, let self else { return }
            answer(soFar())
        }
        state.withLock { s in
            if s.answered { wait.cancel() } else { s.patienceWait = wait }
        }
    }
}
