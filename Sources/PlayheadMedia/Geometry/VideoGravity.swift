/// How a picture is placed in a canvas of another shape.
public enum VideoGravity: String, Sendable, Hashable, CaseIterable {
    /// Stretch to fill the canvas exactly; proportions may change.
    case resize
    /// Fit inside the canvas with the displayed proportions; black bars fill the rest
    /// (letterbox above and below, pillarbox left and right).
    case resizeAspect
    /// Fill the canvas with the displayed proportions, cropping what overflows, centered.
    case resizeAspectFill
}

/// A rectangle in whole pixels.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    /// A rectangle whose top-left corner is at (`x`, `y`).
    /// - Parameters:
    ///   - x: the left edge, in pixels from the left.
    ///   - y: the top edge, in pixels from the top.
    ///   - width: pixels across.
    ///   - height: pixels down.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// A rectangle of `size` at the origin.
    /// - Parameter size: its width and height.
    public init(size: PixelSize) {
        self.init(x: 0, y: 0, width: size.width, height: size.height)
    }

    public var size: PixelSize { PixelSize(width: width, height: height) }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// Where a source picture lands in a canvas, and what part of it is used. Computed once per
/// session; every frame follows it.
public struct FrameLayout: Sendable, Hashable {
    /// The canvas size.
    public var canvas: PixelSize
    /// Where the picture is drawn in the canvas; the rest is black bars.
    public var content: PixelRect
    /// The part of the stored frame that is used, in stored pixels (before pixel aspect and rotation).
    public var sourceCrop: PixelRect
    /// The same part in the pixels of the turned frame (the stored frame with its orientation
    /// applied, before pixel aspect): what is scaled into `content` once the frame is upright.
    public var displayedCrop: PixelRect
    /// The orientation applied after scaling.
    public var orientation: VideoOrientation

    /// The size the stored crop is scaled to, before it is turned into the canvas.
    public var scaledSize: PixelSize {
        orientation.swapsDimensions ? content.size.transposed : content.size
    }

    /// `true` when the picture leaves part of the canvas uncovered (bars).
    public var hasBars: Bool { content != PixelRect(size: canvas) }

    /// A layout of its parts (see each property).
    package init(canvas: PixelSize, content: PixelRect, sourceCrop: PixelRect, displayedCrop: PixelRect, orientation: VideoOrientation) {
        self.canvas = canvas
        self.content = content
        self.sourceCrop = sourceCrop
        self.displayedCrop = displayedCrop
        self.orientation = orientation
    }
}

extension VideoGravity {
    /// The layout of a stored frame in a canvas.
    ///
    /// - Parameters:
    ///   - stored: the decoded frame size.
    ///   - pixelAspectRatio: the stored pixel shape; the picture is shown stretched by it.
    ///   - orientation: the turn a display applies.
    ///   - canvas: the output size.
    ///   - alignment: the content rectangle's origin and size are multiples of this (2 for 4:2:0 canvases).
    /// - Returns: where the picture lands in the canvas, and which part of the stored frame it shows.
    public func layout(
        stored: PixelSize, pixelAspectRatio: PixelAspectRatio = .square, orientation: VideoOrientation = .identity,
        canvas: PixelSize, alignment: Int = 1
    ) -> FrameLayout {
        // Nothing to place, or nowhere to place it: an empty layout (nothing is drawn), never a trap.
        guard !stored.isEmpty, !canvas.isEmpty, alignment >= 1 else {
            let none = PixelRect(x: 0, y: 0, width: 0, height: 0)
            return FrameLayout(canvas: canvas, content: none, sourceCrop: none, displayedCrop: none, orientation: orientation)
        }
        let par =
            pixelAspectRatio.horizontal > 0 && pixelAspectRatio.vertical > 0
            ? Double(pixelAspectRatio.horizontal) / Double(pixelAspectRatio.vertical) : 1
        // The displayed picture, in continuous coordinates.
        let uprightWidth = Double(stored.width) * par
        let uprightHeight = Double(stored.height)
        let (shownWidth, shownHeight) = orientation.swapsDimensions ? (uprightHeight, uprightWidth) : (uprightWidth, uprightHeight)
        let canvasWidth = Double(canvas.width), canvasHeight = Double(canvas.height)

        var content = PixelRect(size: canvas)
        var crop = (x: 0.0, y: 0.0, width: shownWidth, height: shownHeight)
        switch self {
        case .resize:
            break
        case .resizeAspect:
            let scale = min(canvasWidth / shownWidth, canvasHeight / shownHeight)
            let width = Self.aligned(shownWidth * scale, alignment, limit: canvas.width)
            let height = Self.aligned(shownHeight * scale, alignment, limit: canvas.height)
            content = PixelRect(
                x: (canvas.width - width) / 2 / alignment * alignment,
                y: (canvas.height - height) / 2 / alignment * alignment,
                width: width, height: height)
        case .resizeAspectFill:
            let scale = max(canvasWidth / shownWidth, canvasHeight / shownHeight)
            let visibleWidth = min(shownWidth, canvasWidth / scale)
            let visibleHeight = min(shownHeight, canvasHeight / scale)
            crop = ((shownWidth - visibleWidth) / 2, (shownHeight - visibleHeight) / 2, visibleWidth, visibleHeight)
        }

        // In the turned frame's pixels: the pixel aspect ratio stretches its vertical axis once turned.
        let turnedSize = orientation.displayedSize(of: stored)
        let displayedCrop =
            orientation.swapsDimensions
            ? Self.pixelRect(x: crop.x, y: crop.y / par, width: crop.width, height: crop.height / par, within: turnedSize)
            : Self.pixelRect(x: crop.x / par, y: crop.y, width: crop.width / par, height: crop.height, within: turnedSize)
        // Back from displayed coordinates to upright, then un-mirror, then to stored pixels.
        var upright = crop
        switch orientation.rotation {
        case 90:
            upright = (crop.y, uprightHeight - (crop.x + crop.width), crop.height, crop.width)
        case 180:
            upright = (uprightWidth - (crop.x + crop.width), uprightHeight - (crop.y + crop.height), crop.width, crop.height)
        case 270:
            upright = (uprightWidth - (crop.y + crop.height), crop.x, crop.height, crop.width)
        default:
            break
        }
        if orientation.isMirrored {
            upright.x = uprightWidth - (upright.x + upright.width)
        }
        let storedCrop = Self.pixelRect(x: upright.x / par, y: upright.y, width: upright.width / par, height: upright.height, within: stored)
        return FrameLayout(canvas: canvas, content: content, sourceCrop: storedCrop, displayedCrop: displayedCrop, orientation: orientation)
    }

    private static func aligned(_ value: Double, _ alignment: Int, limit: Int) -> Int {
        let rounded = Int((value / Double(alignment)).rounded()) * alignment
        return min(max(alignment, rounded), limit / alignment * alignment)
    }

    private static func pixelRect(x: Double, y: Double, width: Double, height: Double, within size: PixelSize) -> PixelRect {
        let x0 = max(0, min(size.width - 1, Int(x.rounded())))
        let y0 = max(0, min(size.height - 1, Int(y.rounded())))
        let w = max(1, min(size.width - x0, Int(width.rounded())))
        let h = max(1, min(size.height - y0, Int(height.rounded())))
        return PixelRect(x: x0, y: y0, width: w, height: h)
    }
}
