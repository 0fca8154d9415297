import Foundation
import Playhead
import PlayheadRunFolder

/// What `thumbnails` draws besides the images: a sheet per file (`--sheet`, beside its images)
/// and an overview of every file (`--overview`, one row per file headed by its name).
struct SheetSettings: Sendable {
    var perFile = false
    var overview = false
    var format = ContactSheet.Format.png
    /// `--sheet-columns`; nil: 4 (fewer for fewer times) on a file's sheet, one row per file on the overview.
    var columns: Int?
    var cell: PixelSize

    var wanted: Bool { perFile || overview }

    /// The columns of a file's sheet of `count` pictures.
    func fileColumns(count: Int) -> Int { columns ?? min(4, max(1, count)) }

    /// The file name of a file's sheet.
    var fileName: String { OutputNames.sheet(format.fileExtension) }

    /// The title of a file's section: its file name (of a URL, the last part of its path, without
    /// the query), or what is read when it has none.
    static func title(of source: String) -> String {
        if source == "-" { return "standard input" }
        let shown = SourceRedaction.redacted(source)
        // A URL has `://`; a file may be named `take:2.mp4`.
        if shown.contains("://"), let url = URL(string: shown), url.scheme != nil, url.scheme != "file" {
            let last = url.lastPathComponent
            return last.isEmpty || last == "/" ? shown : last
        }
        let last = URL(fileURLWithPath: shown).lastPathComponent
        return last.isEmpty ? shown : last
    }

    /// Draws a file's sheet and writes it as `folder/sheet.png|jpg`.
    /// - Returns: the sheet's path.
    func writeFileSheet(_ section: ContactSheet.Section, into folder: String) async throws(PlayheadError) -> String {
        let sheet = ContactSheet(sections: [section], columns: fileColumns(count: section.cells.count), cellSize: cell)
        let path = folder + "/" + fileName
        try await sheet.write(to: path, as: format)
        return path
    }

    /// Draws the overview of `sections` (nil: a file stopped before it had one) and writes
    /// `overview.png|jpg` into the run's folder.
    /// - Returns: the overview's path.
    func writeOverview(_ sections: [ContactSheet.Section?], into output: RunOutput) async throws(PlayheadError) -> String {
        let shown = sections.compactMap { $0 }
        let columns = columns ?? max(1, shown.map(\.cells.count).max() ?? 1)
        var sheet = ContactSheet(sections: shown, columns: columns, cellSize: cell)
        sheet.headings = .compact
        let bytes = try await sheet.encoded(as: format)
        return try await output.folder.writeFile("overview." + format.fileExtension, bytes: bytes)
    }
}
