import Foundation
import Glibc
import Playhead
import PlayheadRunFolder

/// Runs one command over its shard of a manifest: the manifest read as a stream, sources of other
/// shards and (with `--resume`) sources already recorded skipped, at most `concurrency` sources at
/// a time, one JSON Lines record appended as each finishes, progress on standard error, and a
/// final `shard` record. A signal stops taking new sources; sources stopped part way get no
/// record, so a rerun with `--resume` does them again — nothing twice, nothing lost.
struct BatchRun {
    var options: BatchOptions
    var concurrency: Int
    var command: String
    /// `--wait`: wait for another run to let go of the results file instead of refusing.
    var wait = false

    /// What the work for one source gives: its record (nil when it was stopped part way, so it
    /// must be redone) and whether it failed.
    struct Outcome<Report: Encodable & Sendable>: Sendable {
        var report: Report?
        var failed: Bool
        /// The report says the source was stopped (an error with code `state.cancelled`).
        var stopped = false

        init(report: Report?, failed: Bool, stopped: Bool = false) {
            self.report = report
            self.failed = failed
            self.stopped = stopped
        }
    }

    /// What `prepare` says of a source about to start: its claim, or that this run has taken the
    /// same source already (a repeated line: not done twice).
    enum Prepared<Claim: Sendable>: Sendable {
        case start(Claim)
        case repeated
    }

    /// Counts for the shard's final record and the exit status.
    struct Tally: Encodable, Sendable {
        var kind = "shard"
        var command: String
        var shard: String
        var shardFrom: String
        var state: String = "running"
        var signal: String?
        /// Sources of this shard seen in the manifest, done now, failed among them, skipped as
        /// already recorded, repeated lines of a source running at that moment (a source listed
        /// twice further apart is done, and recorded, twice), and not done (stopped by a signal).
        var sources = 0
        var done = 0
        var failed = 0
        var skipped = 0
        var repeated = 0
        var notDone = 0
        var elapsed = 0.0
    }

    /// The shard, from the options and the environment (an error: exit status 2).
    static func shard(_ options: BatchOptions) throws -> (Shard, Shard.Origin) {
        do {
            return try Shard.resolve(argument: options.shard, shards: options.shards, environment: ProcessInfo.processInfo.environment)
        } catch let error as ShardError {
            throw UsageFailure(description: error.description)
        }
    }

