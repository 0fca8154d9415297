/// Which of a file's tracks play: the sound a player, a composition layer or a channel layer
/// reads, when the file holds several (a film dubbed in two languages, with a commentary).
///
/// Part of ``AssetOptions``: every reader of the asset — its sessions, image requests,
/// composition and channel layers — plays the same tracks, and ``AssetTrack/isSelected`` says
/// which. A selection the file cannot meet (no French sound) fails what needs the sound with
/// `demux.trackNotFound`, naming what the file holds, rather than playing another sound; what
/// needs only the picture plays (the asset's `unmetSelection` key says why the sound cannot).
public struct MediaSelection: Sendable, Hashable {
    /// The sound that plays.
    public var audio: TrackChoice
    /// Which variant of an HLS master playlist plays (its sound and picture are chosen among
    /// that variant's streams).
    public var variant: VariantPreference

    /// A selection of the sound and the variant.
    /// - Parameters:
    ///   - audio: the sound that plays (default: the file's default one).
    ///   - variant: the HLS variant that plays (default: the highest).
    public init(audio: TrackChoice = .default, variant: VariantPreference = VariantPreference()) {
        self.audio = audio
        self.variant = variant
    }
}

/// How a track is chosen among those of its kind.
public enum TrackChoice: Sendable, Hashable, CustomStringConvertible {
    /// The track the file marks as its default; among several (or none marked), FFmpeg's choice:
    /// one that is not for the hearing or the visually impaired, then the one whose packets
    /// analysed best, then the highest bit rate — what `ffplay` plays; unless this build has no
    /// decoder for it and has one for another (then the one marked default, else one that is not
    /// a commentary nor for the impaired, else the first).
    case `default`
    /// The track at this stream index (as `playhead probe` numbers them, from 0).
    case index(Int)
    /// A track in this language: an ISO 639 code (`fra`, `fre`, `fr`, `eng`…), matched as the
    /// two-letter code, either three-letter one (bibliographic or terminological) or the tag as
    /// written. Among several, the one marked default, then one that is not a commentary nor for
    /// the hearing or the visually impaired, then the first.
    case language(String)
    /// No track of this kind: a film plays without its sound.
    case none

    /// A choice as a user writes it: `default`, `none`, `lang:CODE`, or a stream index.
    /// - Parameter text: the choice, as typed.
    /// - Throws: ``PlayheadError`` (`state.invalidArgument`) naming what is accepted.
    public init(parsing text: String) throws(PlayheadError) {
        let trimmed = String(text.lowercased().drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
        switch trimmed {
        case "default", "auto": self = .default
        case "none", "off": self = .none
        default:
            if trimmed.hasPrefix("lang:") {
                let code = String(trimmed.dropFirst(5))
                guard (2...8).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }) else {
                    throw PlayheadError(
                        code: .invalidArgument, message: "'\(text)': a language is 2 to 8 letters, such as lang:fra or lang:en", file: nil)
                }
                self = .language(code)
            } else if let index = Int(trimmed), (0...65_535).contains(index) {
                self = .index(index)
            } else {
                throw PlayheadError(
                    code: .invalidArgument,
                    message: "'\(text)' is not a track: give a stream index as probe prints it (1), lang:CODE (lang:fra), default or none",
                    file: nil)
            }
        }
    }

    /// As a user writes it (`lang:fra`, `2`, `default`, `none`): ``init(parsing:)`` reads it back.
    public var description: String {
        switch self {
        case .default: return "default"
        case .index(let index): return String(index)
        case .language(let code): return "lang:" + code
        case .none: return "none"
        }
    }
}

/// What the choice of a track looks at: one stream of the file.
package struct TrackCandidate: Sendable, Hashable {
    package var index: Int
    package var mediaType: MediaType
    package var codecName: String
    /// The language tag as the container writes it (nil: none, or `und`).
    package var language: String?
    package var title: String?
    package var flags: TrackFlags
    /// This build has a decoder for it.
    package var isDecodable: Bool

    package init(
        index: Int, mediaType: MediaType, codecName: String, language: String?, title: String? = nil, flags: TrackFlags = [],
        isDecodable: Bool = true
    ) {
        self.index = index
        self.mediaType = mediaType
        self.codecName = codecName
        self.language = language
        self.title = title
        self.flags = flags
        self.isDecodable = isDecodable
    }

    /// What a message calls it: `audio #2 aac fra "Français" (default)`.
    var label: String {
        var text = "\(mediaType.rawValue) #\(index) \(codecName)"
        if let language { text += " " + language }
        if let title { text += " \"\(title)\"" }
        let roles = flags.names.filter { $0 != "attached_pic" }
        if !roles.isEmpty { text += " (" + roles.joined(separator: ", ") + ")" }
        return text
    }
}

extension TrackChoice {
    /// Not a commentary, nor for the hearing or the visually impaired.
    private static func isPlain(_ track: TrackCandidate) -> Bool { track.flags.isDisjoint(with: [.comment, .hearingImpaired, .visualImpaired]) }

