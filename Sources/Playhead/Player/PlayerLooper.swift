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

    /// Starts looping `templateItem` on `player` (nil `loopCount` loops until disabled). The player's
    /// queue is emptied first; call `play()` on the player to start.
    /// - Parameters:
    ///   - player: the player to loop on; its queue is emptied.
    ///   - templateItem: the item whose asset every iteration plays; copies of it are queued, never the item itself
    ///     (its observers are told nothing).
    ///   - timeRange: the part to loop; nil: the template's ``PlayerItem/timeRange``, or all of it.
    ///   - loopCount: how many iterations in all; nil: until ``disableLooping()``.
    public init(player: QueuePlayer, templateItem: PlayerItem, timeRange: TimeRange? = nil, loopCount: Int? = nil) {
        self.player = player
        self.template = templateItem
        self.timeRange = timeRange ?? templateItem.timeRange
        self.state = Locked(State(machine: LooperStateMachine(loopCount: loopCount)))
        player.removeAllItems()
        player.addEventHandler { [weak self] event in
            guard let self else { return }
            switch event {
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
                let copy = PlayerItem(asset: template.asset, timeRange: timeRange)
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
