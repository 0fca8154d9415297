/// Everything one probe of a file learns: the container and its tracks. Every asset key is read
/// from this snapshot.
struct AssetDescription: Sendable, Hashable {
    var formatName: String
    var formatLongName: String?
    var duration: MediaTime
    var startTime: MediaTime
    var bitRate: Int?
    var tracks: [AssetTrack]
    var metadata: [String: String]
    /// The source cannot seek or be opened again (a pipe, a FIFO, standard input).
    var isOneShot = false

    /// Playable when at least one audio or video track has a decoder.
    var isPlayable: Bool {
        tracks.contains { ($0.mediaType == .video || $0.mediaType == .audio) && $0.isPlayable }
    }
}
