import Foundation
import Testing

@testable import Playhead

/// Subtitles as data (`playhead subtitles`, ``Asset/subtitles(_:)``, ``Asset/writeSubtitles(_:as:to:replacing:)``),
/// with ffmpeg as the oracle: each SubRip, WebVTT and ASS file is byte for byte the one
/// `ffmpeg -i FILE -map 0:N out.EXT` writes, for SRT, ASS and mov_text tracks and a file whose
/// timestamps begin at 5 s; the cues' times and texts are those the subtitles were made with.
@Suite struct SubtitleTests {
    /// English SubRip cues (with an italic word) and French ASS ones (styled), as the files are made.
    static let english = [(0.5, 1.5, "Hello there"), (2.0, 2.8, "Two\nlines")]
    static let french = [(0.7, 1.9, "Bonjour, le monde"), (2.1, 2.9, "Deux\nlignes")]

    /// `subs.mkv` (video, English SRT #1, French ASS #2), `subs.mp4` (video, English mov_text #1)
    /// and `late.mkv` (subs.mkv with its timestamps from 5 s) in `folder`.
    static func files(in folder: String) async throws {
        try Data("1\n00:00:00,500 --> 00:00:01,500\nHello <i>there</i>\n\n2\n00:00:02,000 --> 00:00:02,800\nTwo\nlines\n\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/en.srt"))
        try Data(
            #"""
            [Script Info]
            ScriptType: v4.00+
            PlayResX: 384
            PlayResY: 288

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
            Style: Default,DejaVu Sans,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:00.70,0:00:01.90,Default,,0,0,0,,{\i1}Bonjour{\i0}, le monde
            Dialogue: 0,0:00:02.10,0:00:02.90,Default,,0,0,0,,Deux\Nlignes

            """#.utf8
        ).write(to: URL(fileURLWithPath: folder + "/fr.ass"))
        let ffmpeg = try Reference.ffmpeg()
        let picture = ["-f", "lavfi", "-i", "testsrc2=s=64x36:r=25:d=3"]
        _ = try await Reference.run(
            ffmpeg,
            ["-v", "error", "-y"] + picture + [
                "-i", folder + "/en.srt", "-i", folder + "/fr.ass", "-map", "0:v", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset",
                "ultrafast", "-c:s:0", "srt", "-c:s:1", "ass", "-metadata:s:s:0", "language=eng", "-metadata:s:s:1", "language=fra",
                folder + "/subs.mkv",
            ])
        _ = try await Reference.run(
            ffmpeg,
            ["-v", "error", "-y"] + picture + [
                "-i", folder + "/en.srt", "-map", "0:v", "-map", "1", "-c:v", "libx264", "-preset", "ultrafast", "-c:s", "mov_text",
                folder + "/subs.mp4",
            ])
        _ = try await Reference.run(
            ffmpeg, ["-v", "error", "-y", "-i", folder + "/subs.mkv", "-map", "0", "-c", "copy", "-output_ts_offset", "5", folder + "/late.mkv"])
    }

    /// Every text form of every track, as ffmpeg writes it: the same bytes.
    @Test func filesAreFFmpegsByteForByte() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.files(in: folder)
        let cases: [(file: String, track: String, stream: Int)] = [
            ("subs.mkv", "default", 1), ("subs.mkv", "lang:fra", 2), ("subs.mkv", "2", 2), ("subs.mp4", "default", 1), ("late.mkv", "1", 1),
        ]
        for (number, (file, track, stream)) in cases.enumerated() {
            for format in ["srt", "vtt", "ass"] {
                let out = folder + "/out-\(number)-\(format)"
                let run = try await CLI.run(["subtitles", "--out", out, "--format", format, "--track", track, folder + "/" + file])
                #expect(run.status == 0, "\(file) \(track) \(format): \(run.stderr)")
                let ours = try Data(contentsOf: URL(fileURLWithPath: out + "/01-\(file)/subtitles.\(format)"))
                let reference = folder + "/reference-\(number).\(format)"
                _ = try await Reference.run(
                    try Reference.ffmpeg(), ["-v", "error", "-y", "-i", folder + "/" + file, "-map", "0:\(stream)", reference])
                let theirs = try Data(contentsOf: URL(fileURLWithPath: reference))
                #expect(
                    !theirs.isEmpty && ours == theirs,
                    "\(file) \(track) as \(format):\n\(String(decoding: ours, as: UTF8.self))\nffmpeg:\n\(String(decoding: theirs, as: UTF8.self))")
                let summary = try #require(
                    try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/summary.json"))) as? [String: Any])
                let entry = try #require((summary["files"] as? [[String: Any]])?.first)
                #expect(entry["track"] as? Int == stream && entry["cues"] as? Int == 2 && entry["status"] as? String == "completed", "\(entry)")
            }
        }
    }

    /// `--format json` and the library give each cue's times (from the file's start in JSON; on
    /// the asset's timeline in the library) and its text without styling, with the ASS styling
    /// beside it.
    @Test func cuesCarryTheirTimesAndTexts() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.files(in: folder)
        for (file, offset) in [("subs.mkv", 0.0), ("late.mkv", 5.0)] {
            for (track, expected) in [("default", Self.english), ("lang:fr", Self.french)] {
                let out = folder + "/\(file)-\(track)"
                let run = try await CLI.run(["subtitles", "--out", out, "--format", "json", "--track", track, folder + "/" + file])
                #expect(run.status == 0, "\(run.stderr)")
                let cues = try #require(
                    try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/01-\(file)/subtitles.json")))
                        as? [[String: Any]])
                #expect(cues.count == expected.count, "\(file) \(track): \(cues)")
                for (cue, (start, end, text)) in zip(cues, expected) {
                    #expect(abs((cue["start"] as? Double ?? -1) - start) < 0.001 && abs((cue["end"] as? Double ?? -1) - end) < 0.001, "\(cue)")
                    #expect(cue["text"] as? String == text, "\(file) \(track): \(cue)")
                }
                // The library: on the asset's own timeline.
                let read = try await Asset(path: folder + "/" + file).subtitles(try TrackChoice(parsing: track))
                #expect(read.cues.map(\.text) == expected.map(\.2) && read.damagedPackets == 0)
                for (cue, (start, end, _)) in zip(read.cues, expected) {
                    #expect(abs(cue.start.seconds - start - offset) < 0.001 && abs(cue.end.seconds - end - offset) < 0.001, "\(file): \(cue)")
                }
            }
        }
        let french = try await Asset(path: folder + "/subs.mkv").subtitles(.language("fra"))
        #expect(french.trackIndex == 2 && french.cues.first?.styledText == #"{\i1}Bonjour{\i0}, le monde"#, "\(french)")
        #expect(french.cues.last?.styledText == #"Deux\Nlignes"#)
    }

    /// A track the file lacks is `demux.trackNotFound` naming what it holds (the other files are
    /// still written); a file without subtitles says so; `--track none` is a usage error; a
    /// file of the user's where the output goes is left alone.
    @Test func aMissingTrackIsATypedErrorAndNothingIsPassedOff() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.files(in: folder)
        let run = try await CLI.run([
            "subtitles", "--out", folder + "/o", "--json", "--track", "lang:fra", folder + "/subs.mp4", folder + "/subs.mkv",
            try Fixtures.clip("h264-aac.mp4"),
        ])
        #expect(run.status == 1, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["failed", "completed", "failed"], "\(files)")
        let mp4 = (files[0]["error"] as? [String: Any]) ?? [:]
        #expect(mp4["code"] as? String == "demux.trackNotFound", "\(mp4)")
        #expect((mp4["message"] as? String ?? "").contains("subtitle #1 mov_text"), "\(mp4)")
        let clip = (files[2]["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(clip.contains("it has no subtitle track"), "\(clip)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/o/01-subs.mp4"), "a failed file leaves no folder")
        #expect(FileManager.default.fileExists(atPath: folder + "/o/02-subs.mkv/subtitles.srt"))
        let none = try await CLI.run(["subtitles", "--out", folder + "/n", "--track", "none", folder + "/subs.mkv"])
        #expect(none.status == 2, "\(none.stderr)")
        // A user's own file where a file of the run would go is not replaced.
        try FileManager.default.createDirectory(atPath: folder + "/u/01-subs.mkv", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/u/01-subs.mkv/subtitles.srt"))
        let taken = try await CLI.run(["subtitles", "--out", folder + "/u", folder + "/subs.mkv"])
        #expect(taken.status != 0, "\(taken.stderr)")
        #expect(try String(contentsOfFile: folder + "/u/01-subs.mkv/subtitles.srt", encoding: .utf8) == "mine")
        // The library says the same, with the codes.
        do {
            _ = try await Asset(path: folder + "/subs.mp4").writeSubtitles(.language("de"), as: .srt, to: folder + "/x.srt")
            Issue.record("a German track was found")
        } catch {
            #expect(error.code == .trackNotFound && !FileManager.default.fileExists(atPath: folder + "/x.srt"), "\(error)")
        }
    }
}
