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
            DIR/summary.json lists each image's requested and actual time. --sheet draws each file's \
            contact sheet beside its images (DIR/NN-<file name>/sheet.png or .jpg): a header with the \
            file's name, size, duration, dimensions, frame rate, codecs and bit rate, then --sheet-columns \
            cells of --size a row, each picture with its time in a corner, a failed time drawn with its \
            reason. --overview draws DIR/overview.png: one row per file under its name, a failed file \
            drawn with its reason. --skip-blank moves a picture off a blank frame (black, white or one \
            colour) to the next frame that is not (else the last one before it), at most half the times' \
            average spacing away (and 5 s); \
            summary.json says where it moved from. Exit status: 0 when every image and sheet was made, \
            1 when any file, image or sheet failed (the rest is still written), 2 on usage errors.
            """
    )

    @Option(help: "Folder for the images, summary.json and sheet.png.")
    var out: String

    @Option(parsing: .unconditional, help: "N times per file, at (i + 0.5) × duration / N (the picture's duration, when its track says).")
    var count: Int?

    @Option(parsing: .unconditional, help: "A time every SECONDS, from 0.")
    var every: Double?

    @Option(
        name: .customLong("at"), parsing: .unconditionalSingleValue,
        help: "Times in seconds, comma-separated (exact decimals); repeat it to add more.", transform: ThumbnailsCommand.parseTimes)
    var atLists: [[MediaTime]] = []

    /// Every `--at`'s times, in the order given (nil: no `--at`).
    var at: [MediaTime]? { atLists.isEmpty ? nil : atLists.flatMap { $0 } }

    @Flag(help: "The frame showing at each time (the default).")
    var exact = false

    @Option(parsing: .unconditional, help: "Accept the keyframe nearest each time within SECONDS either side (faster).")
    var tolerance: Double?

    @Option(parsing: .unconditional, help: "Image (and sheet cell) size WxH; images fit inside it.", transform: PlayCommand.parseSize)
    var size: PixelSize = PixelSize(width: 160, height: 90)

    @Option(help: "Image format: png or ppm.")
    var format: ImageFormat = .png

    @Flag(help: "Also draw each file's contact sheet beside its images.")
    var sheet = false

    @Flag(help: "Also draw DIR/overview.png (or .jpg): every file's pictures, a row per file.")
    var overview = false

    @Option(name: .customLong("sheet-format"), help: "The sheets' format: png or jpeg.")
    var sheetFormat: SheetFormat?

    @Option(name: .customLong("sheet-columns"), parsing: .unconditional, help: "Pictures a row on a sheet (default 4; the overview: a row per file).")
    var sheetColumns: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Draw subtitles into each image: a track of the file (an index, lang:CODE, default), a subtitle file (.srt, .ass, .vtt), or none.",
            valueName: "spec"),
        transform: SourceArguments.parseSubtitles)
    var subtitles: SubtitleOption?

    @Flag(name: .customLong("skip-blank"), help: "Move a picture off a blank frame to the next frame that is not (bounded).")
    var skipBlank = false

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

    enum SheetFormat: String, ExpressibleByArgument, CaseIterable {
        case png, jpeg
        var format: ContactSheet.Format { self == .png ? .png : .jpeg }
    }

    enum ImageFormat: String, ExpressibleByArgument, CaseIterable {
        case png, ppm
        var format: ImageSequenceSink.Format { self == .png ? .png : .ppm }
    }

    /// Times as exact decimals (`6.4731334` is that, not the nearest microsecond).
    static func parseTimes(_ text: String) throws -> [MediaTime] {
        let times = text.split(separator: ",", omittingEmptySubsequences: false).map { MediaTime(decimal: String($0)) }
        guard !times.isEmpty, times.allSatisfy({ $0 != nil }) else {
            throw ValidationError(
                "--at takes seconds separated by commas, like 1,2.5,10 (decimal numbers up to \(MediaTime.largestDecimalSeconds) seconds)")
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
        try StandardInput.checkReadOnce(paths, alsoReading: batch.manifest)
        if batch.isBatch {
            try batch.validate(paths: paths, resultsRequired: true)
            if overview { throw ValidationError("--overview is for files given as arguments, not --manifest") }
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
        if let sheetColumns, sheetColumns < 1 || sheetColumns > 1000 { throw ValidationError("--sheet-columns must be 1 … 1000") }
        if (sheetColumns != nil || sheetFormat != nil) && !sheet && !overview {
            throw ValidationError("--sheet-columns and --sheet-format are for --sheet or --overview")
        }
        if let times = count ?? at?.count { try checkSheets(times: times) }
    }

    func run() async throws {
        if batch.isBatch { return try await runBatch() }
        let start = ContinuousClock.now
        let options = sourceOptions.assetOptions
        // With --every, the assets probed for their durations are kept for their jobs; otherwise
        // each job makes its own, let go (with its open files) when the job ends.
        let assets = every == nil ? nil : paths.map { Asset(source: $0, options: options) }
        let plan = TimePlan(count: count, every: every, at: at)
        // --every: how many times each file needs depends on its duration; checked before
        // anything is written.
        var durations = [MediaTime?](repeating: nil, count: paths.count)
        if let assets { durations = await Self.durations(of: assets) }
        if every != nil {
            for (path, duration) in zip(paths, durations) {
                guard let duration, let every, plan.timeCount(duration: duration) > Limits.timesPerFile else { continue }
                throw ValidationError(
                    "--every \(every) would take \((duration.seconds / every).rounded(.up)) times of \(path) (\(duration.seconds) s): at most \(Limits.timesPerFile) per file"
                )
            }
            try checkSheets(times: durations.map { $0.map { plan.timeCount(duration: $0) } ?? 0 }.max() ?? 0)
        }
        let output = try await RunOutput.open(out, wait: wait, inputs: paths, echoing: json)
        let jobs = paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element) }
        var running = ThumbnailSummary(
            files: jobs.map { ThumbnailFileReport(running: $0.path) }, elapsed: 0,
            maxConcurrentSessions: maxSessions, peakConcurrentSessions: 0)
        running.state = .running
        try await output.writeSummary(running)
        let claims = await output.folder.claimFolders(jobs.map(\.folderName))

        let coordinator = PlaybackCoordinator(maxConcurrentSessions: maxSessions)
        let tolerance = self.tolerance.map { MediaTime(seconds: $0) }
        let sheets = sheetSettings
        let settings = ThumbnailJob.Settings(
            plan: plan, tolerance: tolerance, size: size, format: format, sheets: sheets, strict: strict, skipBlank: skipBlank,
            subtitles: subtitles?.burnIn)
        let json = self.json
        let work = Task {
            await withTaskGroup(of: (Int, ThumbnailFileReport, ContactSheet.Section?).self) { group in
                for (i, job) in jobs.enumerated() {
                    group.addTask {
                        let asset = assets?[i] ?? Asset(source: job.path, options: options)
                        let thumbnailJob = ThumbnailJob(job: job, asset: asset, claim: claims[i], settings: settings, output: output)
                        do throws(PlayheadError) {
                            let (report, section) = try await coordinator.withSlot { await thumbnailJob.run() }
                            return (i, report, section ?? ThumbnailJob.failedSection(report, source: job.path))
                        } catch {
                            return (i, ThumbnailFileReport(path: job.path, status: "cancelled", images: [], error: ErrorReport(error)), nil)
                        }
                    }
                }
                var reports = jobs.map { ThumbnailFileReport(path: $0.path, status: "cancelled", images: [], error: nil) }
                var sections = [ContactSheet.Section?](repeating: nil, count: jobs.count)
                for await (i, report, section) in group {
                    reports[i] = report
                    sections[i] = section
                    if !json { Console.err(report.line + "\n") }
                }
                return (reports, sections)
            }
        }
        // A signal stops the work: images made so far stay, and the summary lists them.
        SignalWatcher.shared.onSignal { _ in work.cancel() }
        let (reports, sections) = await work.value

        var summary = ThumbnailSummary(
            files: reports, elapsed: 0, maxConcurrentSessions: maxSessions,
            peakConcurrentSessions: await coordinator.peakConcurrentSessions)
        if overview, SignalWatcher.shared.received == nil {
            do throws(PlayheadError) {
                summary.overview = try await sheets.writeOverview(sections, into: output)
            } catch {
                summary.overviewError = ErrorReport(error)
                if !json { Console.err("overview  failed  [\(error.code)] \(error.message)\n") }
            }
        }
        summary.state = RunState.atTheEnd
        summary.signal = RunState.signalName
        summary.elapsed = (ContinuousClock.now - start).inSeconds
        try await output.writeSummary(summary)
        if json { try JSONOutput.write(summary) }
        let failed =
            summary.overviewError != nil
            || reports.contains { $0.status != "completed" || $0.sheetError != nil || $0.images.contains { $0.error != nil } }
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
            plan: TimePlan(count: count, every: every, at: at), tolerance: tolerance, size: size, format: format,
            sheets: SheetSettings(perFile: sheet, overview: false, format: (sheetFormat ?? .png).format, columns: sheetColumns, cell: size),
            strict: strict,
            skipBlank: skipBlank, subtitles: subtitles?.burnIn)
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
            let failed = report.status != "completed" || report.sheetError != nil || report.images.contains { $0.error != nil }
            return .init(report: report, failed: failed, stopped: stopped)
        }
        try await output.writeSummary(tally)
        if let exit = CommandExit.status(failed: tally.failed > 0) { throw exit }
    }

    var sheetSettings: SheetSettings {
        SheetSettings(perFile: sheet, overview: overview, format: (sheetFormat ?? .png).format, columns: sheetColumns, cell: size)
    }

    /// A file's sheet, and the overview, of at most `times` pictures a file fit the limits (the
    /// library's own measure of a sheet: spacing and headings included).
    func checkSheets(times: Int) throws {
        let settings = sheetSettings
        do throws(PlayheadError) {
            if sheet {
                _ = try ContactSheet.size(
                    columns: settings.fileColumns(count: times), cellSize: size, cellCounts: [times], detailLines: 2, headings: .large)
            }
            if overview {
                _ = try ContactSheet.size(
                    columns: sheetColumns ?? max(1, times), cellSize: size, cellCounts: Array(repeating: times, count: paths.count),
                    detailLines: 1, headings: .compact)
            }
        } catch {
            let option = sheet ? "--sheet" : "--overview"
            throw ValidationError(
                "\(option) with \(times) pictures of \(size) a file would be too large (at most \(ContactSheet.maximumSide) pixels a side and "
                    + "\(ContactSheet.maximumPixels) in all): take fewer times, a smaller --size or other --sheet-columns")
        }
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
