internal import CFFmpeg

/// A picture made by an ``AssetImageGenerator``: packed 8-bit RGB, `size.width * 3` bytes a row.
public struct GeneratedImage: Sendable, Hashable {
    public var size: PixelSize
    /// Packed RGB bytes, row after row, no padding.
    public var pixels: [UInt8]

    /// An image of the given pixels.
    /// - Parameters:
    ///   - size: its size (neither side negative).
    ///   - pixels: packed RGB bytes, row after row: exactly `width × height × 3` of them.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a negative side, or another
    ///   number of bytes.
    public init(size: PixelSize, pixels: [UInt8]) throws(PlayheadError) {
        guard let bytes = Self.byteCount(of: size), pixels.count == bytes else {
            throw PlayheadError(
                code: .invalidArgument, message: "an RGB image of \(size) holds width × height × 3 bytes, not \(pixels.count)", file: nil)
        }
        self.size = size
        self.pixels = pixels
    }

    /// An image whose size and pixels are known to agree (made here).
    init(checkedSize size: PixelSize, pixels: [UInt8]) {
        self.size = size
        self.pixels = pixels
    }

    /// A picture of one colour.
    /// - Parameters:
    ///   - size: its size (neither side negative; at most 2^30 bytes of pixels).
    ///   - gray: the value of every byte: 0 is black, 255 white.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a negative or absurd size.
    public init(size: PixelSize, gray: UInt8) throws(PlayheadError) {
        guard let bytes = Self.byteCount(of: size), bytes <= 1 << 30 else {
            throw PlayheadError(code: .invalidArgument, message: "no RGB image can be \(size)", file: nil)
        }
        self.init(checkedSize: size, pixels: [UInt8](repeating: gray, count: bytes))
    }

    /// `width × height × 3`, or nil for a negative side or a product past `Int`.
    static func byteCount(of size: PixelSize) -> Int? {
        guard size.width >= 0, size.height >= 0 else { return nil }
        let (area, wide) = size.width.multipliedReportingOverflow(by: size.height)
        let (bytes, over) = area.multipliedReportingOverflow(by: 3)
        return wide || over ? nil : bytes
    }

    /// The image encoded as a PNG or PPM file, by libavcodec's encoder.
    /// - Parameter format: PNG, or PPM (P6).
    /// - Returns: the file's bytes.
    /// - Throws: ``PlayheadError`` with `output.encodeFailed` when the encoder is missing or fails, or
    ///   `output.conversionFailed` when the frame it encodes cannot be allocated.
    public func encoded(as format: ImageSequenceSink.Format) throws(PlayheadError) -> [UInt8] {
        let frame = try OwnedFrame(size: size, format: AV_PIX_FMT_RGB24)
        copy(into: frame)
        let encoder = try FrameEncoder(
            codec: format.codec, size: size, format: AV_PIX_FMT_RGB24, timeBase: AVRational(num: 1, den: 25), target: "image")
        var bytes: [UInt8] = []
        try encoder.encode(frame.pointer) { packet in
            bytes.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        }
        return bytes
    }

    /// Copies `image` into this one with its top-left corner at (x, y), clipped to this image.
    /// - Parameters:
    ///   - image: the image to copy.
    ///   - x: where its left edge goes, in this image's pixels; it may be negative.
    ///   - y: where its top edge goes, in this image's pixels; it may be negative.
    public mutating func draw(_ image: GeneratedImage, atX x: Int, y: Int) {
        // Clipped first, so that no sum below can overflow: what lies outside is not drawn.
        guard x < size.width, y < size.height, x > -image.size.width, y > -image.size.height,
            Self.byteCount(of: size) == pixels.count, Self.byteCount(of: image.size) == image.pixels.count
        else { return }
        let from = max(0, -x), to = min(image.size.width, size.width - x)
        let firstRow = max(0, -y), endRow = min(image.size.height, size.height - y)
        guard from < to, firstRow < endRow else { return }
        for row in firstRow..<endRow {
            let source = (row * image.size.width + from) * 3
            let target = ((y + row) * size.width + x + from) * 3
            pixels.replaceSubrange(target..<(target + (to - from) * 3), with: image.pixels[source..<(source + (to - from) * 3)])
        }
    }

    func copy(into frame: OwnedFrame) {
        let stride = Int(frame.pointer.pointee.linesize.0)
        guard let base = frame.pointer.pointee.data.0 else { return }
        pixels.withUnsafeBufferPointer { source in
            for row in 0..<size.height {
                (base + row * stride).update(from: source.baseAddress! + row * size.width * 3, count: size.width * 3)
            }
        }
    }

    package static func from(_ frame: OwnedFrame) -> GeneratedImage {
        let size = frame.size
        let stride = Int(frame.pointer.pointee.linesize.0)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        if let base = frame.pointer.pointee.data.0 {
            pixels.withUnsafeMutableBufferPointer { target in
                for row in 0..<size.height {
                    (target.baseAddress! + row * size.width * 3).update(from: base + row * stride, count: size.width * 3)
                }
            }
        }
        return GeneratedImage(checkedSize: size, pixels: pixels)
    }
}

extension GeneratedImage: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `GeneratedImage(320x180, RGB, 172800 bytes)`: what a person wants to read, never the pixels.
    public var description: String { "GeneratedImage(\(size.width)x\(size.height), RGB, \(pixels.count) bytes)" }
    public var debugDescription: String { description }
    /// What `dump` shows: the size and the byte count, not every pixel.
    public var customMirror: Mirror { Mirror(self, children: ["size": size, "bytes": pixels.count], displayStyle: .struct) }
}
