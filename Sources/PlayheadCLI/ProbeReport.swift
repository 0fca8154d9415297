import ArgumentParser
import Foundation
import Playhead

/// `{"assets": [...]}`: the document `playhead probe --json` prints.
struct ProbeDocument: Encodable, Sendable {
    var assets: [AssetReport]
}

/// One file's entry in the probe report. Optional fields are left out where they do not apply.
struct AssetReport: Encodable, Sendable {
    var path: String
    var status: String
    var isPlayable: Bool?
    var format: String?
    var duration: Double?
    var startTime: Double?
    var bitRate: Int?
    var tracks: [TrackReport]?
    /// The container's chapters (left out when it marks none).
    var chapters: [ChapterReport]?
    /// An HLS master playlist's variants (left out for any other source).
    var variants: [VariantReport]?
    /// What the file says of its work (left out when it says nothing).
    var metadata: MetadataReport?
    /// Its cover picture (left out when it has none).
    var coverArt: CoverArtReport?
    var error: ErrorReport?
    /// Whether a track of its picture (never a cover) and of its sound can be decoded (nil: it has
    /// none); for the table, not encoded.
    var decodable: (picture: Bool?, sound: Bool?) = (nil, nil)

    enum CodingKeys: String, CodingKey {
        case path, status, isPlayable, format, duration, startTime, bitRate, tracks, chapters, variants, metadata, coverArt, error
    }

    /// A loaded file always has `duration`: `null` when unknown (never invented); a failed one has
    /// none of the loaded keys.
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(isPlayable, forKey: .isPlayable)
        try container.encodeIfPresent(format, forKey: .format)
        if status == "loaded" { try container.encode(duration, forKey: .duration) }
        try container.encodeIfPresent(startTime, forKey: .startTime)
        try container.encodeIfPresent(bitRate, forKey: .bitRate)
        try container.encodeIfPresent(tracks, forKey: .tracks)
        try container.encodeIfPresent(chapters, forKey: .chapters)
        try container.encodeIfPresent(variants, forKey: .variants)
        try container.encodeIfPresent(metadata, forKey: .metadata)
        try container.encodeIfPresent(coverArt, forKey: .coverArt)
        try container.encodeIfPresent(error, forKey: .error)
    }

    init(
        path: String, format: String, duration: MediaTime, startTime: MediaTime, bitRate: Int?, tracks: [AssetTrack], isPlayable: Bool,
        chapters: [AssetChapter] = [], variants: [AssetVariant] = [], metadata: AssetMetadata = AssetMetadata(), cover: AssetCoverArt? = nil
    ) {
        self.path = SourceRedaction.redacted(path)
        self.status = "loaded"
        self.isPlayable = isPlayable
        self.format = format
        self.duration = duration.jsonSeconds
        self.startTime = startTime.jsonSeconds
        self.bitRate = bitRate
        self.tracks = tracks.map(TrackReport.init)
        self.chapters = chapters.isEmpty ? nil : chapters.map(ChapterReport.init)
        self.variants = variants.isEmpty ? nil : variants.map(VariantReport.init)
        self.metadata = metadata.isEmpty ? nil : MetadataReport(metadata)
        self.coverArt = cover.map(CoverArtReport.init)
        func decodable(_ of: [AssetTrack]) -> Bool? { of.isEmpty ? nil : of.contains(where: \.isPlayable) }
        self.decodable = (decodable(tracks.filter(\.playsAsVideo)), decodable(tracks.filter { $0.mediaType == .audio }))
    }

    init(path: String, error: PlayheadError) {
        self.path = SourceRedaction.redacted(path)
        self.status = error.code == .cancelled ? "cancelled" : "failed"
        self.error = ErrorReport(error)
    }
}

struct ErrorReport: Encodable, Sendable {
    var code: String
    /// The message naming the file.
    var message: String
    var cause: String?
    /// The message alone, for the table, which names the file already.
    var reason: String

    init(_ error: PlayheadError) {
        code = error.code.description
        message = error.file.map { "\($0): \(error.message)" } ?? error.message
        cause = error.cause?.description
        reason = error.message
    }

    enum CodingKeys: String, CodingKey { case code, message, cause }
}

struct SizeReport: Encodable, Sendable {
    var width: Int
    var height: Int
    init(_ size: PixelSize) {
        width = size.width
        height = size.height
    }
}

struct TrackReport: Encodable, Sendable {
    struct Ratio: Encodable {
        var horizontal: Int
        var vertical: Int
    }
    struct Range: Encodable {
        var start: Double?
        var duration: Double?
    }

