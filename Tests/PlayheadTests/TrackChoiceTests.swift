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
}
