import PlayheadMedia

/// The pure rules of a ``PlayerLooper``: keep the current iteration and one pre-rolled copy queued,
/// count completed loops, stop after `loopCount` or when disabled.
struct LooperStateMachine: Equatable {
    enum Action: Equatable {
        /// Queue one more copy of the item.
        case enqueueCopy
        /// Remove the queued copy that has not started presenting.
        case removePendingCopy
        /// Looping is over.
        case finished
    }

    /// nil loops until disabled.
    let loopCount: Int?
    private(set) var completed = 0
    private(set) var queued = 0
    private(set) var enabled = true
    private(set) var isFinished = false

    init(loopCount: Int?) {
        self.loopCount = loopCount.map { max(0, $0) }
    }

    private var remaining: Int? { loopCount.map { $0 - completed - queued } }

    mutating func start() -> [Action] {
        if loopCount == 0 {
            isFinished = true
            return [.finished]
        }
        return fill()
    }

    /// An iteration played to its end.
    mutating func iterationEnded() -> [Action] {
        guard !isFinished, queued > 0 else { return [] }
        completed += 1
        queued -= 1
        if queued == 0, !enabled || loopCount == completed {
            isFinished = true
            return [.finished]
        }
        return fill()
    }

    /// An iteration failed: the same item will fail again, so looping ends.
    mutating func iterationFailed() -> [Action] {
        guard !isFinished else { return [] }
        isFinished = true
        enabled = false
        let pending = queued > 1
        queued = 0
        return (pending ? [.removePendingCopy] : []) + [.finished]
    }

    /// Stop looping: the current iteration plays to its end, nothing more follows.
    mutating func disable() -> [Action] {
        guard enabled, !isFinished else { return [] }
        enabled = false
        if queued > 1 {
            queued = 1
            return [.removePendingCopy]
        }
        if queued == 0 {
            isFinished = true
            return [.finished]
        }
        return []
    }

    private mutating func fill() -> [Action] {
        var actions: [Action] = []
        while enabled, queued < 2, remaining.map({ $0 > 0 }) ?? true {
            queued += 1
            actions.append(.enqueueCopy)
        }
        return actions
    }
}