    var index: Int
    var trackID: Int
    var mediaType: String
    var codec: String
    var isPlayable: Bool
    /// The encryption scheme (`cenc`, `cbcs`, …) of an encrypted track.
    var encryption: String?
    var naturalSize: SizeReport?
    var pixelAspectRatio: Ratio?
    var rotation: Int?
    var mirrored: Bool?
    var presentationSize: SizeReport?
    var pixelFormat: String?
    var nominalFrameRate: Double?
    /// The colour tags (left out when the stream has none).
    var color: ColorReport?
    var timeRange: Range
    var sampleRate: Int?
    var channels: Int?
    var channelLayout: String?
    var language: String?
    /// The track's own name (left out when it has none).
    var title: String?
    /// FFmpeg's names of its dispositions (`default`, `comment`, `attached_pic`, …; left out when
    /// none is set).
    var flags: [String]?
    /// The track plays: the picture and the sound every command reads (by `--audio-track`).
    var selected: Bool
    var bitRate: Int?

    init(_ track: AssetTrack) {
        index = track.index
        trackID = track.trackID
        mediaType = track.mediaType.rawValue
        codec = track.codecName
        isPlayable = track.isPlayable
        encryption = track.encryptionScheme
        if let video = track.video {
            naturalSize = SizeReport(video.naturalSize)
            pixelAspectRatio = Ratio(horizontal: video.pixelAspectRatio.horizontal, vertical: video.pixelAspectRatio.vertical)
            rotation = video.rotation
            mirrored = video.orientation.isMirrored ? true : nil
            presentationSize = SizeReport(video.presentationSize)
            pixelFormat = video.pixelFormat
            nominalFrameRate = video.nominalFrameRate
            color = video.color.isUnspecified ? nil : ColorReport(video.color)
        }
        if let audio = track.audio {
            sampleRate = audio.sampleRate
            channels = audio.channelCount
            channelLayout = audio.channelLayout
        }
        timeRange = Range(start: track.timeRange.start.jsonSeconds, duration: track.timeRange.duration.jsonSeconds)
        language = track.language
        title = track.title
        flags = track.flags.names.isEmpty ? nil : track.flags.names
        selected = track.isSelected
        bitRate = track.bitRate
    }
}

/// What a file says of its work, by the common names (keys left out when not said).
struct MetadataReport: Encodable, Sendable {
    var title, artist, album, albumArtist, composer, genre, date, comment, copyright, track, disc: String?

    init(_ metadata: AssetMetadata) {
        (title, artist, album, albumArtist, composer) = (metadata.title, metadata.artist, metadata.album, metadata.albumArtist, metadata.composer)
        (genre, date, comment, copyright, track, disc) = (
            metadata.genre, metadata.date, metadata.comment, metadata.copyright, metadata.track, metadata.disc
        )
    }
}

/// A file's cover picture: its track, codec and size.
struct CoverArtReport: Encodable, Sendable {
    var track: Int
    var codec: String
    var width: Int?
    var height: Int?

    init(_ cover: AssetCoverArt) {
        track = cover.trackIndex
        codec = cover.codecName
        width = cover.size?.width
        height = cover.size?.height
    }
}

/// One variant of an HLS master playlist: its declared bandwidth, picture size and rate, codecs,
/// streams, and whether it is the one that plays.
struct VariantReport: Encodable, Sendable {
    var bandwidth: Int
    var width: Int?
    var height: Int?
    var frameRate: Double?
    var codecs: [String]
    var tracks: [Int]
    var selected: Bool

    init(_ variant: AssetVariant) {
        bandwidth = variant.bandwidth
        width = variant.size?.width
        height = variant.size?.height
        frameRate = variant.frameRate
        codecs = variant.codecs
        tracks = variant.trackIndices
        selected = variant.isSelected
    }
}

/// One chapter: its title and where it starts and ends, in seconds (`end` left out when unknown).
struct ChapterReport: Encodable, Sendable {
    var title: String?
    var start: Double?
    var end: Double?

    init(_ chapter: AssetChapter) {
        title = chapter.title
        start = chapter.timeRange.start.jsonSeconds
        end = chapter.timeRange.end.jsonSeconds
    }
}

/// A video track's colour tags, in FFmpeg's names (`range`: `limited` or `full`).
struct ColorReport: Encodable, Sendable {
    var matrix: String?
    var range: String?
    var primaries: String?
    var transfer: String?

    init(_ color: ColorDescription) {
        matrix = color.matrix
        range = color.range?.rawValue
        primaries = color.primaries
        transfer = color.transfer
    }

    /// `bt709 limited` style, for the table.
    var brief: String {
        [matrix, range].compactMap { $0 }.joined(separator: " ")
    }
}

extension MediaTime {
    /// Seconds for JSON: nil (left out) when not a finite time.
    var jsonSeconds: Double? { isNumeric ? seconds : nil }
}

/// JSON documents of the commands.
enum JSONOutput {
    /// Pretty, sorted JSON. A number that is not finite (which the reports never hold: unknown
    /// values are left out or null) would still give valid JSON, as a string.
    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return Array(try encoder.encode(value))
    }

    /// Prints `value` on standard output.
    static func write<T: Encodable>(_ value: T) throws {
        Console.out(String(decoding: try encode(value), as: UTF8.self) + "\n")
    }
}

/// A command that ran but could not finish (exit status 1), with a plain message.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
}
