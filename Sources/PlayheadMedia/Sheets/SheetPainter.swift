internal import CFFmpeg
import Foundation

/// Draws a ``ContactSheet``: its pictures copied in place (scaled down first by libswscale when
/// larger than a cell), then every text by a chain of libavfilter `drawtext` filters (FreeType,
/// a real font; literal text, no expansion), the last filter converting to the pixel format the
/// encoder takes. Blocking: runs on a worker thread.
struct SheetPainter {
    let sheet: ContactSheet
    let layout: SheetLayout
    /// Each cell's picture, fitted inside the cell.
    private let pictures: [[GeneratedImage?]]

    init(sheet: ContactSheet) throws(PlayheadError) {
        self.sheet = sheet
        var pictures: [[GeneratedImage?]] = []
        for section in sheet.sections {
            var row: [GeneratedImage?] = []
            for cell in section.cells {
                guard let image = cell.image else {
                    row.append(nil)
                    continue
                }
                row.append(try Self.fitted(image, in: sheet.cellSize))
            }
            pictures.append(row)
        }
        self.pictures = pictures
        layout = try SheetLayout(sheet: sheet, pictureSizes: pictures.map { $0.map { $0?.size } })
    }

    /// The sheet as a frame of `outputFormat`'s pixel format (RGB for PNG, full-range 4:2:0 for JPEG).
    func paint(outputFormat: ContactSheet.Format) throws(PlayheadError) -> OwnedFrame {
        let frame = try OwnedFrame(size: layout.size, format: AV_PIX_FMT_RGB24)
        // The picture is made in Swift and copied once into the frame, then let go: the sheet is
        // held twice at most (the frame and the filters' output).
        do {
            var canvas = GeneratedImage(size: layout.size, color: sheet.background)
            for rect in layout.frames { canvas.fill(rect, with: .black) }
            for rect in layout.failures { canvas.fill(rect, with: RGBColor(red: 0x55, green: 0x55, blue: 0x55)) }
            for placement in layout.placements {
                if let picture = pictures[placement.section][placement.cell] { canvas.draw(picture, atX: placement.x, y: placement.y) }
            }
            canvas.copy(into: frame)
        }
        let fonts = try SheetFonts(regular: sheet.fontFile, bold: sheet.boldFontFile)
        // A drawtext filter holds its own font face and glyph cache (about 350 KB): the texts are
        // drawn a batch at a time, so memory does not grow with their number.
        let output = outputFormat == .png ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_YUVJ420P
        var drawn = frame
        var batches = stride(from: 0, to: layout.texts.count, by: Self.textsPerGraph).map {
            Array(layout.texts[$0..<min($0 + Self.textsPerGraph, layout.texts.count)])
        }
        if batches.isEmpty { batches = [[]] }
        for (i, batch) in batches.enumerated() {
            drawn = try TextGraph.draw(batch, on: drawn, fonts: fonts, output: i == batches.count - 1 ? output : AV_PIX_FMT_RGB24)
        }
        return drawn
    }

    /// Texts drawn by one filter graph.
    static let textsPerGraph = 24

    /// `frame` encoded by libavcodec's PNG or MJPEG encoder (quantiser 3: about quality 90).
    func encode(_ frame: OwnedFrame, as format: ContactSheet.Format) throws(PlayheadError) -> [UInt8] {
        let id = format == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_MJPEG
        guard let codec = avcodec_find_encoder(id) else {
            throw PlayheadError(code: .encodeFailed, message: "no \(format.rawValue) encoder in this FFmpeg", file: "contact sheet")
        }
        let options = format == .jpeg ? ["flags": "+qscale", "global_quality": String(3 * Int(FF_QP2LAMBDA))] : [:]
        let encoder = try FrameEncoder(
            codec: codec, size: frame.size, format: AVPixelFormat(rawValue: frame.pointer.pointee.format),
            timeBase: AVRational(num: 1, den: 25), target: "contact sheet", options: options)
        if format == .jpeg { encoder.context.pointee.color_range = AVCOL_RANGE_JPEG }
        var bytes: [UInt8] = []
        frame.pointer.pointee.pts = 0
        try encoder.encode(frame.pointer) { packet in
            bytes.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        }
        try encoder.encode(nil) { packet in
            bytes.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        }
        return bytes
    }

    /// `image` as it is when it fits `cell`, else scaled down to fit (proportions kept).
    private static func fitted(_ image: GeneratedImage, in cell: PixelSize) throws(PlayheadError) -> GeneratedImage {
        guard image.size.width > cell.width || image.size.height > cell.height else { return image }
        let size = image.size.fittedCanvas(pixelAspectRatio: .square, orientation: .identity, within: cell)
        let source = try OwnedFrame(size: image.size, format: AV_PIX_FMT_RGB24)
        image.copy(into: source)
        let target = try OwnedFrame(size: size, format: AV_PIX_FMT_RGB24)
        let converter = FrameConverter(
            layout: VideoGravity.resize.layout(stored: image.size, canvas: size), outputFormat: AV_PIX_FMT_RGB24, source: "contact sheet")
        try converter.convert(source, into: target)
        return GeneratedImage.from(target)
    }
}

/// The font files the text is drawn with: the ones given, else DejaVu Sans where Debian's
/// `fonts-dejavu-core` installs it, else fontconfig's `Sans` (nil paths).
struct SheetFonts {
    var regular: String?
    var bold: String?

