/// A size in whole pixels.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `true` when both sides are positive.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The same size with width and height exchanged.
    public var transposed: PixelSize { PixelSize(width: height, height: width) }

    public var description: String { "\(width)x\(height)" }
}

/// The shape of one stored pixel, `horizontal : vertical` (1:1 for square pixels).
public struct PixelAspectRatio: Sendable, Hashable, CustomStringConvertible {
    public var horizontal: Int
    public var vertical: Int

    public init(horizontal: Int, vertical: Int) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// Square pixels.
    public static let square = PixelAspectRatio(horizontal: 1, vertical: 1)

    public var isSquare: Bool { horizontal == vertical }

    public var description: String { "\(horizontal):\(vertical)" }
}

/// How a track's stored frames are turned to be shown upright: a clockwise rotation in quarter
/// turns, applied after an optional horizontal mirror.
public struct VideoOrientation: Sendable, Hashable {
    /// Clockwise rotation in degrees: 0, 90, 180 or 270.
    public var rotation: Int
    /// `true` when the picture is mirrored left to right before rotating.
    public var isMirrored: Bool

    public init(rotation: Int, isMirrored: Bool = false) {
        let r = ((rotation % 360) + 360) % 360
        self.rotation = (r + 45) / 90 * 90 % 360
        self.isMirrored = isMirrored
    }

    /// Upright, not mirrored.
    public static let identity = VideoOrientation(rotation: 0)

    /// `true` for 90 and 270 degrees, which exchange width and height.
    public var swapsDimensions: Bool { rotation == 90 || rotation == 270 }
}

extension PixelSize {
    /// The size a display shows for frames of `self` stored pixels with the given pixel aspect
    /// ratio and orientation: the width is stretched by the pixel aspect ratio (as displays do),
    /// then width and height are exchanged for quarter turns.
    public func presentationSize(pixelAspectRatio par: PixelAspectRatio, orientation: VideoOrientation) -> PixelSize {
        var w = width
        if par.horizontal > 0, par.vertical > 0, !par.isSquare {
            w = Int((Double(width) * Double(par.horizontal) / Double(par.vertical)).rounded())
        }
        let upright = PixelSize(width: w, height: height)
        return orientation.swapsDimensions ? upright.transposed : upright
    }
}
