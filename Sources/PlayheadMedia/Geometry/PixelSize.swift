/// A size in whole pixels.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    /// A size of `width` by `height` pixels.
    /// - Parameters:
    ///   - width: pixels across.
    ///   - height: pixels down.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `true` when a side is zero or less (nothing to show).
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The same size with width and height exchanged.
    public var transposed: PixelSize { PixelSize(width: height, height: width) }

    public var description: String { "\(width)x\(height)" }
}

/// The shape of one stored pixel, `horizontal : vertical` (1:1 for square pixels).
public struct PixelAspectRatio: Sendable, Hashable, CustomStringConvertible {
    public var horizontal: Int
    public var vertical: Int

    /// A pixel `horizontal` units wide and `vertical` units high.
    /// - Parameters:
    ///   - horizontal: the pixel's width, relative to `vertical`.
    ///   - vertical: the pixel's height, relative to `horizontal`.
    public init(horizontal: Int, vertical: Int) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// Square pixels.
    public static let square = PixelAspectRatio(horizontal: 1, vertical: 1)

    public var isSquare: Bool { horizontal == vertical }

    public var description: String { "\(horizontal):\(vertical)" }
}

extension PixelSize {
    /// The size a display shows for frames of `self` stored pixels with the given pixel aspect
    /// ratio and orientation: the width is stretched by the pixel aspect ratio (as displays do),
    /// then width and height are exchanged for quarter turns.
    /// - Parameters:
    ///   - par: the shape of a stored pixel; a ratio with a side of zero or less counts as square.
    ///   - orientation: the turn a display applies.
    /// - Returns: the displayed size, the width rounded to the nearest pixel.
    public func presentationSize(pixelAspectRatio par: PixelAspectRatio, orientation: VideoOrientation) -> PixelSize {
        var w = width
        if par.horizontal > 0, par.vertical > 0, !par.isSquare {
            w = Int((Double(width) * Double(par.horizontal) / Double(par.vertical)).rounded())
        }
        let upright = PixelSize(width: w, height: height)
        return orientation.swapsDimensions ? upright.transposed : upright
    }
}

extension PixelSize {
    /// The canvas a picture of `self` stored pixels is shown in when no canvas is asked for —
    /// fitted once: its displayed size (continuous: the width stretched by the pixel aspect
    /// ratio, then turned), scaled down (never up) to fit inside `maximum` when given, each side
    /// then rounded to the nearest multiple of `alignment` (2 for 4:2:0 output). The picture fills
    /// it (``VideoGravity/resize``): rounding stretches it by less than a pixel, as ffmpeg's scale
    /// filter does, rather than fitting it a second time into the rounded size with a bar of
    /// black beside it.
    /// - Parameters:
    ///   - par: the shape of a stored pixel; a ratio with a side of zero or less counts as square.
    ///   - orientation: the turn a display applies.
    ///   - maximum: the largest canvas wanted; nil, or an empty size, sets no limit.
    ///   - alignment: each side is a multiple of this (a value below 1 counts as 1).
    /// - Returns: the canvas size, each side at least `alignment`.
    public func fittedCanvas(
        pixelAspectRatio par: PixelAspectRatio, orientation: VideoOrientation, within maximum: PixelSize? = nil,
        alignment: Int = 1
    ) -> PixelSize {
        let stretch = par.horizontal > 0 && par.vertical > 0 ? Double(par.horizontal) / Double(par.vertical) : 1
        var width = Double(self.width) * stretch, height = Double(self.height)
        if orientation.swapsDimensions { swap(&width, &height) }
        if let maximum, !maximum.isEmpty, width > Double(maximum.width) || height > Double(maximum.height) {
            let scale = min(Double(maximum.width) / width, Double(maximum.height) / height)
            width *= scale
            height *= scale
        }
        let step = Double(max(1, alignment))
        let side = { (value: Double) in max(Int(step), Int((value / step).rounded()) * Int(step)) }
        return PixelSize(width: side(width), height: side(height))
    }
}
