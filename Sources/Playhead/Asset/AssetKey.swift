import PlayheadMedia

/// The name of a loadable property of an ``Asset``; used to ask for a key's status.
public struct AssetKey: Sendable, Hashable, CustomStringConvertible {
    public let name: String

    init(_ name: String) { self.name = name }

    public var description: String { name }

    public static let tracks = AssetKey("tracks")
    public static let isPlayable = AssetKey("isPlayable")
    public static let duration = AssetKey("duration")
    public static let startTime = AssetKey("startTime")
    public static let formatName = AssetKey("formatName")
    public static let bitRate = AssetKey("bitRate")
    public static let metadata = AssetKey("metadata")
    public static let byteCount = AssetKey("byteCount")
    public static let chapters = AssetKey("chapters")
    public static let variants = AssetKey("variants")
    public static let unmetSelection = AssetKey("unmetSelection")
    public static let commonMetadata = AssetKey("commonMetadata")
    public static let coverArt = AssetKey("coverArt")
}

/// A typed, loadable property of an ``Asset``: `try await asset.load(.tracks, .duration)`.
public struct AssetProperty<Value: Sendable>: Sendable {
    /// The key whose status tracks this property.
    public let key: AssetKey
    let read: @Sendable (AssetDescription) -> Value
}

extension AssetProperty where Value == [AssetTrack] {
    /// Every stream of the container, in container order.
    public static var tracks: AssetProperty { AssetProperty(key: .tracks) { $0.tracks } }
}

extension AssetProperty where Value == Bool {
    /// `true` when at least one audio or video track can be decoded.
    public static var isPlayable: AssetProperty { AssetProperty(key: .isPlayable) { $0.isPlayable } }
}

extension AssetProperty where Value == MediaTime {
    /// The asset's duration; ``MediaTime/indefinite`` when the container does not say.
    public static var duration: AssetProperty { AssetProperty(key: .duration) { $0.duration } }
    /// The timestamp of the asset's first sample (often zero).
    public static var startTime: AssetProperty { AssetProperty(key: .startTime) { $0.startTime } }
}

extension AssetProperty where Value == String {
    /// FFmpeg's name for the container format, such as `mov,mp4,m4a,3gp,3g2,mj2` or `matroska,webm`.
    public static var formatName: AssetProperty { AssetProperty(key: .formatName) { $0.formatName } }
}

extension AssetProperty where Value == Int? {
    /// The container's overall bit rate in bits per second, when known.
    public static var bitRate: AssetProperty { AssetProperty(key: .bitRate) { $0.bitRate } }
}

extension AssetProperty where Value == Int64? {
    /// The source's size in bytes: known for a file, a byte source that tells its size, or an HTTP
    /// resource whose server does; nil for a pipe, a live stream or an HLS playlist.
    public static var byteCount: AssetProperty { AssetProperty(key: .byteCount) { $0.byteCount } }
}

extension AssetProperty where Value == [String: String] {
    /// The container's metadata tags (title, encoder, …).
    public static var metadata: AssetProperty { AssetProperty(key: .metadata) { $0.metadata } }
}

extension AssetProperty where Value == [AssetChapter] {
    /// The container's chapters, in its order (none when it marks none).
    public static var chapters: AssetProperty { AssetProperty(key: .chapters) { $0.chapters } }
}

extension AssetProperty where Value == AssetMetadata {
    /// What the file says of its work under every container's common names (title, artist,
    /// album, date, …): AVFoundation's `commonMetadata`.
    public static var commonMetadata: AssetProperty { AssetProperty(key: .commonMetadata) { $0.commonMetadata } }
}

extension AssetProperty where Value == AssetCoverArt? {
    /// The file's cover picture (its track, codec and size), if it has one; ``Asset/coverArtImage()`` decodes it.
    public static var coverArt: AssetProperty { AssetProperty(key: .coverArt) { $0.coverArt } }
}

extension AssetProperty where Value == PlayheadError? {
    /// Why the asset's ``AssetOptions/selection`` cannot be met — `demux.trackNotFound` naming
    /// what the file holds (no French sound) — or nil when it can. Its picture still plays; what
    /// needs its sound (a session with an audio sink, a layer that gives its sound) fails with it.
    public static var unmetSelection: AssetProperty { AssetProperty(key: .unmetSelection) { $0.unmetSelection } }
}

extension AssetProperty where Value == [AssetVariant] {
    /// An HLS master playlist's variants, in its order, the one that plays marked
    /// (``AssetVariant/isSelected``); none for any other source.
    public static var variants: AssetProperty { AssetProperty(key: .variants) { $0.variants } }
}

/// Where the loading of one key stands.
public enum AssetKeyStatus: Sendable, Hashable {
    case notYetLoaded
    case loading
    case loaded
    case failed(PlayheadError)
    case cancelled
}