    /// The one rule for choosing a track of `kind` (audio): the stream index that plays, nil for
    /// ``none``. Pure: the demuxer hands it the streams and FFmpeg's own best pick.
    /// - Parameters:
    ///   - kind: the kind of track chosen.
    ///   - candidates: every stream of the file.
    ///   - best: FFmpeg's best stream of the kind (`av_find_best_stream`), nil when it found none.
    ///   - file: the file's name, for the error.
    /// - Returns: the chosen stream's index; nil when none is to play (``none``, or ``default``
    ///   in a file without a track of the kind).
    /// - Throws: ``PlayheadError`` (`demux.trackNotFound`) when an index or a language names no
    ///   track of the kind, naming what the file holds.
    package func resolve(kind: MediaType, among candidates: [TrackCandidate], best: Int?, file: String) throws(PlayheadError) -> Int? {
        let ofKind = candidates.filter { $0.mediaType == kind && !$0.flags.contains(.attachedPicture) }
        func notFound(_ what: String) -> PlayheadError {
            let held = ofKind.isEmpty ? "it has no \(kind.rawValue) track" : "it has " + ofKind.map(\.label).joined(separator: ", ")
            return PlayheadError(code: .trackNotFound, message: "no \(kind.rawValue) track matches \(description)\(what): \(held)", file: file)
        }
        switch self {
        case .none:
            return nil
        case .default:
            // FFmpeg's pick, unless this build cannot decode it and can another.
            let decodable = ofKind.filter(\.isDecodable)
            if let best, let picked = ofKind.first(where: { $0.index == best }), picked.isDecodable || decodable.isEmpty { return best }
            let pool = decodable.isEmpty ? ofKind : decodable
            return (pool.first { $0.flags.contains(.default) } ?? pool.first(where: Self.isPlain) ?? pool.first)?.index
        case .index(let index):
            guard ofKind.contains(where: { $0.index == index }) else {
                let other = candidates.first { $0.index == index }
                throw notFound(
                    other.map {
                        " (#\(index) is \($0.mediaType == .video && $0.flags.contains(.attachedPicture) ? "a cover picture" : $0.mediaType.rawValue))"
                    } ?? "")
            }
            return index
        case .language(let code):
            let names = LanguageCode.names(of: code)
            // A tag with a region or script (`fr-CA`, HLS's `LANGUAGE`) matches by its language.
            let matching = ofKind.filter { track in
                guard let tag = track.language?.lowercased() else { return false }
                return names.contains(tag) || names.contains(String(tag.prefix { $0 != "-" && $0 != "_" }))
            }
            guard !matching.isEmpty else { throw notFound("") }
            return (matching.first { $0.flags.contains(.default) } ?? matching.first(where: Self.isPlain) ?? matching[0]).index
        }
    }
}

/// ISO 639's codes of one language: a two-letter code and its three-letter ones (bibliographic
/// and terminological: `fre` and `fra`), as containers write them.
package enum LanguageCode {
    /// Every code a container may write for the language `code` names, lowercased (the code
    /// itself included).
    /// - Parameter code: a two- or three-letter code.
    /// - Returns: the codes of the same language known here, and `code`.
    package static func names(of code: String) -> Set<String> {
        let code = code.lowercased()
        guard let row = table.first(where: { $0.contains(code) }) else { return [code] }
        return Set(row).union([code])
    }

    /// Two-letter code, terminological, bibliographic (where they differ) — every language whose
    /// ISO 639-2 codes differ, and the languages a film is most often dubbed in.
    private static let table: [[String]] = [
        ["sq", "sqi", "alb"], ["hy", "hye", "arm"], ["eu", "eus", "baq"], ["my", "mya", "bur"], ["zh", "zho", "chi"],
        ["cs", "ces", "cze"], ["nl", "nld", "dut"], ["fr", "fra", "fre"], ["ka", "kat", "geo"], ["de", "deu", "ger"],
        ["el", "ell", "gre"], ["is", "isl", "ice"], ["mk", "mkd", "mac"], ["mi", "mri", "mao"], ["ms", "msa", "may"],
        ["fa", "fas", "per"], ["ro", "ron", "rum"], ["sk", "slk", "slo"], ["bo", "bod", "tib"], ["cy", "cym", "wel"],
        ["en", "eng"], ["es", "spa"], ["it", "ita"], ["pt", "por"], ["ru", "rus"], ["ja", "jpn"], ["ko", "kor"],
        ["ar", "ara"], ["hi", "hin"], ["pl", "pol"], ["sv", "swe"], ["da", "dan"], ["no", "nor"], ["fi", "fin"],
        ["tr", "tur"], ["uk", "ukr"], ["hu", "hun"], ["he", "heb"], ["th", "tha"], ["vi", "vie"], ["id", "ind"],
        ["ca", "cat"], ["hr", "hrv"], ["sr", "srp"], ["bg", "bul"], ["nb", "nob"], ["nn", "nno"],
    ]
}
