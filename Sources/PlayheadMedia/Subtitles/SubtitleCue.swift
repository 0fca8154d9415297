/// One subtitle as it shows: its time on the asset's timeline and its text.
public struct SubtitleCue: Sendable, Hashable {
    /// When it appears, on the asset's timeline (the container's own timestamps).
    public var start: MediaTime
    /// When it goes; ``MediaTime/indefinite`` when the stream does not say (a cue that lasts
    /// until the next one).
    public var end: MediaTime
    /// Its text, styling taken away (ASS override tags removed, `\N` as a line break).
    public var text: String
    /// Its text with its styling, as an ASS event's text (`{\i1}Hello{\i0}`); nil for a bitmap cue.
    public var styledText: String?
    /// A bitmap subtitle (PGS, DVB, DVD) has pictures, not text: how many (its text is empty).
    public var pictureCount: Int
    /// A bitmap subtitle's pictures and their places, when they were asked for
    /// (``Asset/subtitleCues(_:pictures:bufferingLimit:)``); empty otherwise.
    public var pictures: [SubtitlePicture]
    /// The subtitles are forced (shown whatever a viewer chose: a film's foreign-language lines).
    public var isForced: Bool

    /// A cue of the given parts.
    /// - Parameters:
    ///   - start: when it appears.
    ///   - end: when it goes.
    ///   - text: its text without styling.
    ///   - styledText: its ASS text, when it has text.
    ///   - pictureCount: how many pictures a bitmap cue has.
    ///   - isForced: whether it is forced.
    ///   - pictures: a bitmap cue's pictures.
    public init(
        start: MediaTime, end: MediaTime, text: String, styledText: String? = nil, pictureCount: Int = 0, isForced: Bool = false,
        pictures: [SubtitlePicture] = []
    ) {
        self.start = start
        self.end = end
        self.text = text
        self.styledText = styledText
        self.pictureCount = pictureCount
        self.isForced = isForced
        self.pictures = pictures
    }
}

/// The forms subtitles are written in (FFmpeg's text subtitle encoders and muxers, as `ffmpeg -c:s`
/// writes them) and a JSON list of cues.
public enum SubtitleFormat: String, Sendable, Hashable, CaseIterable {
    /// SubRip (`.srt`).
    case srt
    /// WebVTT (`.vtt`).
    case vtt
    /// Advanced SubStation Alpha (`.ass`), styling kept.
    case ass
    /// `[{"start", "end", "text"}]` in seconds.
    case json

    /// The file name extension.
    public var fileExtension: String { rawValue }
}

/// ASS event text as plain text: what ``SubtitleCue/text`` holds.
package enum ASSText {
    /// The text of a decoded ASS event line (`ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`,
    /// as FFmpeg's text decoders give it): the part after the eighth comma.
    /// - Parameter event: the event line.
    /// - Returns: its text, with its styling.
    package static func styled(event: String) -> String {
        var commas = 0
        var index = event.startIndex
        while index < event.endIndex, commas < 8 {
            if event[index] == "," { commas += 1 }
            index = event.index(after: index)
        }
        return commas == 8 ? String(event[index...]) : event
    }

    /// `text` with its override blocks (`{\i1}`: a `{` that a `}` closes, as libass reads them)
    /// removed, `\N` as a line break, `\n` and `\h` as spaces.
    /// - Parameter text: an ASS event's text.
    /// - Returns: the words as they read.
    package static func plain(_ text: String) -> String {
        var out = ""
        var inBlock = false
        var escape = false
        let characters = Array(text)
        // A `{` opens a block only when a `}` comes after it: before the last `}`.
        let lastClose = characters.lastIndex(of: "}") ?? -1
        for (position, character) in characters.enumerated() {
            if inBlock {
                if character == "}" { inBlock = false }
                continue
            }
            if escape {
                escape = false
                switch character {
                case "N": out.append("\n")
                case "n", "h": out.append(" ")
                default:
                    out.append("\\")
                    out.append(character)
                }
                continue
            }
            switch character {
            case "{" where position < lastClose: inBlock = true
            case "\\": escape = true
            default: out.append(character)
            }
        }
        if escape { out.append("\\") }
        return out
    }
}

/// The cues of one subtitle track of an asset.
public struct SubtitleTrack: Sendable, Hashable {
    /// The track read (its ``AssetTrack/index``).
    public var trackIndex: Int
    /// Its cues, in the container's order, on the asset's timeline.
    public var cues: [SubtitleCue]
    /// Damaged packets passed over while reading.
    public var damagedPackets: Int
    /// The picture size a bitmap track's ``SubtitlePicture/rect``s count in (the size the stream
    /// declares, as FFmpeg's decoder reads it; nil when it declares none: the video's).
    public var canvasSize: PixelSize?

    package init(trackIndex: Int, cues: [SubtitleCue], damagedPackets: Int, canvasSize: PixelSize? = nil) {
        self.trackIndex = trackIndex
        self.cues = cues
        self.damagedPackets = damagedPackets
        self.canvasSize = canvasSize
    }
}

/// A subtitle track written as a file.
public struct SubtitleFile: Sendable, Hashable {
    /// The track read (its ``AssetTrack/index``).
    public var trackIndex: Int
    /// Where the file is.
    public var path: String
    /// The cues it holds.
    public var cueCount: Int
    /// Damaged packets passed over while reading.
    public var damagedPackets: Int

    package init(trackIndex: Int, path: String, cueCount: Int, damagedPackets: Int) {
        self.trackIndex = trackIndex
        self.path = path
        self.cueCount = cueCount
        self.damagedPackets = damagedPackets
    }
}
