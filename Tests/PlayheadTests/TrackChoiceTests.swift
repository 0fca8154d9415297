import Testing

@testable import PlayheadMedia

/// Which track a ``TrackChoice`` takes among a file's streams, alone (no FFmpeg): the one rule
/// the demuxer asks for every reader of an asset.
@Suite struct TrackChoiceTests {
    /// The one rule, alone: which stream each choice takes, and what it says when none fits.
    @Test func theRuleChoosesAsDocumented() throws {
        let candidates = [
            TrackCandidate(index: 0, mediaType: .video, codecName: "h264", language: nil),
            TrackCandidate(index: 1, mediaType: .audio, codecName: "aac", language: "eng", flags: .comment),
            TrackCandidate(index: 2, mediaType: .audio, codecName: "aac", language: "ger"),
            TrackCandidate(index: 3, mediaType: .audio, codecName: "aac", language: "eng"),
            TrackCandidate(index: 4, mediaType: .audio, codecName: "ac3", language: "ger", flags: .default),
            TrackCandidate(index: 5, mediaType: .video, codecName: "mjpeg", language: nil, flags: .attachedPicture),
        ]
        func choose(_ choice: TrackChoice, best: Int? = 4) throws(PlayheadError) -> Int? {
            try choice.resolve(kind: .audio, among: candidates, best: best, file: "f.mkv")
        }
        #expect(try choose(.default) == 4)
        // FFmpeg found none (or named a stream of another kind): the one marked default, else the first.
        #expect(try choose(.default, best: nil) == 4 && (try choose(.default, best: 0)) == 4)
        #expect(try choose(.none) == nil)
        #expect(try choose(.index(2)) == 2)
        // English: not the commentary; German (written `de`, `deu` or `ger`): the one marked default.
        #expect(try choose(.language("en")) == 3 && (try choose(.language("eng"))) == 3)
        #expect(try choose(.language("de")) == 4 && (try choose(.language("deu"))) == 4 && (try choose(.language("GER"))) == 4)
        #expect(try choose(TrackChoice(parsing: " lang:De ")) == 4)
        for missing in [TrackChoice.index(0), .index(5), .index(9), .language("fr")] {
            #expect(throws: PlayheadError.self) { try choose(missing) }
        }
        do {
            _ = try choose(.index(5))
        } catch {
            #expect(error.code == .trackNotFound && error.message.contains("(#5 is a cover picture)") && error.file == "f.mkv", "\(error)")
            #expect(error.message.contains("audio #4 ac3 ger (default)") && error.message.contains("audio #1 aac eng (comment)"), "\(error)")
        }
        // FFmpeg's pick has no decoder in this build: the default is a sound that has one.
        var undecodable = candidates
        undecodable[4].isDecodable = false
        #expect(try TrackChoice.default.resolve(kind: .audio, among: undecodable, best: 4, file: "f") == 2, "the first that is not the commentary")
        undecodable[1].isDecodable = false
        undecodable[2].isDecodable = false
        undecodable[3].isDecodable = false
        #expect(try TrackChoice.default.resolve(kind: .audio, among: undecodable, best: 4, file: "f") == 4, "none has one: FFmpeg's pick")
        // A language tag with a region (HLS's `fr-CA`) matches by its language.
        let canadian = [TrackCandidate(index: 0, mediaType: .audio, codecName: "aac", language: "fr-CA")]
        #expect(try TrackChoice.language("fra").resolve(kind: .audio, among: canadian, best: nil, file: "f") == 0)
        // A file without a sound: the default is none, an index is an error.
        let silent = [candidates[0]]
        #expect(try TrackChoice.default.resolve(kind: .audio, among: silent, best: nil, file: "f") == nil)
        #expect(throws: PlayheadError.self) { try TrackChoice.index(0).resolve(kind: .audio, among: silent, best: nil, file: "f") }
        // What a user writes reads back as the same choice.
        for text in ["default", "none", "lang:fra", "12"] { #expect(try TrackChoice(parsing: text).description == text) }
        for bad in ["", "lang:", "lang:f", "lang:fr1", "-1", "70000", "french"] {
            #expect(throws: PlayheadError.self, "\(bad)") { try TrackChoice(parsing: bad) }
        }
    }

    /// Which HLS variant a ``VariantPreference`` takes: the highest bandwidth within the limits
    /// (the larger picture, then the first listed, among equals), the lowest when asked or when
    /// none fits; a variant without a picture fits any size.
    @Test func theVariantRuleChoosesAsDocumented() {
        func variant(_ index: Int, _ bandwidth: Int, _ width: Int?, _ height: Int? = nil) -> AssetVariant {
            AssetVariant(
                index: index, bandwidth: bandwidth, size: width.map { PixelSize(width: $0, height: height ?? $0 * 9 / 16) }, trackIndices: [index])
        }
        let ladder = [
            variant(0, 2_000_000, 1280), variant(1, 5_000_000, 1920), variant(2, 800_000, 640), variant(3, 800_000, 854), variant(4, 64_000, nil),
        ]
        func choose(_ preference: VariantPreference) -> Int? { preference.choose(among: ladder) }
        #expect(choose(VariantPreference()) == 1)
        #expect(choose(VariantPreference(maximumBitRate: 3_000_000)) == 0)
        #expect(choose(VariantPreference(maximumBitRate: 800_000)) == 3, "among equal bandwidths, the larger picture")
        #expect(choose(VariantPreference(maximumSize: PixelSize(width: 1280, height: 720))) == 0)
        #expect(choose(VariantPreference(maximumSize: PixelSize(width: 700, height: 400))) == 2)
        #expect(choose(VariantPreference(maximumBitRate: 1_000_000, maximumSize: PixelSize(width: 640, height: 360))) == 2)
        // The sound-only variant (64 kb/s) never plays while one has a picture: none fits, the lowest with one.
        #expect(choose(VariantPreference(maximumSize: PixelSize(width: 100, height: 100))) == 2)
        #expect(choose(VariantPreference(lowest: true)) == 2)
        #expect(choose(VariantPreference(lowest: true, maximumBitRate: 3_000_000)) == 2, "lowest is lowest, whatever the limits")
        // Sound only throughout: it plays.
        #expect(VariantPreference().choose(among: [variant(5, 64_000, nil), variant(6, 128_000, nil)]) == 6)
        // A variant whose streams were not found (its playlist missing) never plays.
        let missing = AssetVariant(index: 9, bandwidth: 9_000_000, size: nil, trackIndices: [])
        #expect(VariantPreference().choose(among: ladder + [missing]) == 1)
        #expect(VariantPreference().choose(among: [missing]) == nil)
        // None fits: the lowest plays, rather than nothing.
        let pictures = Array(ladder.prefix(4))
        #expect(VariantPreference(maximumBitRate: 1000).choose(among: pictures) == 2, "the smaller of the two lowest")
        #expect(VariantPreference(maximumSize: PixelSize(width: 2, height: 2)).choose(among: pictures) == 2)
        #expect(VariantPreference().choose(among: []) == nil)
        // Equal in all: the first in the playlist (the lower index).
        #expect(VariantPreference().choose(among: [variant(7, 1000, 64), variant(3, 1000, 64)]) == 3)
        #expect(VariantPreference(lowest: true).choose(among: [variant(7, 1000, 64), variant(3, 1000, 64)]) == 3)
    }
}
