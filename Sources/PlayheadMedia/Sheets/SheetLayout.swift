/// Where everything on a contact sheet goes: the sheet's size, the rectangles filled, the
/// pictures placed and the texts drawn. Pure arithmetic on the sheet's description (no FFmpeg),
/// so that what lands where is tested alone.
struct SheetLayout: Hashable {
    /// One text to draw.
    struct Text: Hashable {
        enum Anchor: Hashable {
            /// `(x, y)` is the text's top-left corner.
            case topLeft
            /// `(x, y)` is its bottom-right corner.
            case bottomRight
        }
        var text: String
        var x: Int
        var y: Int
        var size: Int
        var bold = false
        /// Drawn on a shaded box, to read on any picture.
        var boxed = false
        var anchor = Anchor.topLeft
    }

    /// One picture: which cell of which section, and its top-left corner.
    struct Placement: Hashable {
        var section: Int
        var cell: Int
        var x: Int
        var y: Int
    }

    var size: PixelSize
    /// Filled black under pictures (their bars).
    var frames: [PixelRect] = []
    /// Filled gray: failed cells and failed files.
    var failures: [PixelRect] = []
    var placements: [Placement] = []
    var texts: [Text] = []

    /// The sizes of the fonts, in pixels.
    struct Fonts: Hashable {
        var label: Int
        var title: Int
        var detail: Int
    }

    static var maximumSide: Int { ContactSheet.maximumSide }
    static var maximumPixels: Int { ContactSheet.maximumPixels }

    /// What the size of a sheet depends on: its grid, its headings and each section's lines and cells.
    struct Shape {
        var columns: Int
        var cell: PixelSize
        var spacing: Int
        var labelFontSize: Int?
        var compact: Bool
        /// Per section: its detail lines, its cells, and whether it is drawn as a failed file.
        var sections: [(details: Int, cells: Int, failed: Bool)]

        init(_ sheet: ContactSheet) {
            columns = sheet.columns
            cell = sheet.cellSize
            spacing = max(0, sheet.spacing)
            labelFontSize = sheet.labelFontSize
            compact = sheet.headings.map { $0 == .compact } ?? (sheet.sections.count > 1)
            sections = sheet.sections.map { ($0.details.count, $0.cells.count, $0.failure != nil && $0.cells.isEmpty) }
        }
    }

    /// The sheet's width and the sizes of its fonts, once the grid is known to fit.
    static func grid(_ shape: Shape) throws(PlayheadError) -> (width: Int, fonts: Fonts, title: Int, detail: Int) {
        let cell = shape.cell, columns = shape.columns, spacing = shape.spacing
        guard columns >= 1, cell.width >= 1, cell.height >= 1 else {
            throw PlayheadError(
                code: .invalidArgument, message: "a contact sheet needs at least one column and cells of at least 1x1 (got \(columns) of \(cell))",
                file: "contact sheet")
        }
        // Every part within a side first, so that no sum or product below can overflow.
        guard spacing <= maximumSide, cell.width <= maximumSide, cell.height <= maximumSide, columns <= maximumSide else {
            throw tooLarge(columns: columns, cell: cell)
        }
        let rowWidth = columns * (cell.width + spacing)
        guard rowWidth + spacing <= maximumSide else { throw tooLarge(columns: columns, cell: cell) }
        let width = rowWidth + spacing
        let fonts = Self.fonts(labelFontSize: shape.labelFontSize, cell: cell, width: width)
        return (width, fonts, shape.compact ? fonts.label + fonts.label / 3 : fonts.title, shape.compact ? fonts.label : fonts.detail)
    }

