import PlayheadMedia

/// The pure rules of a ``PlaybackCoordinator``'s pool: at most `limit` sessions run; the rest
/// wait in the order they came; a finished or cancelled session frees its slot for the next.
///
/// Work that only needs a slot (image generation) waits here too, with its waiter held in the
/// machine, so every way out — its turn, its cancellation, `cancelAll` — says what it gets.
struct CoordinatorStateMachine<ID: Hashable & Sendable, Waiter> {
    enum Action {
        case start(ID)
        /// A slot request's turn came: resume its waiter.
        case grant(ID, Waiter)
        /// A slot request was cancelled before its turn: resume its waiter with a cancellation.
        case refuse(ID, Waiter)
        /// Stop a running session (its finish is reported later).
        case stopRunning(ID)
        /// A waiting session was cancelled before it started.
        case dropWaiting(ID)
    }

    let limit: Int
    private(set) var running: [ID] = []
    private(set) var waiting: [ID] = []
    private var waiters: [ID: Waiter] = [:]
    /// Granted slot requests (running bodies that are not sessions: nothing to stop).
    private var granted: Set<ID> = []
    private(set) var peak = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A playback session asks to run.
    mutating func submit(_ id: ID) -> [Action] {
        guard !running.contains(id), !waiting.contains(id) else { return [] }
        waiting.append(id)
        return fill()
    }

    /// Other work asks for a slot; `waiter` is resumed by a `grant` or a `refuse`.
    mutating func request(_ id: ID, waiter: Waiter) -> [Action] {
        guard !running.contains(id), !waiting.contains(id) else { return [.refuse(id, waiter)] }
        waiters[id] = waiter
        waiting.append(id)
        return fill()
    }

    mutating func finished(_ id: ID) -> [Action] {
        guard let index = running.firstIndex(of: id) else { return [] }
        running.remove(at: index)
        granted.remove(id)
        return fill()
    }

    mutating func cancel(_ id: ID) -> [Action] {
        if let index = waiting.firstIndex(of: id) {
            waiting.remove(at: index)
            if let waiter = waiters.removeValue(forKey: id) { return [.refuse(id, waiter)] }
            return [.dropWaiting(id)]
        }
        return running.contains(id) && !granted.contains(id) ? [.stopRunning(id)] : []
    }

    mutating func cancelAll() -> [Action] {
        var actions: [Action] = waiting.map { id in
            waiters.removeValue(forKey: id).map { Action.refuse(id, $0) } ?? .dropWaiting(id)
        }
        waiting.removeAll()
        actions += running.filter { !granted.contains($0) }.map { .stopRunning($0) }
        return actions
    }

    private mutating func fill() -> [Action] {
        var actions: [Action] = []
        while running.count < limit, !waiting.isEmpty {
            let next = waiting.removeFirst()
            running.append(next)
            if let waiter = waiters.removeValue(forKey: next) {
                granted.insert(next)
                actions.append(.grant(next, waiter))
            } else {
                actions.append(.start(next))
            }
        }
        peak = max(peak, running.count)
        return actions
    }
}

extension CoordinatorStateMachine.Action: Equatable where Waiter: Equatable {}
