import Foundation
import Playhead

/// One file of a `thumbnails` run.
struct ThumbnailJob: Sendable {
    var job: PlayJob
    var plan: TimePlan
    var tolerance: MediaTime?
    var size: PixelSize
    var format: ThumbnailsCommand.ImageFormat

    func run() async -> ThumbnailFileReport {
        let asset = Asset(url: MediaLocation.url(for: job.path))
        let duration: MediaTime
        do {
            duration = try await asset.load(.duration)
        } catch {
            return ThumbnailFileReport(path: job.path, status: "failed", images: [], error: ErrorReport(error), cells: nil)
        }
        guard duration.isNumeric || plan.at != nil else {
            let error = PlayheadError(code: .invalidArgument,
                                      message: "the duration is unknown (the container does not say), so --count and --every have no times: give --at times",
                                      file: job.path)
            return ThumbnailFileReport(path: job.path, status: "failed", images: [], error: ErrorReport(error), cells: nil)
        }
        let folder = job.outDirectory.appendingPathComponent(job.folderName)
        try? FileManager.default.removeItem(at: folder)
        var generator = AssetImageGenerator(asset: asset)
        generator.maximumSize = size
        if let tolerance {
            generator.requestedTimeToleranceBefore = tolerance
            generator.requestedTimeToleranceAfter = tolerance
        }
        var images: [ThumbnailImageReport] = []
        var cells: [GeneratedImage?] = []
        var number = 0
        for await result in generator.images(for: plan.times(duration: duration)) {
            number += 1
            var report = ThumbnailImageReport(requestedTime: result.requestedTime.jsonSeconds, actualTime: result.actualTime?.jsonSeconds)
            if let image = result.image {
                let name = String(format: "thumb-%04d.%@", number, format.rawValue)
                let url = folder.appendingPathComponent(name)
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let bytes = try image.encoded(as: format.format)
                    try Data(bytes).write(to: url, options: .atomic)
                    report.path = url.path
                    cells.append(image)
                } catch let error as PlayheadError {
                    report.error = ErrorReport(error)
                    cells.append(nil)
                } catch {
                    report.error = ErrorReport(PlayheadError(code: .writeFailed, message: "\(url.path): \(error.localizedDescription)", file: job.path))
                    cells.append(nil)
                }
            } else {
                report.error = result.error.map(ErrorReport.init)
                cells.append(nil)
            }
            images.append(report)
        }
        // A file whose every image failed for the same reason failed as a whole (not media, …).
        if !images.isEmpty, images.allSatisfy({ $0.error != nil }), let first = images.first?.error,
           images.allSatisfy({ $0.error?.code == first.code }), first.code != "state.invalidArgument" {
            return ThumbnailFileReport(path: job.path, status: "failed", images: images, error: first, cells: nil)
        }
        return ThumbnailFileReport(path: job.path, status: "completed", images: images, error: nil, cells: cells)
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
    /// The sheet's row: an image per cell (nil: failed image); nil for a failed file.
    var cells: [GeneratedImage?]?

    enum CodingKeys: String, CodingKey { case path, status, images, error }

    var line: String {
        let made = images.filter { $0.error == nil }.count
        var text = "\(path)  \(status)  \(made) of \(images.count) images"
        if let error { text += "  [\(error.code)] \(error.reason)" }
        return text
    }
}

struct ThumbnailSummary: Encodable {
    var files: [ThumbnailFileReport]
    var sheet: String?
    var elapsed: Double
    var maxConcurrentSessions: Int
    var peakConcurrentSessions: Int

    /// Written under a temporary name and renamed, so a reader never sees half a summary.
    func write(to url: URL) throws {
        try JSONOutput.save(self, to: url)
    }
}

/// The contact sheet: a row per file, a cell per time, each image centered in its cell on black;
/// a failed file's row, and a failed image's cell, mid-gray.
struct ContactSheet {
    var cell: PixelSize
    var rows: [[GeneratedImage?]?]

    var image: GeneratedImage {
        let columns = max(1, rows.map { $0?.count ?? 0 }.max() ?? 1)
        var sheet = GeneratedImage(size: PixelSize(width: columns * cell.width, height: max(1, rows.count) * cell.height), gray: 0)
        let gray = GeneratedImage(size: cell, gray: 128)
        for (r, row) in rows.enumerated() {
            for c in 0..<columns {
                let x = c * cell.width, y = r * cell.height
                guard let row else { sheet.draw(gray, atX: x, y: y); continue }
                guard c < row.count else { continue }
                guard let image = row[c] else { sheet.draw(gray, atX: x, y: y); continue }
                sheet.draw(image, atX: x + (cell.width - image.size.width) / 2, y: y + (cell.height - image.size.height) / 2)
            }
        }
        return sheet
    }
}
