/// How a track's stored frames are turned to be shown upright: one of the eight elements of the
/// group of quarter turns and mirrors — an optional horizontal mirror, then a clockwise rotation.
///
/// Built once from a display matrix (``init(displayMatrix:)``), composed and inverted as a group,
/// and applied in one place: ``storedPoint(forDisplayed:stored:)`` says which stored pixel each
/// displayed pixel shows. Probe, gravity, frame dumps and images all use it.
public struct VideoOrientation: Sendable, Hashable, CustomStringConvertible {
    /// Clockwise rotation in degrees: 0, 90, 180 or 270.
    public var rotation: Int
    /// `true` when the picture is mirrored left to right before rotating.
    public var isMirrored: Bool

    /// `rotation` is rounded to the nearest quarter turn and brought into 0 ..< 360.
    /// - Parameters:
    ///   - rotation: the clockwise rotation in degrees; any whole number.
    ///   - isMirrored: whether the picture is mirrored left to right before rotating.
    public init(rotation: Int, isMirrored: Bool = false) {
        let r = ((rotation % 360) + 360) % 360
        self.rotation = (r + 45) / 90 * 90 % 360
        self.isMirrored = isMirrored
    }

    /// Upright, not mirrored.
    public static let identity = VideoOrientation(rotation: 0)

    /// The eight orientations.
    public static let all: [VideoOrientation] = [false, true].flatMap { m in [0, 90, 180, 270].map { VideoOrientation(rotation: $0, isMirrored: m) } }

    /// `true` for 90 and 270 degrees, which exchange width and height.
    public var swapsDimensions: Bool { rotation == 90 || rotation == 270 }

    public var description: String { isMirrored ? "mirrored, rotated \(rotation)°" : "rotated \(rotation)°" }

    /// The orientation a display matrix describes. The matrix maps a source point (x, y), y
    /// pointing down, to (a·x + c·y, b·x + d·y) (ISO/IEC 14496-12's `tkhd` matrix, in the order
    /// FFmpeg keeps it: `{a, b, u, c, d, v, x, y, w}`); translation is ignored, as displays re-base
    /// the picture at the origin. Matrices that are not a quarter turn are rounded to the nearest.
    /// - Parameter m: the matrix's nine values as FFmpeg keeps them; fewer than five, or a matrix that maps the x
    ///   axis to nothing, gives ``identity``.
    public init(displayMatrix m: [Int32]) {
        guard m.count >= 5 else {
            self = .identity
            return
        }
        let a = Double(m[0]), b = Double(m[1]), c = Double(m[3]), d = Double(m[4])
        // A negative determinant: a mirror is part of it. Undo it on the right (the mirror comes
        // first) and read the rotation from where the x axis ends up.
        let mirrored = a * d - b * c < 0
        let (x, y) = mirrored ? (-a, -b) : (a, b)
        guard x != 0 || y != 0 else {
            self = .identity
            return
        }
        // The image of (1, 0): (1, 0) upright, (0, 1) a clockwise quarter turn (y points down).
        let degrees = Int((atan2Degrees(y, x)).rounded())
        self.init(rotation: degrees, isMirrored: mirrored)
    }

    // MARK: The group

    /// First `self`, then `next`.
    /// - Parameter next: the orientation applied after this one.
    /// - Returns: the one orientation that turns a picture as both do, one after the other.
    public func followed(by next: VideoOrientation) -> VideoOrientation {
        // A mirror followed by a rotation r equals the rotation -r followed by the mirror.
        let turn = next.isMirrored ? -rotation : rotation
        return VideoOrientation(rotation: turn + next.rotation, isMirrored: isMirrored != next.isMirrored)
    }

    /// The orientation that undoes this one.
    public var inverse: VideoOrientation {
        isMirrored ? self : VideoOrientation(rotation: -rotation)
    }

    // MARK: Applying it

    /// The displayed size of a stored picture.
    /// - Parameter stored: the stored picture's size.
    /// - Returns: `stored`, with width and height exchanged for a quarter turn.
    public func displayedSize(of stored: PixelSize) -> PixelSize {
        swapsDimensions ? stored.transposed : stored
    }

    /// The stored pixel that displayed pixel (`x`, `y`) shows, for a stored picture of `stored`.
    /// - Parameters:
    ///   - point: a pixel of the displayed picture, counted from its top-left corner.
    ///   - stored: the stored picture's size.
    /// - Returns: the stored pixel it shows, counted from the stored picture's top-left corner.
    public func storedPoint(forDisplayed point: (x: Int, y: Int), stored: PixelSize) -> (x: Int, y: Int) {
        let w = stored.width, h = stored.height
        let (dx, dy) = point
        // Undo the rotation (in the mirrored picture, which has the stored size)...
        var (ux, uy): (Int, Int)
        switch rotation {
        case 90: (ux, uy) = (dy, h - 1 - dx)
        case 180: (ux, uy) = (w - 1 - dx, h - 1 - dy)
        case 270: (ux, uy) = (w - 1 - dy, dx)
        default: (ux, uy) = (dx, dy)
        }
        // ...then the mirror.
        if isMirrored { ux = w - 1 - ux }
        return (ux, uy)
    }
}

private func atan2Degrees(_ y: Double, _ x: Double) -> Double {
    // Exact for the axis-aligned matrices that occur in practice.
    if y == 0 { return x > 0 ? 0 : 180 }
    if x == 0 { return y > 0 ? 90 : 270 }
    var degrees = atan2Approximation(y, x) * 180 / Double.pi
    if degrees < 0 { degrees += 360 }
    return degrees
}

/// `atan2` without Foundation (this file is pure).
private func atan2Approximation(_ y: Double, _ x: Double) -> Double {
    // Reduce to atan on [0, 1] and use its series-free rational approximation; accurate to well
    // under a degree, which is all quarter-turn rounding needs.
    let ax = abs(x), ay = abs(y)
    let swap = ay > ax
    let t = swap ? ax / ay : ay / ax
    var angle = t * (Double.pi / 4) + 0.273 * t * (1 - t)
    if swap { angle = Double.pi / 2 - angle }
    if x < 0 { angle = Double.pi - angle }
    return y < 0 ? -angle : angle
}
