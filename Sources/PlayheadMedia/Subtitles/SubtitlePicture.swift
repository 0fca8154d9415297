internal import CFFmpeg

/// One picture of a bitmap subtitle (PGS, DVB, DVD): its pixels and where it goes on the
/// subtitle's canvas (``SubtitleTrack/canvasSize``, the picture size its positions count in),
/// as FFmpeg's decoder gives it.
public struct SubtitlePicture: Sendable, Hashable {
    /// Where its top-left corner goes on the canvas, and its size.
    public var rect: PixelRect
    /// Packed 8-bit RGBA, alpha not premultiplied: `rect.width × 4` bytes a row, no padding.
    public var pixels: [UInt8]

    /// A picture of the given pixels.
    /// - Parameters:
    ///   - rect: where it goes and its size (neither side negative).
    ///   - pixels: packed RGBA bytes, row after row: exactly `width × height × 4` of them.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a negative side or another
    ///   number of bytes.
    public init(rect: PixelRect, pixels: [UInt8]) throws(PlayheadError) {
        guard let bytes = Self.byteCount(of: rect.size), pixels.count == bytes else {
            throw PlayheadError(
                code: .invalidArgument, message: "an RGBA picture of \(rect.size) holds width × height × 4 bytes, not \(pixels.count)",
                file: nil)
        }
        self.rect = rect
        self.pixels = pixels
    }

    private init(checkedRect rect: PixelRect, pixels: [UInt8]) {
        self.rect = rect
        self.pixels = pixels
    }

    /// `width × height × 4`, or nil for a negative side or a product past `Int`.
    static func byteCount(of size: PixelSize) -> Int? {
        guard size.width >= 0, size.height >= 0 else { return nil }
        let (area, wide) = size.width.multipliedReportingOverflow(by: size.height)
        let (bytes, over) = area.multipliedReportingOverflow(by: 4)
        return wide || over ? nil : bytes
    }

    /// The picture as a PNG file (its transparency kept), by libavcodec's encoder.
    /// - Returns: the file's bytes.
    /// - Throws: ``PlayheadError`` with `output.encodeFailed` when the encoder is missing or fails,
    ///   `state.invalidArgument` for an empty picture or pixels that do not fill it.
    public func pngData() throws(PlayheadError) -> [UInt8] {
        let size = rect.size
        guard size.width > 0, size.height > 0, Self.byteCount(of: size) == pixels.count else {
            throw PlayheadError(code: .invalidArgument, message: "an empty or incomplete subtitle picture (\(size)) has no PNG", file: nil)
        }
        let frame = try OwnedFrame(size: size, format: AV_PIX_FMT_RGBA, filled: false)
        if let base = frame.pointer.pointee.data.0 {
            let stride = Int(frame.pointer.pointee.linesize.0), row = size.width * 4
            pixels.withUnsafeBufferPointer { source in
                guard let from = source.baseAddress else { return }
                for y in 0..<size.height { (base + y * stride).update(from: from + y * row, count: row) }
            }
        }
        let encoder = try FrameEncoder(
            codec: AV_CODEC_ID_PNG, size: size, format: AV_PIX_FMT_RGBA, timeBase: AVRational(num: 1, den: 25), target: "image")
        var bytes: [UInt8] = []
        try encoder.encode(frame.pointer) { packet in
            bytes.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        }
        return bytes
    }

    /// The bitmap rectangle `rect` of a decoded subtitle as RGBA: its palette indices looked up by
    /// libswscale (the ``FrameConverter``), as any picture is converted. A rectangle whose size or
    /// planes are missing gives nil.
    /// - Parameters:
    ///   - rect: a `SUBTITLE_BITMAP` rectangle (indices in `data[0]`, `nb_colors` ARGB entries in `data[1]`).
    ///   - source: what errors name.
    /// - Throws: `output.conversionFailed` when the picture cannot be allocated or converted.
    static func converting(_ rect: AVSubtitleRect, source: String) throws(PlayheadError) -> SubtitlePicture? {
        let size = PixelSize(width: Int(rect.w), height: Int(rect.h))
        guard size.width > 0, size.height > 0, rect.linesize.0 >= rect.w, let indices = rect.data.0, let palette = rect.data.1,
            Self.byteCount(of: size) != nil
        else { return nil }
        // Copied into a frame of its own: its palette plane holds all 256 entries libswscale reads
        // (the decoder's may hold only `nb_colors`; the rest stay transparent black).
        let indexed = try OwnedFrame(size: size, format: AV_PIX_FMT_PAL8, filled: false)
        guard let rows = indexed.pointer.pointee.data.0, let entries = indexed.pointer.pointee.data.1 else { return nil }
        entries.update(repeating: 0, count: 256 * 4)
        entries.update(from: palette, count: Int(min(max(rect.nb_colors, 0), 256)) * 4)
        let stride = Int(indexed.pointer.pointee.linesize.0)
        for y in 0..<size.height { (rows + y * stride).update(from: indices + y * Int(rect.linesize.0), count: size.width) }
        let converted = try OwnedFrame(size: size, format: AV_PIX_FMT_RGBA, filled: false)
        let layout = VideoGravity.resize.layout(stored: size, pixelAspectRatio: .square, orientation: .identity, canvas: size)
        try FrameConverter(layout: layout, outputFormat: AV_PIX_FMT_RGBA, source: source).convert(indexed, into: converted)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        if let base = converted.pointer.pointee.data.0 {
            let stride = Int(converted.pointer.pointee.linesize.0), row = size.width * 4
            pixels.withUnsafeMutableBufferPointer { target in
                guard let to = target.baseAddress else { return }
                for y in 0..<size.height { (to + y * row).update(from: base + y * stride, count: row) }
            }
        }
        return SubtitlePicture(checkedRect: PixelRect(x: Int(rect.x), y: Int(rect.y), width: size.width, height: size.height), pixels: pixels)
    }
}

extension SubtitlePicture: CustomStringConvertible {
    /// `SubtitlePicture(100x20 at 20,180)`: never the pixels.
    public var description: String { "SubtitlePicture(\(rect.width)x\(rect.height) at \(rect.x),\(rect.y))" }
}
