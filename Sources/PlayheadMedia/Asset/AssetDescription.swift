/// Everything one probe of a file learns: the container and its tracks. Every asset key is read
/// from this snapshot.
package struct AssetDescription: Sendable, Hashable {
    package var formatName: String
    var formatLongName: String?
    package var duration: MediaTime
    package var startTime: MediaTime
    package var bitRate: Int?
    package var tracks: [AssetTrack]
    package var metadata: [String: String]
    /// The container's chapters, in its order.
    package var chapters: [AssetChapter] = []
    /// An HLS master playlist's variants (none for another source).
    package var variants: [AssetVariant] = []
    /// What the file says of its work (title, artist, album, …).
    package var commonMetadata = AssetMetadata()
    /// The file's cover picture, if it has one.
    package var coverArt: AssetCoverArt? = nil
    /// The source cannot seek or be opened again (a pipe, a FIFO, standard input).
    package var isOneShot = false
    /// The source's size in bytes, when it is one file whose size is known (not a pipe, not HLS).
    package var byteCount: Int64? = nil
    /// Why no picture can be taken of the asset (nil: its video plays): no video stream, or only a
    /// cover picture (``TrackFlags/attachedPicture``), as the demuxer's one choice of its video
    /// stream decides (``Demuxer/missingVideo(what:)``).
    package var noPicture: PlayheadError? = nil
    /// Why the selection's sound cannot play (``MediaSelection``; nil: it can, or none is asked).
    package var unmetSelection: PlayheadError? = nil

    /// Playable when at least one audio or video track has a decoder and is in the clear.
    package var isPlayable: Bool {
        tracks.contains { ($0.playsAsVideo || $0.mediaType == .audio) && $0.isPlayable }
    }

    /// Why nothing in the asset can be played, for `file` (nil when something can): its audio and
    /// video are encrypted (`decode.encrypted`, naming the scheme), or have no decoder in this
    /// build (`decode.decoderNotFound`, naming the codecs), or there is no audio or video at all
    /// (`demux.noStreams`, naming what there is). The one place this is decided.
    package func unplayableReason(file: String) -> PlayheadError? {
        guard !isPlayable else { return nil }
        let media = tracks.filter { $0.playsAsVideo || $0.mediaType == .audio }
        let list = { (tracks: [AssetTrack]) in tracks.map { "\($0.mediaType.rawValue) #\($0.index) \($0.codecName)" }.joined(separator: ", ") }
        let encrypted = media.filter { $0.encryptionScheme != nil }
        if let scheme = encrypted.first?.encryptionScheme {
            return PlayheadError(
                code: .encrypted,
                message: "the tracks are encrypted (scheme \(scheme): \(list(encrypted))): they cannot be decoded without their key",
                file: file)
        }
        if !media.isEmpty {
            return PlayheadError(code: .decoderNotFound, message: "no decoder in this build for \(list(media))", file: file)
        }
        let others = tracks.isEmpty ? "no tracks" : "only \(list(tracks))"
        return PlayheadError(code: .noStreams, message: "no audio or video track (\(others))", file: file)
    }
}
