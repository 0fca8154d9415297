import Foundation
import Testing

/// Sources beyond local files: HTTP that misbehaves ends in a typed error within the timeout, a
/// dropped connection is resumed, and what arrives over HTTP or standard input is what the local
/// file gives.
@Suite(.serialized) struct SourceTests {
    static func withServer<T>(_ body: (TestHTTPServer) async throws -> T) async throws -> T {
        let server = try TestHTTPServer(root: Fixtures.sampleMedia.path)
        defer { server.stop() }
        return try await body(server)
    }

    /// Each misbehaviour, through `probe` and `play` with `--timeout 1`: a typed error (or, for a
    /// dropped connection, a complete result) within the timeout + 2 s; nothing hangs.
    @Test(arguments: ["silent", "stall-headers", "stall-body", "drop", "lie", "loop"])
    func misbehavingServersEndInTime(mode: String) async throws {
        try await Self.withServer { server in
            let url = server.url(mode, "h264-aac.mp4")
            let out = try HostileOperationsTests.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: out) }
            for command in [
                ["probe", "--json", "--timeout", "1", url], ["play", "--json", "--timeout", "1", "--format", "none", "--out", out, url],
            ] {
                let start = ContinuousClock.now
                let run = try await CLI.run(command)
                let elapsed = ContinuousClock.now - start
                // Open and stall timeouts may add up (the headers, then the body): 2 × 1 s + 2 s.
                #expect(elapsed < .seconds(4), "\(command[0]) \(mode) took \(elapsed)")
                let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
                let entry = try #require(((document["assets"] ?? document["files"]) as? [[String: Any]])?.first)
                let error = entry["error"] as? [String: Any]
                switch mode {
                case "drop":
                    #expect(run.status == 0, "\(command[0]) after a dropped connection: \(run.stderr)")
                    if command[0] == "play" { #expect(entry["framesDecoded"] as? Int == 50) }
                case "lie":
                    // The whole file arrived; the missing promised bytes end it as complete or truncated, never a hang.
                    #expect(
                        run.status == 0 || ["io.truncated", "io.readFailed", "io.timedOut"].contains(error?["code"] as? String ?? ""), "\(run.stdout)"
                    )
                case "loop":
                    #expect(run.status == 1 && (error?["code"] as? String)?.hasPrefix("demux.") == true, "\(run.stdout)")
                default:
                    #expect(run.status == 1, "\(command[0]) \(mode): \(run.stdout)")
                    #expect(error?["code"] as? String == "io.timedOut", "\(command[0]) \(mode): \(error ?? [:])")
                }
                if let message = error?["message"] as? String { #expect(message.contains("127.0.0.1"), "the error names the URL: \(message)") }
            }
        }
    }

    /// Frames, audio and images over HTTP and from standard input equal those of the local file.
    @Test func httpAndStandardInputGiveWhatTheFileGives() async throws {
        try await Self.withServer { server in
            let clip = try Fixtures.clip("h264-aac.mp4")
            let folder = try HostileOperationsTests.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let local = try await CLI.run(["play", "--format", "ppm", "--size", "64x36", "--out", folder + "/local", clip])
            let remote = try await CLI.run([
                "play", "--format", "ppm", "--size", "64x36", "--out", folder + "/remote", server.url("ok", "h264-aac.mp4"),
            ])
            #expect(local.status == 0 && remote.status == 0, "\(remote.stderr)")
            let localFolder = folder + "/local/01-h264-aac.mp4", remoteFolder = folder + "/remote/01-h264-aac.mp4"
            let names = try FileManager.default.contentsOfDirectory(atPath: localFolder).filter { !$0.hasPrefix(".") }.sorted()
            #expect(names.count == 51, "50 frames and the WAV: \(names.count)")
            for name in names {
                #expect(
                    FileManager.default.contents(atPath: localFolder + "/" + name) == FileManager.default.contents(atPath: remoteFolder + "/" + name),
                    "\(name) differs over HTTP")
            }
            let thumbsLocal = try await CLI.run(["thumbnails", "--at", "0.3,1.1,1.9", "--out", folder + "/tl", clip])
            let thumbsRemote = try await CLI.run(["thumbnails", "--at", "0.3,1.1,1.9", "--out", folder + "/tr", server.url("ok", "h264-aac.mp4")])
            #expect(thumbsLocal.status == 0 && thumbsRemote.status == 0, "\(thumbsRemote.stderr)")
            for i in 1...3 {
                let name = String(format: "thumb-%04d.png", i)
                let a = FileManager.default.contents(atPath: folder + "/tl/01-h264-aac.mp4/" + name)
                #expect(a != nil && a == FileManager.default.contents(atPath: folder + "/tr/01-h264-aac.mp4/" + name), "\(name) differs over HTTP")
            }
            let probeLocal = try await CLI.run(["probe", "--json", clip])
            let probeRemote = try await CLI.run(["probe", "--json", server.url("ok", "h264-aac.mp4")])
            let a = try #require(try CLI.assets(probeLocal.stdout).first), b = try #require(try CLI.assets(probeRemote.stdout).first)
            #expect(a["duration"] as? Double == b["duration"] as? Double)
            #expect(
                (a["tracks"] as? [[String: Any]])?.map { $0["codec"] as? String } == (b["tracks"] as? [[String: Any]])?.map { $0["codec"] as? String }
            )

            // Standard input, opened once: `-`.
            let piped = try await HostileRun.shell(
                ["play", "--format", "ppm", "--size", "64x36", "--out", folder + "/stdin", "-"],
                redirections: "< '\(clip)'")
            #expect(piped.status == 0, "\(piped.stderr)")
            let stdinFolder = folder + "/stdin/01--"
            for name in names {
                #expect(
                    FileManager.default.contents(atPath: localFolder + "/" + name) == FileManager.default.contents(atPath: stdinFolder + "/" + name),
                    "\(name) differs from standard input")
            }
            // A file: URL is the file.
            let fileURL = try await CLI.run(["probe", "--json", URL(fileURLWithPath: clip).absoluteString])
            #expect(fileURL.status == 0, "\(fileURL.stdout)")
        }
    }

    /// An HLS playlist made by ffmpeg from the sample clip (segments remuxed, nothing re-encoded),
    /// with two master playlists that name each other beside it.
    static func hlsFolder() async throws -> String {
        let folder = try HostileOperationsTests.temporaryFolder()
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", try Fixtures.clip("h264-aac.mp4"),
                "-c", "copy", "-f", "hls", "-hls_time", "0.5", "-hls_list_size", "0", folder + "/clip.m3u8",
            ])
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nb.m3u8\n".write(toFile: folder + "/a.m3u8", atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\na.m3u8\n".write(toFile: folder + "/b.m3u8", atomically: true, encoding: .utf8)
        return folder
    }

    /// The files `command` (with `--out OUT`) wrote for the first source, by name.
    static func outputs(_ command: [String], out: String, input: String, shell: String? = nil, stdin: String? = nil) async throws -> [String: Data] {
        let result: (status: Int32, stderr: String)
        if let shell {
            let outcome = try await HostileRun.shell(command + ["--out", out, input], before: shell)
            result = (outcome.status, outcome.stderr)
        } else if let stdin {
            let outcome = try await HostileRun.shell(command + ["--out", out, input], redirections: "< '\(stdin)'")
            result = (outcome.status, outcome.stderr)
        } else {
            let outcome = try await CLI.run(command + ["--out", out, input])
            result = (outcome.status, outcome.stderr)
        }
        #expect(result.status == 0, "\(command) \(input): \(result.stderr)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix("01-") }
        let folder = out + "/" + (try #require(folders.first, "no output folder for \(input)"))
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where !name.hasPrefix(".") {
            files[name] = FileManager.default.contents(atPath: folder + "/" + name)
        }
        return files
    }

    /// HLS over HTTP gives the file's frames and images; a playlist loop ends at once, well
    /// before the timeout, as a typed error.
    @Test func hlsGivesWhatTheFileGivesAndALoopEnds() async throws {
        let root = try await Self.hlsFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let play = ["play", "--format", "ppm", "--size", "64x36", "--no-audio"]
        let local = try await Self.outputs(play, out: out + "/pl", input: clip)
        let remote = try await Self.outputs(play, out: out + "/pr", input: server.url("ok", "clip.m3u8"))
        #expect(local.count == 50 && remote == local, "\(remote.count) frames over HLS")
        // Images: the same as from the clip remuxed to one local transport stream (the segments'
        // timestamps, which start at 1.46 s; the command's times count from there).
        let transport = root + "/whole.ts"
        _ = try await Reference.run(
            try Reference.ffmpeg(), ["-hide_banner", "-loglevel", "error", "-i", clip, "-c", "copy", "-f", "mpegts", transport])
        let thumbnails = ["thumbnails", "--at", "1.9,0.3,1.1,0"]
        let localImages = try await Self.outputs(thumbnails, out: out + "/tl", input: transport)
        let remoteImages = try await Self.outputs(thumbnails, out: out + "/tr", input: server.url("ok", "clip.m3u8"))
        #expect(localImages.count == 4 && remoteImages == localImages)

        for command in [["probe", "--json"], ["play", "--json", "--format", "none", "--out", out + "/loop"]] {
            let start = ContinuousClock.now
            let run = try await CLI.run(command + [server.url("ok", "a.m3u8")])
            #expect(ContinuousClock.now - start < .seconds(5), "a playlist loop must not run to the 15 s timeout")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
            let entry = try #require(((document["assets"] ?? document["files"]) as? [[String: Any]])?.first)
            let error = entry["error"] as? [String: Any]
            #expect(run.status == 1 && error?["code"] as? String == "demux.openFailed", "\(command[0]): \(run.stdout)")
        }
    }

    /// A FIFO and standard input, opened once, give what the file gives, for every command.
    @Test func fifoAndStandardInputForEveryCommand() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = "cat '\(clip)' > '\(fifo)'"
        for (index, command) in [
            ["play", "--format", "ppm", "--size", "64x36"], ["thumbnails", "--at", "1.1,0.3,1.9"], ["thumbnails", "--count", "4"],
        ].enumerated() {
            let local = try await Self.outputs(command, out: folder + "/l\(index)", input: clip)
            let fromFIFO = try await Self.outputs(command, out: folder + "/f\(index)", input: fifo, shell: writer)
            let fromStdin = try await Self.outputs(command, out: folder + "/s\(index)", input: "-", stdin: clip)
            #expect(!local.isEmpty && fromFIFO == local, "\(command) from a FIFO: \(fromFIFO.keys.sorted())")
            #expect(fromStdin == local, "\(command) from standard input: \(fromStdin.keys.sorted())")
        }
        let probe = try await CLI.run(["probe", "--json", clip])
        let probeFIFO = try await HostileRun.shell(["probe", "--json", fifo], before: writer)
        #expect(probeFIFO.status == 0 && probe.status == 0, "\(probeFIFO.stderr)")
        let a = try #require(try CLI.assets(probe.stdout).first), b = try #require(try CLI.assets(probeFIFO.stdout).first)
        #expect(a["duration"] as? Double == b["duration"] as? Double && a["format"] as? String == b["format"] as? String)
        #expect((a["tracks"] as? [[String: Any]])?.count == (b["tracks"] as? [[String: Any]])?.count)
    }
}
