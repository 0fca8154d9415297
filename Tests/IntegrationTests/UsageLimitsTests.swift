import Foundation
import Testing

@testable import Playhead
@testable import PlayheadCLI
@testable import PlayheadMedia

/// What a run may ask for is checked before any work (exit 2, nothing written), with a message
/// that says what is allowed: standard input named twice, canvases and layer counts past the
/// limits, negative numbers.
@Suite struct UsageLimitsTests {
    @Test func standardInputIsReadOnce() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        // Every name FFmpeg's pipe protocol reads as descriptor 0 (strtol: `00`, `0 `, `+0`, or no
        // number at all), `file:` URLs, and — standard input being a stream — a link to it.
        try FileManager.default.createSymbolicLink(atPath: out + "/input", withDestinationPath: "/dev/stdin")
        for (command, sources) in [
            ("play", ["-", "-"]), ("play", ["-", "/dev/stdin"]), ("thumbnails", ["pipe:0", "-"]), ("probe", ["-", "/proc/self/fd/0"]),
            ("play", ["-", "pipe:00"]), ("probe", ["pipe:0 ", "-"]), ("probe", ["pipe:", "pipe:x"]), ("probe", ["pipe:+0", "file:/dev/stdin"]),
            ("thumbnails", [out + "/input", "-"]),
        ] {
            var arguments = [command] + sources
            if command != "probe" { arguments += ["--out", out + "/o"] }
            let run = try await HostileRun.shell(arguments, redirections: "< /dev/null")
            #expect(run.status == 2 && run.stderr.contains("standard input is named 2 times"), "\(arguments): \(run.status) \(run.stderr)")
        }
        // Another descriptor is not standard input.
        #expect(StandardInput.pipeDescriptor(" 3") == 3 && StandardInput.pipeDescriptor("3x") == 0)
        let clip = try Fixtures.clip("h264-aac.mp4")
        let compose = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--out", out + "/c.y4m",
            "--layer", "x=0,y=0,w=32,h=36,source=-", "--layer", "x=32,y=0,w=32,h=36,source=-", "--layer", "x=0,y=0,w=8,h=8,source=\(clip)",
        ])
        #expect(compose.status == 2 && compose.stderr.contains("standard input"), "\(compose.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o") && !FileManager.default.fileExists(atPath: out + "/c.y4m"))

        // A layout read from standard input has used it up: a layer of it reading `-` is refused.
        try #"[{"source": "-", "rect": [0, 0, 64, 36]}]"#.write(toFile: out + "/layout.json", atomically: true, encoding: .utf8)
        let piped = try await HostileRun.shell(
            ["compose", "--layout", "/dev/stdin", "--size", "64x36", "--duration", "1", "--out", out + "/p.y4m"],
            redirections: "< '\(out)/layout.json'")
        #expect(piped.status == 2 && piped.stderr.contains("standard input is named 2 times"), "\(piped.status) \(piped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/p.y4m"))
    }

    @Test func compositionLimitsAreCheckedBeforeAnyWork() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        // What a run that does no work costs on this machine now (the debug build's start, the
        // load of the other suites): the refusals below may take that, not the canvas's work.
        let quick = ContinuousClock.now
        _ = try await CLI.run(["compose", "--help"])
        let idleRun = ContinuousClock.now - quick
        let start = ContinuousClock.now
        let huge = try await CLI.run([
            "compose", "--size", "16384x16000", "--duration", "1", "--out", out + "/huge.y4m", "--layer", "x=0,y=0,w=64,h=36,source=\(clip)",
        ])
        #expect(huge.status == 2 && huge.stderr.contains("too large") && huge.stderr.contains("8192"), "\(huge.stderr)")
        let wide = try await CLI.run(["playout", "--layout", "/nonexistent.json", "--size", "8194x2", "--out", out + "/c.ts"])
        #expect(wide.status == 2 && wide.stderr.contains("too large"), "\(wide.stderr)")
        // Refused before any work (the canvas once took 51 s to stop): two runs' start and a
        // margin, as CLI runs share the machine with the other suites.
        #expect(ContinuousClock.now - start < idleRun * 2 + .seconds(20), "refused at once (a run that does nothing took \(idleRun))")
        let many = Array(repeating: clip, count: 65)
        let grid = try await CLI.run(["compose", "--size", "640x360", "--duration", "1", "--grid", "9x9", "--out", out + "/grid.y4m"] + many)
        #expect(grid.status == 2 && grid.stderr.contains("at most 64"), "\(grid.stderr)")
        let layers = (0..<65).flatMap { _ in ["--layer", "x=0,y=0,w=8,h=8,source=\(clip)"] }
        let layered = try await CLI.run(["compose", "--size", "64x36", "--duration", "1", "--out", out + "/layers.y4m"] + layers)
        #expect(layered.status == 2 && layered.stderr.contains("at most 64"), "\(layered.stderr)")
        for name in ["huge.y4m", "c.ts", "grid.y4m", "layers.y4m"] {
            #expect(!FileManager.default.fileExists(atPath: out + "/" + name), "\(name) was written")
        }
    }

    @Test func negativeNumbersSayWhatIsAllowed() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let layer = ["--layer", "x=0,y=0,w=64,h=36,source=\(clip)"]
        let cases: [([String], String)] = [
            (["play", clip, "--out", out + "/p", "--frames", "-1"], "--frames must be at least 1"),
            (["play", clip, "--out", out + "/p", "--size", "-2x-2"], "each at least 1"),
            (["thumbnails", clip, "--out", out + "/t", "--count", "-3"], "--count must be"),
            (["thumbnails", clip, "--out", out + "/t", "--at", "1,-1"], "--at takes times of 0 seconds or more"),
            (["compose", "--size", "64x36", "--duration", "1", "--rate", "-30", "--out", out + "/c.y4m"] + layer, "--rate must be"),
            (["compose", "--size", "64x36", "--duration", "-1", "--out", out + "/c.y4m"] + layer, "--duration must be"),
        ]
        for (arguments, expected) in cases {
            let run = try await CLI.run(arguments)
            #expect(run.status == 2 && run.stderr.contains(expected) && !run.stderr.contains("Missing value"), "\(arguments): \(run.stderr)")
        }
        // A bad grid or layer is a usage error of compose, shown with compose's usage.
        for bad in [["--grid", "0x0", clip], ["--layer", "x=0,bogus=1"]] {
            let run = try await CLI.run(["compose", "--size", "64x36", "--duration", "1", "--out", out + "/c.y4m"] + bad)
            #expect(run.status == 2 && run.stderr.contains("Usage: playhead compose"), "\(bad): \(run.stderr)")
        }
    }

    /// `--format none` writes nothing: no samples are reported as written.
    @Test func nothingWrittenIsNothingReported() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        for extra in [[String](), ["--queue"]] {
            let out = try HostileOperationsTests.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: out) }
            let run = try await CLI.run(["play", "--json", "--format", "none", "--out", out + "/o", clip] + extra)
            #expect(run.status == 0, "\(run.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let files = try #require(document["files"] as? [[String: Any]])
            #expect(files.count == 1 && files[0]["audioFrames"] == nil, "\(extra): \(files)")
            #expect((document["queue"] as? [String: Any])?["audioFrames"] == nil, "\(extra): \(document)")
        }
    }

    /// A composition whose output folder is refused says "failed" in its summary (it said "finished").
    @Test func aRefusedCompositionIsFailed() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let arguments = [
            "compose", "--size", "64x36", "--duration", "0.2", "--format", "png", "--out", out + "/c",
            "--layer", "x=0,y=0,w=64,h=36,source=\(try Fixtures.clip("h264-aac.mp4"))",
        ]
        let first = try await CLI.run(arguments)
        #expect(first.status == 0, "\(first.stderr)")
        try FileManager.default.removeItem(atPath: out + "/c/composition")
        try FileManager.default.createDirectory(atPath: out + "/c/composition", withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: out + "/c/composition/stranger", contents: Data("mine".utf8)))
        let refused = try await CLI.run(arguments)
        #expect(refused.status == 1 && refused.stderr.contains("outputExists"), "\(refused.stderr)")
        let summary = try readJSONObject(URL(fileURLWithPath: out + "/c/summary.json"))
        #expect(summary["state"] as? String == "failed", "\(summary)")
        #expect(try String(contentsOfFile: out + "/c/composition/stranger", encoding: .utf8) == "mine")
    }

    /// A file whose name reads like a URL (`take:1.mp4`) is that file, as given on the command line.
    @Test func aNameWithAColonIsAFile() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        try FileManager.default.copyItem(atPath: try Fixtures.clip("h264-aac.mp4"), toPath: out + "/take:1.mp4")
        let probe = try await CLI.run(["probe", "--json", "take:1.mp4"], in: URL(fileURLWithPath: out))
        #expect(probe.status == 0 && probe.stdout.contains("h264"), "\(probe.stdout) \(probe.stderr)")
        let play = try await CLI.run(["play", "take:1.mp4", "--format", "none", "--out", "o"], in: URL(fileURLWithPath: out))
        #expect(play.status == 0, "\(play.stderr)")
        // A name that is not on disk is still a URL: its protocol is what fails.
        let missing = try await CLI.run(["probe", "nope:1.mp4"], in: URL(fileURLWithPath: out))
        #expect(missing.status != 0)
    }

    /// Control characters in a file's name reach the terminal escaped, never as themselves.
    @Test func controlCharactersInNamesAreEscaped() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let name = "red\u{1B}[31m\u{07}\r.mp4"
        try FileManager.default.copyItem(atPath: try Fixtures.clip("h264-aac.mp4"), toPath: out + "/" + name)
        let missing = out + "/gone\u{1B}]0;title\u{07}.mp4"
        for arguments in [["probe", out + "/" + name, missing], ["play", out + "/" + name, missing, "--format", "none", "--out", out + "/o"]] {
            let run = try await CLI.run(arguments)
            let printed = run.stdout + run.stderr
            #expect(
                !printed.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\r" },
                "\(arguments[0]) printed control characters: \(printed.debugDescription)")
            #expect(printed.contains("\\u{1B}"), "\(arguments[0]): the name is shown escaped: \(printed.debugDescription)")
        }
        // A newline in a name would start a line of its own, one that could pass for another
        // file's status line: shown escaped too.
        let forged = "a\nforged.mp4  completed  999 frames.mp4"
        try FileManager.default.copyItem(atPath: try Fixtures.clip("h264-aac.mp4"), toPath: out + "/" + forged)
        for arguments in [["probe", out + "/" + forged], ["play", out + "/" + forged, "--format", "none", "--out", out + "/p"]] {
            let run = try await CLI.run(arguments)
            let lines = (run.stdout + run.stderr).split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("forged.mp4") }, "\(arguments[0]): \(lines)")
            #expect(lines.contains { $0.contains("a\\u{A}forged.mp4") }, "\(arguments[0]): \(lines)")
        }
    }

    /// Errors that say what happened: a loop of links, a path too long, a /proc file that tells no
    /// size (not "empty"), an output folder under a file.
    @Test func errorsSayWhatHappened() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        try FileManager.default.createSymbolicLink(atPath: out + "/a", withDestinationPath: out + "/b")
        try FileManager.default.createSymbolicLink(atPath: out + "/b", withDestinationPath: out + "/a")
        let long = out + "/" + String(repeating: "d/", count: 2100) + "clip.mp4"
        let probe = try await CLI.run(["probe", "--json", out + "/a", long, "/proc/self/environ"])
        let messages = try CLI.assets(probe.stdout).map { (($0["error"] as? [String: Any])?["message"] as? String) ?? "" }
        #expect(messages.count == 3)
        #expect(messages.first?.contains("symbolic links loop") == true, "\(messages)")
        #expect(messages.dropFirst().first?.contains("too long") == true, "\(messages)")
        #expect(messages.last.map { !$0.contains("empty") && $0.contains("not a recognized media format") } == true, "\(messages)")
        #expect(FileManager.default.createFile(atPath: out + "/file", contents: Data()))
        let play = try await CLI.run(["play", try Fixtures.clip("h264-aac.mp4"), "--format", "none", "--out", out + "/file/sub"])
        #expect(play.status != 0 && play.stderr.contains("is a file, not a folder") && !play.stderr.contains("NSCocoaErrorDomain"), "\(play.stderr)")
    }

    /// A file of subtitles alone: `play` (which needs sound or picture) and `thumbnails` (which
    /// needs a picture) each say what is missing and what the file holds instead.
    @Test func aFileOfSubtitlesAloneSaysWhatItHolds() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let subtitles = out + "/subtitles.srt", file = out + "/subtitles.mp4"
        #expect(FileManager.default.createFile(atPath: subtitles, contents: Data("1\n00:00:00,000 --> 00:00:02,000\nHello\n".utf8)))
        _ = try await Reference.run(try Reference.ffmpeg(), ["-v", "error", "-y", "-i", subtitles, "-c:s", "mov_text", file])
        let play = try await CLI.run(["play", "--format", "none", "--out", out + "/play", file])
        #expect(play.status == 1)
        #expect(play.stderr.contains("[demux.noStreams] no audio or video track (only subtitle #0 mov_text)"), "\(play.stderr)")
        let thumbnails = try await CLI.run(["thumbnails", "--at", "0.5", "--out", out + "/thumbnails", file])
        #expect(thumbnails.status == 1)
        #expect(thumbnails.stderr.contains("[demux.noVideoTrack] no video track (only subtitle #0 mov_text)"), "\(thumbnails.stderr)")
    }

    /// A name written like one of FFmpeg's own protocols (`concat:a|b`) is not on disk and is not a
    /// source: the error says so rather than a bare "no such file"; an unknown prefix is a plain
    /// missing file.
    @Test func anFFmpegProtocolNameSaysItIsNotASource() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let concat = try await CLI.run(["probe", "concat:\(clip)|\(clip)"])
        #expect(concat.status == 1, "\(concat.stderr)")
        #expect(concat.stdout.contains("`concat:` (an FFmpeg protocol) is not a source"), "\(concat.stdout) \(concat.stderr)")
        let plain = try await CLI.run(["probe", "nosuchscheme:\(clip)"])
        #expect(plain.status == 1 && plain.stdout.contains("no such file") && !plain.stdout.contains("FFmpeg protocol"), "\(plain.stdout)")
    }

    /// Y4M headers that lie within the format's rules: a pixel aspect of 1:2147483647 is no ratio
    /// (FFmpeg's own check) rather than a 0-wide, black picture; a 65534x2 picture that a probe
    /// calls playable plays (scaled into the largest canvas) rather than failing.
    @Test func y4mHeadersAtTheEdges() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func y4m(_ name: String, width: Int, height: Int, aspect: String, luma: UInt8) throws -> String {
            var bytes = Array("YUV4MPEG2 W\(width) H\(height) F25:1 Ip A\(aspect) C420jpeg\n".utf8)
            let chroma = 2 * ((width + 1) / 2) * ((height + 1) / 2)
            for _ in 0..<3 {
                bytes += Array("FRAME\n".utf8) + [UInt8](repeating: luma, count: width * height) + [UInt8](repeating: 128, count: chroma)
            }
            let path = folder + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            return path
        }
        let aspect = try y4m("aspect.y4m", width: 64, height: 36, aspect: "1:2147483647", luma: 200)
        let probe = try await CLI.run(["probe", "--json", aspect])
        let video = try #require((CLI.assets(probe.stdout).first?["tracks"] as? [[String: Any]])?.first)
        #expect((video["presentationSize"] as? [String: Int])?["width"] == 64, "\(video)")
        let play = try await CLI.run(["play", "--format", "ppm", "--out", folder + "/a", aspect])
        #expect(play.status == 0, "\(play.stderr)")
        let frame = try #require(FileManager.default.contents(atPath: folder + "/a/01-aspect.y4m/frame-000001.ppm"))
        #expect(frame.starts(with: Data("P6\n64 36\n255\n".utf8)), "\(String(decoding: frame.prefix(16), as: UTF8.self))")
        #expect((frame.last ?? 0) > 150, "the picture is its grey, not black: \(frame.last ?? 0)")

        let wide = try y4m("wide.y4m", width: 65534, height: 2, aspect: "1:1", luma: 90)
        let wideProbe = try await CLI.run(["probe", "--json", wide])
        #expect(try CLI.assets(wideProbe.stdout).first?["isPlayable"] as? Bool == true, "\(wideProbe.stdout)")
        let widePlay = try await CLI.run(["play", "--format", "none", "--json", "--out", folder + "/w", wide])
        #expect(widePlay.status == 0, "what a probe calls playable plays: \(widePlay.stdout) \(widePlay.stderr)")
    }
}
