import PlayheadMedia

/// The pure logic of an ``Asset``'s key loading: one probe of the file serves every key; callers
/// that ask while it runs wait for the same probe; cancellation interrupts it.
///
/// It performs nothing itself. Each event returns the action its owner performs: start a probe,
/// resume waiters, interrupt the running probe. Waiters are known by integer ids; the owner maps
/// them to continuations.
struct AssetLoadingStateMachine {
    enum Phase: Equatable {
        /// No probe has run, or the last one was cancelled.
        case idle
        /// A probe is running; `generation` tells its result from a cancelled one's.
        case running(generation: Int)
        case succeeded(AssetDescription)
        case failed(PlayheadError)
    }

    private(set) var phase: Phase = .idle
    private var generation = 0
    private var keyStatus: [AssetKey: AssetKeyStatus] = [:]
    private var waiters: [Int: Set<AssetKey>] = [:]

    /// What the owner does about a load request.
    enum LoadAction: Equatable {
        /// Start a probe with this generation, and keep the waiter.
        case startProbe(generation: Int)
        /// Keep the waiter; a probe is already running.
        case wait
        /// Answer at once.
        case succeed(AssetDescription)
        case fail(PlayheadError)
    }

    /// What the owner does when waiters must be answered (and perhaps the probe stopped).
    struct ResumeAction: Equatable {
        var waiters: [Int]
        var result: Result<AssetDescription, PlayheadError>
        var interruptProbe: Bool

        static let none = ResumeAction(waiters: [], result: .failure(.cancelled()), interruptProbe: false)
    }

    func status(of key: AssetKey) -> AssetKeyStatus {
        keyStatus[key] ?? .notYetLoaded
    }

    var waiterCount: Int { waiters.count }

    /// A caller asks for `keys`.
    mutating func load(_ keys: Set<AssetKey>, waiter: Int) -> LoadAction {
        switch phase {
        case .succeeded(let description):
            for key in keys { keyStatus[key] = .loaded }
            return .succeed(description)
        case .failed(let error):
            for key in keys { keyStatus[key] = .failed(error) }
            return .fail(error)
        case .running:
            for key in keys { keyStatus[key] = .loading }
            waiters[waiter] = keys
            return .wait
        case .idle:
            generation += 1
            phase = .running(generation: generation)
            for key in keys { keyStatus[key] = .loading }
            waiters[waiter] = keys
            return .startProbe(generation: generation)
        }
    }

    /// The probe of `generation` ended.
    mutating func probeFinished(generation finished: Int, result: Result<AssetDescription, PlayheadError>) -> ResumeAction {
        guard case .running(let current) = phase, current == finished else {
            return .none  // a cancelled probe's late result
        }
        switch result {
        case .success(let description):
            phase = .succeeded(description)
            settleLoadingKeys(as: .loaded)
        case .failure(let error) where error.code == .cancelled:
            // Interrupted without a cancel request from us (cannot normally happen): treat as cancelled.
            phase = .idle
            settleLoadingKeys(as: .cancelled)
        case .failure(let error):
            phase = .failed(error)
            settleLoadingKeys(as: .failed(error))
        }
        let ids = waiters.keys.sorted()
        waiters.removeAll()
        return ResumeAction(waiters: ids, result: result, interruptProbe: false)
    }

    /// `cancelLoading()`: stop the probe and answer every waiter with a cancellation.
    mutating func cancelAll(file: String?) -> ResumeAction {
        guard case .running = phase else { return .none }
        phase = .idle
        settleLoadingKeys(as: .cancelled)
        let ids = waiters.keys.sorted()
        waiters.removeAll()
        return ResumeAction(waiters: ids, result: .failure(.cancelled(file: file)), interruptProbe: true)
    }

    /// One waiter's task was cancelled. It is answered at once; the probe goes on for the others,
    /// and is interrupted when nobody is left waiting for it.
    mutating func waiterCancelled(_ waiter: Int, file: String?) -> ResumeAction {
        guard waiters.removeValue(forKey: waiter) != nil else { return .none }
        var interrupt = false
        if waiters.isEmpty, case .running = phase {
            phase = .idle
            settleLoadingKeys(as: .cancelled)
            interrupt = true
        }
        return ResumeAction(waiters: [waiter], result: .failure(.cancelled(file: file)), interruptProbe: interrupt)
    }

    private mutating func settleLoadingKeys(as status: AssetKeyStatus) {
        for (key, value) in keyStatus where value == .loading {
            keyStatus[key] = status
        }
    }
}
