import Foundation
import Glibc
import Playhead
import Testing

/// `playhead compose` end to end: a grid and layers into a Y4M that ffprobe reads with the frames
/// of its duration (as ffmpeg's `-t` counts them), a summary that accounts for every layer (a failed one included), and
/// bad layer descriptions refused before anything is written.
@Suite struct CLIComposeTests {
    @Test func gridAndLayersIntoY4M() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let a = try Fixtures.clip("h264-aac.mp4"), b = try Fixtures.clip("4x3.mp4"), c = try Fixtures.clip("anamorphic.mp4")
        let run = try await CLI.run([
            "compose", "--size", "320x180", "--rate", "29.97", "--duration", "3", "--background", "#103050",
            "--layer", "x=0,y=0,w=320,h=180,gravity=aspect-fill,loop=forever,source=\(a)",
            "--grid", "2x2", "--out", out, "--json", b, c, "/nonexistent/missing.mp4",
        ])
        #expect(run.status == 1, "a failed layer fails the run: \(run.stderr)")
        let summary = try HostileOperationsTests.summary(out)
        #expect(summary["state"] as? String == "finished" && summary["framesWritten"] as? Int == 90, "\(summary)")
        let layers = try #require(summary["layers"] as? [[String: Any]])
        #expect(layers.map { $0["framesShown"] as? Int } == [90, 90, 90, 0])
        #expect(layers[0]["loopsCompleted"] as? Int == 1)
        #expect((layers[3]["error"] as? [String: Any])?["code"] as? String == "io.fileNotFound")
        let y4m = out + "/composition/frames.y4m"
        let probe = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=width,height,r_frame_rate,nb_read_frames",
                "-of", "default=nw=1", y4m,
            ])
        let text = String(decoding: probe, as: UTF8.self)
        #expect(
            text.contains("width=320") && text.contains("height=180") && text.contains("r_frame_rate=30000/1001")
                && text.contains("nb_read_frames=90"), "\(text)")
    }

    /// Whether an MP4 (`name`, the composition's by default) has its first bytes under its
    /// temporary name in `folder`.
    static func writing(in folder: String, temporaryOf name: String = "video.mp4") -> Bool {
        (try? FileManager.default.contentsOfDirectory(atPath: folder))?.contains { entry in
            entry.hasPrefix("." + name + ".")
                && ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + entry)[.size] as? Int) ?? 0) > 0
        } ?? false
    }

    /// `--format mp4`: an H.264 MP4 with exactly duration × rate frames; killed with SIGKILL
    /// half way, the file under its temporary name still reads up to its last fragment, and
    /// nothing passes for the finished file.
    @Test func mp4WholeAndKilled() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let layer = "x=0,y=0,w=320,h=180,loop=forever,source=\(clip)"
        let run = try await CLI.run([
            "compose", "--size", "320x180", "--rate", "25", "--duration", "2.5", "--preset", "ultrafast",
            "--layer", layer, "--format", "mp4", "--out", out + "/whole",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("x264"), "the encoder's chatter stays in the log: \(run.stderr)")
        let probe = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames",
                "-of", "default=nw=1", out + "/whole/composition/video.mp4",
            ])
        let text = String(decoding: probe, as: UTF8.self)
        #expect(text.contains("codec_name=h264") && text.contains("nb_read_frames=63"), "\(text)")

        // `play --format mp4` goes through the same sink: each file exported at its size.
        let played = try await CLI.run(["play", "--json", "--format", "mp4", "--size", "160x90", "--out", out + "/play", clip])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(played.stdout.utf8)) as? [String: Any], "\(played.stderr)")
        let file = try #require((document["files"] as? [[String: Any]])?.first)
        #expect(played.status == 0 && file["framesWritten"] as? Int == 50, "\(played.stdout)")
        let exported = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=width,height,nb_read_frames",
                "-of", "default=nw=1", out + "/play/01-h264-aac.mp4/video.mp4",
            ])
        #expect(
            String(decoding: exported, as: UTF8.self).contains("width=160\nheight=90\nnb_read_frames=50"),
            "\(String(decoding: exported, as: UTF8.self))")

        // SIGTERM: a clean stop; the summary counts the frames the kept file holds.
        let stopped = try await HostileRun.signalled(
            [
                "compose", "--size", "320x180", "--rate", "25", "--duration", "600", "--preset", "ultrafast",
                "--layer", layer, "--format", "mp4", "--out", out + "/stopped",
            ], signal: SIGTERM, after: .milliseconds(1500), startedWhen: { Self.writing(in: out + "/stopped/composition") })
        #expect(stopped.status == 143, "\(stopped.stderr)")
        let summary = try HostileOperationsTests.summary(out + "/stopped")
        let kept = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                out + "/stopped/composition/video.mp4",
            ])
        #expect(
            summary["state"] as? String == "cancelled"
                && summary["framesWritten"] as? Int == Int(String(decoding: kept, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            "\(summary)")

        // The kept, partial MP4 is ours: a rerun into the same folder replaces it with a whole
        // one, leaves the user's file alone, and leaves no temporary file.
        try "mine".write(toFile: out + "/stopped/mine.txt", atomically: true, encoding: .utf8)
        let rerun = try await CLI.run([
            "compose", "--size", "320x180", "--rate", "25", "--duration", "1", "--preset", "ultrafast",
            "--layer", layer, "--format", "mp4", "--out", out + "/stopped",
        ])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let replaced = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                out + "/stopped/composition/video.mp4",
            ])
        #expect(String(decoding: replaced, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "25")
        #expect(try String(contentsOfFile: out + "/stopped/mine.txt", encoding: .utf8) == "mine")
        let rerunSummary = try HostileOperationsTests.summary(out + "/stopped")
        #expect(leftoverTemporaryFiles(in: out + "/stopped").isEmpty && rerunSummary["state"] as? String == "finished", "\(rerunSummary)")

        _ = try await HostileRun.signalled(
            [
                "compose", "--size", "320x180", "--rate", "25", "--duration", "600", "--preset", "ultrafast",
                "--layer", layer, "--format", "mp4", "--out", out + "/killed",
            ], signal: SIGKILL, after: .milliseconds(2500), startedWhen: { Self.writing(in: out + "/killed/composition") })
        let folder = out + "/killed/composition"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(!names.contains("video.mp4"), "a killed run leaves nothing under the final name")
        let partial = try #require(names.first { $0.hasPrefix(".video.mp4.") }, "\(names)")
        let left = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                folder + "/" + partial,
            ])
        let frames = Int(String(decoding: left, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(frames >= 25, "the fragments written before the kill play: \(frames) frames")
    }

    @Test(arguments: [
        ["--layer", "x=0,y=0,w=64,h=36"],
        ["--layer", "x=0,y=0,w=64,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,gravity=sideways,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,loop=0,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,colour=red,source=a.mp4"],
        ["--grid", "0x2", "a.mp4"],
        ["--grid", "1x1", "a.mp4", "b.mp4"],
        ["--rate", "0", "--grid", "1x1", "a.mp4"],
        ["--background", "teal-ish", "--grid", "1x1", "a.mp4"],
        ["--rate", "0.0001", "--grid", "1x1", "a.mp4"],
        ["--layer", "x=0,x=2,y=0,w=64,h=36,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,audio=maybe,source=a.mp4"],
    ])
    func badDescriptionsAreUsageErrors(arguments: [String]) async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await CLI.run(["compose", "--size", "64x36", "--duration", "1", "--out", out + "/o"] + arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"), "nothing written for a usage error")
    }

    /// `--out NAME.mp4`: that one file, H.264 with exactly duration × rate frames and the sound
    /// layer's AAC; an existing file of that name is refused and left alone; a run killed
    /// half way leaves a temporary beside it that ffprobe reads (picture and sound), and one
    /// stopped by SIGTERM keeps what it wrote under the name.
    @Test func aNamedMP4File() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let layer = "x=0,y=0,w=320,h=180,loop=forever,audio=yes,source=\(try Fixtures.clip("h264-aac.mp4"))"
        func streams(_ path: String) async throws -> String {
            String(
                decoding: try await Reference.run(
                    "/usr/bin/ffprobe",
                    [
                        "-v", "error", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames",
                        "-of", "csv=p=0", path,
                    ]), as: UTF8.self)
        }
        let run = try await CLI.run([
            "compose", "--json", "--size", "320x180", "--rate", "25", "--duration", "2.5", "--preset", "ultrafast",
            "--layer", layer, "--out", out + "/screen.mp4",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let whole = try await streams(out + "/screen.mp4")
        #expect(whole.contains("h264,63") && whole.contains("aac,"), "\(whole)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(summary["framesWritten"] as? Int == 63 && summary["output"] as? String == out + "/screen.mp4", "\(summary)")

        try "mine".write(toFile: out + "/mine.mp4", atomically: true, encoding: .utf8)
        let taken = try await CLI.run(["compose", "--size", "320x180", "--duration", "1", "--layer", layer, "--out", out + "/mine.mp4"])
        let mine = try String(contentsOfFile: out + "/mine.mp4", encoding: .utf8)
        #expect(taken.status == 2 && mine == "mine", "\(taken.stderr)")

        _ = try await HostileRun.signalled(
            [
                "compose", "--size", "320x180", "--rate", "25", "--duration", "600", "--preset", "ultrafast",
                "--layer", layer, "--out", out + "/killed.mp4",
            ], signal: SIGKILL, after: .milliseconds(2500), startedWhen: { Self.writing(in: out, temporaryOf: "killed.mp4") })
        let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasPrefix(".killed.mp4.") })
        #expect(!FileManager.default.fileExists(atPath: out + "/killed.mp4"))
        let left = try await streams(out + "/" + partial)
        #expect(
            left.contains("h264,") && left.contains("aac,") && Int(left.split(separator: "\n").first?.split(separator: ",").last ?? "0") ?? 0 >= 25,
            "\(left)")

        let stopped = try await HostileRun.signalled(
            [
                "compose", "--size", "320x180", "--rate", "25", "--duration", "600", "--preset", "ultrafast",
                "--layer", layer, "--out", out + "/stopped.mp4",
            ], signal: SIGTERM, after: .milliseconds(1500), startedWhen: { Self.writing(in: out, temporaryOf: "stopped.mp4") })
        #expect(stopped.status == 143, "\(stopped.stderr)")
        let kept = try await streams(out + "/stopped.mp4")
        #expect(kept.contains("h264,") && kept.contains("aac,"), "\(kept)")
        // Ended after the frame being drawn: its sound track lasts to that frame's end (ffprobe's
        // durations), and ffmpeg decodes all of it (and the rest of the last AAC packet, which
        // the edit list hides).
        let pictures = try await Reference.frameTimes(out + "/stopped.mp4").count
        let durations = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=duration", "-of", "csv=p=0", out + "/stopped.mp4"]),
            as: UTF8.self
        ).split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        #expect(durations.count == 2 && abs(durations[0] - durations[1]) < 0.001, "the tracks last \(durations) s")
        let samples = try await AudioTests.reference(out + "/stopped.mp4", rate: 48000, channels: 1).count
        let expected = pictures * 48000 / 25
        #expect(pictures > 0 && samples >= expected && samples < expected + 1024, "\(samples) samples of sound with \(pictures) frames")
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(!names.contains { $0.hasPrefix(".stopped.mp4.") }, "no temporary after SIGTERM: \(names)")
    }

    /// A canvas past the limits (8192 a side, 7680×4320 pixels) is refused up front, nothing
    /// written; the largest allowed is accepted.
    @Test func anUnallocatableCanvasIsAUsageError() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let layer = ["--layer", "x=0,y=0,w=64,h=36,source=\(try Fixtures.clip("h264-aac.mp4"))"]
        let huge = try await CLI.run(["compose", "--size", "16384x16384", "--duration", "1", "--out", out + "/o"] + layer)
        #expect(huge.status == 2 && huge.stderr.contains("16384x16384"), "\(huge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"))
        let past = try await CLI.run(["compose", "--size", "16384x16000", "--duration", "0.04", "--format", "none", "--out", out + "/p"] + layer)
        #expect(past.status == 2 && past.stderr.contains("too large"), "\(past.stderr)")
        let large = try await CLI.run(["compose", "--size", "8192x4050", "--duration", "0.04", "--format", "none", "--out", out + "/l"] + layer)
        #expect(large.status == 0, "\(large.stderr)")
    }

    /// `--out -`: Y4M on standard output, as a viewer reads it; a reader that goes away ends the
    /// run at once with exit status 1 and says so.
    @Test func y4mOnStandardOutput() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("4x3.mp4")
        let run = try await HostileRun.shell(
            ["compose", "--size", "160x90", "--duration", "2", "--grid", "1x1", "--out", "-", clip],
            redirections: "> '\(out)/live.y4m'")
        #expect(run.status == 0, "\(run.stderr)")
        let probe = try await Reference.run(
            "/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", out + "/live.y4m"])
        #expect(String(decoding: probe, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "60")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["live.y4m"], "no folder, no summary beside it")

        let start = ContinuousClock.now
        let gone = try await HostileRun.shell(
            ["compose", "--size", "160x90", "--duration", "3600", "--grid", "1x1", "--out", "-", clip], brokenPipe: true)
        #expect(gone.status == 1 && gone.stderr.contains("the reader went away"), "\(gone.stderr)")
        #expect(ContinuousClock.now - start < .seconds(10))
        let refused = try await CLI.run(["compose", "--size", "160x90", "--duration", "1", "--grid", "1x1", "--out", "-", "--format", "png", clip])
        #expect(refused.status == 2)
    }

    /// A duration holds the frames ffmpeg's `-t` writes at the same rate: those at least half
    /// within it, and always the first (2.3 s at 29.97 fps is 69 frames, not 68; 1 s at 0.5 fps is one).
    @Test(arguments: [("29.97", "30000/1001", "2.3"), ("25", "25", "0.039"), ("0.5", "1/2", "1"), ("0.5", "1/2", "4.5"), ("5", "5", "0.41")])
    func aDurationHoldsTheFramesFfmpegWrites(rate: String, ffmpegRate: String, duration: String) async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        func frames(_ path: String) async throws -> String {
            String(
                decoding: try await Reference.run(
                    "/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path]),
                as: UTF8.self
            ).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=\(ffmpegRate)", "-t", duration, "-pix_fmt", "yuv420p",
                out + "/oracle.y4m",
            ])
        let run = try await CLI.run([
            "compose", "--size", "64x36", "--rate", rate, "--duration", duration, "--out", out + "/o.y4m", "--layer",
            "x=0,y=0,w=64,h=36,loop=forever,source=\(try Fixtures.clip("h264-aac.mp4"))",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try await frames(out + "/oracle.y4m")
        #expect(!expected.isEmpty && expected != "0")
        #expect(try await frames(out + "/o.y4m") == expected, "\(duration) s at \(rate) fps")
    }

    /// Without `--duration`, a composition lasts as long as its longest layer (loops counted): the
    /// frames that start before its end, by ffprobe's length of the clip; a layer that loops
    /// forever then needs a duration (a usage error, nothing written).
    @Test func withoutADurationTheLongestLayerSetsTheLength() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let times = try await Reference.frameTimes(clip)
        let step = try #require(zip(times, times.dropFirst()).map { $1 - $0 }.min())
        let end = (try #require(times.last) + step) * 3
        var expected = 0
        while MediaTime(value: Int64(expected), timescale: 24) < end { expected += 1 }
        let run = try await CLI.run([
            "compose", "--size", "64x36", "--rate", "24", "--out", out + "/o.y4m", "--json",
            "--layer", "x=0,y=0,w=32,h=36,source=\(clip)", "--layer", "x=32,y=0,w=32,h=36,loop=3,source=\(clip)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let probe = try await Reference.run(
            "/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", out + "/o.y4m"])
        #expect(
            String(decoding: probe, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "\(expected)",
            "3 × \(end.seconds / 3) s at 24 fps")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(summary["framesWritten"] as? Int == expected && summary["framesExpected"] == nil, "\(summary)")

        let endless = try await CLI.run([
            "compose", "--size", "64x36", "--out", out + "/e.y4m", "--layer", "x=0,y=0,w=64,h=36,loop=forever,source=\(clip)",
        ])
        #expect(endless.status == 2 && endless.stderr.contains("loops forever"), "\(endless.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/e.y4m"))
    }

    /// Every layout in `examples/` renders: all its layers shown, none failed.
    @Test(arguments: ["side-by-side", "mosaic-2x2", "picture-in-picture"])
    func examplesRender(name: String) async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let layout = Fixtures.sampleMedia.deletingLastPathComponent().appendingPathComponent("examples/\(name).json").path
        // Rendered in full; nothing written but the summary.
        let run = try await CLI.run([
            "compose", "--layout", layout, "--size", "1280x720", "--duration", "2", "--format", "none", "--out", out, "--json",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try HostileOperationsTests.summary(out)
        #expect(summary["framesWritten"] as? Int == 60)
        let layers = try #require(summary["layers"] as? [[String: Any]])
        #expect(!layers.isEmpty && layers.allSatisfy { $0["error"] == nil && ($0["framesShown"] as? Int ?? 0) > 0 }, "\(layers)")
    }

    /// Layout files that are not layouts are refused before anything is written.
    @Test(arguments: [
        "not json", "{}", "[]", #"[{"rect": [0, 0, 2, 2]}]"#, #"[{"source": "a.mp4", "rect": [0, 0, 2]}]"#,
        #"[{"source": "a.mp4", "rect": [0, 0, 2, 2], "audio": "loud"}]"#, #"[{"source": "a.mp4", "rect": [0, 0, 2, 2], "loop": 0}]"#,
        #"[{"source": "a.mp4", "sources": ["b.mp4"], "rect": [0, 0, 2, 2]}]"#, #"[{"source": "a.mp4", "rect": [0, 0, 2, 2], "gravty": "stretch"}]"#,
        #"[{"source": "", "rect": [0, 0, 2, 2]}]"#, #"[{"source": "a.mp4", "rect": [0, 0, 2, 2], "timeRange": {"start": 1, "lenght": 2}}]"#,
        #"[{"source": "a.mp4", "rect": [0, 0, 2, 2], "loop": "forever", "timeRange": {"duration": 0.0001}}]"#,
    ])
    func badLayoutsAreUsageErrors(text: String) async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        try text.write(toFile: out + "/layout.json", atomically: true, encoding: .utf8)
        let run = try await CLI.run(["compose", "--layout", out + "/layout.json", "--size", "64x36", "--duration", "1", "--out", out + "/o"])
        #expect(run.status == 2, "\(text): \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"))
        // The usage shown is compose's, not the top level's list of subcommands.
        #expect(run.stderr.contains("Usage: playhead compose") && !run.stderr.contains("<subcommand>"), "\(run.stderr)")
        // A channel's first layout the same way: playout's usage, nothing written.
        let channel = try await CLI.run([
            "playout", "--layout", out + "/layout.json", "--size", "64x36", "--clock", "virtual", "--duration", "1", "--out", out + "/rec.ts",
        ])
        #expect(channel.status == 2, "\(text): \(channel.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/rec.ts"))
        #expect(channel.stderr.contains("Usage: playhead playout") && !channel.stderr.contains("<subcommand>"), "\(channel.stderr)")
    }

    /// A file beside the layout whose name holds a colon is a path of the layout's folder, not a
    /// URL (the media layer's one rule decides: `://`, `pipe:`, `data:`).
    @Test func aLayoutNamesAFileWithAColonBesideIt() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        try FileManager.default.copyItem(atPath: try Fixtures.clip("h264-aac.mp4"), toPath: out + "/we:ird.mp4")
        try #"[{"source": "we:ird.mp4", "rect": [0, 0, 64, 36]}]"#.write(toFile: out + "/layout.json", atomically: true, encoding: .utf8)
        let run = try await CLI.run([
            "compose", "--json", "--layout", out + "/layout.json", "--size", "64x36", "--duration", "1", "--out", out + "/o",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let layers = try #require(summary["layers"] as? [[String: Any]])
        #expect(layers.first?["framesShown"] as? Int == 30 && layers.first?["error"] == nil, "\(layers)")

        // `file:` with an absolute path is FFmpeg's file protocol, as on the command line.
        let clip = try Fixtures.clip("h264-aac.mp4")
        try #"[{"source": "file:\#(clip)", "rect": [0, 0, 64, 36]}]"#.write(toFile: out + "/file.json", atomically: true, encoding: .utf8)
        let protocolRun = try await CLI.run([
            "compose", "--json", "--layout", out + "/file.json", "--size", "64x36", "--duration", "1", "--out", out + "/f",
        ])
        #expect(protocolRun.status == 0, "\(protocolRun.stderr)")

        // A layout through a pipe has no folder: its relative sources are the working directory's.
        let here = FileManager.default.currentDirectoryPath + "/"
        let relative = try #require(clip.hasPrefix(here) ? String(clip.dropFirst(here.count)) : nil, "\(clip) outside \(here)")
        try #"[{"source": "\#(relative)", "rect": [0, 0, 64, 36]}]"#.write(toFile: out + "/piped.json", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = ["compose", "--layout", "/dev/stdin", "--size", "64x36", "--duration", "1", "--out", out + "/p"]
        let input = Pipe()
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: out + "/piped.json")))
        try input.fileHandleForWriting.close()
        let status = try await offPool { () -> Int32 in
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 0 && FileManager.default.fileExists(atPath: out + "/p/composition/frames.y4m"), "exit \(status)")
    }

    /// Requests that would give nothing usable, or run away, are usage errors before anything is
    /// written: less than one frame of output, a looped range of a fraction of a millisecond; the
    /// edge of what is allowed is accepted (0.001 fps).
    @Test func degenerateRequestsAreRefusedAndEdgesAccepted() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let layer = "x=0,y=0,w=64,h=36,source=\(clip)"
        for arguments in [
            ["--rate", "30", "--duration", "1", "--layer", "x=0,y=0,w=64,h=36,loop=forever,duration=0.0001,source=\(clip)"]
        ] {
            let run = try await CLI.run(["compose", "--size", "64x36", "--out", out + "/o.mp4"] + arguments)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + "/o.mp4"))
        }
        let slow = try await CLI.run([
            "compose", "--size", "64x36", "--rate", "0.001", "--duration", "1000", "--format", "none", "--out", out + "/slow", "--layer", layer,
        ])
        #expect(slow.status == 0, "\(slow.stderr)")
    }

    /// A layout read from a FIFO that nobody writes to gives up after --timeout (a usage error),
    /// and a signal stops it at once; nothing is written either way.
    @Test func aLayoutThatNeverComesDoesNotHold() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let fifo = out + "/layout.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let start = ContinuousClock.now
        let timedOut = try await CLI.run(["compose", "--layout", fifo, "--timeout", "1", "--size", "64x36", "--duration", "1", "--out", out + "/o"])
        #expect(timedOut.status == 2 && timedOut.stderr.contains("not read within"), "\(timedOut.stderr)")
        // --timeout 1: well before a hang, with room for a loaded machine.
        #expect(ContinuousClock.now - start < .seconds(8))
        let signalled = try await HostileRun.signalled(
            ["compose", "--layout", fifo, "--size", "64x36", "--duration", "1", "--out", out + "/o"],
            signal: HostileRun.interrupt, after: .milliseconds(700))
        #expect(signalled.status == 128 + HostileRun.interrupt && !signalled.killedBySignal, "\(signalled)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"))
    }

    /// An output name as long as the file system allows is written (its temporary name is cut).
    @Test func theLongestNameIsWritten() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let name = out + "/" + String(repeating: "a", count: 251) + ".mp4"
        let run = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--out", name, "--layer",
            "x=0,y=0,w=64,h=36,source=\(try Fixtures.clip("h264-aac.mp4"))",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: name))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).count == 1, "no temporary file left")
    }

    /// A playlist layer passes over an item that fails (missing, not media) and plays the rest,
    /// as a queue player does: the good items fill the time, the failures are reported by item,
    /// and the exit status is 1; a layer all of whose items fail fails, and the run goes on.
    @Test func aPlaylistLayerPassesOverAFailedItem() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let good = try Fixtures.clip("h264-aac.mp4")
        let layout = out + "/layout.json"
        try """
        [{"sources": ["\(out)/missing.mp4", "\(good)", "\(try Fixtures.clip("bad-text.mp4"))", "\(good)"], "rect": [0, 0, 64, 36]},
         {"sources": ["\(out)/missing.mp4", "\(try Fixtures.clip("bad-empty.mp4"))"], "rect": [0, 0, 32, 18], "z": 1}]
        """.write(toFile: layout, atomically: true, encoding: .utf8)
        let run = try await CLI.run([
            "compose", "--json", "--layout", layout, "--size", "64x36", "--rate", "30", "--duration", "4", "--format", "none", "--out", out + "/o",
        ])
        #expect(run.status == 1, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let layers = try #require(summary["layers"] as? [[String: Any]])
        #expect(layers.count == 2)
        // Two good items of 2 s fill the 4 s: every frame shows a picture.
        #expect(layers[0]["framesShown"] as? Int == 120 && layers[0]["error"] == nil, "\(layers[0])")
        let passed = try #require(layers[0]["itemErrors"] as? [[String: Any]])
        #expect(passed.map { $0["item"] as? Int } == [1, 3], "\(passed)")
        #expect(passed.allSatisfy { ($0["error"] as? [String: Any])?["code"] != nil })
        #expect(layers[1]["error"] != nil && layers[1]["framesShown"] as? Int == 0, "\(layers[1])")
        #expect((layers[1]["itemErrors"] as? [[String: Any]])?.map { $0["item"] as? Int } == [1, 2], "every failed item is named: \(layers[1])")
        #expect(summary["framesWritten"] as? Int == 120 || summary["framesExpected"] as? Int == 120, "\(summary)")
    }

    /// An output that cannot be written (the file-size limit reached: EFBIG, as a full disk gives
    /// ENOSPC) stops the composition with a typed error, exit status 1, and a summary whose state
    /// says it failed — not "finished" beside an error.
    @Test func anOutputThatCannotBeWrittenIsAFailedRun() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let binary = try CLI.binary().path
        let command =
            "trap '' XFSZ; ulimit -f 40; exec '\(binary)' compose --json --size 640x360 --duration 3 --format mp4 --out '\(out)/o' "
            + "--layer 'x=0,y=0,w=640,h=360,loop=forever,source=\(try Fixtures.clip("h264-aac.mp4"))'"
        let stdout = try await Reference.runAllowingFailure("/bin/sh", ["-c", command])
        #expect(stdout.status == 1)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(stdout.output)) as? [String: Any])
        #expect(summary["state"] as? String == "failed", "\(summary)")
        #expect((summary["error"] as? [String: Any])?["code"] as? String == "output.writeFailed", "\(summary)")
        #expect(leftoverTemporaryFiles(in: out).isEmpty)
        let onDisk = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/o/summary.json"))) as? [String: Any])
        #expect(onDisk["state"] as? String == "failed")
    }

    /// A layer outside the canvas is refused, naming it.
    @Test func aLayerOutsideTheCanvasIsRefused() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--out", out + "/o",
            "--layer", "x=40,y=0,w=64,h=36,source=\(try Fixtures.clip("h264-aac.mp4"))",
        ])
        #expect(run.status == 2 && run.stderr.contains("inside the 64x36 canvas"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"), "refused before the output folder is made")
    }
}
