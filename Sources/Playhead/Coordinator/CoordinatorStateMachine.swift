/// The pure rules of a ``PlaybackCoordinator``'s pool: at most `limit` sessions run; the rest
/// wait in the order they came; a finished or cancelled session frees its slot for the next.
struct CoordinatorStateMachine<ID: Hashable & Sendable> {
    enum Action: Equatable {
        case start(ID)
        /// Stop a running session (its finish is reported later).
        case stopRunning(ID)
        /// A waiting session was cancelled before it started.
        case dropWaiting(ID)
    }

    let limit: Int
    private(set) var running: [ID] = []
    private(set) var waiting: [ID] = []
    private(set) var peak = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    mutating func submit(_ id: ID) -> [Action] {
        guard !running.contains(id), !waiting.contains(id) else { return [] }
        waiting.append(id)
        return fill()
    }

    mutating func finished(_ id: ID) -> [Action] {
        guard let index = running.firstIndex(of: id) else { return [] }
        running.remove(at: index)
        return fill()
    }

    mutating func cancel(_ id: ID) -> [Action] {
        if let index = waiting.firstIndex(of: id) {
            waiting.remove(at: index)
            return [.dropWaiting(id)]
        }
        return running.contains(id) ? [.stopRunning(id)] : []
    }

    mutating func cancelAll() -> [Action] {
        let dropped = waiting.map { Action.dropWaiting($0) }
        waiting.removeAll()
        return dropped + running.map { .stopRunning($0) }
    }

    private mutating func fill() -> [Action] {
        var actions: [Action] = []
        while running.count < limit, !waiting.isEmpty {
            let next = waiting.removeFirst()
            running.append(next)
            actions.append(.start(next))
        }
        peak = max(peak, running.count)
        return actions
    }
}
