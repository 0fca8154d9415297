/// What a file says of its work, under the names every container's tags are read as (FFmpeg's
/// generic names: an MP4's `©nam`, an ID3 `TIT2`, a Vorbis comment's `TITLE` are all `title`):
/// AVFoundation's `commonMetadata`. The container's tags come first; a file whose tags sit on its
/// sound (Ogg, Opus) gives that sound's.
public struct AssetMetadata: Sendable, Hashable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var composer: String?
    public var genre: String?
    /// The date as the file writes it (`2024`, `2024-05-01`), else its creation time.
    public var date: String?
    public var comment: String?
    public var copyright: String?
    /// The track number as written (`3`, `3/12`).
    public var track: String?
    /// The disc number as written.
    public var disc: String?

    /// Nothing is said.
    public var isEmpty: Bool { self == AssetMetadata() }

    /// No metadata.
    public init() {}

    /// The common metadata of `tags` (the container's), then of `fallback` (the sound's).
    /// - Parameters:
    ///   - tags: FFmpeg's tags of the container, by their generic names.
    ///   - fallback: the tags of the track that plays its sound.
    package init(tags: [String: String], fallback: [String: String] = [:]) {
        func value(_ keys: String...) -> String? {
            for source in [tags, fallback] {
                for key in keys {
                    if let found = source.first(where: { $0.key.lowercased() == key })?.value, !found.isEmpty { return found }
                }
            }
            return nil
        }
        title = value("title")
        artist = value("artist", "author")
        album = value("album")
        albumArtist = value("album_artist")
        composer = value("composer")
        genre = value("genre")
        date = value("date", "year", "creation_time")
        comment = value("comment", "description")
        copyright = value("copyright")
        track = value("track")
        disc = value("disc")
    }
}

/// A picture attached to the file (cover art): which track holds it, its codec and size.
public struct AssetCoverArt: Sendable, Hashable {
    /// The track that holds it (``AssetTrack/index``; flagged ``TrackFlags/attachedPicture``).
    public var trackIndex: Int
    /// Its codec (`mjpeg`, `png`).
    public var codecName: String
    /// Its size, when its stream says.
    public var size: PixelSize?

    package init(trackIndex: Int, codecName: String, size: PixelSize?) {
        self.trackIndex = trackIndex
        self.codecName = codecName
        self.size = size
    }
}
