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

    /// The pictures of ``pictureSubtitles(_:)``: when each shows and where (a 320x240 canvas).
    static let pictureCues: [(start: Double, end: Double?, rect: (x: Int, y: Int, width: Int, height: Int))] = [
        (1.0, 2.0, (20, 180, 100, 20)), (3.0, 4.5, (150, 30, 60, 40)), (5.0, nil, (0, 0, 320, 10)),
    ]

    /// A PGS file of three pictures (``pictureCues``), the first two cleared at their ends. Each
    /// picture: its upper left quarter opaque white, its right half a red at half transparency,
    /// its lower left quarter an opaque green; every picture has its own place.
    static func pictureSubtitles(_ path: String) throws {
        func segment(_ seconds: Double, _ type: UInt8, _ data: [UInt8]) -> [UInt8] {
            let pts = UInt32(seconds * 90_000)
            return Array("PG".utf8) + bigEndian(pts, 4) + [0, 0, 0, 0, type] + bigEndian(UInt32(data.count), 2) + data
        }
        func bigEndian(_ value: UInt32, _ bytes: Int) -> [UInt8] { (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func value(_ number: Int) -> UInt32 { UInt32(number) }
        let (width, height) = (UInt32(320), UInt32(240))
        // Presentation: the canvas, the composition's number and state, one object at (x, y).
        func composition(_ number: UInt32, at place: (x: Int, y: Int)?) -> [UInt8] {
            bigEndian(width, 2) + bigEndian(height, 2) + [0x10] + bigEndian(number, 2) + [place == nil ? 0x00 : 0x80, 0, 0, place == nil ? 0 : 1]
                + (place.map { [0, 0, 0, 0] + bigEndian(value($0.x), 2) + bigEndian(value($0.y), 2) } ?? [])
        }
        func window(_ r: (x: Int, y: Int, width: Int, height: Int)) -> [UInt8] {
            [1, 0] + bigEndian(value(r.x), 2) + bigEndian(value(r.y), 2) + bigEndian(value(r.width), 2) + bigEndian(value(r.height), 2)
        }
        // Runs of colour: 00 C0|n>>8 n&FF colour, each line ended by 00 00.
        func object(_ w: Int, _ h: Int) -> [UInt8] {
            var rows: [UInt8] = []
            func run(_ count: Int, _ colour: UInt8) -> [UInt8] { [0x00, 0xC0 | UInt8(count >> 8), UInt8(count & 0xFF), colour] }
            for row in 0..<h { rows += run(w / 2, row < h / 2 ? 1 : 3) + run(w - w / 2, 2) + [0x00, 0x00] }
            return [0, 0, 0, 0xC0] + bigEndian(UInt32(rows.count + 4), 3) + bigEndian(value(w), 2) + bigEndian(value(h), 2) + rows
        }
        // Entries (index, Y, Cr, Cb, alpha): transparent, white, half-transparent red, green.
        let palette: [UInt8] = [0, 0] + [0, 16, 128, 128, 0] + [1, 235, 128, 128, 255] + [2, 81, 240, 90, 128] + [3, 145, 34, 54, 255]
        var data: [UInt8] = []
        var number = UInt32(0)
        for cue in pictureCues {
            data += segment(cue.start, 0x16, composition(number, at: (cue.rect.x, cue.rect.y))) + segment(cue.start, 0x17, window(cue.rect))
            data += segment(cue.start, 0x14, palette) + segment(cue.start, 0x15, object(cue.rect.width, cue.rect.height))
            data += segment(cue.start, 0x80, [])
            number += 1
            if let end = cue.end {
                data += segment(end, 0x16, composition(number, at: nil)) + segment(end, 0x17, window(cue.rect)) + segment(end, 0x80, [])
                number += 1
            }
        }
        try Data(data).write(to: URL(fileURLWithPath: path))
    }

    /// A picture track: written as JSON (its cues' times, a cleared picture ending its cue), refused
    /// as text with `output.encodeFailed` (never a crash: the encoder that refused to open was
    /// freed twice); beside a text track, the default for a text form is the text track, as ffmpeg
    /// picks it.
    @Test func pictureTracksGiveTimesAndTextIsChosenForText() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.files(in: folder)
        let pgs = folder + "/pictures.sup"
        try Self.pictureSubtitles(pgs)
        for format in ["srt", "vtt"] {
            let run = try await CLI.run(["subtitles", "--out", folder + "/p-\(format)", "--format", format, pgs])
            #expect(
                run.status == 1 && run.stderr.contains("output.encodeFailed") && run.stderr.contains("pictures, not text"),
                "\(run.status): \(run.stderr)")
        }
        let json = try await CLI.run(["subtitles", "--out", folder + "/pj", "--format", "json", pgs])
        #expect(json.status == 0, "\(json.stderr)")
        let cues = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/pj/01-pictures.sup/subtitles.json")))
                as? [[String: Any]])
        // From the file's start, which is its first picture's (1 s), as ffmpeg counts.
        #expect(cues.map { $0["start"] as? Double } == [0, 2, 4] && cues.prefix(2).map { $0["end"] as? Double } == [1, 3.5], "\(cues)")
        let library = try await Asset(path: pgs).subtitles()
        #expect(library.cues.map(\.start.seconds) == [1, 3, 5] && !library.cues[2].end.isNumeric, "the library: the file's own times")
        #expect(cues.allSatisfy { ($0["pictures"] as? [[String: Any]])?.count == 1 }, "\(cues)")

        // A rip: the pictures (the default) and an SRT track. A text form takes the SRT track.
        let rip = folder + "/rip.mkv"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            ["-v", "error", "-y", "-i", pgs, "-i", folder + "/en.srt", "-map", "0", "-map", "1", "-c", "copy", "-disposition:s:0", "default", rip])
        let text = try await CLI.run(["subtitles", "--out", folder + "/r", rip])
        #expect(text.status == 0, "\(text.stderr)")
        _ = try await Reference.run(try Reference.ffmpeg(), ["-v", "error", "-y", "-i", rip, folder + "/rip-reference.srt"])
        let ours = try Data(contentsOf: URL(fileURLWithPath: folder + "/r/01-rip.mkv/subtitles.srt"))
        #expect(ours == (try Data(contentsOf: URL(fileURLWithPath: folder + "/rip-reference.srt"))), "\(String(decoding: ours, as: UTF8.self))")
    }

    /// An ASS event with no text is written as ffmpeg writes it (an empty cue), not a failure; a
    /// second read of one asset gives every cue again (a kept demuxer is read from its start); JSON
    /// reads a source that can be read once (standard input).
    @Test func emptyCuesRereadsAndStandardInput() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.files(in: folder)
        var ass = try String(contentsOfFile: folder + "/fr.ass", encoding: .utf8)
        ass += "Dialogue: 0,0:00:02.95,0:00:03.00,Default,,0,0,0,,\n"
        try ass.write(toFile: folder + "/empty.ass", atomically: true, encoding: .utf8)
        for format in ["srt", "vtt"] {
            let run = try await CLI.run(["subtitles", "--out", folder + "/e-\(format)", "--format", format, folder + "/empty.ass"])
            #expect(run.status == 0, "\(format): \(run.stderr)")
            _ = try await Reference.run(
                try Reference.ffmpeg(), ["-v", "error", "-y", "-i", folder + "/empty.ass", folder + "/empty-reference.\(format)"])
            let ours = try? Data(contentsOf: URL(fileURLWithPath: folder + "/e-\(format)/01-empty.ass/subtitles.\(format)"))
            #expect(ours == (try Data(contentsOf: URL(fileURLWithPath: folder + "/empty-reference.\(format)"))), "\(format)")
        }
        let asset = Asset(path: folder + "/subs.mkv")
        let first = try await asset.subtitles()
        let second = try await asset.subtitles()
        let written = try await asset.writeSubtitles(.default, as: .srt, to: folder + "/again.srt")
        #expect(first.cues.count == 2 && second.cues == first.cues && written.cueCount == 2, "\(second.cues.count), \(written.cueCount)")

        let binary = try CLI.binary().path
        let piped = try await Reference.runAllowingFailure(
            "/bin/sh", ["-c", "\"$0\" subtitles --out \"$1\" --format json - < \"$2\" 2>&1", binary, folder + "/stdin", folder + "/subs.mkv"])
        #expect(piped.status == 0, "\(String(decoding: piped.output, as: UTF8.self))")
        let made = try FileManager.default.contentsOfDirectory(atPath: folder + "/stdin").filter { $0.hasPrefix("01-") }
        #expect(made.count == 1 && FileManager.default.fileExists(atPath: folder + "/stdin/" + (made.first ?? "") + "/subtitles.json"), "\(made)")
    }

    /// A film cut short is `io.truncated`, not a shorter track passed off as whole: a subtitle
    /// read leaves the film's pictures and sounds unread (as ffmpeg does, for speed), so the cut is
    /// seen where the container tells of it — a Matroska element the data ends inside, an MP4
    /// index (at the front) that places samples past the end. The whole files give every cue.
    @Test func aFilmCutShortIsTruncatedNotAShorterTrack() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cues = (0..<20).map { String(format: "%d\n00:00:%02d,100 --> 00:00:%02d,900\nCue %d\n", $0 + 1, $0, $0, $0) }
        try Data((cues.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/c.srt"))
        for (name, codec, flags) in [("film.mkv", "srt", [String]()), ("film.mp4", "mov_text", ["-movflags", "+faststart"])] {
            // Pictures that fill the file (so a cut falls among them), a cue each second.
            _ = try await Reference.run(
                try Reference.ffmpeg(),
                ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=20", "-i", folder + "/c.srt", "-map", "0", "-map", "1"]
                    + ["-c:v", "libx264", "-preset", "ultrafast", "-c:s", codec] + flags + [folder + "/" + name])
            let whole = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            try whole.prefix(whole.count * 6 / 10).write(to: URL(fileURLWithPath: folder + "/cut-" + name))
            let read = try await Asset(path: folder + "/" + name).subtitles()
            #expect(read.cues.count == 20 && read.cues.last?.text == "Cue 19", "\(name): \(read.cues.count) cues")
            do {
                let cut = try await Asset(path: folder + "/cut-" + name).subtitles()
                Issue.record("\(name) cut short gave \(cut.cues.count) cues")
            } catch {
                #expect(error.code == .truncated, "\(name): \(error)")
            }
            let run = try await CLI.run(["subtitles", "--out", folder + "/o-" + name, "--json", "--format", "srt", folder + "/cut-" + name])
            #expect(run.status == 1, "\(name): \(run.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let entry = try #require((summary["files"] as? [[String: Any]])?.first)
            #expect((entry["error"] as? [String: Any])?["code"] as? String == "io.truncated", "\(name): \(entry)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/o-\(name)/01-cut-\(name)/subtitles.srt"), "a cut track is not passed off")
        }
    }
}
