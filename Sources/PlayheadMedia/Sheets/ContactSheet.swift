/// A contact sheet: pictures of one or more files in a grid, each file under a header of its name
/// and facts, a time in a corner of every picture, failed pictures and files drawn as such with
/// their reason. Text is drawn by libavfilter's `drawtext` (FreeType) with a real font.
///
/// ```swift
/// var generator = AssetImageGenerator(asset: asset)
/// generator.maximumSize = PixelSize(width: 320, height: 180)
/// var results: [AssetImageGenerator.Result] = []
/// for await result in generator.images(for: times) { results.append(result) }
/// let section = try await ContactSheet.Section(asset: asset, name: "clip.mp4", results: results)
/// let sheet = ContactSheet(sections: [section], columns: 4, cellSize: PixelSize(width: 320, height: 180))
/// try await sheet.write(to: "clip-sheet.jpg", as: .jpeg)
/// ```
///
/// A sheet of one section is a file's sheet (a large header); of several, an overview (one
/// heading line and one row of cells per file, with `columns` as wide as the longest row).
public struct ContactSheet: Sendable, Hashable {
    /// One picture's place on the sheet.
    public struct Cell: Sendable, Hashable {
        /// The picture, fitted inside the cell (a larger one is scaled down); nil for a failed time.
        public var image: GeneratedImage?
        /// Drawn in the picture's bottom-right corner on a shaded box (the time it shows).
        public var label: String?
        /// Why there is no picture, drawn across the cell.
        public var failure: String?

        /// A cell showing `image` with `label` in its corner.
        /// - Parameters:
        ///   - image: the picture.
        ///   - label: the text for its corner, nil for none.
        public init(image: GeneratedImage, label: String?) {
            self.image = image
            self.label = label
        }

        /// A cell that says why it has no picture.
        /// - Parameters:
        ///   - reason: what went wrong.
        ///   - label: the time that was asked for, nil for none.
        public init(failure reason: String, label: String?) {
            self.failure = reason
            self.label = label
        }
    }

    /// One file's part of the sheet: its heading and its cells.
    public struct Section: Sendable, Hashable {
        /// The first heading line (the file's name), in bold.
        public var title: String
        /// Lines under the title (size, duration, dimensions, codecs, …).
        public var details: [String]
        public var cells: [Cell]
        /// Why the whole file failed (drawn in place of its cells), nil when it did not.
        public var failure: String?

        /// A section of the given heading and cells.
        /// - Parameters:
        ///   - title: the first heading line.
        ///   - details: the lines under it.
        ///   - cells: the pictures, in order.
        ///   - failure: why the whole file failed, nil when it did not.
        public init(title: String, details: [String] = [], cells: [Cell], failure: String? = nil) {
            self.title = title
            self.details = details
            self.cells = cells
            self.failure = failure
        }
    }

