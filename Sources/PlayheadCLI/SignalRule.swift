/// What each signal a command receives means, decided alone (pure: the instant is given; tested
/// without signals, `SignalRuleTests`). The first signal stops the run cleanly; the same signal
/// again within ``duplicateWindow`` is that one delivered twice (GNU `timeout` and other
/// supervisors send it to the process and to its group) and means nothing; any other second
/// signal — another one, or the same one later (a user's second Ctrl-C) — stops at once; a third
/// leaves it to the second. Once the run's outcome was read for its summary (``settle()``), a
/// first signal changes nothing (the summary and the exit status must agree), a second one still
/// stops at once.
struct SignalRule {
    /// What a signal calls for.
    enum Decision: Equatable {
        /// The same signal again within the window: one signal delivered twice.
        case duplicate
        /// The first signal: the command's cancellation runs.
        case stopCleanly
        /// The first signal after the run was settled: nothing changes.
        case tooLate
        /// A second signal: the process stops at once.
        case stopAtOnce
        /// A signal while a second one is stopping the process: left to it.
        case alreadyStopping
    }

    /// How soon the same signal again counts as the first one delivered twice.
    static let duplicateWindow: Duration = .milliseconds(500)

    /// The first signal received, if any (the one the exit status follows).
    private(set) var received: Int32?
    /// The run's outcome was read for its summary.
    private(set) var settled = false
    /// The last signal counted and when it came (by the monotonic clock).
    private var last: (number: Int32, at: ContinuousClock.Instant)?
    private var lateSignals = 0
    private var stopping = false

    /// Reads the run's outcome for its summary: from now on a first signal changes nothing.
    /// - Returns: the signal received before, if any.
    mutating func settle() -> Int32? {
        settled = true
        return received
    }

    /// Signal `number` came at `now`.
    /// - Parameters:
    ///   - number: the signal.
    ///   - now: when it came.
    /// - Returns: what it calls for.
    mutating func receive(_ number: Int32, at now: ContinuousClock.Instant) -> Decision {
        if let last, last.number == number, now - last.at < Self.duplicateWindow { return .duplicate }
        last = (number, now)
        let second: Bool
        if settled, received == nil {
            lateSignals += 1
            second = lateSignals >= 2
        } else if received == nil {
            received = number
            return .stopCleanly
        } else {
            second = true
        }
        guard second else { return .tooLate }
        defer { stopping = true }
        return stopping ? .alreadyStopping : .stopAtOnce
    }
}
