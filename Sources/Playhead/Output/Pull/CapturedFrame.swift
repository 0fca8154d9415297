import PlayheadMedia

/// A copy of one presented frame that belongs to whoever holds it: what a ``VideoOutput`` hands
/// to a render loop, and a ``FrameStream`` to its consumer.
///
/// Unlike a ``VideoFrame`` (lent to a sink for one call), its pixels stay valid for as long as it
/// is kept, and it can cross tasks and threads.
public struct CapturedFrame: Sendable, Hashable {
    /// Where the frame sits on its item's timeline (the item time a render loop asks for).
    public let itemTime: MediaTime
    /// How long it is shown.
    public let duration: MediaTime
    /// Where a player placed it on its own timeline (items of a queue and passes of a loop one after
    /// another), in seconds; nil when no player presented it (a ``DecodeSession``'s frames).
    public let playerTime: Double?
    /// Its position among the frames its decode session presented: 0, 1, 2, …
    public let index: Int
    /// The source it came from, in its display form (a URL's secrets removed).
    public let source: String
    /// The pixel size.
    public let size: PixelSize
    /// The pixel layout (``OutputPixelFormat/native`` frames keep the decoder's, named by
    /// ``pixelFormatName``).
    public let pixelFormat: OutputPixelFormat
    /// FFmpeg's name for the pixel layout.
    public let pixelFormatName: String
    /// The planes' pixels, packed: plane after plane, each row ``bytesPerRow``[plane] bytes, no padding.
    public let planes: [[UInt8]]
    /// Bytes in one row of each plane.
    public let bytesPerRow: [Int]

    /// Copies the visible pixels of a lent frame.
    init(copying frame: VideoFrame) {
        var planes: [[UInt8]] = []
        var rowBytes: [Int] = []
        for p in 0..<frame.planeCount {
            guard let plane = frame.plane(p) else { continue }
            var bytes = [UInt8]()
            bytes.reserveCapacity(plane.rows * plane.visibleBytesPerRow)
            for row in 0..<plane.rows {
                bytes.append(contentsOf: UnsafeBufferPointer(start: plane.baseAddress + row * plane.bytesPerRow, count: plane.visibleBytesPerRow))
            }
            planes.append(bytes)
            rowBytes.append(plane.visibleBytesPerRow)
        }
        self.init(
            itemTime: frame.presentationTime, duration: frame.duration, playerTime: frame.timelinePosition, index: frame.index,
            source: SourceRedaction.redacted(frame.source), size: frame.size, pixelFormat: frame.pixelFormat,
            pixelFormatName: frame.pixelFormatName, planes: planes, bytesPerRow: rowBytes)
    }

    /// A frame made of the given parts (for tests of code that consumes frames).
    /// - Parameters:
    ///   - itemTime: where it sits on its item's timeline.
    ///   - duration: how long it is shown.
    ///   - playerTime: where a player placed it, in seconds, if one did.
    ///   - index: its position among its session's frames.
    ///   - source: the display form of its source.
    ///   - size: its pixel size.
    ///   - pixelFormat: its pixel layout.
    ///   - pixelFormatName: FFmpeg's name for the layout.
    ///   - planes: packed pixels, one array per plane.
    ///   - bytesPerRow: bytes in one row of each plane.
    public init(
        itemTime: MediaTime, duration: MediaTime, playerTime: Double? = nil, index: Int, source: String, size: PixelSize,
        pixelFormat: OutputPixelFormat, pixelFormatName: String, planes: [[UInt8]], bytesPerRow: [Int]
    ) {
        self.itemTime = itemTime
        self.duration = duration
        self.playerTime = playerTime
        self.index = index
        self.source = source
        self.size = size
        self.pixelFormat = pixelFormat
        self.pixelFormatName = pixelFormatName
        self.planes = planes
        self.bytesPerRow = bytesPerRow
    }

    /// The frame as an RGB picture, when its layout is ``OutputPixelFormat/rgb24``; nil otherwise.
    public var image: GeneratedImage? {
        guard pixelFormat == .rgb24, let pixels = planes.first else { return nil }
        return try? GeneratedImage(size: size, pixels: pixels)
    }
}

extension CapturedFrame: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `CapturedFrame(#12 at 0.48 s for 0.04 s, 1280x720 rgb24, clip.mp4)`: never the pixels.
    public var description: String {
        "CapturedFrame(#\(index) at \(itemTime.seconds) s for \(duration.seconds) s, \(size.width)x\(size.height) \(pixelFormatName), \(source))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "index": index, "itemTime": itemTime, "size": size, "pixelFormat": pixelFormatName,
                "bytes": planes.reduce(0) { $0 + $1.count },
            ], displayStyle: .struct)
    }
}