    /// The size of a sheet of `shape`: the one measure both the layout and a caller checking
    /// ahead (``ContactSheet/size(columns:cellSize:cellCounts:detailLines:compact:)``) use.
    static func size(_ shape: Shape) throws(PlayheadError) -> PixelSize {
        let (width, _, title, detail) = try grid(shape)
        var height = shape.spacing
        let (_, fonts, _, _) = try grid(shape)
        for section in shape.sections {
            // Counts a caller gives (cells, detail lines) may be anything: each part is checked
            // against a side before it is added.
            guard section.cells >= 0, section.details >= 0, section.details <= maximumSide else {
                throw PlayheadError(
                    code: .invalidArgument, message: "a section of \(section.cells) cells and \(section.details) detail lines cannot be drawn",
                    file: "contact sheet")
            }
            let rows = section.cells / shape.columns + (section.cells % shape.columns == 0 ? 0 : 1)
            guard rows <= maximumSide else { throw tooLarge(columns: shape.columns, cell: shape.cell) }
            let cells = section.failed ? failedBand(cell: shape.cell, fonts: fonts) + shape.spacing : rows * (shape.cell.height + shape.spacing)
            height += lineHeight(title) + section.details * lineHeight(detail) + shape.spacing / 2
            guard cells <= maximumSide, height <= maximumSide else { throw tooLarge(columns: shape.columns, cell: shape.cell) }
            height += cells
        }
        guard height <= maximumSide, width * max(height, 1) <= maximumPixels else { throw tooLarge(columns: shape.columns, cell: shape.cell) }
        return PixelSize(width: width, height: max(height, 1))
    }

    /// The layout of `sheet`, each picture of `pictureSizes[section][cell]` (already fitted in its cell).
    init(sheet: ContactSheet, pictureSizes: [[PixelSize?]]) throws(PlayheadError) {
        let shape = Shape(sheet)
        size = try Self.size(shape)
        let (width, fonts, titleSize, detailSize) = try Self.grid(shape)
        let cell = shape.cell, columns = shape.columns, spacing = shape.spacing
        let textWidth = width - 2 * spacing
        var y = spacing
        var texts: [Text] = []
        for (s, section) in sheet.sections.enumerated() {
            texts.append(
                Text(text: Self.fitted(section.title, width: textWidth, size: titleSize, bold: true), x: spacing, y: y, size: titleSize, bold: true))
            y += Self.lineHeight(titleSize)
            for line in section.details {
                texts.append(Text(text: Self.cut(line, width: textWidth, size: detailSize), x: spacing, y: y, size: detailSize))
                y += Self.lineHeight(detailSize)
            }
            y += spacing / 2
            if let failure = section.failure, section.cells.isEmpty {
                let band = Self.failedBand(cell: cell, fonts: fonts)
                failures.append(PixelRect(x: spacing, y: y, width: textWidth, height: band))
                let lines = Self.wrapped("failed: " + failure, width: textWidth - 2 * fonts.label, height: band - fonts.label / 2, size: fonts.label)
                texts.append(Text(text: lines, x: spacing + fonts.label, y: y + fonts.label / 4, size: fonts.label))
                y += band + spacing
                continue
            }
            for (c, content) in section.cells.enumerated() {
                let x = spacing + (c % columns) * (cell.width + spacing)
                let top = y + (c / columns) * (cell.height + spacing)
                let margin = max(2, fonts.label / 3)
                if let picture = pictureSizes[s][c] {
                    frames.append(PixelRect(x: x, y: top, width: cell.width, height: cell.height))
                    let px = x + (cell.width - picture.width) / 2, py = top + (cell.height - picture.height) / 2
                    placements.append(Placement(section: s, cell: c, x: px, y: py))
                    // A label that does not fit its picture is left out rather than cut or spilled.
                    if let label = content.label, label.count <= Self.characters(width: picture.width - 2 * margin, size: fonts.label),
                        fonts.label + 2 * margin <= picture.height
                    {
                        texts.append(
                            Text(
                                text: label, x: px + picture.width - margin, y: py + picture.height - margin, size: fonts.label, boxed: true,
                                anchor: .bottomRight))
                    }
                } else {
                    failures.append(PixelRect(x: x, y: top, width: cell.width, height: cell.height))
                    let reason = [content.label, "no image: " + (content.failure ?? "failed")].compactMap { $0 }.joined(separator: "\n")
                    let lines = Self.wrapped(reason, width: cell.width - 2 * margin, height: cell.height - 2 * margin, size: fonts.label)
                    if !lines.isEmpty { texts.append(Text(text: lines, x: x + margin, y: top + margin, size: fonts.label)) }
                }
            }
            let rows = (section.cells.count + columns - 1) / columns
            y += rows * (cell.height + spacing)
        }
        self.texts = texts
    }

