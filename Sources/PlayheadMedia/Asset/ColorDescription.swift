/// How a video track's samples map to colours: the matrix from YUV to RGB, the range of the
/// sample values, the primaries and the transfer characteristic — as the stream is tagged, in
/// FFmpeg's (and ffprobe's) names. Nil where the stream does not say.
///
/// Conversion to RGB honours the matrix and the range exactly as ffmpeg's scale filter does
/// (each frame's own tags; an untagged stream is converted as BT.601, limited range).
public struct ColorDescription: Sendable, Hashable {
    /// The range of sample values.
    public enum Range: String, Sendable, Hashable {
        /// 16…235 for luma (8-bit): "tv", "mpeg", limited.
        case limited
        /// 0…255: "pc", "jpeg", full.
        case full
    }

    /// The YUV→RGB matrix, such as `bt709`, `bt470bg`, `smpte170m`, `bt2020nc`.
    public var matrix: String?
    public var range: Range?
    /// The colour primaries, such as `bt709` or `bt2020`.
    public var primaries: String?
    /// The transfer characteristic, such as `bt709`, `smpte2084` (PQ) or `arib-std-b67` (HLG).
    public var transfer: String?

    /// A description with the given tags; nil for what the stream does not say.
    /// - Parameters:
    ///   - matrix: the YUV→RGB matrix, such as `bt709`.
    ///   - range: the range of sample values.
    ///   - primaries: the colour primaries, such as `bt709`.
    ///   - transfer: the transfer characteristic, such as `smpte2084`.
    public init(matrix: String? = nil, range: Range? = nil, primaries: String? = nil, transfer: String? = nil) {
        self.matrix = matrix
        self.range = range
        self.primaries = primaries
        self.transfer = transfer
    }

    /// `true` when the stream says nothing about its colours.
    public var isUnspecified: Bool { matrix == nil && range == nil && primaries == nil && transfer == nil }
}
