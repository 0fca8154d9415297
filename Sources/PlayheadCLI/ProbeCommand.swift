import ArgumentParser
import Foundation
import Playhead

/// `playhead probe [--json] <path>...`: load every file's properties concurrently and report them.
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe media files: container, duration, tracks.",
        discussion:
            "All files are probed at once. Exit status: 0 when every file loaded, 1 when any failed (all are still reported), 2 on usage errors."
    )

    @Flag(help: "Print one JSON document instead of a table.")
    var json = false

    @Argument(help: "Media files or URLs.")
    var paths: [String] = []

    @OptionGroup(title: "Manifests and shards")
    var batch: BatchOptions

    @OptionGroup var sourceOptions: SourceArguments

    mutating func validate() throws {
        paths = RawArguments.restoring(paths)
        try StandardInput.checkReadOnce(paths, alsoReading: batch.manifest)
        if batch.isBatch {
            try batch.validate(paths: paths, resultsRequired: false)
        } else if paths.isEmpty {
            throw ValidationError("give at least one file to probe, or --manifest")
        }
    }

    func run() async throws {
        if batch.isBatch { return try await runBatch() }
        let paths = self.paths
        let options = sourceOptions.assetOptions
        let work = Task { await ProbeCommand.probeAll(paths, options: options) }
        // A signal cancels the loading; what was found is still printed.
        SignalWatcher.shared.onSignal { _ in work.cancel() }
        let reports = await work.value
        if json {
            try JSONOutput.write(ProbeDocument(assets: reports))
        } else {
            Console.out(Console.escaped(ProbeTable.render(reports)))
        }
        if let exit = CommandExit.status(failed: reports.contains { $0.status != "loaded" }) { throw exit }
    }

    /// `--manifest`: each source of the shard probed as it comes (16 at a time), one JSON Lines
    /// record each, to `--results` or standard output.
    func runBatch() async throws {
        let run = BatchRun(options: batch, concurrency: 16, command: "probe")
        let options = sourceOptions.assetOptions
        let tally = try await run.run(prepare: { $0.map { _ in BatchRun.Prepared<Void>.start(()) } }) { entry, _ -> BatchRun.Outcome<AssetReport> in
            if let problem = entry.problem {
                return .init(
                    report: AssetReport(path: entry.source, error: PlayheadError(code: .invalidArgument, message: problem, file: entry.source)),
                    failed: true)
            }
            let report = await ProbeCommand.probe(entry.source, options: options)
            let stopped = report.error?.code == PlayheadError.Code.cancelled.description
            return .init(report: report, failed: report.status != "loaded", stopped: stopped)
        }
        if let exit = CommandExit.status(failed: tally.failed > 0) { throw exit }
    }

    /// Probes every path concurrently; the reports come back in argument order.
    static func probeAll(_ paths: [String], options: AssetOptions) async -> [AssetReport] {
        await withTaskGroup(of: (Int, AssetReport).self) { group in
            for (position, path) in paths.enumerated() {
                group.addTask { (position, await probe(path, options: options)) }
            }
            var reports = paths.map { AssetReport(path: $0, error: PlayheadError(code: .cancelled, message: "cancelled", file: $0)) }
            for await (position, report) in group { reports[position] = report }
            return reports
        }
    }

    static func probe(_ path: String, options: AssetOptions) async -> AssetReport {
        let asset = Asset(source: path, options: options)
        do {
            let (format, duration, start, bitRate, tracks, playable, chapters, variants, unmet, metadata, cover) =
                try await asset.load(
                    .formatName, .duration, .startTime, .bitRate, .tracks, .isPlayable, .chapters, .variants, .unmetSelection, .commonMetadata,
                    .coverArt)
            // The sound `--audio-track` asks for is not there: this file fails the question.
            if let unmet { return AssetReport(path: path, error: unmet) }
            return AssetReport(
                path: path, format: format, duration: duration, startTime: start,
                bitRate: bitRate, tracks: tracks, isPlayable: playable, chapters: chapters, variants: variants, metadata: metadata, cover: cover)
        } catch {
            return AssetReport(path: path, error: error)
        }
    }
}
