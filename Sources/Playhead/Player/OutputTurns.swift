/// Whose turn it is to write a player's outputs: no two items ever write at once. A session that
/// was cancelled after its item began to present may still be writing its last frame or buffer
/// (it *drains*); a gate (the next item's start of presenting) opens only once no session drains.
///
/// Pure: the player holds it under its lock and opens the gates it returns outside it; tested
/// alone (`OutputTurnsTests`).
struct OutputTurns<Session: Hashable & Sendable, Gate: Sendable>: Sendable {
    /// Sessions running now.
    private(set) var live: Set<Session> = []
    /// Sessions among ``live`` cancelled after their item presented.
    private(set) var draining: Set<Session> = []
    /// Gates waiting for the draining sessions to end, in the order they asked.
    private(set) var waiting: [Gate] = []

    /// Whether a cancelled session may still be writing.
    var isDraining: Bool { !draining.isEmpty }

    /// A session began to run.
    /// - Parameter session: the session.
    mutating func started(_ session: Session) {
        live.insert(session)
    }

    /// A session was cancelled; one that runs and whose item presented may still be writing.
    /// - Parameters:
    ///   - session: the session.
    ///   - presenting: whether its gate was open (its item presented).
    mutating func cancelled(_ session: Session, presenting: Bool) {
        if presenting, live.contains(session) { draining.insert(session) }
    }

    /// A gate asks to open.
    /// - Parameter gate: the gate.
    /// - Returns: whether it opens now; otherwise it waits for the draining sessions and is
    ///   returned by ``ended(_:)`` once none drains.
    mutating func open(_ gate: Gate) -> Bool {
        guard isDraining else { return true }
        waiting.append(gate)
        return false
    }

    /// A session's run is over (nothing of it writes any more).
    /// - Parameter session: the session.
    /// - Returns: the gates to open now (when no other session drains), in the order they asked.
    mutating func ended(_ session: Session) -> [Gate] {
        live.remove(session)
        draining.remove(session)
        guard !isDraining else { return [] }
        defer { waiting.removeAll() }
        return waiting
    }
}
