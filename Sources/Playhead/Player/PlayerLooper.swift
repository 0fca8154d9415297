import PlayheadMedia

/// Plays an item (or a time range of it) over and over on a ``QueuePlayer``, `loopCount` times or
/// until ``disableLooping()``. It keeps the current iteration and one more copy in the queue, so the
/// next iteration is pre-rolled before the current one ends: the seam adds no gap, and no frame is
/// repeated or missing.
public final class PlayerLooper: Sendable {
    private let player: QueuePlayer
    private let template: PlayerItem
    private let timeRange: TimeRange?
    private struct State {
        var machine: LooperStateMachine
        var copies: [PlayerItem] = []
        var finishWaiters = Waiters<Void>()
        var failure: PlayheadError?
    }
    private let state: Locked<State>

    /// The looper each player loops for now: a second looper on a player replaces the first, whose
    /// waits then end (it is told it was replaced) instead of waiting for items it no longer has.
    private static let current = Locked<[ObjectIdentifier: WeakLooper]>([:])

    private struct WeakLooper: Sendable {
        weak var looper: PlayerLooper?
    }

    /// Starts looping `templateItem` on `player` (nil `loopCount` loops until disabled). The player's
    /// queue is emptied first; call `play()` on the player to start.
    /// - Parameters:
    ///   - player: the player to loop on; its queue is emptied.
    ///   - templateItem: the item whose asset and selection every iteration plays; copies of it are queued, never the item itself
    ///     (its observers are told nothing).
    ///   - timeRange: the part to loop; nil: the template's ``PlayerItem/timeRange``, or all of it.
    ///   - loopCount: how many iterations in all; nil: until ``disableLooping()``.
    public init(player: QueuePlayer, templateItem: PlayerItem, timeRange: TimeRange? = nil, loopCount: Int? = nil) {
        self.player = player
        self.template = templateItem
        self.timeRange = timeRange ?? templateItem.timeRange
        self.state = Locked(State(machine: LooperStateMachine(loopCount: loopCount)))
        let replaced = Self.current.withLock { loopers in
            defer { loopers[ObjectIdentifier(player)] = WeakLooper(looper: self) }
            return loopers[ObjectIdentifier(player)]?.looper
        }
        replaced?.replace()
        player.removeAllItems()
        player.addEventHandler { [weak self] event in
            guard let self else { return }
            switch event {
            case .itemEnded(let item) where Self.playedNothing(item):
                // An iteration that played nothing (a range past the clip's end) would be followed
                // by another that plays nothing, for ever: looping ends, and says why.
                let empty = PlayheadError(
                    code: .invalidArgument, message: "an iteration played nothing: the looped range holds no frame and no sound",
                    file: item.asset.source)
                self.state.withLock { $0.failure = $0.failure ?? empty }
                self.handle(item) { $0.iterationFailed() }
            case .itemEnded(let item):
                self.handle(item) { $0.iterationEnded() }
            case .itemFailed(let item, let error):
                self.state.withLock { $0.failure = $0.failure ?? error }
                self.handle(item) { $0.iterationFailed() }
            default:
                break
            }
        }
        perform(state.withLock { $0.machine.start() })
    }

    /// Iterations played to their end so far.
    public var loopsCompleted: Int { state.withLock { $0.machine.completed } }

    /// Realtime only: how late the loop seams were, in seconds (0 is seamless), in fixed space.
    public var measuredSeams: LatenessHistogram { player.statistics.seams }

    /// `true` once looping is over (count reached, disabled and drained, or failed).
    public var isFinished: Bool { state.withLock { $0.machine.isFinished } }

    /// Why looping stopped early, if an iteration failed.
    public var failure: PlayheadError? { state.withLock { $0.failure } }

    /// Whether an iteration that ended played nothing of its range: no frame and no sound, or a
    /// range that starts at or after the item's end (what is shown there is the last frame held).
    private static func playedNothing(_ item: PlayerItem) -> Bool {
        if item.framesPresented == 0 && item.audioFramesPresented == 0 { return true }
        guard let range = item.timeRange, range.start.isNumeric, let end = item.mediaEnd else { return false }
        return range.start >= end
    }

    /// Another looper took the player: this one is over (its items are the other's to remove).
    private func replace() {
        let replaced = PlayheadError(code: .invalidState, message: "another PlayerLooper took the player", file: template.asset.source)
        let actions = state.withLock { s -> [LooperStateMachine.Action] in
            s.failure = s.failure ?? replaced
            s.copies.removeAll()
            return s.machine.iterationFailed().filter { $0 == .finished }
        }
        perform(actions)
    }

    /// Lets the current iteration finish and queues no more.
    public func disableLooping() {
        perform(state.withLock { $0.machine.disable() })
    }

    /// Returns once looping is over, or once the waiting task is cancelled.
    public func waitUntilFinished() async {
        await cancellableWait(
            state, cancelled: (),
            register: { s, key, continuation in
                if s.machine.isFinished { return () }
                s.finishWaiters.insert(continuation, key: key)
                return nil
            }, unregister: { s, key in s.finishWaiters.remove(key) })
    }

    private func handle(_ item: PlayerItem, _ change: (inout LooperStateMachine) -> [LooperStateMachine.Action]) {
        let actions = state.withLock { s -> [LooperStateMachine.Action] in
            guard let index = s.copies.firstIndex(where: { $0 === item }) else { return [] }
            s.copies.remove(at: index)
            return change(&s.machine)
        }
        perform(actions)
    }

    private func perform(_ actions: [LooperStateMachine.Action]) {
        for action in actions {
            switch action {
            case .enqueueCopy:
                let copy = PlayerItem(copying: template, timeRange: timeRange)
                state.withLock { $0.copies.append(copy) }
                player.insert(copy, after: nil)
            case .removePendingCopy:
                if let pending = state.withLock({ $0.copies.count > 1 ? $0.copies.removeLast() : nil }) {
                    player.remove(pending)
                }
            case .finished:
                let waiters = state.withLock { $0.finishWaiters.takeAll() }
                for waiter in waiters { waiter.resume() }
            }
        }
    }
}
