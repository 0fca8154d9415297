internal import CFFmpeg

/// What a container says of a track's role (FFmpeg's stream dispositions): the track a player
/// picks by default, subtitles forced on, a commentary, one for the hearing or the visually
/// impaired, a cover picture rather than a video, …
///
/// `rawValue` holds FFmpeg's `AV_DISPOSITION_*` bits; ``names`` are FFmpeg's names of them, as
/// `ffprobe` prints them (`default`, `forced`, `comment`, `hearing_impaired`, `attached_pic`, …).
public struct TrackFlags: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The track a player picks when nothing else is asked.
    public static let `default` = TrackFlags(rawValue: Int(AV_DISPOSITION_DEFAULT))
    /// A dubbed (not the original) language.
    public static let dub = TrackFlags(rawValue: Int(AV_DISPOSITION_DUB))
    /// The original language.
    public static let original = TrackFlags(rawValue: Int(AV_DISPOSITION_ORIGINAL))
    /// A commentary.
    public static let comment = TrackFlags(rawValue: Int(AV_DISPOSITION_COMMENT))
    /// Song lyrics.
    public static let lyrics = TrackFlags(rawValue: Int(AV_DISPOSITION_LYRICS))
    /// Karaoke (the song without its voice).
    public static let karaoke = TrackFlags(rawValue: Int(AV_DISPOSITION_KARAOKE))
    /// Subtitles shown whatever the viewer chose (a film's foreign-language lines).
    public static let forced = TrackFlags(rawValue: Int(AV_DISPOSITION_FORCED))
    /// For the hearing impaired (captions that say sounds too).
    public static let hearingImpaired = TrackFlags(rawValue: Int(AV_DISPOSITION_HEARING_IMPAIRED))
    /// For the visually impaired (audio description).
    public static let visualImpaired = TrackFlags(rawValue: Int(AV_DISPOSITION_VISUAL_IMPAIRED))
    /// Sound without speech (music and effects).
    public static let cleanEffects = TrackFlags(rawValue: Int(AV_DISPOSITION_CLEAN_EFFECTS))
    /// A picture attached to the file (cover art), not a video: it never plays as one.
    public static let attachedPicture = TrackFlags(rawValue: Int(AV_DISPOSITION_ATTACHED_PIC))
    /// Pictures sparse in time (thumbnails along the timeline).
    public static let timedThumbnails = TrackFlags(rawValue: Int(AV_DISPOSITION_TIMED_THUMBNAILS))
    /// Captions (subtitles that carry sounds as well as speech).
    public static let captions = TrackFlags(rawValue: Int(AV_DISPOSITION_CAPTIONS))
    /// Descriptions of the picture (text for the visually impaired).
    public static let descriptions = TrackFlags(rawValue: Int(AV_DISPOSITION_DESCRIPTIONS))
    /// Timed metadata.
    public static let metadata = TrackFlags(rawValue: Int(AV_DISPOSITION_METADATA))
    /// Meant to be played only with another track (a second angle, an extra channel group).
    public static let dependent = TrackFlags(rawValue: Int(AV_DISPOSITION_DEPENDENT))
    /// A still picture in a video track.
    public static let stillImage = TrackFlags(rawValue: Int(AV_DISPOSITION_STILL_IMAGE))

    /// FFmpeg's name of each flag set (`av_disposition_to_string`), lowest bit first: the names
    /// `ffprobe -show_streams` gives its `disposition` entries.
    public var names: [String] {
        var names: [String] = []
        var bit = 1
        for _ in 0..<Int32.bitWidth {
            if rawValue & bit != 0, let name = av_disposition_to_string(Int32(truncatingIfNeeded: bit)) { names.append(String(cString: name)) }
            bit <<= 1
        }
        return names
    }
}