    /// The file format a sheet is encoded in.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        case png, jpeg
        /// The usual file name extension.
        public var fileExtension: String { self == .png ? "png" : "jpg" }
    }

    /// The largest sheet drawn, a side (what PNG viewers and encoders take).
    public static let maximumSide = 65_535
    /// The largest sheet drawn, in pixels (192 MB of RGB).
    public static let maximumPixels = 64 << 20

    /// How a section's heading is drawn.
    public enum Headings: String, Sendable, Hashable {
        /// A file's sheet: the name large, the details under it.
        case large
        /// An overview: the name a little larger than the labels, the details as small as them.
        case compact
    }

    public var sections: [Section]
    /// Nil (the default): large for a sheet of one section, compact for several.
    public var headings: Headings?
    /// Cells per row.
    public var columns: Int
    /// The size of every cell; pictures are centred in it.
    public var cellSize: PixelSize
    /// Pixels between cells and around the sheet.
    public var spacing = 10
    public var background = RGBColor(red: 0x1E, green: 0x1E, blue: 0x1E)
    /// The size of the corner labels in pixels; nil: a tenth of the cell's height, 10 … 24.
    public var labelFontSize: Int?
    /// The font file (TrueType or OpenType) of the text; nil: DejaVu Sans where Debian's
    /// `fonts-dejavu-core` puts it, else fontconfig's `Sans`.
    public var fontFile: String?
    /// The font of the titles; nil: the bold face beside ``fontFile`` (DejaVu Sans Bold), else fontconfig's `Sans:bold`.
    public var boldFontFile: String?

    /// A sheet of the given sections.
    /// - Parameters:
    ///   - sections: the files' parts, top to bottom.
    ///   - columns: cells per row (at least 1).
    ///   - cellSize: the size of every cell.
    public init(sections: [Section], columns: Int, cellSize: PixelSize) {
        self.sections = sections
        self.columns = columns
        self.cellSize = cellSize
    }

    /// The size of a sheet of the given shape, without its pictures: what a caller checks before
    /// making them. The same measure the drawing uses.
    /// - Parameters:
    ///   - columns: cells per row.
    ///   - cellSize: the size of every cell.
    ///   - cellCounts: each section's number of cells.
    ///   - detailLines: each section's lines under its title.
    ///   - headings: as ``headings``.
    ///   - spacing: as ``spacing``.
    /// - Returns: the sheet's size.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` when no column, an empty cell or a
    ///   sheet over ``maximumSide`` a side or ``maximumPixels``.
    public static func size(
        columns: Int, cellSize: PixelSize, cellCounts: [Int], detailLines: Int, headings: Headings, spacing: Int = 10
    ) throws(PlayheadError) -> PixelSize {
        var sheet = ContactSheet(sections: [], columns: columns, cellSize: cellSize)
        sheet.spacing = spacing
        sheet.headings = headings
        var shape = SheetLayout.Shape(sheet)
        shape.sections = cellCounts.map { (detailLines, $0, false) }
        return try SheetLayout.size(shape)
    }

    /// The sheet drawn, on a worker thread.
    /// - Returns: the picture.
    /// - Throws: ``PlayheadError``: `state.invalidArgument` for no column, an empty cell size or a
    ///   sheet over ``maximumSide`` pixels a side or ``maximumPixels``; `output.encodeFailed` when the text cannot be
    ///   drawn (no font found, naming what to install).
    public func render() async throws(PlayheadError) -> GeneratedImage {
        let sheet = self
        return try await WorkerPool.shared.value("playhead.sheet") { () throws(PlayheadError) -> GeneratedImage in
            let frame = try SheetPainter(sheet: sheet).paint(outputFormat: .png)
            return GeneratedImage.from(frame)
        }
    }

    /// The sheet drawn and encoded, on a worker thread.
    /// - Parameter format: PNG, or JPEG (quality about 90).
    /// - Returns: the file's bytes.
    /// - Throws: ``PlayheadError``: what ``render()`` throws; `output.encodeFailed` when encoding fails.
    public func encoded(as format: Format) async throws(PlayheadError) -> [UInt8] {
        let sheet = self
        return try await WorkerPool.shared.value("playhead.sheet") { () throws(PlayheadError) -> [UInt8] in
            let painter = try SheetPainter(sheet: sheet)
            return try painter.encode(painter.paint(outputFormat: format), as: format)
        }
    }

    /// Draws, encodes and writes the sheet to `path` safely: under a temporary
    /// name, synced, then given `path` only if nothing is there.
    /// - Parameters:
    ///   - path: the file to create.
    ///   - format: PNG or JPEG.
    /// - Throws: ``PlayheadError``: what ``encoded(as:)`` throws; `output.outputExists` when
    ///   something is at `path`; an `io` or `output` code when writing fails.
    public func write(to path: String, as format: Format) async throws(PlayheadError) {
        let bytes = try await encoded(as: format)
        try await WorkerPool.shared.value("playhead.sheet") { () throws(PlayheadError) in
            try SafeFile.write(bytes, to: path, replacing: false, syncFolder: true)
        }
    }
}
