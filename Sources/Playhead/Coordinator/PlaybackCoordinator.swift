import Foundation
import PlayheadMedia
import Synchronization

/// Runs playback sessions, at most `maxConcurrentSessions` at once (default 4); later requests wait
/// in the order they came and start as slots free. Each session plays one source into its own sink,
/// once, a number of times, or until stopped (gapless loops), realtime or as fast as possible.
///
/// The pool's rules live in a pure state machine; the actor performs its actions. Sessions share the
/// machine's cores: a session whose request leaves `decoderThreads` at 0 gets an even share.
public actor PlaybackCoordinator {
    public nonisolated let maxConcurrentSessions: Int
    private let clock: any PlaybackClock
    private var machine: CoordinatorStateMachine<SessionID, CheckedContinuation<Bool, Never>>
    private var nextID = 0
    private var pending:
        [SessionID: (
            request: PlaybackRequest, output: @Sendable () -> any FrameSink,
            audio: (@Sendable () -> (any AudioSink)?)?
        )] = [:]
    private var running: [SessionID: RunningSession] = [:]
    private var outcomes: [SessionID: SessionOutcome] = [:]
    private var outcomeWaiters: [SessionID: Waiters<Result<SessionOutcome, PlayheadError>>] = [:]
    private var idleWaiters = Waiters<Void>()
    private var waiterKeys: UInt64 = 0
    /// Tells this coordinator's session ids from another's.
    private nonisolated let number = PlaybackCoordinator.numbers.wrappingAdd(1, ordering: .relaxed).newValue
    private static let numbers = Atomic<UInt64>(0)
    private nonisolated let listeners = Locked<[Int: AsyncStream<CoordinatorEvent>.Continuation]>([:])
    private nonisolated let listenerKeys = Atomic<Int>(0)

    private struct RunningSession {
        let request: PlaybackRequest
        let player: QueuePlayer
        let looper: PlayerLooper?
        let item: PlayerItem
        var cancelled = false
    }

    /// A coordinator that runs at most `maxConcurrentSessions` sessions at once.
    /// - Parameters:
    ///   - maxConcurrentSessions: the most sessions at once; a value below 1 counts as 1.
    ///   - clock: the clock realtime sessions are paced on.
    public init(maxConcurrentSessions: Int = 4, clock: any PlaybackClock = SystemPlaybackClock()) {
        self.maxConcurrentSessions = max(1, maxConcurrentSessions)
        self.clock = clock
        self.machine = CoordinatorStateMachine(limit: max(1, maxConcurrentSessions))
    }

    /// Accepts a request. `output` makes the session's frame sink when it starts, and `audioOutput`
    /// its audio sink (nil, or a factory returning nil: the audio is not decoded). Loops append to
    /// the one audio sink sample for sample.
    /// - Parameters:
    ///   - request: what to play, and how.
    ///   - output: makes the session's frame sink, when the session starts.
    ///   - audioOutput: makes the session's audio sink, when the session starts.
    /// - Returns: the session's id, for ``cancel(_:)``, ``stopLooping(_:)`` and ``outcome(of:)``.
    @discardableResult
    public func submit(
        _ request: PlaybackRequest, output: @escaping @Sendable () -> any FrameSink,
        audioOutput: (@Sendable () -> (any AudioSink)?)? = nil
    ) -> SessionID {
        nextID += 1
        let id = SessionID(value: nextID, coordinator: number)
        pending[id] = (request, output, audioOutput)
        emit(.queued(id))
        perform(machine.submit(id))
        return id
    }

    /// Cancels a waiting or running session.
    /// - Parameter id: the session; one that has ended, or another coordinator's, changes nothing.
    public func cancel(_ id: SessionID) { perform(machine.cancel(id)) }

    /// Cancels every session.
    public func cancelAll() { perform(machine.cancelAll()) }

    /// Lets a looping session finish its current iteration, then end (completed).
    /// - Parameter id: a running session; one that does not loop or is not running (still waiting, or ended) is
    ///   left as it is.
    public func stopLooping(_ id: SessionID) { running[id]?.looper?.disableLooping() }

    public var runningSessions: [SessionID] { machine.running }
    public var waitingSessions: [SessionID] { machine.waiting }
    /// The most sessions that ever ran at once.
    public var peakConcurrentSessions: Int { machine.peak }

    /// Progress of every running session.
    /// - Returns: the source, frames presented and loops completed of every running session.
    public func progress() -> [SessionProgress] {
        machine.running.compactMap { id in
            guard let session = running[id] else { return nil }
            return SessionProgress(
                id: id, source: session.request.source, framesPresented: session.player.statistics.framesPresented,
                loopsCompleted: session.looper?.loopsCompleted ?? 0, loop: session.request.loop)
        }
    }

    /// Waits for a session's end.
    ///
    /// - Parameter id: A session this coordinator accepted, whose outcome was not taken yet.
    /// - Returns: How the session ended.
    /// - Throws: `state.cancelled` when the waiting task is cancelled (the session goes on);
    ///   `state.invalidState` when the outcome was already taken (``takeOutcome(of:)``);
    ///   `state.invalidArgument` for an id of another coordinator.
    public func outcome(of id: SessionID) async throws(PlayheadError) -> SessionOutcome {
        guard id.coordinator == number, id.value >= 1, id.value <= nextID else {
            throw PlayheadError(code: .invalidArgument, message: "\(id) is not a session of this coordinator")
        }
        if let outcome = outcomes[id] { return outcome }
        guard pending[id] != nil || running[id] != nil || machine.running.contains(id) || machine.waiting.contains(id) else {
            throw PlayheadError(code: .invalidState, message: "the outcome of \(id) was already taken")
        }
        waiterKeys += 1
        let key = waiterKeys
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<SessionOutcome, PlayheadError>, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: .failure(.cancelled()))
                    return
                }
                outcomeWaiters[id, default: Waiters()].insert(continuation, key: key)
            }
        } onCancel: {
            Task { await self.stopWaiting(for: id, key: key) }
        }
        return try result.get()
    }

    /// Waits for a session's outcome, like ``outcome(of:)``, and forgets it: a coordinator that
    /// runs millions of sessions one after another keeps nothing of those already reported.
    ///
    /// - Parameter id: A session this coordinator accepted, whose outcome was not taken yet.
    /// - Returns: How the session ended.
    /// - Throws: As ``outcome(of:)``.
    public func takeOutcome(of id: SessionID) async throws(PlayheadError) -> SessionOutcome {
        let outcome = try await outcome(of: id)
        outcomes[id] = nil
        return outcome
    }

    /// Waits until no session runs or waits, or until the waiting task is cancelled.
    public func waitUntilIdle() async {
        if machine.running.isEmpty, machine.waiting.isEmpty { return }
        waiterKeys += 1
        let key = waiterKeys
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                    return
                }
                idleWaiters.insert(continuation, key: key)
            }
        } onCancel: {
            Task { await self.stopWaiting(for: nil, key: key) }
        }
    }

    /// A waiting task was cancelled: its wait ends (an outcome's with a cancellation).
    private func stopWaiting(for id: SessionID?, key: UInt64) {
        if let id {
            outcomeWaiters[id]?.remove(key)?.resume(returning: .failure(.cancelled()))
            if outcomeWaiters[id]?.isEmpty == true { outcomeWaiters[id] = nil }
        } else {
            idleWaiters.remove(key)?.resume()
        }
    }

    /// Events from now on.
    public nonisolated var events: AsyncStream<CoordinatorEvent> {
        let (stream, continuation) = AsyncStream<CoordinatorEvent>.makeStream()
        let key = listenerKeys.wrappingAdd(1, ordering: .relaxed).newValue
        listeners.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.listeners.withLock { $0.removeValue(forKey: key) } }
        return stream
    }

    /// Runs `body` in a slot of the pool (waiting its turn like a playback session), for other
    /// work that decodes, such as image generation. Counts toward the limit and the peak. Throws
    /// a cancellation when ``cancelAll()`` or the calling task's cancellation comes before its
    /// turn (then `body` does not run).
    /// - Parameter body: the work; it runs once a slot is free.
    /// - Returns: what `body` returns.
    /// - Throws: ``PlayheadError`` with `state.cancelled` when ``cancelAll()`` or the calling task's cancellation
    ///   comes before its turn.
    public func withSlot<T: Sendable>(_ body: @Sendable () async -> T) async throws(PlayheadError) -> T {
        nextID += 1
        let id = SessionID(value: nextID, coordinator: number)
        emit(.queued(id))
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: false)
                    return
                }
                perform(machine.request(id, waiter: continuation))
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
        guard granted else {
            finish(
                SessionOutcome(
                    id: id, source: "", status: .cancelled, framesPresented: 0, framesDropped: 0, loopsCompleted: 0,
                    audioFramesPresented: 0))
            wakeIdleWaitersIfIdle()
            throw .cancelled()
        }
        emit(.started(id))
        let value = await body()
        let outcome = SessionOutcome(
            id: id, source: "", status: .completed, framesPresented: 0, framesDropped: 0, loopsCompleted: 0,
            audioFramesPresented: 0)
        finish(outcome)
        perform(machine.finished(id))
        wakeIdleWaitersIfIdle()
        return value
    }

    private func wakeIdleWaitersIfIdle() {
        guard machine.running.isEmpty, machine.waiting.isEmpty else { return }
        for waiter in idleWaiters.takeAll() { waiter.resume() }
    }

    // MARK: Performing the pool's actions

    private func perform(_ actions: [CoordinatorStateMachine<SessionID, CheckedContinuation<Bool, Never>>.Action]) {
        for action in actions {
            switch action {
            case .start(let id):
                start(id)
            case .grant(_, let waiter):
                waiter.resume(returning: true)
            case .refuse(_, let waiter):
                waiter.resume(returning: false)
            case .dropWaiting(let id):
                let source = pending.removeValue(forKey: id)?.request.source ?? ""
                finish(
                    SessionOutcome(
                        id: id, source: source, status: .cancelled, framesPresented: 0, framesDropped: 0, loopsCompleted: 0,
                        audioFramesPresented: 0))
            case .stopRunning(let id):
                guard var session = running[id] else { continue }
                session.cancelled = true
                running[id] = session
                session.looper?.disableLooping()
                session.player.removeAllItems()
            }
        }
    }

    private func start(_ id: SessionID) {
        guard let (request, makeOutput, makeAudioOutput) = pending.removeValue(forKey: id) else { return }
        var decoding = request.decoding
        if decoding.decoderThreads == 0, maxConcurrentSessions > 1 {
            // Share the cores between the sessions that can run at once instead of each taking all.
            decoding.decoderThreads = DecodeConfiguration.decoderThreads(
                sharedBy: min(maxConcurrentSessions, machine.running.count + machine.waiting.count))
        }
        let asset = request.asset ?? Asset(source: request.source, options: request.assetOptions)
        let item = PlayerItem(asset: asset, timeRange: request.timeRange)
        let looping = request.loop != .none
        let player = QueuePlayer(
            items: looping ? [] : [item], output: makeOutput(), audioOutput: makeAudioOutput?(),
            configuration: PlayerConfiguration(realtime: request.realtime, decoding: decoding), clock: clock)
        var looper: PlayerLooper?
        switch request.loop {
        case .none: looper = nil
        case .count(let n): looper = PlayerLooper(player: player, templateItem: item, loopCount: n)
        case .forever: looper = PlayerLooper(player: player, templateItem: item, loopCount: nil)
        }
        running[id] = RunningSession(request: request, player: player, looper: looper, item: item)
        emit(.started(id))
        player.play()
        Task {
            await player.waitUntilIdle()
            await self.sessionEnded(id)
        }
    }

    private func sessionEnded(_ id: SessionID) async {
        guard let session = running.removeValue(forKey: id) else { return }
        let statistics = session.player.statistics
        var status: SessionOutcome.Status = .completed
        let player = session.player
        if session.cancelled {
            await WorkerPool.shared.value("playhead.output") { player.abortOutput() }
            status = .cancelled
        } else if let failure = session.looper?.failure ?? session.item.failureError {
            await WorkerPool.shared.value("playhead.output") { player.abortOutput() }
            status = .failed(failure)
        } else {
            // Completing an output (a trailer, a close, a rename) blocks: not on the actor.
            do throws(PlayheadError) {
                try await WorkerPool.shared.mustRun("playhead.output") { () throws(PlayheadError) in try player.finishOutput() }
            } catch {
                status = .failed(error)
            }
        }
        let loops = session.looper?.loopsCompleted ?? (status == .completed ? 1 : 0)
        var outcome = SessionOutcome(
            id: id, source: session.request.source, status: status, framesPresented: statistics.framesPresented,
            framesDropped: statistics.framesDropped, loopsCompleted: loops, audioFramesPresented: statistics.audioFramesPresented)
        outcome.damagedPackets = statistics.damagedPackets
        outcome.firstDamage = statistics.firstDamage
        finish(outcome)
        perform(machine.finished(id))
        wakeIdleWaitersIfIdle()
    }

    private func finish(_ outcome: SessionOutcome) {
        outcomes[outcome.id] = outcome
        emit(.finished(outcome))
        if var waiters = outcomeWaiters.removeValue(forKey: outcome.id) {
            for waiter in waiters.takeAll() { waiter.resume(returning: .success(outcome)) }
        }
    }

    private nonisolated func emit(_ event: CoordinatorEvent) {
        for listener in listeners.withLock({ Array($0.values) }) { listener.yield(event) }
    }
}

extension PlayerItem {
    /// The error, when the item failed.
    var failureError: PlayheadError? {
        if case .failed(let error) = status { return error }
        return nil
    }
}
