import PlayheadMedia

/// The answer to a caller waiting for a session's run: the pipeline's result when it ends, or —
/// once the run is cancelled and its stages have not let go within a patience (one is inside a
/// sink whose `write` does not return) — the result so far, as cancelled. Answered once; the later
/// of the two is dropped.
final class RunAnswer: Sendable {
    private struct State {
        var continuation: CheckedContinuation<DecodeResult, Never>?
        /// An answer that came before the caller began waiting.
        var early: DecodeResult?
        var answered = false
        var abandoning = false
    }

    private let state = Locked(State())
    private let soFar: @Sendable () -> DecodeResult

    /// - Parameter soFar: the run's result so far (its counts), for an answer without the stages.
    init(soFar: @escaping @Sendable () -> DecodeResult) {
        self.soFar = soFar
    }

    /// The caller waits here.
    /// - Parameter continuation: resumed once, with the answer.
    func wait(_ continuation: CheckedContinuation<DecodeResult, Never>) {
        let early = state.withLock { s -> DecodeResult? in
            if let early = s.early { return early }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Answers with `result`, unless answered already.
    /// - Parameter result: the run's result.
    func answer(_ result: DecodeResult) {
        let waiting = state.withLock { s -> CheckedContinuation<DecodeResult, Never>? in
            guard !s.answered else { return nil }
            s.answered = true
            guard let continuation = s.continuation else {
                s.early = result
                return nil
            }
            s.continuation = nil
            return continuation
        }
        waiting?.resume(returning: result)
    }

    /// Answers with the result so far, as cancelled, after `patience` — unless the stages answer
    /// first. Asked again, it does nothing more.
    /// - Parameter patience: how long the stages have to let go.
    func abandon(after patience: Duration) {
        let first = state.withLock { s -> Bool in
            defer { s.abandoning = true }
            return !s.answered && !s.abandoning
        }
        guard first else { return }
        let soFar = self.soFar
        Task { [self] in
            try? await Task.sleep(for: patience)
            var result = soFar()
            if result.status == .completed { result.status = .cancelled }
            answer(result)
        }
    }
}
