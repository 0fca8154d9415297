import Glibc
import Playhead
import PlayheadRunFolder

/// The output side of a `play` or `thumbnails` run: the folder — one run at a time, only what
/// playhead wrote there ever removed or replaced — and its `summary.json`, written as `running`
/// before anything else and finally on every way out.
struct RunOutput: Sendable {
    let folder: OutputFolder

    var path: String { folder.path }

    /// Opens `--out` (a failure: exit status 1, nothing touched). A signal while waiting for
    /// another run (`--wait`), or before the folder is ours, ends the command at once with
    /// 128 + its number and leaves the folder as the other run left it.
    static func open(_ path: String, wait: Bool, inputs: [String]) async throws -> RunOutput {
        let opening = Task { () async throws(PlayheadError) -> OutputFolder in try await OutputFolder.open(path, wait: wait, protecting: inputs) }
        SignalWatcher.shared.onSignal { _ in opening.cancel() }
        let result = await opening.result
        // The command installs its own handling once it has the folder.
        SignalWatcher.shared.onSignal { _ in }
        if let status = SignalWatcher.shared.exitStatus {
            Console.err("playhead: stopped before writing into \(path)\n")
            throw CommandExit(status: status)
        }
        switch result {
        case .success(let folder): return RunOutput(folder: folder)
        case .failure(let error): throw CommandFailure(description: String(describing: error))
        }
    }

    /// Writes `summary.json` (replacing an earlier run's, never anything else).
    func writeSummary<T: Encodable>(_ summary: T) async throws {
        let bytes = try JSONOutput.encode(summary)
        do throws(PlayheadError) {
            try await folder.writeFile("summary.json", bytes: bytes)
        } catch {
            throw CommandFailure(description: "could not write the summary: \(error)")
        }
    }

    /// The path of `name` in the folder.
    func path(of name: String) -> String {
        path.hasSuffix("/") ? path + name : path + "/" + name
    }
}

/// Where a run stands, at the top of its summary.
enum RunState: String, Encodable {
    /// Still going (or stopped without a chance to say more: a crash, SIGKILL).
    case running
    /// Every file was worked through.
    case finished
    /// Stopped by a signal; what was done is reported.
    case cancelled
    /// Stopped by an error before its end (a composition whose output could not be written);
    /// what was done and why it stopped are reported.
    case failed

    /// `finished`, or `cancelled` after a signal.
    static var atTheEnd: RunState { SignalWatcher.shared.settle() == nil ? .finished : .cancelled }

    /// The name of the signal that stopped the run, if one did.
    static var signalName: String? {
        switch SignalWatcher.shared.received {
        case SIGINT?: return "SIGINT"
        case SIGTERM?: return "SIGTERM"
        case SIGHUP?: return "SIGHUP"
        case SIGQUIT?: return "SIGQUIT"
        case let other?: return "signal \(other)"
        case nil: return nil
        }
    }
}

/// Ends a command with an exit status (after its output was written).
struct CommandExit: Error {
    var status: Int32

    /// 128 + the signal's number after a signal; else 1 when something failed, 0 when not.
    static func status(failed: Bool) -> CommandExit? {
        if let signal = SignalWatcher.shared.exitStatus { return CommandExit(status: signal) }
        return failed ? CommandExit(status: 1) : nil
    }
}