    /// Runs `work` on every source of the shard. `prepare` sees each chunk of sources about to
    /// start (to claim their output folders at once); `release` gets the claims of sources that
    /// never started (a signal came); `onStop` runs on a signal (to cancel what `work` waits on).
    func run<Report: Encodable & Sendable, Claim: Sendable>(
        ready: @Sendable () async throws -> Void = {},
        prepare: @escaping @Sendable ([ManifestEntry]) async -> [Prepared<Claim>],
        release: @escaping @Sendable ([Claim]) async -> Void = { _ in },
        onStop: @escaping @Sendable () -> Void = {},
        work: @escaping @Sendable (ManifestEntry, Claim) async -> Outcome<Report>
    ) async throws -> Tally {
        let start = ContinuousClock.now
        let (shard, origin) = try Self.shard(options)
        let log = try await options.results.asyncMap { path in
            try await ResultsLog.open(
                path: path, resume: options.resume, wait: wait, expecting: ResultsLog.Expectation(command: command, shard: shard.description))
        }
        // Only now that the results file is ours does the run show itself (a refused run leaves
        // the output folder's summary as it was).
        try await ready()
        Console.err(
            "playhead \(command): shard \(shard) (\(origin == .none ? "the whole manifest" : "from " + origin.rawValue))"
                + (log.map { $0.recordsFound > 0 ? ", \($0.recordsFound) sources already recorded in \($0.path)" : "" } ?? "")
                + ((log?.tornBytes ?? 0) > 0 ? ", a torn last line cut" : "") + "\n")
        let manifestPath = options.manifest ?? "-"
        let reader = try ManifestReader(path: manifestPath)
        // Counted in a first pass only when it can be read twice: a pipe, a FIFO or standard input
        // is read once, as it comes (progress then has no total).
        let total = reader.isRegularFile ? try await Self.count(manifestPath, shard: shard, log: log) : nil
        let progress = BatchProgress(total: total, interval: options.progressInterval, shard: shard)
        let shardText = shard.description
        let encoder = Self.encoder()
        let progressTask = Task { await progress.report() }
        defer { progressTask.cancel() }
        let concurrency = self.concurrency
        let work = Task { () throws -> Tally in
            var tally = Tally(command: command, shard: shardText, shardFrom: origin.rawValue)
            try await withThrowingTaskGroup(of: (ManifestEntry, Outcome<Report>).self) { group in
                var running = 0
                var finishedReading = false
                var queue: [(ManifestEntry, Claim)] = []
                // Sources running now: a repeated line of one of them is not started twice.
                var active: Set<ResultsLog.Fingerprint> = []
                while true {
                    // Fill the window, reading a chunk of this shard's sources when none is queued;
                    // after a signal (this task cancelled) nothing new starts.
                    while running < concurrency, !Task.isCancelled {
                        if queue.isEmpty, !finishedReading {
                            let (chunk, ended, skipped, seen, repeated) = try await Self.readChunk(
                                reader, shard: shard, log: log, limit: max(64, concurrency * 4))
                            finishedReading = ended
                            tally.skipped += skipped
                            tally.repeated += repeated
                            tally.sources += seen
                            // A source running now is not claimed again (that would clean its folder).
                            let fresh = chunk.filter { !active.contains(ResultsLog.Fingerprint($0.source)) }
                            tally.repeated += chunk.count - fresh.count
                            if !fresh.isEmpty {
                                for (entry, prepared) in zip(fresh, await prepare(fresh)) {
                                    switch prepared {
                                    case .start(let claim): queue.append((entry, claim))
                                    case .repeated: tally.repeated += 1
                                    }
                                }
                            }
                        }
                        guard !queue.isEmpty else { break }
                        let (entry, claim) = queue.removeFirst()
                        active.insert(ResultsLog.Fingerprint(entry.source))
                        running += 1
                        group.addTask { (entry, await work(entry, claim)) }
                    }
                    guard running > 0, let (entry, outcome) = try await group.next() else { break }
                    running -= 1
                    active.remove(ResultsLog.Fingerprint(entry.source))
                    // Whatever a command reports, a source the signal stopped gets no record.
                    guard let report = outcome.report, !(Task.isCancelled && outcome.stopped) else {
                        tally.notDone += 1
                        continue
                    }
                    tally.done += 1
                    if outcome.failed { tally.failed += 1 }
                    progress.finished(failed: outcome.failed)
                    try await Self.append(
                        try encoder.encode(Record(command: command, source: entry.source, line: entry.line, shard: shardText, report: report)),
                        to: log)
                }
                // Sources read but never started (a signal came) are not done.
                tally.notDone += queue.count
                await release(queue.map(\.1))
            }
            return tally
        }
        // A signal stops taking sources and cancels those running (they get no record).
        SignalWatcher.shared.onSignal { _ in
            work.cancel()
            onStop()
        }
        var tally = try await work.value
        if let log { await blocking("playhead.results") { log.sync() } }
        tally.state = RunState.atTheEnd.rawValue
        tally.signal = RunState.signalName
        tally.elapsed = (ContinuousClock.now - start).inSeconds
        let summary = try encoder.encode(tally)
        try await Self.append(summary, to: log)
        if let log { await blocking("playhead.results") { log.sync() } }
        progress.end(tally)
        return tally
    }
}

extension BatchRun {
    /// One source's record: the command's per-file entry with the source, its manifest line and
    /// the shard beside its fields. The source is written in its display form (a URL's secrets
    /// removed); `sourceKey`, a fingerprint of the line as written, is what a resumed run matches.
    struct Record<Report: Encodable>: Encodable {
        var command: String
        var source: String
        var line: Int
        var shard: String
        var report: Report

