import ArgumentParser
import Foundation
import Playhead

/// `playhead thumbnails`: images at chosen times out of many files, and a contact sheet.
struct ThumbnailsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Take images at chosen times out of media files, and draw a contact sheet.",
        discussion: """
            Images of the Nth file go to DIR/NN-<file name>/thumb-0001.<ext> …, in ascending time order; \
            DIR/summary.json lists each image's requested and actual time. --sheet draws DIR/sheet.png: one \
            row per file, one cell of --size per time, the image fitted inside (black bars), a failed \
            file's row mid-gray. Exit status: 0 when every image was made, 1 when any file or image \
            failed (the rest is still written), 2 on usage errors.
            """
    )

    @Option(help: "Folder for the images, summary.json and sheet.png.")
    var out: String

    @Option(parsing: .unconditional, help: "N times per file, at (i + 0.5) × duration / N.")
    var count: Int?

    @Option(parsing: .unconditional, help: "A time every SECONDS, from 0.")
    var every: Double?

    @Option(parsing: .unconditional, help: "Times in seconds, comma-separated (exact decimals).", transform: ThumbnailsCommand.parseTimes)
    var at: [MediaTime]?

    @Flag(help: "The frame showing at each time (the default).")
    var exact = false

    @Option(parsing: .unconditional, help: "Accept the keyframe nearest each time within SECONDS either side (faster).")
    var tolerance: Double?

    @Option(parsing: .unconditional, help: "Image (and sheet cell) size WxH; images fit inside it.", transform: PlayCommand.parseSize)
    var size: PixelSize = PixelSize(width: 160, height: 90)

    @Option(help: "Image format: png or ppm.")
    var format: ImageFormat = .png

    @Flag(help: "Also draw DIR/sheet.png.")
    var sheet = false

    @Flag(
        help:
            "Fail an image on any damaged data met while looking for it (by default damaged packets are decoded past and counted in damagedPackets).")
    var strict = false

    @Option(name: .customLong("max-sessions"), parsing: .unconditional, help: "Files worked on at once.")
    var maxSessions: Int = 4

    @Flag(help: "Print the summary as JSON on standard output.")
    var json = false

    @Flag(help: "If another run is writing into --out, wait for it to finish (default: fail at once).")
    var wait = false

    @Argument(help: "Media files or URLs.")
    var paths: [String] = []

    @OptionGroup(title: "Manifests and shards")
    var batch: BatchOptions

    @OptionGroup var sourceOptions: SourceArguments

    enum ImageFormat: String, ExpressibleByArgument, CaseIterable {
        case png, ppm
        var format: ImageSequenceSink.Format { self == .png ? .png : .ppm }
    }

    /// Times as exact decimals (`6.4731334` is that, not the nearest microsecond).
    static func parseTimes(_ text: String) throws -> [MediaTime] {
        let times = text.split(separator: ",", omittingEmptySubsequences: false).map { MediaTime(decimal: String($0)) }
        guard !times.isEmpty, times.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--at takes seconds separated by commas, like 1,2.5,10 (decimal numbers of at most 10 digits before the point)")
        }
        let parsed = times.compactMap { $0 }
        // A clip's timeline starts at 0 or later: a negative time is never in it.
        if let negative = text.split(separator: ",").first(where: { $0.hasPrefix("-") }) {
            throw ValidationError("--at takes times of 0 seconds or more (\(negative) is before any clip's start)")
        }
        return parsed
    }

    mutating func validate() throws {
        paths = RawArguments.restoring(paths)
        try StandardInput.checkReadOnce(paths, manifest: batch.manifest)
        if batch.isBatch {
            try batch.validate(paths: paths, resultsRequired: true)
            if sheet { throw ValidationError("--sheet is for files given as arguments, not --manifest") }
            if json { throw ValidationError("--json is for files given as arguments; a manifest run writes --results") }
        } else if paths.isEmpty {
            throw ValidationError("give at least one file, or --manifest")
        }
        if [count != nil, every != nil, at != nil].filter({ $0 }).count != 1 {
            throw ValidationError("give exactly one of --count, --every, --at")
        }
        if let count, count < 1 || count > Limits.timesPerFile { throw ValidationError("--count must be 1 … \(Limits.timesPerFile)") }
        if let every, !(every > 0 && every.isFinite) { throw ValidationError("--every must be a positive number of seconds") }
        if let at { try Limits.checkTimes(at.count) }
        if exact, tolerance != nil { throw ValidationError("--exact and --tolerance exclude each other") }
        if let tolerance, !(tolerance > 0 && tolerance.isFinite) { throw ValidationError("--tolerance must be a positive number of seconds") }
        if maxSessions < 1 || maxSessions > 64 { throw ValidationError("--max-sessions must be 1 … 64") }
        try Limits.checkCanvas(size, option: "--size")
        if sheet, let columns = count ?? at?.count { try Limits.checkSheet(rows: paths.count, columns: columns, cell: size) }
    }

    func run() async throws {
        if batch.isBatch { return try await runBatch() }
        let start = ContinuousClock.now
        let options = sourceOptions.assetOptions
        let assets = paths.map { Asset(source: $0, options: options) }
        let plan = TimePlan(count: count, every: every, at: at)
        // --every: how many times each file needs depends on its duration; checked before
        // anything is written.
        let durations = every == nil ? [MediaTime?](repeating: nil, count: paths.count) : await Self.durations(of: assets)
        if every != nil {
            for (path, duration) in zip(paths, durations) {
                guard let duration, let every, plan.timeCount(duration: duration) > Limits.timesPerFile else { continue }
                throw ValidationError(
                    "--every \(every) would take \((duration.seconds / every).rounded(.up)) times of \(path) (\(duration.seconds) s): at most \(Limits.timesPerFile) per file"
                )
            }
            if sheet {
                let columns = durations.map { $0.map { plan.timeCount(duration: $0) } ?? 0 }.max() ?? 0
                try Limits.checkSheet(rows: paths.count, columns: columns, cell: size)
            }
        }
        let output = try await RunOutput.open(out, wait: wait, inputs: paths)
        let jobs = paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element) }
        var running = ThumbnailSummary(
            files: jobs.map { ThumbnailFileReport(running: $0.path) }, elapsed: 0,
            maxConcurrentSessions: maxSessions, peakConcurrentSessions: 0)
        running.state = .running
        try await output.writeSummary(running)
        let claims = await output.folder.claimFolders(jobs.map(\.folderName))

        let coordinator = PlaybackCoordinator(maxConcurrentSessions: maxSessions)
        let tolerance = self.tolerance.map { MediaTime(seconds: $0) }
        let settings = ThumbnailJob.Settings(plan: plan, tolerance: tolerance, size: size, format: format, sheet: sheet, strict: strict)
        let json = self.json
        let work = Task {
            await withTaskGroup(of: (Int, ThumbnailFileReport, ContactRow?).self) { group in
                for (i, job) in jobs.enumerated() {
                    group.addTask {
                        let thumbnailJob = ThumbnailJob(job: job, asset: assets[i], claim: claims[i], settings: settings, output: output)
                        do throws(PlayheadError) {
                            let (report, row) = try await coordinator.withSlot { await thumbnailJob.run() }
                            return (i, report, row)
                        } catch {
                            return (i, ThumbnailFileReport(path: job.path, status: "cancelled", images: [], error: ErrorReport(error)), nil)
                        }
                    }
                }
                var reports = jobs.map { ThumbnailFileReport(path: $0.path, status: "cancelled", images: [], error: nil) }
                var rows = [ContactRow?](repeating: nil, count: jobs.count)
                for await (i, report, row) in group {
                    reports[i] = report
                    rows[i] = row
                    if !json { Console.err(report.line + "\n") }
                }
                return (reports, rows)
            }
        }
        // A signal stops the work: images made so far stay, and the summary lists them.
        SignalWatcher.shared.onSignal { _ in work.cancel() }
        let (reports, rows) = await work.value

        var summary = ThumbnailSummary(
            files: reports, elapsed: 0, maxConcurrentSessions: maxSessions,
            peakConcurrentSessions: await coordinator.peakConcurrentSessions)
        if sheet, SignalWatcher.shared.received == nil {
            do throws(PlayheadError) {
                summary.sheet = try await ContactSheet(cell: size, rows: rows).write(into: output)
            } catch {
                summary.sheetError = ErrorReport(error)
                if !json { Console.err("sheet.png  failed  [\(error.code)] \(error.message)\n") }
            }
        }
        summary.state = RunState.atTheEnd
        summary.signal = RunState.signalName
        summary.elapsed = (ContinuousClock.now - start).inSeconds
        try await output.writeSummary(summary)
        if json { try JSONOutput.write(summary) }
        let failed = summary.sheetError != nil || reports.contains { $0.status != "completed" || $0.images.contains { $0.error != nil } }
        if let exit = CommandExit.status(failed: failed) { throw exit }
    }

    /// `--manifest`: each source of the shard into `OUT/<key>-<file name>/` (with several shards,
    /// under `OUT/shard-K-of-N/`), `maxSessions` at a time, one JSON Lines record each.
    func runBatch() async throws {
        let (shard, _) = try BatchRun.shard(batch)
        let folder = shard.count == 1 ? out : out + "/shard-\(shard.index)-of-\(shard.count)"
        let output = try await RunOutput.open(folder, wait: wait, inputs: [])
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: maxSessions)
        let tolerance = self.tolerance.map { MediaTime(seconds: $0) }
        let settings = ThumbnailJob.Settings(
            plan: TimePlan(count: count, every: every, at: at), tolerance: tolerance, size: size, format: format, sheet: false, strict: strict)
        let run = BatchRun(options: batch, concurrency: maxSessions, command: "thumbnails", wait: wait)
        let options = sourceOptions.assetOptions
        let tally = try await run.run(
            ready: {
                try await output.writeSummary(BatchRun.Tally(command: "thumbnails", shard: shard.description, shardFrom: ""))
            },
            prepare: { entries in
                await BatchRun.claim(entries, in: output.folder)
            },
            release: { claims in
                for case .success(let path) in claims { _ = await output.folder.removeIfEmpty(URL(fileURLWithPath: path).lastPathComponent) }
            }
        ) { entry, claim in
            let job = PlayJob(source: entry.source, line: entry.line)
            if let problem = entry.problem {
                if case .success = claim { _ = await output.folder.removeIfEmpty(job.folderName) }
                let error = PlayheadError(code: .invalidArgument, message: problem, file: entry.source)
                return .init(report: ThumbnailFileReport(path: entry.source, status: "failed", images: [], error: ErrorReport(error)), failed: true)
            }
            var settings = settings
            if let at = entry.at { settings.plan = TimePlan(count: nil, every: nil, at: at) }
            let thumbnailJob = ThumbnailJob(
                job: job, asset: Asset(source: entry.source, options: options), claim: claim,
                settings: settings, output: output)
            let report: ThumbnailFileReport
            do throws(PlayheadError) {
                report = try await coordinator.withSlot { await thumbnailJob.run() }.0
            } catch {
                return .init(report: nil, failed: false)
            }
            if report.status == "cancelled" { return .init(report: nil, failed: false) }
            let stopped = report.error?.code == PlayheadError.Code.cancelled.description
            return .init(report: report, failed: report.status != "completed" || report.images.contains { $0.error != nil }, stopped: stopped)
        }
        try await output.writeSummary(tally)
        if let exit = CommandExit.status(failed: tally.failed > 0) { throw exit }
    }

    /// Each asset's duration (nil: it could not be loaded; that file fails later, alone).
    static func durations(of assets: [Asset]) async -> [MediaTime?] {
        await withTaskGroup(of: (Int, MediaTime?).self) { group in
            for (i, asset) in assets.enumerated() {
                group.addTask {
                    let duration = try? await asset.load(.duration)
                    return (i, duration.flatMap { $0.isNumeric ? $0 : nil })
                }
            }
            var durations = [MediaTime?](repeating: nil, count: assets.count)
            for await (i, duration) in group { durations[i] = duration }
            return durations
        }
    }
}

/// Which times to take, per file.
struct TimePlan: Sendable {
    var count: Int?
    var every: Double?
    var at: [MediaTime]?

    func times(duration: MediaTime) -> [MediaTime] {
        if let count {
            return (0..<count).map { MediaTime(seconds: (Double($0) + 0.5) * duration.seconds / Double(count)) }
        }
        if let every {
            return (0..<timeCount(duration: duration)).map { MediaTime(seconds: Double($0) * every) }
        }
        return (at ?? []).sorted()
    }

    /// How many times a file of `duration` gets (for `--every`: 0, every, 2·every, … before the
    /// end; at most one more than the limit, so that a huge count is not worked out in full).
    func timeCount(duration: MediaTime) -> Int {
        if let count { return count }
        if let every {
            guard duration.isNumeric, duration.seconds > 0 else { return 1 }
            let n = (duration.seconds / every).rounded(.up)
            return n.isFinite ? Int(min(n, Double(Limits.timesPerFile + 1))) : Limits.timesPerFile + 1
        }
        return at?.count ?? 0
    }
}
