/// One variant of an HLS master playlist: the same programme at one bit rate and picture size
/// (`#EXT-X-STREAM-INF`), as FFmpeg's HLS demuxer lists it (a program per variant).
public struct AssetVariant: Sendable, Hashable, Identifiable {
    /// Its position among the master playlist's variants (0-based, in the playlist's order).
    public var index: Int
    public var id: Int { index }
    /// The bit rate the playlist declares for it (`BANDWIDTH`), in bits per second; 0 when it declares none.
    public var bandwidth: Int
    /// Its picture's size, as its first segment shows it (nil: a variant without a picture).
    public var size: PixelSize?
    /// Its picture's frame rate, when known.
    public var frameRate: Double?
    /// FFmpeg's names of its streams' codecs (`h264`, `aac`), in stream order.
    public var codecs: [String]
    /// The stream indices (as ``AssetTrack/index``) it is made of.
    public var trackIndices: [Int]
    /// It is the variant that plays (``VariantPreference``): only its segments are fetched.
    public var isSelected: Bool

    /// A variant of the given parts.
    /// - Parameters:
    ///   - index: its position in the master playlist.
    ///   - bandwidth: its declared bits per second.
    ///   - size: its picture size, nil without a picture.
    ///   - frameRate: its picture's frame rate, when known.
    ///   - codecs: its streams' codec names.
    ///   - trackIndices: its streams' indices.
    ///   - isSelected: whether it plays.
    public init(
        index: Int, bandwidth: Int, size: PixelSize? = nil, frameRate: Double? = nil, codecs: [String] = [], trackIndices: [Int] = [],
        isSelected: Bool = false
    ) {
        self.index = index
        self.bandwidth = bandwidth
        self.size = size
        self.frameRate = frameRate
        self.codecs = codecs
        self.trackIndices = trackIndices
        self.isSelected = isSelected
    }
}

/// Which variant of an HLS master playlist plays (`AVPlayerItem`'s `preferredPeakBitRate` and
/// `preferredMaximumResolution`): the one of the highest bandwidth within the limits, or the
/// lowest. When none is within them, the lowest plays (a picture rather than none). Only the
/// chosen variant's segments are fetched (its streams alone are read; the others are discarded),
/// once the open has analysed each variant's first segment, as `ffprobe` does.
public struct VariantPreference: Sendable, Hashable {
    /// The lowest bandwidth rather than the highest that fits.
    public var lowest: Bool
    /// The most bits per second a variant may declare; nil: no limit.
    public var maximumBitRate: Int?
    /// The largest picture a variant may have (both sides within it); nil: no limit.
    public var maximumSize: PixelSize?

    /// A preference: the highest variant within the limits, or the lowest.
    /// - Parameters:
    ///   - lowest: whether the lowest bandwidth plays, whatever the limits.
    ///   - maximumBitRate: bits per second a variant may declare at most; nil: no limit.
    ///   - maximumSize: the largest picture size; nil: no limit.
    public init(lowest: Bool = false, maximumBitRate: Int? = nil, maximumSize: PixelSize? = nil) {
        self.lowest = lowest
        self.maximumBitRate = maximumBitRate
        self.maximumSize = maximumSize
    }

    /// The one rule: the ``AssetVariant/index`` of the variant that plays, nil when there are
    /// none. Only variants whose streams were found are chosen, and only those with a picture
    /// while any has one (a sound-only rung of the ladder plays when nothing else can). Among equal bandwidths, the larger picture (the smaller, for the lowest), then the
    /// first listed. Pure.
    /// - Parameter variants: the master playlist's variants.
    /// - Returns: the chosen variant's index.
    package func choose(among given: [AssetVariant]) -> Int? {
        // A variant that holds no stream (its playlist could not be read) never plays; one
        // without a picture (sound only) only when no variant has one.
        let readable = given.filter { !$0.trackIndices.isEmpty }
        let pictured = readable.filter { $0.size != nil }
        let variants = pictured.isEmpty ? readable : pictured
        func pixels(_ variant: AssetVariant) -> Int { (variant.size?.width ?? 0) * (variant.size?.height ?? 0) }
        func below(_ a: AssetVariant, _ b: AssetVariant) -> Bool {
            a.bandwidth != b.bandwidth ? a.bandwidth < b.bandwidth : pixels(a) != pixels(b) ? pixels(a) < pixels(b) : a.index < b.index
        }
        let lowestOne = variants.min(by: below)
        if lowest { return lowestOne?.index }
        let fitting = variants.filter { variant in
            let rate = maximumBitRate.map { variant.bandwidth <= $0 } ?? true
            let size = maximumSize.map { limit in variant.size.map { $0.width <= limit.width && $0.height <= limit.height } ?? true } ?? true
            return rate && size
        }
        // The highest: the most bandwidth, the larger picture, the first listed of equals.
        let highest = fitting.max { a, b in
            a.bandwidth != b.bandwidth ? a.bandwidth < b.bandwidth : pixels(a) != pixels(b) ? pixels(a) < pixels(b) : a.index > b.index
        }
        return (highest ?? lowestOne)?.index
    }
}
