import Foundation
import PlayheadMedia

/// Plays a queue of items, one after another, into one output sink (and one audio sink, when
/// given), advancing at each item's end.
///
/// While an item plays, the next one is pre-rolled: opened, decoded and converted up to its first
/// frame, which waits at its presenter's gate, so the transition adds no gap. A failed item is
/// reported (to its observers, and as a ``PlayerEvent``) and skipped; the queue goes on.
///
/// Audio: every item's audio is converted to the player's one format (``PlayerConfiguration/audioFormat``,
/// its missing fields taken from the first item that presents audio) and written to the audio
/// sink item after item with nothing added or lost at the transitions, so loops and queues
/// concatenate sample for sample. In realtime mode the audio is the master clock: video frames
/// are presented against it, and late ones are dropped and counted.
///
/// The queue's rules live in a pure state machine; this class holds it under a mutex and performs
/// the actions it returns outside the lock.
///
/// Keep the player for as long as it should play: let go of, it stops its items, ends its
/// ``events`` and gives up outputs neither finished nor given up (its sessions never keep it).
public final class QueuePlayer: Sendable {
    struct ItemRun: Sendable {
        let session: DecodeSession
        let presenter: ItemPresenter
        let audio: AudioPresenter?
        let gate: PresentationGate
        /// Told when the run's task is over (nothing of it touches the item any more).
        let ended = RunEnd()

        /// Stops presenting and decoding.
        func cancel() {
            gate.cancel()
            session.cancel()
        }
    }

    private struct TimeObserver: Sendable {
        var interval: MediaTime
        var next: MediaTime?
        var block: @Sendable (MediaTime) -> Void
    }

    private struct Engine {
        var machine: QueueStateMachine<ObjectIdentifier>
        var items: [ObjectIdentifier: PlayerItem] = [:]
        var runs: [ObjectIdentifier: ItemRun] = [:]
        var listeners: [Int: AsyncStream<PlayerEvent>.Continuation] = [:]
        var handlers: [@Sendable (PlayerEvent) -> Void] = []
        var idleWaiters = Waiters<Void>()
        var timeObservers: [Int: TimeObserver] = [:]
        var nextToken = 0
        /// Which session may write the outputs: no two items ever write at once.
        var turns = OutputTurns<ObjectIdentifier, PresentationGate>()
        /// Damage each session reported so far (its results count over the session), and the
        /// player's total.
        var damageSeen: [ObjectIdentifier: Int] = [:]
        var damage = DamageTally()
        /// Items this player held (``PlayerItem/claim(for:)``), let go when they leave the queue.
        var held: [ObjectIdentifier: PlayerItem] = [:]
        /// Items another player holds: failed in this queue only, their own state left alone.
        var refused: Set<ObjectIdentifier> = []

        /// Nothing to play, or the current item ended and stays current (until a seek or an
        /// advance; items queued behind it wait) — and no cancelled run still writing, so whoever
        /// waited may finish or give up the outputs.
        var isIdle: Bool { (machine.items.isEmpty || machine.currentEnded) && !turns.isDraining }

        mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
            guard isIdle else { return [] }
            return idleWaiters.takeAll()
        }
    }

    private let engine: Locked<Engine>
    private let output: SharedOutput
    /// The player as the writer of its outputs and the holder of its items.
    private let identity: OutputWriter
    private let audioOutput: SharedAudioOutput?
    private let timeline: PlaybackTimeline
    public let configuration: PlayerConfiguration

    /// A player for `items` writing every presented frame to `output`, and every item's audio to
    /// `audioOutput` when given (nil: audio is not decoded).
    /// - Parameters:
    ///   - items: the queue; the first plays first.
    ///   - output: where every presented frame goes; the player owns it from here.
    ///   - audioOutput: where every item's audio goes; nil: the audio is not decoded.
    ///   - configuration: realtime pacing, decoding and the audio format.
    ///   - clock: the clock realtime playback is paced on.
    ///   - actionAtItemEnd: what happens when an item ends.
    public init(
        items: [PlayerItem] = [], output: sending some FrameSink, audioOutput: (any AudioSink)? = nil,
        configuration: PlayerConfiguration = PlayerConfiguration(),
        clock: any PlaybackClock = SystemPlaybackClock(), actionAtItemEnd: ActionAtItemEnd = .advance
    ) {
        let writer = OutputWriter("this player")
        self.identity = writer
        let timeline = PlaybackTimeline(clock: clock, realtime: configuration.realtime)
        // A render loop asks its pull output for the item time on this player's clock.
        (output as? VideoOutput)?.follow(timeline)
        self.output = SharedOutput(output, writer: writer)
        self.audioOutput = audioOutput.map { SharedAudioOutput($0, format: configuration.audioFormat, writer: writer) }
        self.configuration = configuration
        self.timeline = timeline
        var engine = Engine(machine: QueueStateMachine(actionAtItemEnd: actionAtItemEnd))
        for item in items {
            engine.items[ObjectIdentifier(item)] = item
            _ = engine.machine.insert(ObjectIdentifier(item), after: nil)
        }
        self.engine = Locked(engine)
    }

    /// Let go of by the app: every item's session stops, whoever iterates ``events`` gets the
    /// end, and outputs neither finished nor given up are given up (a file keeps what was
    /// written, marked partial; a ``FrameStream``'s consumer gets the end) — on a worker thread,
    /// since writing a file's end blocks.
    deinit {
        let (runs, listeners, held) = engine.withLock { e in
            defer {
                e.runs.removeAll()
                e.listeners.removeAll()
                e.held.removeAll()
            }
            return (Array(e.runs.values), Array(e.listeners.values), e.held.map { ($0.value, e.runs[$0.key]) })
        }
        // An item with a run is let go of when that run is over (it may still note a frame).
        let identity = identity
        for (item, run) in held {
            if let run { run.ended.whenEnded { item.release(from: identity) } } else { item.release(from: identity) }
        }
        for run in runs { run.cancel() }
        for listener in listeners { listener.finish() }
        let output = output, audioOutput = audioOutput
        WorkerPool.shared.run("playhead.output") {
            // No sound past the last frame is kept (it was decoded ahead of the picture).
            if let end = output.lastEnd { audioOutput?.keepSound(until: end) }
            output.giveUpIfOpen()
            audioOutput?.giveUpIfOpen()
        }
    }

    // MARK: The queue

    /// The queued items; the first is the current one.
    /// - Returns: the items, in the order they play.
    public func items() -> [PlayerItem] {
        engine.withLock { e in e.machine.items.compactMap { e.items[$0] } }
    }

    public var currentItem: PlayerItem? {
        engine.withLock { e in e.machine.current.flatMap { e.items[$0] } }
    }

    /// Queues `item` after `after` (at the end when nil or not queued).
    /// - Parameters:
    ///   - item: the item to queue; one queued already stays where it is.
    ///   - after: the item it follows; nil, or an item not queued: the end of the queue.
    public func insert(_ item: PlayerItem, after: PlayerItem?) {
        handle { e in
            e.items[ObjectIdentifier(item)] = item
            return e.machine.insert(ObjectIdentifier(item), after: after.map(ObjectIdentifier.init))
        }
    }

    /// Takes `item` out of the queue: when it is the current item, it stops and the next one becomes current;
    /// when it was being decoded ahead, that stops. An item not queued is ignored.
    /// - Parameter item: the item to take out.
    public func remove(_ item: PlayerItem) {
        handle { $0.machine.remove(ObjectIdentifier(item)) }
    }

    /// Empties the queue, stopping every item being decoded.
    public func removeAllItems() {
        handle { $0.machine.removeAll() }
    }

    /// Ends the current item now and goes on with the next.
    public func advanceToNextItem() {
        handle { $0.machine.advanceToNextItem() }
    }

    public var actionAtItemEnd: ActionAtItemEnd {
        get { engine.withLock { $0.machine.actionAtItemEnd } }
        set { engine.withLock { $0.machine.actionAtItemEnd = newValue } }
    }

    // MARK: Rate

    /// Plays (rate 1). At the end of an item that stayed current (`actionAtItemEnd` `.pause` or
    /// `.none`) there is nothing to play until a seek moves it: the player stays paused.
    public func play() { handle { $0.machine.play() } }
    /// Pauses (rate 0).
    public func pause() { handle { $0.machine.pause() } }

    /// The current item's time now, as `AVPlayer`'s `currentTime()`: in realtime, where the
    /// player's clock has it — moving on between frames, standing still while paused and at the
    /// end of an item that stays current (`actionAtItemEnd` `.pause` or `.none`); otherwise
    /// (and until the item's first frame, or a seek's, is shown) the time of its last frame
    /// presented (``PlayerItem/currentTime``).
    /// - Returns: the item time; `.invalid` without a current item.
    public func currentTime() -> MediaTime {
        guard let item = currentItem else { return .invalid }
        return timeline.itemTime(atHostTime: timeline.clock.now()).map { MediaTime(seconds: $0) } ?? item.currentTime
    }

    /// 0 is paused, 1 normal speed; other positive rates scale realtime pacing.
    public var rate: Double {
        get { engine.withLock { $0.machine.rate } }
        set { handle { $0.machine.setRate(newValue) } }
    }

    public var timeControlStatus: TimeControlStatus { engine.withLock { $0.machine.timeControlStatus } }

    /// Frames presented and dropped, and lateness, so far.
    public var statistics: PlaybackStatistics {
        let s = timeline.statistics
        var statistics = PlaybackStatistics(
            framesPresented: s.presented, framesDropped: s.dropped, lateness: s.lateness, seams: s.seams,
            audioFramesPresented: s.audioFrames, audioResyncs: s.audioResyncs)
        engine.withLock {
            statistics.damagedPackets = $0.damage.count
            statistics.firstDamage = $0.damage.first
        }
        return statistics
    }

    // MARK: Seeking

    /// Moves the current item to `time`, in place: its session's demuxer seeks and its decoders
    /// are flushed; nothing is reopened. With zero tolerances (the default) the first frame shown
    /// is the one displayed at `time`; otherwise the nearest keyframe inside the tolerances (or,
    /// with none there, the first frame inside them). Returns the time of the first frame shown
    /// from there — nil when there is no current item, a newer seek superseded this one, the item
    /// failed or was removed, or nothing is left to show. Always returns.
    ///
    /// - Parameters:
    ///   - time: Where to go, on the item's timeline. `.positiveInfinity` (or any time past the
    ///     end) shows the last frame; `.negativeInfinity` the first; an invalid or indefinite time
    ///     moves nothing and returns nil.
    ///   - toleranceBefore: How much earlier the first frame may be (not a number: zero).
    ///   - toleranceAfter: How much later the first frame may be (not a number: zero).
    /// - Returns: The time of the first frame shown from there, or nil.
    @discardableResult
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .zero, toleranceAfter: MediaTime = .zero) async -> MediaTime? {
        guard let request = SeekRequest.resolving(time: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter) else { return nil }
        guard let (id, item) = engine.withLock({ e in e.machine.current.flatMap { id in e.items[id].map { (id, $0) } } }) else { return nil }
        let from = item.currentTime
        if engine.withLock({ $0.runs[id] }) == nil {
            // Not started yet (paused before playing): start it, presenting; the seek takes over.
            start(id, presenting: true, decoding: configuration.decoding)
        }
        guard
            let (run, actions) = engine.withLock({ e -> (ItemRun, [Action])? in
                // An item that ended and stayed current plays again from where the seek puts it: the
                // player is no longer idle, and play() plays it.
                guard let run = e.runs[id] else { return nil }
                return (run, e.machine.currentSought())
            })
        else { return nil }
        perform(actions)
        timeline.reanchor(at: timeline.cursor)
        let landed = await run.session.seek(to: request, end: item.timeRange?.end, presentationPosition: timeline.cursor)
        if let landed { item.post(.timeJumped(from: from, to: landed)) }
        return landed
    }

    // MARK: Observing

    /// Calls `block` with the current item's time every `interval` of media time while frames are
    /// presented (on a presentation thread; keep it short): at the first frame, then at the first
    /// frame on or past each multiple of `interval`. An interval that is not a positive number
    /// (zero, negative, invalid, infinite) calls it for every frame presented.
    ///
    /// - Parameters:
    ///   - interval: The media time between two calls.
    ///   - block: Called with the time of the frame presented.
    /// - Returns: A token for ``removeTimeObserver(_:)``.
    @discardableResult
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        engine.withLock { e in
            e.nextToken += 1
            e.timeObservers[e.nextToken] = TimeObserver(interval: interval, next: nil, block: block)
            return TimeObserverToken(id: e.nextToken)
        }
    }

    /// Stops calling a periodic time observer.
    /// - Parameter token: what ``addPeriodicTimeObserver(forInterval:using:)`` returned; one removed already is ignored.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        _ = engine.withLock { $0.timeObservers.removeValue(forKey: token.id) }
    }

    /// The player's events from now on.
    public var events: AsyncStream<PlayerEvent> {
        let (stream, continuation) = AsyncStream<PlayerEvent>.makeStream()
        let key = engine.withLock { e -> Int in
            e.nextToken += 1
            e.listeners[e.nextToken] = continuation
            return e.nextToken
        }
        continuation.onTermination = { [weak self] _ in _ = self?.engine.withLock { $0.listeners.removeValue(forKey: key) } }
        return stream
    }

    /// Returns once nothing is left to play: the queue is empty, or an item ended with
    /// `actionAtItemEnd` `.pause` or `.none` — and no item removed a moment ago is still writing
    /// its last frame, so the outputs can be finished or given up.
    ///
    /// Cancelling the waiting task ends the wait at once (playing goes on).
    public func waitUntilIdle() async {
        await cancellableWait(
            engine, cancelled: (),
            register: { e, key, continuation in
                if e.isIdle { return () }
                e.idleWaiters.insert(continuation, key: key)
                return nil
            }, unregister: { e, key in e.idleWaiters.remove(key) })
    }

    /// Completes the outputs (for a Y4M or WAV file, writes its end and renames it into place).
    /// Call once playing is done.
    /// Blocks the calling thread while the files are completed (an MP4 is copied into its final
    /// form): from async code, `try await finishOutput()`.
    /// - Throws: ``PlayheadError`` when an output cannot be completed (`output.writeFailed`, `output.diskFull`,
    ///   `output.outputExists`, …): the frame sink's failure, else the audio sink's; both are tried.
    ///   `state.invalidState` for an output another session, render or player holds (left to it).
    @available(*, noasync, message: "blocks while the outputs are completed: use `try await finishOutput()`")
    public func finishOutput() throws(PlayheadError) { try finishOutputNow() }

    func finishOutputNow() throws(PlayheadError) {
        var failure: PlayheadError?
        do { try output.finish() } catch { failure = error }
        do { try audioOutput?.finish() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Completes the outputs, as `finishOutput()` does, on a worker thread: what an async caller
    /// uses, since writing a file's end blocks (Swift's cooperative threads are never blocked).
    /// Asked for by a task that is cancelled, the outputs are completed all the same (a cancel
    /// must not leave a file neither finished nor given up).
    /// - Throws: ``PlayheadError``, as `finishOutput()`.
    public func finishOutput() async throws(PlayheadError) {
        try await WorkerPool.shared.mustRun("playhead.output") { () throws(PlayheadError) in try self.finishOutputNow() }
    }

    /// Gives the outputs up: a Y4M, MP4 or WAV file keeps what was written as a valid, shorter
    /// file marked partial (its `isPartial`); a ``FrameStream``'s consumer gets the end.
    public func abortOutput() {
        keepSoundToPicture()
        output.abort()
        audioOutput?.abort()
    }

    /// A player whose outputs are given up keeps no sound past its last frame (its sound is
    /// decoded ahead of its picture).
    private func keepSoundToPicture() {
        if let end = output.lastEnd { audioOutput?.keepSound(until: end) }
    }

    // MARK: Performing the state machine's actions

    private typealias Action = QueueStateMachine<ObjectIdentifier>.Action

    private func handle(_ change: (inout Engine) -> [Action]) {
        let actions = engine.withLock { change(&$0) }
        perform(actions)
    }

    private func perform(_ actions: [Action]) {
        for action in actions {
            switch action {
            case .start(let id, let presenting):
                start(id, presenting: presenting, decoding: configuration.decoding)
            case .present(let id):
                if let gate = engine.withLock({ $0.runs[id] })?.gate { openWhenDrained(gate) }
            case .stop(let id):
                if let run = engine.withLock({ $0.runs.removeValue(forKey: id) }) { cancel(run) }
            case .currentChanged(let from, let to):
                let (old, new) = engine.withLock { e in (from.flatMap { e.items[$0] }, to.flatMap { e.items[$0] }) }
                timeline.itemChanged()
                emit(.currentItemChanged(from: old, to: new))
            case .setRate(let rate):
                timeline.setRate(rate)
                emit(.rateChanged(rate))
            case .holdAtEnd:
                timeline.itemEnded()
            case .reportEnd(let id):
                guard let item = engine.withLock({ $0.items[id] }) else { continue }
                item.post(.playedToEnd(at: item.currentTime))
                emit(.itemEnded(item))
            case .reportFailure(let id, let error):
                guard let (item, refused) = engine.withLock({ e in e.items[id].map { ($0, e.refused.contains(id)) } }) else { continue }
                // An item another player holds is that player's to fail: only this queue moves on.
                if !refused {
                    let wasReady = item.status == .readyToPlay
                    item.fail(error)
                    if wasReady { item.post(.failedToPlayToEnd(error)) }
                }
                emit(.itemFailed(item, error))
            }
        }
        settle()
    }

    /// Forgets items that left the queue — stopping any run they still have (a session kept
    /// parked after its item ended, or started by a seek) — and wakes idle waiters.
    private func settle() {
        let me = identity
        let (orphans, waiters) = engine.withLock { e -> ([ItemRun], [CheckedContinuation<Void, Never>]) in
            let queued = Set(e.machine.items)
            var orphans: [ItemRun] = []
            for (id, run) in e.runs where !queued.contains(id) {
                orphans.append(run)
                e.runs[id] = nil
            }
            for id in e.items.keys where !queued.contains(id) && e.runs[id] == nil {
                e.items[id] = nil
                e.refused.remove(id)
            }
            // Items that left the queue are free for another player — let go under the lock, so a
            // start that takes one again (re-inserted) comes after, never before.
            for (id, item) in e.held where !queued.contains(id) {
                e.held[id] = nil
                item.release(from: me)
            }
            return (orphans, e.takeIdleWaiters())
        }
        for run in orphans { cancel(run) }
        // A run cancelled just now may still be writing: idle waits until it has drained.
        let late = engine.withLock { $0.takeIdleWaiters() }
        for waiter in waiters + late { waiter.resume() }
    }

    private func emit(_ event: PlayerEvent) {
        let (listeners, handlers) = engine.withLock { (Array($0.listeners.values), $0.handlers) }
        // Synchronous handlers first (a looper queues its next copy before anyone sees the queue idle).
        for handler in handlers { handler(event) }
        for listener in listeners { listener.yield(event) }
    }

    /// Calls `handler` for every event, synchronously, on the thread that produced it, before idle
    /// waiters are woken. For components built on the player (the looper); never called under a lock.
    func addEventHandler(_ handler: @escaping @Sendable (PlayerEvent) -> Void) {
        engine.withLock { $0.handlers.append(handler) }
    }

    private func start(_ id: ObjectIdentifier, presenting: Bool, decoding: DecodeConfiguration) {
        guard let item = engine.withLock({ $0.items[id] }) else { return }
        if let existing = engine.withLock({ $0.runs[id] }) {
            // Already running (pre-rolled, or started by a seek while paused), from the same
            // configuration: a second run would write beside it and be kept by nobody.
            if presenting { openWhenDrained(existing.gate) }
            return
        }
        // The item is this player's from its first start until it leaves the queue; one another
        // player holds fails here (below, as an item that cannot be prepared does).
        // Taken under the engine's lock with the check that the item is still queued (a removal on
        // another thread lets go of what it holds under the same lock).
        let me = identity
        let refusal = engine.withLock { e -> PlayheadError? in
            guard e.machine.items.contains(id) else { return nil }
            guard item.claim(for: me) else {
                e.refused.insert(id)
                return PlayheadError(
                    code: .invalidState,
                    message: "this item is in another player's queue: an item plays in one player at a time (give each player its own PlayerItem)",
                    file: item.asset.source)
            }
            e.held[id] = item
            e.refused.remove(id)
            return nil
        }
        var decoding = decoding
        if let range = item.timeRange {
            if decoding.startTime == nil { decoding.startTime = range.start }
            decoding.endTime = range.end
        }
        let gate = PresentationGate()
        let events: @Sendable (ItemPresenter.PresenterEvent) -> Void = { [weak self] event in self?.presenterEvent(id, event) }
        let continuity = PresentationContinuity()
        let presenter = ItemPresenter(item: item, output: output, timeline: timeline, gate: gate, continuity: continuity, events: events)
        let audio = audioOutput.map { AudioPresenter(item: item, output: $0, timeline: timeline, gate: gate, continuity: continuity, events: events) }
        let session = DecodeSession(asset: item.playedAsset, configuration: decoding)
        let run = ItemRun(session: session, presenter: presenter, audio: audio, gate: gate)
        // The queue may have moved on while this run was made (another thread's item ended: this
        // one, started to pre-roll, became current, and its `present` found no run to open):
        // whether it presents is read with the run's registration, under the same lock.
        // Another thread (a seek, an action) may have started the item since the check above:
        // the run registered first is the one; this one never starts.
        let registered = engine.withLock { e -> (existing: ItemRun?, presents: Bool) in
            if let existing = e.runs[id] { return (existing, presenting) }
            e.runs[id] = run
            return (nil, presenting || e.machine.started[id] == true)
        }
        if let existing = registered.existing {
            if presenting { openWhenDrained(existing.gate) }
            return
        }
        if registered.presents { openWhenDrained(gate) }
        // The run holds the player only while it calls it: an app that lets go of the player
        // ends it (`deinit`), whatever its items are doing.
        Task { [weak self, engine, timeline] in
            defer { run.ended.end() }
            if let refusal {
                run.session.stop()
                self?.itemFailedToPrepare(id, run: run, refusal)
                return
            }
            await item.prepare()
            if case .failed(let error) = item.status {
                // The session never runs: stopping it resumes anything waiting on it (a seek).
                run.session.stop()
                self?.itemFailedToPrepare(id, run: run, error)
                return
            }
            _ = await Self.runSession(run, engine: engine, timeline: timeline) { [weak self] result in self?.segmentEnded(run, result) }
        }
    }

    /// Opens an item's gate at the timeline's cursor, now or, while a cancelled run still drains,
    /// once it has.
    private func openWhenDrained(_ gate: PresentationGate) {
        if engine.withLock({ $0.turns.open(gate) }) { gate.open(at: timeline.cursor) }
    }

    /// Cancels a run; if it may still be writing, it drains before any other gate opens.
    private func cancel(_ run: ItemRun) {
        let session = ObjectIdentifier(run.session)
        engine.withLock { $0.turns.cancelled(session, presenting: run.gate.isOpen) }
        run.cancel()
    }

    /// Runs an item's session, keeping the drain bookkeeping (in `engine`, not through the player,
    /// which it does not keep).
    private static func runSession(
        _ run: ItemRun, engine: Locked<Engine>, timeline: PlaybackTimeline, segmentEnded: @escaping @Sendable (DecodeResult) -> Void
    ) async -> DecodeResult {
        let session = ObjectIdentifier(run.session)
        engine.withLock { $0.turns.started(session) }
        let result = await run.session.play(
            into: SoleOwner(handingOver: run.presenter as any FrameSink), audio: run.audio, onSegmentEnd: segmentEnded)
        let (gates, waiters) = engine.withLock { e -> ([PresentationGate], [CheckedContinuation<Void, Never>]) in
            e.damageSeen[session] = nil
            let gates = e.turns.ended(session)
            return (gates, e.takeIdleWaiters())
        }
        for gate in gates { gate.open(at: timeline.cursor) }
        for waiter in waiters { waiter.resume() }
        return result
    }

    /// An item that could not be prepared fails; the queue goes on.
    private func itemFailedToPrepare(_ id: ObjectIdentifier, run: ItemRun, _ error: PlayheadError) {
        guard isCurrentRun(id, run) else { return }
        handle { e in
            e.runs[id] = nil
            return e.machine.itemFailed(id, error)
        }
    }

    /// A segment of an item's session ended: the item played to its end (or to the end of a seek's
    /// stretch), or failed. An item that stays current afterwards (`actionAtItemEnd` `.pause` or
    /// `.none`) keeps its session, parked, for a later seek; otherwise the session is stopped.
    private func segmentEnded(_ run: ItemRun, _ result: DecodeResult) {
        let new = engine.withLock { e -> Int in
            let key = ObjectIdentifier(run.session)
            let new = result.damagedPackets - (e.damageSeen[key] ?? 0)
            guard new > 0 else { return 0 }
            e.damageSeen[key] = result.damagedPackets
            e.damage.add(DamageTally(count: new, first: result.firstDamage))
            return new
        }
        if new > 0 { run.presenter.item.noteDamage(new, first: result.firstDamage) }
        guard let id = engine.withLock({ e in e.runs.first { $0.value.session === run.session }?.key }) else { return }
        switch result.status {
        case .completed:
            handle { $0.machine.itemEnded(id) }
            let keep = engine.withLock { e -> Bool in
                if e.machine.items.contains(id) { return true }
                if e.runs[id]?.session === run.session { e.runs[id] = nil }
                return false
            }
            if !keep { run.session.stop() }
        case .failed(let error):
            handle { e in
                if e.runs[id]?.session === run.session { e.runs[id] = nil }
                return e.machine.itemFailed(id, error)
            }
            run.session.stop()
        case .cancelled:
            break
        }
    }

    /// The first multiple of `interval` after `time`; nil (every frame) for an interval that is
    /// not a positive number or a multiple past what a time can hold.
    static func nextMultiple(of interval: MediaTime, after time: MediaTime) -> MediaTime? {
        guard interval.isNumeric, time.isNumeric, interval > .zero else { return nil }
        let count = (time.seconds / interval.seconds).rounded(.down) + 1
        guard count.isFinite, count >= 1, count < 9.0e18 else { return nil }
        let next = interval * Int64(count)
        return next.isNumeric ? next : nil
    }

    private func isCurrentRun(_ id: ObjectIdentifier, _ run: ItemRun) -> Bool {
        engine.withLock { $0.runs[id]?.session === run.session }
    }

    private func presenterEvent(_ id: ObjectIdentifier, _ event: ItemPresenter.PresenterEvent) {
        switch event {
        case .firstFrameReady:
            break
        case .firstFramePresented:
            engine.withLock { $0.machine.currentPresented(id) }
        case .timeReached(let time):
            let due = engine.withLock { e -> [@Sendable (MediaTime) -> Void] in
                // Frames flow again (after a pause, a seek, a stall): the player is playing.
                e.machine.currentPresented(id)
                var blocks: [@Sendable (MediaTime) -> Void] = []
                for (key, var observer) in e.timeObservers {
                    // Fires at the first frame, then at the first frame on or past each multiple of
                    // the interval (or after a jump back); every frame when there is no next multiple.
                    if let next = observer.next, time < next, time >= next - observer.interval { continue }
                    blocks.append(observer.block)
                    observer.next = Self.nextMultiple(of: observer.interval, after: time)
                    e.timeObservers[key] = observer
                }
                return blocks
            }
            for block in due { block(time) }
        }
    }
}

/// The end of an item's run, and what waits for it (a let-go player's hold on the item).
final class RunEnd: Sendable {
    private struct State {
        var ended = false
        var then: [@Sendable () -> Void] = []
    }
    private let state = Locked(State())

    /// Calls `body` once the run is over: now, if it is.
    /// - Parameter body: what to do then.
    func whenEnded(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.ended { return true }
            s.then.append(body)
            return false
        }
        if now { body() }
    }

    /// The run is over: whatever waited for it runs.
    func end() {
        let waiting = state.withLock { s -> [@Sendable () -> Void] in
            s.ended = true
            defer { s.then = [] }
            return s.then
        }
        for body in waiting { body() }
    }
}
