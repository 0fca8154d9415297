import Playhead

/// One file's row of the contact sheet, drawn as its images come: a cell per time, each image
/// centered in its cell on black; a failed image's cell mid-gray.
struct ContactRow: Sendable {
    let cell: PixelSize
    let cells: Int
    private(set) var image: GeneratedImage
    private var drawn: [Bool]

    init(cells: Int, cell: PixelSize) {
        self.cell = cell
        self.cells = cells
        image = GeneratedImage(size: PixelSize(width: max(1, cells) * cell.width, height: cell.height), gray: 0)
        drawn = [Bool](repeating: false, count: cells)
    }

    mutating func draw(_ picture: GeneratedImage, at index: Int) {
        guard index < cells else { return }
        image.draw(picture, atX: index * cell.width + (cell.width - picture.size.width) / 2, y: (cell.height - picture.size.height) / 2)
        drawn[index] = true
    }

    /// Cells that got no image turn gray.
    mutating func finish() {
        let gray = GeneratedImage(size: cell, gray: 128)
        for index in drawn.indices where !drawn[index] { image.draw(gray, atX: index * cell.width, y: 0) }
    }
}

/// The contact sheet: the files' rows one under another; a failed file's row mid-gray.
struct ContactSheet {
    var cell: PixelSize
    var rows: [ContactRow?]

    /// Draws the sheet, encodes it as PNG and writes `sheet.png` (on worker threads). The rows are
    /// consumed as they are copied in.
    func write(into output: RunOutput) async throws(PlayheadError) -> String {
        let cell = self.cell
        let rows = self.rows
        let bytes = try await WorkerPool.shared.value("playhead.sheet") { () throws(PlayheadError) -> [UInt8] in
            let columns = max(1, rows.map { $0?.cells ?? 0 }.max() ?? 1)
            var sheet = GeneratedImage(size: PixelSize(width: columns * cell.width, height: max(1, rows.count) * cell.height), gray: 0)
            let gray = GeneratedImage(size: PixelSize(width: columns * cell.width, height: cell.height), gray: 128)
            for (r, row) in rows.enumerated() {
                if var row {
                    row.finish()
                    sheet.draw(row.image, atX: 0, y: r * cell.height)
                } else {
                    sheet.draw(gray, atX: 0, y: r * cell.height)
                }
            }
            return try sheet.encoded(as: .png)
        }
        return try await output.folder.writeFile("sheet.png", bytes: bytes)
    }
}
