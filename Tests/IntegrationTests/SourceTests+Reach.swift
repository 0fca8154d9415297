import Foundation
import Glibc
import Playhead
import Testing

/// What sources reach and what they show: names that are not UTF-8, URLs whose credentials must
/// not be printed, remote reads that fetch ranges rather than the whole file, and a pipe that
/// cannot give back the media its index points at.
extension SourceTests {
    /// Makes `folder/NAME` (NAME given as bytes) a copy of `clip`.
    static func copy(_ clip: String, toRawName name: [UInt8], in folder: String) throws {
        var path = Array(folder.utf8) + [UInt8(ascii: "/")] + name
        path.append(0)
        let data = try #require(FileManager.default.contents(atPath: clip))
        let fd = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { Glibc.open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        #expect(fd >= 0)
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Two files whose names differ only in a byte that is not UTF-8 (both arrive as `caf�.mp4`
    /// in a Swift String) are opened as themselves, in the order given, by every command and from
    /// a manifest; the library opens the same bytes from a percent-encoded `file:` URL.
    @Test func namesThatAreNotUTF8() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.copy(try Fixtures.clip("h264-aac.mp4"), toRawName: Array("caf".utf8) + [0xE9] + Array(".mp4".utf8), in: folder)
        try Self.copy(try Fixtures.clip("4x3.mp4"), toRawName: Array("caf".utf8) + [0xE8] + Array(".mp4".utf8), in: folder)
        // The names as shell words, so that their bytes reach the process as they are.
        let names = "\"$(printf '\(folder)/caf\\351.mp4')\" \"$(printf '\(folder)/caf\\350.mp4')\""

        let probe = try await HostileRun.shell(["probe", "--json"], redirections: names)
        #expect(probe.status == 0, "\(probe.stdout) \(probe.stderr)")
        let assets = try CLI.assets(probe.stdout)
        #expect(assets.map { $0["path"] as? String } == ["file://\(folder)/caf%E9.mp4", "file://\(folder)/caf%E8.mp4"])
        let heights = assets.map { (($0["tracks"] as? [[String: Any]])?.first?["naturalSize"] as? [String: Any])?["height"] as? Int }
        #expect(heights == [180, 240], "each name opens its own file")

        let out = folder + "/out"
        let thumbnails = try await HostileRun.shell(["thumbnails", "--at", "0.5", "--out", out], redirections: names)
        #expect(thumbnails.status == 0, "\(thumbnails.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/01-caf%E9.mp4/thumb-0001.png"))
        #expect(FileManager.default.fileExists(atPath: out + "/02-caf%E8.mp4/thumb-0001.png"))
        let play = try await HostileRun.shell(["play", "--json", "--format", "none", "--out", folder + "/play"], redirections: names)
        let files = try #require(try JSONSerialization.jsonObject(with: Data(play.stdout.utf8)) as? [String: Any])["files"] as? [[String: Any]]
        #expect(play.status == 0 && files?.map { $0["framesDecoded"] as? Int } == [50, 50], "\(play.stdout)")

        // A manifest line holding the raw bytes.
        let manifest = folder + "/list.txt"
        #expect(FileManager.default.createFile(atPath: manifest, contents: Data(Array("\(folder)/caf".utf8) + [0xE8] + Array(".mp4\n".utf8))))
        let batch = try await CLI.run(["probe", "--manifest", manifest, "--results", folder + "/results.jsonl"])
        #expect(batch.status == 0, "\(batch.stderr)")
        let record = try String(contentsOfFile: folder + "/results.jsonl", encoding: .utf8).split(separator: "\n").first.map { Data($0.utf8) }
        let object = try #require(try record.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(object["status"] as? String == "loaded" && object["source"] as? String == "file://\(folder)/caf%E8.mp4", "\(object)")

        let asset = Asset(url: try #require(URL(string: "file://\(folder)/caf%E9.mp4")))
        let duration = try await asset.load(.duration)
        #expect(duration.seconds == 2)
    }

    /// A URL's password and signature appear nowhere — not in errors, tables, summaries, results
    /// files or folder names — for a source that fails to open, times out, stalls, plays, whose
    /// output folder is someone else's, given by a manifest, or a composition's layer.
    @Test func credentialsAreNeverPrinted() async throws {
        try await Self.withServer { server in
            let folder = try HostileOperationsTests.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            func secretURL(_ mode: String) -> String {
                server.url(mode, "h264-aac.mp4").replacingOccurrences(of: "http://", with: "http://viewer:hunter2@") + "?X-Amz-Signature=deadbeef&v=1"
            }
            // Someone else's file where the output folder of the source would go.
            try FileManager.default.createDirectory(atPath: folder + "/d", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: folder + "/d/01-h264-aac.mp4", contents: Data("mine".utf8)))
            let manifest = folder + "/sources.txt"
            try (secretURL("silent") + "\n" + secretURL("ok") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
            let runs: [(command: [String], status: Int32?, files: [String])] = [
                (["probe", "--timeout", "1", secretURL("silent")], 1, []),
                (["probe", "--json", "--timeout", "1", secretURL("silent")], 1, []),
                (["play", "--json", "--timeout", "1", "--format", "none", "--out", folder + "/a", secretURL("stall-body")], 1, []),
                (["thumbnails", "--timeout", "1", "--at", "0.5", "--out", folder + "/b", secretURL("silent")], 1, []),
                (["play", "--json", "--format", "ppm", "--size", "32x18", "--out", folder + "/c", secretURL("ok")], 0, []),
                (["play", "--json", "--format", "ppm", "--size", "32x18", "--out", folder + "/d", secretURL("ok")], 1, []),
                (["probe", "--timeout", "1", "--manifest", manifest, "--results", folder + "/probe.jsonl"], 1, [folder + "/probe.jsonl"]),
                (
                    [
                        "thumbnails", "--timeout", "1", "--at", "0.5", "--manifest", manifest, "--results", folder + "/thumbs.jsonl", "--out",
                        folder + "/e",
                    ], 1, [folder + "/thumbs.jsonl"]
                ),
                (
                    [
                        "compose", "--size", "64x36", "--duration", "1", "--timeout", "1", "--out", folder + "/f", "--layer",
                        "x=0,y=0,w=64,h=36,source=\(secretURL("silent"))",
                    ], nil, []
                ),
            ]
            for run in runs {
                let result = try await CLI.run(run.command)
                if let status = run.status { #expect(result.status == status, "\(run.command[0]): \(result.stderr)") }
                var seen = result.stdout + result.stderr
                for file in run.files { seen += (try? String(contentsOfFile: file, encoding: .utf8)) ?? "(no \(file))" }
                if let out = run.command.firstIndex(of: "--out").map({ run.command[$0 + 1] }) {
                    for summary in (FileManager.default.subpaths(atPath: out) ?? []).filter({ $0.hasSuffix("summary.json") }) {
                        seen += (try? String(contentsOfFile: out + "/" + summary, encoding: .utf8)) ?? "(no summary)"
                    }
                    seen += (FileManager.default.subpaths(atPath: out) ?? []).joined(separator: "\n")
                }
                #expect(!seen.contains("hunter2") && !seen.contains("deadbeef"), "\(run.command[0]) printed a secret: \(seen.prefix(2000))")
                #expect(seen.contains("127.0.0.1"), "the URL is still named: \(seen.prefix(500))")
            }
            let frames = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/c/01-h264-aac.mp4"))?.filter { $0.hasPrefix("frame-") }
            #expect(frames?.count == 50, "the folder is named after the file, not its query")
            #expect(FileManager.default.contents(atPath: folder + "/d/01-h264-aac.mp4") == Data("mine".utf8), "someone else's file stays")
        }
    }

    /// Remote reads use bounded ranges: `probe` of an MP4 whose index is at its end fetches the
    /// index and not the media (≤ 5% of the file), ten keyframe thumbnails ≤ 15%, and both ask for
    /// ranges — from a server with 256 KB in flight per connection, as a loaded server on a real
    /// network has (an open-ended request given up costs all of that; a bounded one, what is left
    /// of its range).
    @Test func remoteReadsFetchRanges() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clip = root + "/remote.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=30",
                "-c:v", "libx264", "-preset", "ultrafast", "-crf", "14", "-g", "60", "-pix_fmt", "yuv420p", clip,
            ])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let server = try TestHTTPServer(root: root, sendBuffer: 256 << 10)
        defer { server.stop() }
        let url = server.url("ok", "remote.mp4")

        server.resetCount()
        let probe = try await CLI.run(["probe", "--json", url])
        let probed = server.sent
        let probedDuration = try CLI.assets(probe.stdout).first?["duration"] as? Double
        #expect(probe.status == 0 && probedDuration == 30, "\(probe.stdout)")
        #expect(probed.rangeRequests >= 1, "the index at the end is fetched with a range request")
        #expect(Double(probed.bytes) <= 0.05 * Double(size), "probe fetched \(probed.bytes) of \(size) bytes")

        server.resetCount()
        let thumbnails = try await CLI.run(["thumbnails", "--count", "10", "--tolerance", "1", "--json", "--out", root + "/t", url])
        let fetched = server.sent
        #expect(thumbnails.status == 0, "\(thumbnails.stderr)")
        #expect(fetched.rangeRequests >= 9, "a seek per image: \(fetched.rangeRequests)")
        #expect(Double(fetched.bytes) <= 0.15 * Double(size), "ten keyframe thumbnails fetched \(fetched.bytes) of \(size) bytes")
        print(
            "remote reads: probe \(probed.bytes) bytes in \(probed.requests) requests, ten keyframe thumbnails \(fetched.bytes) in \(fetched.requests), of \(size)"
        )
    }

    /// A server that stalls once the file is open (its index in front, so opening succeeds):
    /// every command ends in `io.timedOut` within the timeout + 2 s — a stall is not followed by
    /// reconnect after reconnect — while a dropped connection is still resumed to a complete result.
    @Test func stallsAfterTheOpenEndWithinTheTimeout() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", try Fixtures.clip("h264-aac.mp4"),
                "-c", "copy", "-movflags", "+faststart", root + "/front.mp4",
            ])
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        for mode in ["stall-body", "drop"] {
            let url = server.url(mode, "front.mp4")
            for command in [
                ["probe", "--json"], ["play", "--json", "--format", "none", "--out", root + "/p-\(mode)"],
                ["thumbnails", "--json", "--at", "0.2,1.9,0.8", "--out", root + "/t-\(mode)"],
            ] {
                let start = ContinuousClock.now
                let run = try await CLI.run(command + ["--timeout", "2", url])
                let elapsed = ContinuousClock.now - start
                #expect(elapsed < .seconds(4), "\(command[0]) \(mode) took \(elapsed)")
                let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
                let entry = try #require(((document["assets"] ?? document["files"]) as? [[String: Any]])?.first)
                if mode == "drop" || command[0] == "probe" {
                    // Probing reads the front; a dropped connection is resumed.
                    #expect(run.status == 0, "\(command[0]) \(mode): \(run.stdout)")
                } else {
                    // The file's error, or (thumbnails) its images' errors.
                    let errors = [entry["error"]] + ((entry["images"] as? [[String: Any]]) ?? []).map { $0["error"] }
                    let codes = Set(errors.compactMap { ($0 as? [String: Any])?["code"] as? String })
                    #expect(run.status == 1 && codes == ["io.timedOut"], "\(command[0]) \(mode): \(run.stdout)")
                }
            }
        }
    }

    /// From a pipe, an MP4 whose index follows its media can be probed (the index is read on the
    /// way) but not played: the media went by. Every command says so at once with a typed error;
    /// the same file with its index in front plays from the pipe.
    @Test func pipeWithTheIndexAtTheEnd() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let late = folder + "/late.mp4", early = folder + "/early.mp4"
        let encode = [
            "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p",
        ]
        _ = try await Reference.run(try Reference.ffmpeg(), encode + [late])
        _ = try await Reference.run(try Reference.ffmpeg(), encode + ["-movflags", "+faststart", early])

        let probe = try await HostileRun.shell(["probe", "--json", "-"], redirections: "< '\(late)'")
        let probedDuration = try CLI.assets(probe.stdout).first?["duration"] as? Double
        #expect(probe.status == 0 && probedDuration == 4, "\(probe.stdout)")
        for command in [
            ["play", "--json", "--format", "none", "--out", folder + "/p"], ["thumbnails", "--json", "--at", "3", "--out", folder + "/t"],
        ] {
            let start = ContinuousClock.now
            let run = try await HostileRun.shell(command + ["-"], redirections: "< '\(late)'")
            #expect(ContinuousClock.now - start < .seconds(10))
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
            let error = ((document["files"] as? [[String: Any]])?.first?["error"]) as? [String: Any]
            #expect(run.status == 1 && error?["code"] as? String == "demux.seekFailed", "\(command[0]): \(run.stdout)")
            #expect((error?["message"] as? String)?.contains("faststart") == true)
        }
        let played = try await HostileRun.shell(["play", "--json", "--format", "none", "--out", folder + "/e", "-"], redirections: "< '\(early)'")
        let files = try #require(try JSONSerialization.jsonObject(with: Data(played.stdout.utf8)) as? [String: Any])["files"] as? [[String: Any]]
        #expect(played.status == 0 && files?.first?["framesDecoded"] as? Int == 100, "\(played.stdout)")
    }
}