    private static func tooLarge(columns: Int, cell: PixelSize) -> PlayheadError {
        PlayheadError(
            code: .invalidArgument,
            message:
                "a contact sheet of \(columns) columns of \(cell) cells would be over \(maximumSide) pixels a side or \(maximumPixels >> 20) Mpx: "
                + "take fewer pictures or smaller cells",
            file: "contact sheet")
    }

    /// The label's size: `labelFontSize`, else a tenth of the cell's height (10 … 24); the title's
    /// scaled to the sheet's width (14 … 32), the details' about two thirds of it.
    static func fonts(labelFontSize: Int?, cell: PixelSize, width: Int) -> Fonts {
        let label = labelFontSize.map { min(max($0, 6), 200) } ?? min(max(cell.height / 10, 10), 24)
        let title = min(max(width / 45, 14), 32)
        return Fonts(label: label, title: title, detail: max(11, title * 2 / 3))
    }

    static func lineHeight(_ size: Int) -> Int { size + (size * 2 + 4) / 5 }

    /// The height of a failed file's band: a cell's, or one line of its reason when that is taller.
    static func failedBand(cell: PixelSize, fonts: Fonts) -> Int { max(cell.height, lineHeight(fonts.label) + fonts.label / 2) }

    /// How many characters fit in `width` pixels at `size` (DejaVu Sans averages about 0.6 em a
    /// character, its bold 0.68).
    static func characters(width: Int, size: Int, bold: Bool = false) -> Int {
        max(1, width * 100 / max(1, size * (bold ? 68 : 60)))
    }

    /// `text` on one line, cut in its middle with `…` when it is too wide (a file name keeps its end).
    static func fitted(_ text: String, width: Int, size: Int, bold: Bool = false) -> String {
        let line = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }
        let room = characters(width: width, size: size, bold: bold)
        guard line.count > room else { return String(line) }
        guard room > 2 else { return String(line.prefix(room)) }
        let tail = (room - 1) / 2, head = room - 1 - tail
        return String(line.prefix(head)) + "…" + String(line.suffix(tail))
    }

    /// `text` on one line, cut at its end with `…` when it is too wide (a header's facts keep their start).
    static func cut(_ text: String, width: Int, size: Int) -> String {
        let line = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }
        let room = characters(width: width, size: size)
        guard line.count > room else { return String(line) }
        return String(line.prefix(max(0, room - 1))) + "…"
    }

    /// `text` broken into lines at spaces to fit `width`, as many lines as fit `height` (the last
    /// one ending in `…` when some are left out).
    static func wrapped(_ text: String, width: Int, height: Int, size: Int) -> String {
        let room = characters(width: width, size: size)
        // Not even one line fits: nothing rather than text spilling out.
        guard height >= lineHeight(size), width >= size else { return "" }
        let most = height / lineHeight(size)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                var word = String(word)
                while word.count > room {
                    if !line.isEmpty { lines.append(line) }
                    line = ""
                    lines.append(String(word.prefix(room)))
                    word = String(word.dropFirst(room))
                }
                if line.isEmpty {
                    line = word
                } else if line.count + 1 + word.count <= room {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = word
                }
            }
            lines.append(line)
        }
        if lines.count > most {
            lines = Array(lines.prefix(most))
            let last = lines[most - 1]
            lines[most - 1] = String(last.prefix(max(0, room - 1))) + "…"
        }
        return lines.joined(separator: "\n")
    }
}
