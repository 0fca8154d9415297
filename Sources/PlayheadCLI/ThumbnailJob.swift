import Foundation
import Playhead
import PlayheadRunFolder

/// One file of a `thumbnails` run: its images written as they come (never all held at once);
/// with a sheet or the overview, the pictures kept at cell size for them, and the file's sheet
/// drawn once its images are made.
struct ThumbnailJob: Sendable {
    struct Settings: Sendable {
        var plan: TimePlan
        var tolerance: MediaTime?
        var size: PixelSize
        var format: ThumbnailsCommand.ImageFormat
        var sheets: SheetSettings
        var strict = false
        /// Move a picture off a blank frame (`--skip-blank`).
        var skipBlank = false
        /// Subtitles drawn into each image (`--subtitles`).
        var subtitles: SubtitleBurnIn?
    }

    var job: PlayJob
    var asset: Asset
    /// The file's folder, claimed for this run (or why it could not be).
    var claim: Result<String, PlayheadError>
    var settings: Settings
    var output: RunOutput

    func run() async -> (ThumbnailFileReport, ContactSheet.Section?) {
        let folder: String
        switch claim {
        case .success(let path): folder = path
        case .failure(let error): return (failed(error), nil)
        }
        let duration: MediaTime, startTime: MediaTime
        do throws(PlayheadError) {
            let (container, start, tracks) = try await asset.load(.duration, .startTime, .tracks)
            // The picture's span, where the images are: sound or subtitles that outlast it do not
            // spread the times past its end.
            duration = Self.pictureSpan(tracks, start: start) ?? container
            startTime = start
        } catch {
            await output.folder.removeIfEmpty(job.folderName)
            // Stopped while loading (a signal): cancelled, not failed — a resumed run redoes it.
            if error.code == .cancelled || Task.isCancelled {
                return (ThumbnailFileReport(path: job.path, status: "cancelled", images: [], error: ErrorReport(error)), nil)
            }
            return (failed(error), nil)
        }
        guard duration.isNumeric || settings.plan.at != nil else {
            await output.folder.removeIfEmpty(job.folderName)
            return (
                failed(
                    PlayheadError(
                        code: .invalidArgument,
                        message: "the duration is unknown (the container does not say), so --count and --every have no times: give --at times",
                        file: job.path)), nil
            )
        }
        if settings.plan.timeCount(duration: duration) > Limits.timesPerFile {
            // Checked up front for files given as arguments; a manifest's are checked here, alone.
            await output.folder.removeIfEmpty(job.folderName)
            return (
                failed(
                    PlayheadError(
                        code: .invalidArgument,
                        message:
                            "--every \(settings.plan.every ?? 0) would take more than \(Limits.timesPerFile) times of this file (\(duration.seconds) s)",
                        file: job.path)), nil
            )
        }
        // The command's times count from the start of the clip, as ffmpeg's -ss does: a transport
        // stream or HLS playlist whose timestamps begin at 1.46 s shows its first frame at 0.
        // The library takes the file's own timestamps.
        let origin = startTime.isNumeric ? startTime : .zero
        let times = settings.plan.times(duration: duration).map { $0 + origin }
        var generator = AssetImageGenerator(asset: asset)
        generator.maximumSize = settings.size
        generator.strict = settings.strict
        generator.subtitles = settings.subtitles
        if let tolerance = settings.tolerance {
            generator.requestedTimeToleranceBefore = tolerance
            generator.requestedTimeToleranceAfter = tolerance
        }
        if settings.skipBlank { generator.blankFrameSearchLimit = Self.blankSearchLimit(count: times.count, duration: duration) }
        var cells: [ContactSheet.Cell]? = settings.sheets.wanted ? [] : nil
        var images: [ThumbnailImageReport] = []
        images.reserveCapacity(times.count)
        var damage = (count: 0, first: PlayheadError?.none)
        for await result in generator.images(for: times) {
            damage.count += result.damagedPackets
            damage.first = damage.first ?? result.firstDamage
            let number = images.count + 1
            var report = ThumbnailImageReport(
                requestedTime: (result.requestedTime - origin).jsonSeconds, actualTime: result.actualTime.flatMap { ($0 - origin).jsonSeconds })
            report.movedFromBlank = result.blankFrameTime.flatMap { ($0 - origin).jsonSeconds }
            if result.isBlank { report.blank = true }
            if let image = result.image {
                let path = folder + "/" + OutputNames.thumbnail(number: number, fileExtension: settings.format.rawValue)
                do throws(PlayheadError) {
                    try await image.write(to: path, as: settings.format.format)
                    report.path = path
                    let label = ContactSheet.timeLabel((result.actualTime ?? result.requestedTime) - origin, duration: duration)
                    cells?.append(ContactSheet.Cell(image: image, label: label))
                } catch {
                    report.error = ErrorReport(error)
                    cells?.append(ContactSheet.Cell(failure: error.message, label: nil))
                }
            } else {
                report.error = result.error.map(ErrorReport.init)
                let label = ContactSheet.timeLabel(result.requestedTime - origin, duration: duration)
                cells?.append(ContactSheet.Cell(failure: result.error?.message ?? "no image", label: label))
            }
            images.append(report)
        }
        await output.folder.sync(folder)
        if Task.isCancelled || images.count < times.count {
            if images.allSatisfy({ $0.path == nil }) { await output.folder.removeIfEmpty(job.folderName) }
            return (
                ThumbnailFileReport(
                    path: job.path, status: "cancelled", images: images,
                    error: ErrorReport(PlayheadError(code: .cancelled, message: "cancelled", file: job.path))), nil
            )
        }
        // A file whose every image failed for the same reason failed as a whole (not media, …).
        if !images.isEmpty, images.allSatisfy({ $0.error != nil }), let first = images.first?.error,
            images.allSatisfy({ $0.error?.code == first.code }), first.code != "state.invalidArgument"
        {
            await output.folder.removeIfEmpty(job.folderName)
            var failed = ThumbnailFileReport(path: job.path, status: "failed", images: images, error: first)
            failed.damagedPackets = damage.count
            failed.firstDamage = damage.first.map(ErrorReport.init)
            return (failed, nil)
        }
        if images.allSatisfy({ $0.path == nil }) { await output.folder.removeIfEmpty(job.folderName) }
        var report = ThumbnailFileReport(path: job.path, status: "completed", images: images, error: nil)
        report.damagedPackets = damage.count
        report.firstDamage = damage.first.map(ErrorReport.init)
        guard let cells else { return (report, nil) }
        let details = (try? await ContactSheet.Section.details(of: asset)) ?? []
        let section = ContactSheet.Section(title: SheetSettings.title(of: job.path), details: details, cells: cells)
        // A file's sheet beside its images (when it has any: a folder of none is removed).
        if settings.sheets.perFile, images.contains(where: { $0.path != nil }) {
            do throws(PlayheadError) {
                report.sheet = try await settings.sheets.writeFileSheet(section, into: folder)
            } catch {
                report.sheetError = ErrorReport(error)
            }
        }
        // The overview shows one line of facts a file; without it, the pictures are let go now.
        guard settings.sheets.overview else { return (report, nil) }
        var row = section
        row.details = Array(details.prefix(1))
        return (report, row)
    }

