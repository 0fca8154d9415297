import PlayheadMedia

/// The pure rules of a ``PlayerItem``'s status and event delivery: which transitions are allowed,
/// which observers get which events, and who delivers them. It performs nothing; ``PlayerItem``
/// holds it under a lock and delivers what it returns after unlocking.
struct PlayerItemState<ObserverID: Hashable & Sendable>: Sendable {
    private(set) var status: PlayerItemStatus = .unknown
    /// Events waiting for delivery, each with the observers it goes to.
    private var pending: [(event: PlayerItemEvent, to: [ObserverID])] = []
    private(set) var observers: [ObserverID] = []
    /// `true` while some thread is delivering; others then only queue.
    private var delivering = false

    /// Applies a status change if it moves forward; returns false (and queues nothing) otherwise.
    mutating func transition(to next: PlayerItemStatus) -> Bool {
        switch (status, next) {
        case (.unknown, .readyToPlay), (.unknown, .failed), (.readyToPlay, .failed):
            status = next
            post(.statusChanged(next))
            return true
        default:
            return false
        }
    }

    /// Queues an event for every current observer.
    mutating func post(_ event: PlayerItemEvent) {
        if !observers.isEmpty { pending.append((event, observers)) }
    }

    /// Adds an observer; it is sent the current status first.
    mutating func add(_ observer: ObserverID) {
        guard !observers.contains(observer) else { return }
        observers.append(observer)
        pending.append((.statusChanged(status), [observer]))
    }

    /// Removes an observer; events already queued for it are dropped.
    mutating func remove(_ observer: ObserverID) {
        observers.removeAll { $0 == observer }
        for i in pending.indices { pending[i].to.removeAll { $0 == observer } }
    }

    /// Asks to deliver. Returns the batch the caller must deliver (outside the lock), or nil when
    /// another thread is already delivering (it will pick up what is queued) or nothing is queued.
    mutating func beginDelivery() -> [(event: PlayerItemEvent, to: [ObserverID])]? {
        guard !delivering, !pending.isEmpty else { return nil }
        delivering = true
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    /// The deliverer finished a batch: returns the next batch, or nil (and stops delivering).
    mutating func continueDelivery() -> [(event: PlayerItemEvent, to: [ObserverID])]? {
        precondition(delivering)
        guard !pending.isEmpty else {
            delivering = false
            return nil
        }
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }
}