/// Servers that do not keep HTTP's promises: each ends bounded in time and in requests.
extension SourceTests {
    /// The two images of `root/remote` equal those of `root/local` (made from the file itself).
    static func expectSameThumbnails(in root: String, mode: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for name in ["thumb-0001.png", "thumb-0002.png"] {
            let a = FileManager.default.contents(atPath: root + "/local/01-ten.mp4/" + name)
            let b = FileManager.default.contents(atPath: root + "/remote/01-ten.mp4/" + name)
            #expect(a != nil && a == b, "\(name) from /\(mode)/ differs", sourceLocation: sourceLocation)
        }
    }

    /// A 10 s clip with its index at the end (served by the tests' server from a folder of its own).
    static func tenSecondClip(in folder: String) async throws -> String {
        let clip = folder + "/ten.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=10", "-f", "lavfi", "-i", "sine=d=10",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac", clip,
            ])
        return clip
    }

    /// A server that ignores `Range` (every request gets the whole file) plays and gives images
    /// as the file does; one that also promises ten times the file's length and closes after the
    /// file (which made `thumbnails --at 1,5 --timeout 3` send about 450 requests a second until
    /// killed) ends within the timeout in a few requests (each reader of the file — the probe, each
    /// image's — finds out for itself in about four): images as the file's, a `play` complete or
    /// `io.truncated` saying where the server's data stops.
    @Test(arguments: ["norange", "liar"])
    func serversThatIgnoreRangesOrLieAboutLengthsAreBounded(mode: String) async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clip = try await Self.tenSecondClip(in: root)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let url = server.url(mode, "ten.mp4")
        let local = try await CLI.run(["thumbnails", "--at", "1,5", "--out", root + "/local", clip])
        #expect(local.status == 0, "\(local.stderr)")

        server.resetCount()
        var start = ContinuousClock.now
        let thumbnails = try await CLI.run(["thumbnails", "--at", "1,5", "--timeout", "3", "--out", root + "/remote", url])
        var elapsed = ContinuousClock.now - start
        var requests = server.sent.requests
        #expect(elapsed < .seconds(5), "thumbnails from /\(mode)/ took \(elapsed)")
        #expect(requests <= 20, "thumbnails from /\(mode)/ sent \(requests) requests")
        #expect(thumbnails.status == 0, "\(thumbnails.stderr)")
        Self.expectSameThumbnails(in: root, mode: mode)

        server.resetCount()
        start = ContinuousClock.now
        let play = try await CLI.run(["play", "--json", "--format", "none", "--timeout", "3", "--out", root + "/play", url])
        elapsed = ContinuousClock.now - start
        requests = server.sent.requests
        #expect(elapsed < .seconds(5), "play from /\(mode)/ took \(elapsed)")
        #expect(requests <= 20, "play from /\(mode)/ sent \(requests) requests")
        let entry = try #require(try CLI.files(play.stdout).first, "\(play.stderr)")
        #expect(entry["framesDecoded"] as? Int == 250, "\(entry)")
        if mode == "norange" {
            #expect(play.status == 0, "\(play.stdout)")
        } else {
            let error = entry["error"] as? [String: Any]
            #expect(play.status == 0 || error?["code"] as? String == "io.truncated", "\(entry)")
            if let message = error?["message"] as? String { #expect(message.contains("the server ends the file at byte"), "\(message)") }
        }
    }

    /// A refused connection is said to be one, at once (it was retried for about 4 s and could be
    /// reported as a timeout); a 404 is a missing file, in every command's own line.
    @Test func aRefusedConnectionSaysSoAtOnce() async throws {
        // A port nothing listens on: bound, then closed.
        let port = try { () throws -> UInt16 in
            let server = try TestHTTPServer(root: "/")
            server.stop()
            return server.port
        }()
        let start = ContinuousClock.now
        // At once: well before the 30 s timeout a retried connection would run into.
        let probe = try await CLI.run(["probe", "--json", "--timeout", "30", "http://127.0.0.1:\(port)/clip.mp4"])
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        let error = try #require(try CLI.assets(probe.stdout).first?["error"] as? [String: Any], "\(probe.stdout)")
        #expect(error["code"] as? String == "io.connectionFailed", "\(error)")
        #expect((error["message"] as? String)?.contains("refused the connection") == true, "\(error)")
        // A file the server does not have is a missing file, said with the server's status.
        let server = try TestHTTPServer(root: Fixtures.sampleMedia.path)
        defer { server.stop() }
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let missing = try await CLI.run(["play", "--format", "none", "--out", out, server.url("ok", "nothing.mp4")])
        #expect(missing.status == 1 && missing.stderr.contains("[io.fileNotFound] the server has no such file (404 Not Found)"), "\(missing.stderr)")
    }
}

