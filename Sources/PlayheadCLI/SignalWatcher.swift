import Dispatch
import Glibc
import Playhead

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\\, which would otherwise print the runtime's crash
/// report and carry on) cancel the command cleanly: the first one runs the command's
/// cancellation (sessions stopped, outputs kept as far as they got, the summary written) and the
/// command then exits with 128 + the signal's number (130, 143, 129, 131). A second signal stops the
/// process at once: files still being written that stay valid when cut (recordings, MP4 exports)
/// are kept, cut to their valid part; others are removed. What each signal means is
/// ``SignalRule``'s (the same one again within half a second is one signal delivered twice).
/// SIGPIPE is ignored: a reader gone away is a write error (`Console`).
final class SignalWatcher: Sendable {
    static let shared = SignalWatcher()

    private struct State {
        var rule = SignalRule()
        var handler: (@Sendable (Int32) -> Void)?
        /// SIGHUP asks a long-running command to reload (a channel's layout), not to stop.
        var reload: (@Sendable () -> Void)?
        /// Runs when a second signal stops the process at once, before it exits; says whether the
        /// summary was written.
        var stoppingAtOnce: (@Sendable (String, [String]) -> Bool)?
    }
    private let state = Locked(State())
    /// The signal sources, kept alive for the process's life.
    private let sources = LockedExclusive<[any DispatchSourceSignal]>([])

    private init() {}

    /// Installs the handling; call once, first thing.
    func install() {
        signal(SIGPIPE, SIG_IGN)
        var sources: [any DispatchSourceSignal] = []
        // The default action stays until each source is registered (libdispatch then installs
        // its own handler): a signal that comes while they are being set up ends the process as
        // it would have anyway. Ignoring the signals first (as on Darwin) would lose one that
        // came before the registration — under load that window is hundreds of milliseconds.
        let registered = DispatchSemaphore(value: 0)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in received(number) }
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            sources.append(source)
        }
        for _ in sources { _ = registered.wait(timeout: .now() + .seconds(2)) }
        self.sources.withLock { $0 = sources }
    }

    /// The first signal received, if any.
    var received: Int32? { state.withLock { $0.rule.received } }

    /// The signal that decides how the run ended, read once for its summary: after this, a
    /// signal no longer turns a finished run into a cancelled one (the work is done and said so).
    func settle() -> Int32? {
        state.withLock { $0.rule.settle() }
    }

    /// `SIGINT`, `SIGTERM`, … for the signals watched; `signal N` for any other.
    static func name(of number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        case SIGQUIT: return "SIGQUIT"
        default: return "signal \(number)"
        }
    }

    /// The exit status a signal calls for (128 + its number).
    var exitStatus: Int32? { received.map { 128 + $0 } }

    /// What to do on the first signal; runs at once if one came already. Replaces an earlier one.
    func onSignal(_ handler: @escaping @Sendable (Int32) -> Void) {
        let already = state.withLock { s -> Int32? in
            s.handler = handler
            return s.rule.received
        }
        if let already { handler(already) }
    }

    /// What to do when a second signal stops the process at once, on the signal's thread before
    /// it exits (a run's summary then says so): told the signal's name and the files kept, cut
    /// to their last whole part. Replaces an earlier one.
    func beforeStoppingAtOnce(_ handler: @escaping @Sendable (_ signal: String, _ kept: [String]) -> Bool) {
        state.withLock { $0.stoppingAtOnce = handler }
    }

    /// What SIGHUP does from now on: reload (each time) instead of stopping the command.
    func onReload(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.reload = handler }
    }

    private func received(_ number: Int32) {
        if number == SIGHUP, let reload = state.withLock({ $0.reload }) {
            reload()
            return
        }
        let now = ContinuousClock.now
        let (decision, handler, stopping) = state.withLock { s in (s.rule.receive(number, at: now), s.handler, s.stoppingAtOnce) }
        switch decision {
        case .duplicate, .tooLate, .alreadyStopping:
            return
        case .stopCleanly:
            handler?(number)
        case .stopAtOnce:
            // Nothing half written stays behind under a name that says it is whole: a recording or
            // an MP4 export is cut to its valid part and kept, anything else being written removed.
            let kept = SafeFile.removeTemporaries()
            let written = stopping?(Self.name(of: number), kept) ?? false
            Console.err(
                "playhead: stopped at once by a second signal: "
                    + (kept.isEmpty ? "" : "kept, cut to their last whole part: \(kept.joined(separator: ", ")); ")
                    + "files still being written were removed"
                    + (written ? ", summary.json says so\n" : "\n"))
            // A summary printed for the stop (`--json`) that standard output lost is said too.
            if let lost = Console.outputFailure {
                Console.err("playhead: could not write to standard output: \(String(cString: strerror(lost)))\n")
            }
            _exit(128 + number)
        }
    }
}
