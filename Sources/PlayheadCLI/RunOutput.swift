import Dispatch
import Foundation
import Glibc
import Playhead
import PlayheadRunFolder

/// The output side of a `play` or `thumbnails` run: the folder — one run at a time, only what
/// playhead wrote there ever removed or replaced — and its `summary.json`, written as `running`
/// before anything else and finally on every way out.
struct RunOutput: Sendable {
    let folder: OutputFolder
    /// Its `summary.json`, one version at a time.
    private let summary: SummaryFile

    private init(folder: OutputFolder, echoing: Bool) {
        self.folder = folder
        summary = SummaryFile(folder: folder)
        // A second signal ends the process at once: the summary then says so, rather than
        // `running` beside files cut short (and, with `--json`, says so on standard output too).
        SignalWatcher.shared.beforeStoppingAtOnce { [summary] signal, kept in
            summary.markStoppedAtOnce(by: signal, kept: kept, echo: echoing)
        }
    }

    var path: String { folder.path }

    /// Opens `--out` (a failure: exit status 1, nothing touched). A signal while waiting for
    /// another run (`--wait`), or before the folder is ours, ends the command at once with
    /// 128 + its number and leaves the folder as the other run left it.
    /// - Parameter echoing: the command prints its summary on standard output (`--json`): the
    ///   summary a second signal leaves is printed there too.
    static func open(_ path: String, wait: Bool, inputs: [String], echoing: Bool = false) async throws -> RunOutput {
        let opening = Task { () async throws(PlayheadError) -> OutputFolder in try await OutputFolder.open(path, wait: wait, protecting: inputs) }
        SignalWatcher.shared.onSignal { _ in opening.cancel() }
        let result = await opening.result
        // The command installs its own handling once it has the folder.
        SignalWatcher.shared.onSignal { _ in }
        if let status = SignalWatcher.shared.exitStatus {
            // Nothing was written: a folder made for the run is not left behind holding its lock.
            if case .success(let folder) = result { folder.abandonUnused() }
            Console.err("playhead: stopped before writing into \(path)\n")
            throw CommandExit(status: status)
        }
        switch result {
        case .success(let folder): return RunOutput(folder: folder, echoing: echoing)
        case .failure(let error): throw CommandFailure(description: String(describing: error))
        }
    }

    /// Writes `summary.json` (replacing an earlier run's, never anything else).
    func writeSummary<T: Encodable>(_ summary: T) async throws {
        let bytes = try JSONOutput.encode(summary)
        do throws(PlayheadError) {
            try await self.summary.write(bytes)
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
    static var signalName: String? { SignalWatcher.shared.received.map(SignalWatcher.name(of:)) }
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

/// A run folder's `summary.json`: each version written whole, one at a time; and, when a second
/// signal stops the process at once, a last version made from the one before — `cancelled`, with
/// the signal that stopped it, its files still `running` marked `cancelled`, and the files kept cut
/// to their last whole part — after which nothing else is written.
final class SummaryFile: Sendable {
    private let folder: OutputFolder
    /// The version written last (nil before the first), and whether the process is stopping.
    private let state = Locked<(last: [UInt8]?, stopping: Bool)>((nil, false))
    /// Held while a version is written: one at a time; the stopping thread keeps it.
    private let writing = DispatchSemaphore(value: 1)

    init(folder: OutputFolder) { self.folder = folder }

    /// Writes `bytes` as the summary (on a worker thread), unless the process is stopping at once.
    func write(_ bytes: [UInt8]) async throws(PlayheadError) {
        try await WorkerPool.shared.value("playhead.output") { [self] () throws(PlayheadError) in
            writing.wait()
            defer { writing.signal() }
            guard !state.withLock({ $0.stopping }) else { return }
            _ = try folder.writeFileNow("summary.json", bytes: bytes)
            state.withLock { $0.last = bytes }
        }
    }

    /// On the signal's thread, before the process exits: waits (two seconds at most) for a
    /// version being written, then writes the stopped one (nothing when none was written yet)
    /// and lets no other in.
    /// - Parameters:
    ///   - signal: the name of the signal that stopped the process at once.
    ///   - kept: the files kept, cut to their last whole part.
    ///   - echo: the stopped summary is printed on standard output too (`--json`), written or not.
    /// - Returns: whether the stopped summary was written.
    func markStoppedAtOnce(by signal: String, kept: [String], echo: Bool = false) -> Bool {
        // A write that hangs (a stalled disk) must not hold a process told to stop at once.
        let free = writing.wait(timeout: .now() + .seconds(2)) == .success
        let last = state.withLock { s -> [UInt8]? in
            s.stopping = true
            return s.last
        }
        guard let last, let bytes = Self.stopped(last, by: signal, kept: kept) else { return false }
        if echo { Console.out(String(decoding: bytes, as: UTF8.self) + "\n") }
        guard free else { return false }
        return (try? folder.writeFileNow("summary.json", bytes: bytes)) != nil
    }

    /// `summary` as stopped at once by `signal`: `state` `cancelled` (the first signal kept as
    /// `signal`), `stoppedAtOnceBy`, `keptCut`, and every file or item still `running` `cancelled`.
    static func stopped(_ summary: [UInt8], by signal: String, kept: [String]) -> [UInt8]? {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(summary))) as? [String: Any] else { return nil }
        object["state"] = RunState.cancelled.rawValue
        if object["signal"] == nil { object["signal"] = RunState.signalName ?? signal }
        object["stoppedAtOnceBy"] = signal
        object["keptCut"] = kept
        for key in ["files", "items"] {
            guard let entries = object[key] as? [[String: Any]] else { continue }
            object[key] = entries.map { entry in
                var entry = entry
                if entry["status"] as? String == "running" { entry["status"] = "cancelled" }
                return entry
            }
        }
        let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? JSONSerialization.data(withJSONObject: object, options: options)).map { Array($0) }
    }
}
