import PlayheadMedia

/// What a player does when its current item ends.
public enum ActionAtItemEnd: Sendable, Hashable {
    /// Go on with the next item (a queue player's default).
    case advance
    /// Stop playing (rate 0) and stay on the ended item (a player's default).
    case pause
    /// Do nothing.
    case none
}

/// Whether a player is playing, and if not, why.
public enum TimeControlStatus: Sendable, Hashable {
    case paused
    /// The rate is positive but there is nothing to present yet (loading, or no item).
    case waitingToPlay
    case playing
}

/// The pure rules of a queue of items: which item is current, which one is pre-rolled behind it,
/// what happens at an item's end or failure and on edits. It performs nothing; each event returns
/// the actions the owning player carries out (outside its lock).
struct QueueStateMachine<ID: Hashable & Sendable> {
    enum Action: Equatable {
        /// Start loading and decoding an item. `presenting` false: pre-roll (decode ahead, present nothing yet).
        case start(ID, presenting: Bool)
        /// Let a pre-rolled item present.
        case present(ID)
        /// Cancel an item's decoding.
        case stop(ID)
        /// The current item changed (nil: the queue is empty).
        case currentChanged(from: ID?, to: ID?)
        /// Apply a new rate to the presentation clock.
        case setRate(Double)
        /// The current item ended and stays current: its time stands at its end (before the
        /// end is reported, so that a seek an observer makes moves it again).
        case holdAtEnd
        /// Tell an item's observers it played to the end.
        case reportEnd(ID)
        /// Tell an item's observers it failed.
        case reportFailure(ID, PlayheadError)
    }

    private(set) var items: [ID] = []
    private(set) var rate: Double = 0
    var actionAtItemEnd: ActionAtItemEnd
    /// Items whose decoding was started, and whether each presents.
    private(set) var started: [ID: Bool] = [:]
    /// `true` once the current item has presented a frame since it became current or since play.
    private(set) var presenting = false
    /// The current item played to its end and stayed current (`.pause`, `.none`), and was not
    /// moved since: playing it again needs a seek first.
    private(set) var currentEnded = false

    init(actionAtItemEnd: ActionAtItemEnd) {
        self.actionAtItemEnd = actionAtItemEnd
    }

    var current: ID? { items.first }

    var timeControlStatus: TimeControlStatus {
        if rate == 0 { return .paused }
        return presenting ? .playing : .waitingToPlay
    }

    // MARK: Rate

    mutating func play() -> [Action] { setRate(1) }
    mutating func pause() -> [Action] { setRate(0) }

    mutating func setRate(_ newRate: Double) -> [Action] {
        let clamped = max(0, newRate.isFinite ? newRate : 0)
        // At the end of an item that stayed current there is nothing to play until a seek: the
        // player stays paused rather than waiting for frames that never come.
        guard clamped != rate, !(clamped > 0 && currentEnded && rate == 0) else { return [] }
        rate = clamped
        if rate == 0 { presenting = false }
        return [.setRate(clamped)] + startIfNeeded()
    }

    /// The current item presented a frame (its first, or one after a pause or a seek): while the
    /// rate is positive, the player is playing.
    mutating func currentPresented(_ id: ID) {
        if id == current, rate > 0 { presenting = true }
    }

    /// The current item was moved (a seek): it has something to play again, and while the rate is
    /// positive the item behind it is pre-rolled again (nothing was, while it stood at its end).
    mutating func currentSought() -> [Action] {
        currentEnded = false
        return startIfNeeded()
    }

    // MARK: Queue edits

    mutating func insert(_ id: ID, after: ID?) -> [Action] {
        guard !items.contains(id) else { return [] }
        let wasEmpty = items.isEmpty
        if let after, let index = items.firstIndex(of: after) {
            items.insert(id, at: index + 1)
        } else {
            items.append(id)
        }
        var actions: [Action] = wasEmpty ? [.currentChanged(from: nil, to: id)] : []
        actions += startIfNeeded()
        return actions
    }

    mutating func remove(_ id: ID) -> [Action] {
        guard let index = items.firstIndex(of: id) else { return [] }
        if index == 0 { return advance(reportEnd: false, stopCurrent: true) }
        items.remove(at: index)
        var actions: [Action] = []
        if started.removeValue(forKey: id) != nil { actions.append(.stop(id)) }
        return actions + startIfNeeded()
    }

    mutating func removeAll() -> [Action] {
        let old = current
        var actions = started.keys.sorted { (items.firstIndex(of: $0) ?? 0) < (items.firstIndex(of: $1) ?? 0) }.map { Action.stop($0) }
        started.removeAll()
        items.removeAll()
        presenting = false
        currentEnded = false
        if old != nil { actions.append(.currentChanged(from: old, to: nil)) }
        return actions
    }

    mutating func advanceToNextItem() -> [Action] {
        guard !items.isEmpty else { return [] }
        return advance(reportEnd: false, stopCurrent: true)
    }

    // MARK: Items report

    /// An item's decoding reached its end.
    mutating func itemEnded(_ id: ID) -> [Action] {
        guard id == current else { return [] }
        switch actionAtItemEnd {
        case .advance:
            return advance(reportEnd: true, stopCurrent: false)
        case .pause:
            started[id] = nil
            rate = 0
            presenting = false
            currentEnded = true
            return [.holdAtEnd, .reportEnd(id), .setRate(0)]
        case .none:
            started[id] = nil
            currentEnded = true
            return [.holdAtEnd, .reportEnd(id)]
        }
    }

    /// An item failed to load or decode: it is reported and skipped; the queue goes on.
    mutating func itemFailed(_ id: ID, _ error: PlayheadError) -> [Action] {
        guard let index = items.firstIndex(of: id) else { return [] }
        if index == 0 {
            started[id] = nil
            let old = items.removeFirst()
            presenting = false
            currentEnded = false
            return [.reportFailure(id, error), .currentChanged(from: old, to: current)] + startIfNeeded()
        }
        items.remove(at: index)
        started[id] = nil
        return [.reportFailure(id, error)] + startIfNeeded()
    }

    // MARK: Rules

    private mutating func advance(reportEnd: Bool, stopCurrent: Bool) -> [Action] {
        let old = items.removeFirst()
        currentEnded = false
        var actions: [Action] = []
        if stopCurrent, started[old] != nil { actions.append(.stop(old)) }
        if reportEnd { actions.append(.reportEnd(old)) }
        started[old] = nil
        presenting = false
        actions.append(.currentChanged(from: old, to: current))
        return actions + startIfNeeded()
    }

    /// While playing, the current item presents and the next one is pre-rolled — not at the end
    /// of an item that stayed current (it waits for a seek; nothing comes after it until then).
    private mutating func startIfNeeded() -> [Action] {
        guard rate > 0, let current, !currentEnded else { return [] }
        var actions: [Action] = []
        switch started[current] {
        case nil:
            started[current] = true
            actions.append(.start(current, presenting: true))
        case false?:
            started[current] = true
            actions.append(.present(current))
        case true?:
            break
        }
        if items.count > 1 {
            let next = items[1]
            if started[next] == nil {
                started[next] = false
                actions.append(.start(next, presenting: false))
            }
        }
        return actions
    }
}