        enum Keys: String, CodingKey { case kind, command, source, sourceKey, line, shard }

        func encode(to encoder: any Encoder) throws {
            try report.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("file", forKey: .kind)
            try container.encode(command, forKey: .command)
            try container.encode(SourceRedaction.redacted(source), forKey: .source)
            try container.encode(ResultsLog.Fingerprint(source).key, forKey: .sourceKey)
            try container.encode(line, forKey: .line)
            try container.encode(shard, forKey: .shard)
        }
    }

    /// Claims the output folders of a chunk of sources at once; a source whose folder this run
    /// claimed already (listed twice, far apart) is `repeated`, and its folder left alone.
    static func claim(_ entries: [ManifestEntry], in folder: OutputFolder) async -> [Prepared<Result<String, PlayheadError>>] {
        let names = entries.map { PlayJob(source: $0.source, line: $0.line).folderName }
        var fresh: [String] = []
        var repeated = Set<Int>()
        for (i, name) in names.enumerated() {
            if folder.claimedInThisRun(name) { repeated.insert(i) } else { fresh.append(name) }
        }
        var claims = await folder.claimFolders(fresh).makeIterator()
        return names.indices.map { i in
            if repeated.contains(i) { return .repeated }
            guard let claim = claims.next() else { return .repeated }
            return .start(claim)
        }
    }

    /// Appends a record to the results file (on a worker thread), or prints it.
    static func append(_ line: Data, to log: ResultsLog?) async throws {
        guard let log else {
            Console.out(String(decoding: line, as: UTF8.self) + "\n")
            return
        }
        try await WorkerPool.shared.value("playhead.results") { () throws(PlayheadError) in
            do { try log.append(Array(line)) } catch {
                throw PlayheadError(code: .writeFailed, message: "\(error)", file: log.path)
            }
        }
    }

    /// Compact (one line), sorted, never NaN.
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    /// Up to `limit` sources of the shard not yet recorded (read on a worker thread: a manifest
    /// on standard input may block), whether the manifest ended, how many were skipped as
    /// recorded, and how many of the shard were seen.
    static func readChunk(
        _ reader: ManifestReader, shard: Shard, log: ResultsLog?, limit: Int
    ) async throws
        -> ([ManifestEntry], ended: Bool, skipped: Int, seen: Int, repeated: Int)
    {
        return try await WorkerPool.shared.value("playhead.manifest") { () throws(PlayheadError) in
            var chunk: [ManifestEntry] = []
            var inChunk: Set<ResultsLog.Fingerprint> = []
            var skipped = 0, seen = 0, repeated = 0
            do {
                while chunk.count < limit {
                    guard let entry = try reader.next() else { return (chunk, true, skipped, seen, repeated) }
                    guard shard.contains(entry.source) else { continue }
                    seen += 1
                    if log?.isDone(entry.source) == true {
                        skipped += 1
                        continue
                    }
                    // A source repeated close by is taken once (its output folder is claimed once).
                    guard inChunk.insert(ResultsLog.Fingerprint(entry.source)).inserted else {
                        repeated += 1
                        continue
                    }
                    chunk.append(entry)
                }
            } catch {
                throw PlayheadError(code: .readFailed, message: "\(error)", file: reader.path)
            }
            return (chunk, false, skipped, seen, repeated)
        }
    }

    /// The sources of the shard still to do, counted in a first pass over a manifest file (for
    /// progress and ETA).
    static func count(_ path: String, shard: Shard, log: ResultsLog?) async throws -> Int {
        let reader = try ManifestReader(path: path)
        var total = 0
        while true {
            let (chunk, ended, _, _, _) = try await readChunk(reader, shard: shard, log: log, limit: 65536)
            total += chunk.count
            if ended { return total }
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

/// A command line that cannot be run (exit status 2), found after parsing (the environment's
/// shard variables).
struct UsageFailure: Error, CustomStringConvertible {
    var description: String
}
