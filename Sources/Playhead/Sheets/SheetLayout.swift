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

    /// The layout of `sheet`, each picture of `pictureSizes[section][cell]` (already fitted in its cell).
    init(sheet: ContactSheet, pictureSizes: [[PixelSize?]]) throws(PlayheadError) {
        let cell = sheet.cellSize
        let columns = sheet.columns
        let spacing = max(0, sheet.spacing)
        guard columns >= 1, cell.width >= 1, cell.height >= 1 else {
            throw PlayheadError(
                code: .invalidArgument, message: "a contact sheet needs at least one column and cells of at least 1x1 (got \(columns) of \(cell))",
                file: "contact sheet")
        }
        let overview = sheet.sections.count > 1
        let (rowWidth, wide) = columns.multipliedReportingOverflow(by: cell.width + spacing)
        guard !wide, spacing <= Self.maximumSide, cell.width <= Self.maximumSide, cell.height <= Self.maximumSide,
            rowWidth + spacing <= Self.maximumSide
        else { throw Self.tooLarge(columns: columns, cell: cell) }
        let width = rowWidth + spacing
        let fonts = Self.fonts(sheet: sheet, width: width)
        let titleSize = overview ? fonts.label + fonts.label / 3 : fonts.title
        let detailSize = overview ? fonts.label : fonts.detail
        let textWidth = width - 2 * spacing
        var y = spacing
        var texts: [Text] = []
        for (s, section) in sheet.sections.enumerated() {
            texts.append(
                Text(text: Self.fitted(section.title, width: textWidth, size: titleSize, bold: true), x: spacing, y: y, size: titleSize, bold: true))
            y += Self.lineHeight(titleSize)
            for line in section.details {
                texts.append(Text(text: Self.fitted(line, width: textWidth, size: detailSize), x: spacing, y: y, size: detailSize))
                y += Self.lineHeight(detailSize)
            }
            y += spacing / 2
            if let failure = section.failure, section.cells.isEmpty {
                failures.append(PixelRect(x: spacing, y: y, width: textWidth, height: cell.height))
                let lines = Self.wrapped("failed: " + failure, width: textWidth - 2 * fonts.label, height: cell.height, size: fonts.label)
                texts.append(Text(text: lines, x: spacing + fonts.label, y: y + fonts.label / 2, size: fonts.label))
                y += cell.height + spacing
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
                    if let label = content.label {
                        texts.append(
                            Text(
                                text: Self.fitted(label, width: picture.width - 2 * margin, size: fonts.label), x: px + picture.width - margin,
                                y: py + picture.height - margin, size: fonts.label, boxed: true, anchor: .bottomRight))
                    }
                } else {
                    failures.append(PixelRect(x: x, y: top, width: cell.width, height: cell.height))
                    let reason = [content.label, "no image: " + (content.failure ?? "failed")].compactMap { $0 }.joined(separator: "\n")
                    let lines = Self.wrapped(reason, width: cell.width - 2 * margin, height: cell.height - 2 * margin, size: fonts.label)
                    texts.append(Text(text: lines, x: x + margin, y: top + margin, size: fonts.label))
                }
            }
            let rows = (section.cells.count + columns - 1) / columns
            y += rows * (cell.height + spacing)
        }
        let height = max(y, 1)
        guard height <= Self.maximumSide, width * height <= Self.maximumPixels else { throw Self.tooLarge(columns: columns, cell: cell) }
        size = PixelSize(width: width, height: height)
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
    static func fonts(sheet: ContactSheet, width: Int) -> Fonts {
        let label = sheet.labelFontSize.map { min(max($0, 6), 200) } ?? min(max(sheet.cellSize.height / 10, 10), 24)
        let title = min(max(width / 45, 14), 32)
        return Fonts(label: label, title: title, detail: max(11, title * 2 / 3))
    }

    static func lineHeight(_ size: Int) -> Int { size + (size * 2 + 4) / 5 }

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

    /// `text` broken into lines at spaces to fit `width`, as many lines as fit `height` (the last
    /// one ending in `…` when some are left out).
    static func wrapped(_ text: String, width: Int, height: Int, size: Int) -> String {
        let room = characters(width: width, size: size)
        let most = max(1, height / lineHeight(size))
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
