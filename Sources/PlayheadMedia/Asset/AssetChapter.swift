/// One chapter of an asset, as its container marks it (Matroska's and MP4's chapters, an MP3's
/// `CHAP` frames).
public struct AssetChapter: Sendable, Hashable, Identifiable {
    /// The container's identifier of the chapter.
    public var id: Int64
    /// Its name, when the container gives one.
    public var title: String?
    /// Where it starts and how long it lasts, on the asset's timeline.
    public var timeRange: TimeRange
    /// Its other tags (other than `title`), as the container gives them.
    public var metadata: [String: String]

    /// A chapter.
    /// - Parameters:
    ///   - id: the container's identifier of the chapter.
    ///   - title: its name, when there is one.
    ///   - timeRange: its span on the asset's timeline.
    ///   - metadata: its other tags.
    public init(id: Int64, title: String?, timeRange: TimeRange, metadata: [String: String] = [:]) {
        self.id = id
        self.title = title
        self.timeRange = timeRange
        self.metadata = metadata
    }
}