    static let dejaVuFolders = ["/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/share/fonts/TTF"]

    /// The fonts of a sheet: a font file named must be there (never silently replaced).
    /// - Throws: `state.invalidArgument` naming a font file that is not a readable file.
    init(regular: String?, bold: String?) throws(PlayheadError) {
        let fm = FileManager.default
        for file in [regular, bold].compactMap({ $0 }) {
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: file, isDirectory: &isFolder), !isFolder.boolValue, fm.isReadableFile(atPath: file) else {
                throw PlayheadError(code: .invalidArgument, message: "the sheet's font file \(file) is not there (or not readable)", file: file)
            }
        }
        let folder = Self.dejaVuFolders.first { fm.fileExists(atPath: $0 + "/DejaVuSans.ttf") }
        self.regular = regular ?? folder.map { $0 + "/DejaVuSans.ttf" }
        let besideRegular = regular.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path + "/DejaVuSans-Bold.ttf" }
        let defaultBold = folder.map { $0 + "/DejaVuSans-Bold.ttf" }
        self.bold =
            bold ?? [regular == nil ? defaultBold : besideRegular].compactMap { $0 }.first { fm.fileExists(atPath: $0) } ?? regular
            ?? defaultBold
    }
}

/// `buffer → drawtext × N → format → buffersink` (one ``FilterGraph``), run once over one frame.
enum TextGraph {
    static func draw(
        _ texts: [SheetLayout.Text], on frame: OwnedFrame, fonts: SheetFonts, output: AVPixelFormat
    ) throws(PlayheadError) -> OwnedFrame {
        let size = frame.size
        var filters = [
            FilterGraph.Filter("buffer", "video_size=\(size.width)x\(size.height):pix_fmt=rgb24:time_base=1/25:pixel_aspect=1/1")
        ]
        for text in texts {
            filters.append(
                FilterGraph.Filter(
                    "drawtext", options: settings(of: text, fonts: fonts),
                    missing: "this FFmpeg has no drawtext filter (libavfilter built without FreeType)"))
        }
        filters.append(FilterGraph.Filter("format", "pix_fmts=\(String(cString: av_get_pix_fmt_name(output)))"))
        filters.append(FilterGraph.Filter("buffersink"))
        let graph: FilterGraph
        do throws(PlayheadError) {
            graph = try FilterGraph(filters, code: .encodeFailed, file: "contact sheet", failure: "could not set up the sheet's drawing")
        } catch  where error.cause?.function == "avfilter_init_dict" {
            let font = fonts.regular ?? "fontconfig's Sans"
            throw PlayheadError(
                code: .encodeFailed,
                message: "could not draw the sheet's text with the font \(font) (install fonts-dejavu-core, or give a font file)",
                file: "contact sheet", cause: error.cause)
        }
        frame.pointer.pointee.pts = 0
        // Handed over (not kept): the only reference, so drawtext draws into it in place.
        try graph.push(frame.pointer)
        try graph.push(nil)
        let drawn = try OwnedFrame()
        guard try graph.pull(into: drawn) else {
            throw PlayheadError(code: .encodeFailed, message: "could not draw the sheet's text: the graph gave no picture", file: "contact sheet")
        }
        return drawn
    }

    /// The `drawtext` options of one text: literal (`expansion=none`), white, on a shaded box
    /// when asked; anchored at its bottom-right corner through the text's own size (`tw`, `th`).
    static func settings(of text: SheetLayout.Text, fonts: SheetFonts) -> [String: String] {
        var options = [
            "text": text.text.isEmpty ? " " : text.text, "expansion": "none", "fontsize": String(text.size), "fontcolor": "white",
        ]
        if let file = text.bold ? fonts.bold : fonts.regular {
            options["fontfile"] = file
        } else {
            options["font"] = text.bold ? "Sans:bold" : "Sans"
        }
        if text.boxed {
            options["box"] = "1"
            options["boxcolor"] = "black@0.75"
            options["boxborderw"] = String(max(2, text.size / 4))
        }
        switch text.anchor {
        case .topLeft:
            options["x"] = String(text.x)
            options["y"] = String(text.y)
        case .bottomRight:
            options["x"] = "\(text.x)-tw"
            options["y"] = "\(text.y)-th"
        }
        return options
    }
}

extension GeneratedImage {
    /// A picture of one colour.
    init(size: PixelSize, color: RGBColor) {
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        for i in Swift.stride(from: 0, to: pixels.count, by: 3) {
            pixels[i] = color.red
            pixels[i + 1] = color.green
            pixels[i + 2] = color.blue
        }
        self.init(checkedSize: size, pixels: pixels)
    }

    /// Paints `rect` (clipped to the picture) in `color`.
    mutating func fill(_ rect: PixelRect, with color: RGBColor) {
        let x0 = max(0, rect.x), x1 = min(size.width, rect.x + rect.width)
        let y0 = max(0, rect.y), y1 = min(size.height, rect.y + rect.height)
        guard x0 < x1, y0 < y1 else { return }
        let width = size.width
        pixels.withUnsafeMutableBufferPointer { bytes in
            for y in y0..<y1 {
                for x in x0..<x1 {
                    let at = (y * width + x) * 3
                    bytes[at] = color.red
                    bytes[at + 1] = color.green
                    bytes[at + 2] = color.blue
                }
            }
        }
    }
}
