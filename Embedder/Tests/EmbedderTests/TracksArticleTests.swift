import Foundation
import Playhead
import Testing

/// The examples of the documentation's "Tracks, subtitles and chapters" article, as an app writes
/// them, on a film made here: what each example prints is checked against what the film holds.
@Suite struct TracksArticleTests {
    /// A 4-s film: English sound (default), French sound titled "Français", an English SubRip
    /// track of two cues, two chapters. Its sound is FLAC, which has no encoder delay: with AAC the
    /// muxer shifts every stream by the priming (the cues sit at 0.523 s in ffmpeg's own
    /// conversion too), and the cue times below are the SubRip file's own.
    static func film(in folder: String) throws -> String {
        let subtitles = folder + "/film.srt"
        try "1\n00:00:00,500 --> 00:00:01,500\nHello there\n\n2\n00:00:02,000 --> 00:00:03,000\nGoodbye\n\n"
            .write(toFile: subtitles, atomically: true, encoding: .utf8)
        let chapters = folder + "/chapters.txt"
        try
            ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=2000\ntitle=Opening\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=2000\nEND=4000\ntitle=Ending\n"
            .write(toFile: chapters, atomically: true, encoding: .utf8)
        let film = folder + "/film.mkv"
        let made = spawnAndWait(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "color=gray:s=320x180:r=25:d=4", "-f", "lavfi", "-i", "sine=f=440:d=4",
                "-f", "lavfi", "-i", "sine=f=660:d=4", "-i", subtitles, "-i", chapters, "-map", "0", "-map", "1", "-map", "2",
                "-map", "3", "-map_chapters", "4", "-c:v", "libx264", "-c:a", "flac", "-c:s", "srt", "-metadata:s:a:0",
                "language=eng", "-metadata:s:a:1", "language=fra", "-metadata:s:a:1", "title=Français", "-metadata:s:s:0",
                "language=eng", "-disposition:a:0", "default", "-disposition:a:1", "0", film,
            ])
        try #require(made == 0, "could not make \(film)")
        return film
    }

    @Test func choosingSubtitlesAndChaptersAsTheArticleShowsThem() async throws {
        let folder = try HostileCallerTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try Self.film(in: folder)

        // Choosing what plays.
        let selection = MediaSelection(audio: .language("fra"), variant: VariantPreference(maximumBitRate: 2_000_000))
        let film = Asset(path: path, options: AssetOptions(selection: selection))
        var lines: [String] = []
        for track in try await film.load(.tracks) where track.mediaType == .audio {
            let role = track.flags.contains(.comment) ? "commentary" : "sound"
            lines.append("\(track.index) \(track.language ?? "und") \(track.title ?? "") \(role) \(track.isSelected ? "plays" : "")")
        }
        #expect(lines == ["1 eng  sound ", "2 fra Français sound plays"], "the French sound plays: \(lines)")
        let sounds = try await film.load(.tracks).filter { $0.mediaType == .audio }
        #expect(sounds.first?.flags.contains(.default) == true, "\(sounds)")
        let english = PlayerItem(asset: film, selection: MediaSelection(audio: .language("eng")))
        let played = try await english.playedAsset.load(.tracks).filter { $0.mediaType == .audio }
        #expect(played.map(\.isSelected) == [true, false], "the item plays the English sound: \(played)")

        // Subtitles as text.
        let cues = try await film.subtitles(.language("eng")).cues
        #expect(cues.map(\.text) == ["Hello there", "Goodbye"], "\(cues)")
        #expect(cues.map { ($0.start.seconds * 1000).rounded() } == [500, 2000], "\(cues)")
        #expect(cues.map { ($0.end.seconds * 1000).rounded() } == [1500, 3000], "\(cues)")
        let vtt = folder + "/film.en.vtt"
        let written = try await film.writeSubtitles(.language("eng"), as: .vtt, to: vtt)
        #expect(written.cueCount == 2)
        let text = try String(contentsOfFile: vtt, encoding: .utf8)
        #expect(text.hasPrefix("WEBVTT") && text.contains("00:00.500 --> 00:01.500") && text.contains("Goodbye"), "\(text)")

        // Subtitles drawn in: a picture during a cue differs from the plain one, outside it not.
        var configuration = DecodeConfiguration()
        configuration.subtitles = .track(.language("fra"))
        let unmet = await DecodeSession(asset: film, configuration: configuration).run(into: NullSink())
        #expect(unmet.status != DecodeResult.Status.completed, "a film without French subtitles draws none: \(unmet)")
        configuration.subtitles = .track(.language("eng"))
        let drawn = await DecodeSession(asset: film, configuration: configuration).run(into: NullSink())
        #expect(drawn.status == DecodeResult.Status.completed && drawn.framesDelivered == 100, "\(drawn)")
        func picture(at seconds: Double, subtitles: SubtitleBurnIn?) async throws -> [UInt8] {
            var generator = AssetImageGenerator(asset: film)
            generator.subtitles = subtitles
            return try await generator.image(at: MediaTime(seconds: seconds)).image.pixels
        }
        #expect(try await picture(at: 1, subtitles: .track(.language("eng"))) != picture(at: 1, subtitles: nil))
        #expect(try await picture(at: 3.5, subtitles: .track(.language("eng"))) == picture(at: 3.5, subtitles: nil))

        // Chapters.
        var listed: [String] = []
        for chapter in try await film.load(.chapters) {
            let start = chapter.timeRange.start.seconds
            listed.append("\(chapter.title ?? "Chapter \(chapter.id)") \(start) \(start + chapter.timeRange.duration.seconds)")
        }
        #expect(listed == ["Opening 0.0 2.0", "Ending 2.0 4.0"], "\(listed)")
    }
}
