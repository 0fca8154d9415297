import Foundation
import Playhead

/// One file of a `thumbnails` run: its images written as they come (never all held at once), and
/// its row of the contact sheet drawn as they come.
struct ThumbnailJob: Sendable {
    struct Settings: Sendable {
        var plan: TimePlan
        var tolerance: MediaTime?
        var size: PixelSize
        var format: ThumbnailsCommand.ImageFormat
        var sheet: Bool
        var strict = false
    }

    var job: PlayJob
    var asset: Asset
    /// The file's folder, claimed for this run (or why it could not be).
    var claim: Result<String, PlayheadError>
    var settings: Settings
    var output: RunOutput

    func run() async -> (ThumbnailFileReport, ContactRow?) {
        let folder: String
        switch claim {
        case .success(let path): folder = path
        case .failure(let error): return (failed(error), nil)
        }
        let duration: MediaTime, startTime: MediaTime
        do throws(PlayheadError) {
            (duration, startTime) = try await asset.load(.duration, .startTime)
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
        if let tolerance = settings.tolerance {
            generator.requestedTimeToleranceBefore = tolerance
            generator.requestedTimeToleranceAfter = tolerance
        }
        var row = settings.sheet ? ContactRow(cells: times.count, cell: settings.size) : nil
        var images: [ThumbnailImageReport] = []
        images.reserveCapacity(times.count)
        var damage = (count: 0, first: PlayheadError?.none)
        for await result in generator.images(for: times) {
            damage.count += result.damagedPackets
            damage.first = damage.first ?? result.firstDamage
            let number = images.count + 1
            var report = ThumbnailImageReport(
                requestedTime: (result.requestedTime - origin).jsonSeconds, actualTime: result.actualTime.flatMap { ($0 - origin).jsonSeconds })
            if let image = result.image {
                let path = folder + "/" + String(format: "thumb-%04d.%@", number, settings.format.rawValue)
                do throws(PlayheadError) {
                    try await image.write(to: path, as: settings.format.format)
                    report.path = path
                    row?.draw(image, at: number - 1)
                } catch {
                    report.error = ErrorReport(error)
                }
            } else {
                report.error = result.error.map(ErrorReport.init)
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
            return (ThumbnailFileReport(path: job.path, status: "failed", images: images, error: first), nil)
        }
        if images.allSatisfy({ $0.path == nil }) { await output.folder.removeIfEmpty(job.folderName) }
        var report = ThumbnailFileReport(path: job.path, status: "completed", images: images, error: nil)
        report.damagedPackets = damage.count
        report.firstDamage = damage.first.map(ErrorReport.init)
        return (report, row)
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
}

struct ThumbnailFileReport: Encodable, Sendable {
    var path: String
    var status: String
    var images: [ThumbnailImageReport]
    var error: ErrorReport?
    /// Damaged packets decoded past while the images were looked for (`--strict` fails them).
    var damagedPackets = 0
    var firstDamage: ErrorReport?

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
        return text
    }
}

struct ThumbnailSummary: Encodable {
    /// `running` while the run goes on; `finished`, or `cancelled` (with the signal) at the end.
    var state = RunState.finished
    var signal: String?
    var files: [ThumbnailFileReport]
    var sheet: String?
    /// Why the sheet could not be written.
    var sheetError: ErrorReport?
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