extension SourceTests {
    /// Servers that answer ranges in their own way: one that caps every answer at 16 KiB (asked
    /// again for the rest at once, not backed off into a timeout), one that never tells the
    /// file's size (its data's end is the end, not a truncation), one whose file is replaced
    /// while it is read (refused, never pieced together with the first).
    @Test(arguments: ["capped", "nolength", "changing"])
    func serversThatCapAnswersTellNoSizeOrChangeTheFile(mode: String) async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clip = try await Self.tenSecondClip(in: root)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let url = server.url(mode, "ten.mp4")
        // The same play from the file, as this machine runs it now: a back-off into the 3 s
        // timeout would add seconds to it.
        let localStart = ContinuousClock.now
        _ = try await CLI.run(["play", "--json", "--format", "none", "--out", root + "/localplay", clip])
        let localElapsed = ContinuousClock.now - localStart
        let start = ContinuousClock.now
        let play = try await CLI.run(["play", "--json", "--format", "none", "--timeout", "3", "--out", root + "/play", url])
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < localElapsed * 2 + .seconds(2), "play from /\(mode)/ took \(elapsed), from the file \(localElapsed)")
        let entry = try #require(try CLI.files(play.stdout).first, "\(play.stderr)")
        let error = entry["error"] as? [String: Any]
        if mode == "changing" {
            #expect(play.status == 1 && error?["code"] as? String == "io.readFailed", "\(entry)")
            #expect((error?["message"] as? String)?.contains("the file changed on the server") == true, "\(entry)")
            return
        }
        #expect(play.status == 0 && entry["framesDecoded"] as? Int == 250, "\(entry)")
        let local = try await CLI.run(["thumbnails", "--at", "1,5", "--out", root + "/local", clip])
        let remote = try await CLI.run(["thumbnails", "--at", "1,5", "--timeout", "3", "--out", root + "/remote", url])
        #expect(local.status == 0 && remote.status == 0, "\(remote.stderr)")
        Self.expectSameThumbnails(in: root, mode: mode)
    }
}

extension SourceTests {
    /// A server that sends a byte now and then once the file is open (its index in front, so the
    /// open succeeds) is a stall: `play` ends in `io.timedOut` within the timeout + 2 s, instead of
    /// reading on at ten bytes a second for hours.
    @Test func aServerThatTricklesIsAStall() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clip = try await Self.tenSecondClip(in: root)
        _ = try await Reference.run(
            try Reference.ffmpeg(), ["-v", "error", "-y", "-i", clip, "-c", "copy", "-movflags", "+faststart", root + "/front.mp4"])
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let start = ContinuousClock.now
        let play = try await CLI.run([
            "play", "--json", "--format", "none", "--timeout", "2", "--out", root + "/play", server.url("trickle", "front.mp4"),
        ])
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        let entry = try #require(try CLI.files(play.stdout).first, "\(play.stderr)")
        #expect(play.status == 1 && (entry["error"] as? [String: Any])?["code"] as? String == "io.timedOut", "\(entry)")
    }
}
