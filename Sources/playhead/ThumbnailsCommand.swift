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

    @Option(help: "N times per file, at (i + 0.5) × duration / N.")
    var count: Int?

    @Option(help: "A time every SECONDS, from 0.")
    var every: Double?

    @Option(help: "Times in seconds, comma-separated.", transform: ThumbnailsCommand.parseTimes)
    var at: [Double]?

    @Flag(help: "The frame showing at each time (the default).")
    var exact = false

    @Option(help: "Accept the keyframe nearest each time within SECONDS either side (faster).")
    var tolerance: Double?

    @Option(help: "Image (and sheet cell) size WxH; images fit inside it.", transform: PlayCommand.parseSize)
    var size: PixelSize = PixelSize(width: 160, height: 90)

    @Option(help: "Image format: png or ppm.")
    var format: ImageFormat = .png

    @Flag(help: "Also draw DIR/sheet.png.")
    var sheet = false

    @Option(name: .customLong("max-sessions"), help: "Files worked on at once.")
    var maxSessions: Int = 4

    @Flag(help: "Print the summary as JSON on standard output.")
    var json = false

    @Argument(help: "Media files or URLs.")
    var paths: [String]

    enum ImageFormat: String, ExpressibleByArgument, CaseIterable {
        case png, ppm
        var format: ImageSequenceSink.Format { self == .png ? .png : .ppm }
    }

    static func parseTimes(_ text: String) throws -> [Double] {
        let times = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !times.isEmpty, times.allSatisfy({ $0 != nil && $0!.isFinite }) else {
            throw ValidationError("--at takes seconds separated by commas, like 1,2.5,10")
        }
        return times.map { $0! }
    }

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file") }
        if [count != nil, every != nil, at != nil].filter({ $0 }).count != 1 {
            throw ValidationError("give exactly one of --count, --every, --at")
        }
        if let count, count < 1 || count > 10_000 { throw ValidationError("--count must be 1 … 10000") }
        if let every, !(every > 0) { throw ValidationError("--every must be positive") }
        if exact, tolerance != nil { throw ValidationError("--exact and --tolerance exclude each other") }
        if let tolerance, !(tolerance > 0) { throw ValidationError("--tolerance must be positive") }
        if maxSessions < 1 { throw ValidationError("--max-sessions must be at least 1") }
    }

    func run() async throws {
        let outURL = try JSONOutput.outputFolder(out)
        let start = ContinuousClock.now
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: maxSessions)
        let jobs = paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element, outDirectory: outURL) }
        let plan = TimePlan(count: count, every: every, at: at)
        let tolerance = self.tolerance.map { MediaTime(seconds: $0) }
        let size = self.size, format = self.format

        let reports = await withTaskGroup(of: (Int, ThumbnailFileReport).self) { group in
            for (i, job) in jobs.enumerated() {
                group.addTask {
                    let report: ThumbnailFileReport
                    do throws(PlayheadError) {
                        report = try await coordinator.withSlot {
                            await ThumbnailJob(job: job, plan: plan, tolerance: tolerance, size: size, format: format).run()
                        }
                    } catch {
                        report = ThumbnailFileReport(path: job.path, status: "cancelled", images: [], error: ErrorReport(error), cells: nil)
                    }
                    return (i, report)
                }
            }
            var reports = [ThumbnailFileReport?](repeating: nil, count: jobs.count)
            for await (i, report) in group {
                reports[i] = report
                if !json { FileHandle.standardError.write(Data((report.line + "\n").utf8)) }
            }
            return reports.map { $0! }
        }

        var sheetPath: String?
        if sheet {
            let url = outURL.appendingPathComponent("sheet.png")
            try ContactSheet(cell: size, rows: reports.map(\.cells)).image.encoded(as: .png).withUnsafeBufferPointer { try Data(buffer: $0).write(to: url, options: .atomic) }
            sheetPath = url.path
        }
        let summary = ThumbnailSummary(files: reports, sheet: sheetPath, elapsed: (ContinuousClock.now - start).inSeconds,
                                       maxConcurrentSessions: maxSessions, peakConcurrentSessions: await coordinator.peakConcurrentSessions)
        try summary.write(to: outURL.appendingPathComponent("summary.json"))
        if json { try JSONOutput.write(summary) }
        if reports.contains(where: { $0.status != "completed" || $0.images.contains { $0.error != nil } }) {
            throw ExitCode.someFilesFailed
        }
    }
}

/// Which times to take, per file.
struct TimePlan: Sendable {
    var count: Int?
    var every: Double?
    var at: [Double]?

    func times(duration: MediaTime) -> [MediaTime] {
        if let count {
            return (0..<count).map { MediaTime(seconds: (Double($0) + 0.5) * duration.seconds / Double(count)) }
        }
        if let every {
            let end = duration.isNumeric ? duration.seconds : every
            return stride(from: 0.0, to: end, by: every).map { MediaTime(seconds: $0) }
        }
        return (at ?? []).sorted().map { MediaTime(seconds: $0) }
    }
}