    /// How long the picture lasts from the asset's start: the latest end of its video tracks,
    /// when they say; nil when none does.
    static func pictureSpan(_ tracks: [AssetTrack], start: MediaTime) -> MediaTime? {
        let ends = tracks.filter { $0.playsAsVideo && $0.isPlayable }.map(\.timeRange.end).filter { $0.isNumeric }
        guard let end = ends.max(), end > start else { return nil }
        return end - (start.isNumeric ? start : .zero)
    }

    /// How far a picture may move off a blank frame: half the times' average spacing over the
    /// clip (its duration over their number), at most 5 s — so that pictures keep their spread.
    static func blankSearchLimit(count: Int, duration: MediaTime) -> MediaTime {
        guard duration.isNumeric, duration.seconds > 0 else { return MediaTime(value: 5, timescale: 1) }
        return MediaTime(seconds: min(5, duration.seconds / Double(max(1, count)) / 2))
    }

    /// A file's part of the overview when the file failed as a whole.
    static func failedSection(_ report: ThumbnailFileReport, source: String) -> ContactSheet.Section? {
        guard report.status == "failed", let error = report.error else { return nil }
        return ContactSheet.Section(title: SheetSettings.title(of: source), cells: [], failure: "[\(error.code)] \(error.reason)")
    }

    private func failed(_ error: PlayheadError) -> ThumbnailFileReport {
        ThumbnailFileReport(path: job.path, status: "failed", images: [], error: ErrorReport(error))
    }
}

struct ThumbnailImageReport: Encodable, Sendable {
    var requestedTime: Double?
    var actualTime: Double?
    var path: String?
    var error: ErrorReport?
    /// `--skip-blank`: the time of the blank frame this picture moved from.
    var movedFromBlank: Double?
    /// `--skip-blank`: the picture is still blank (no frame that is not within the search).
    var blank: Bool?
}

struct ThumbnailFileReport: Encodable, Sendable {
    var path: String
    var status: String
    var images: [ThumbnailImageReport]
    var error: ErrorReport?
    /// Damaged packets decoded past while the images were looked for (`--strict` fails them).
    var damagedPackets = 0
    var firstDamage: ErrorReport?
    /// The file's contact sheet (`--sheet`), or why it could not be drawn.
    var sheet: String?
    var sheetError: ErrorReport?

    init(path: String, status: String, images: [ThumbnailImageReport], error: ErrorReport?) {
        self.path = SourceRedaction.redacted(path)
        self.status = status
        self.images = images
        self.error = error
    }

    /// A file not done yet.
    init(running path: String) {
        self.init(path: path, status: "running", images: [], error: nil)
    }

    var line: String {
        let made = images.filter { $0.path != nil }.count
        var text = "\(Console.name(path))  \(status)  \(made) of \(images.count) images"
        if let error { text += "  [\(error.code)] \(error.reason)" }
        if damagedPackets > 0 { text += ", \(damagedPackets) damaged packet(s) decoded past" }
        let moved = images.filter { $0.movedFromBlank != nil }.count
        if moved > 0 { text += ", \(moved) moved off a blank frame" }
        if let sheetError { text += "; sheet failed: [\(sheetError.code)] \(sheetError.reason)" }
        return text
    }
}

struct ThumbnailSummary: Encodable {
    /// `running` while the run goes on; `finished`, or `cancelled` (with the signal) at the end.
    var state = RunState.finished
    var signal: String?
    var files: [ThumbnailFileReport]
    /// The overview (`--overview`), or why it could not be written.
    var overview: String?
    var overviewError: ErrorReport?
    var elapsed: Double
    var maxConcurrentSessions: Int
    var peakConcurrentSessions: Int

    init(files: [ThumbnailFileReport], elapsed: Double, maxConcurrentSessions: Int, peakConcurrentSessions: Int) {
        self.files = files
        self.elapsed = elapsed
        self.maxConcurrentSessions = maxConcurrentSessions
        self.peakConcurrentSessions = peakConcurrentSessions
    }
}
