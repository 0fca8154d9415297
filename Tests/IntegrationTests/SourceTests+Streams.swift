import Foundation
import Glibc
import Testing

/// Streams that never send (a FIFO nobody opens for writing, a writer that falls silent, a silent
/// standard input) and playlists with a segment that stalls or is missing: each ends within the
/// timeout + 2 s with a typed error, or (a hole in a playlist) with a true account of the damage.
extension SourceTests {
    /// The first file or asset entry of a `--json` run, and its error code.
    static func firstEntry(_ run: (status: Int32, stdout: String, stderr: String)) throws -> (entry: [String: Any], code: String?) {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
        let entry = try #require(((document["assets"] ?? document["files"]) as? [[String: Any]])?.first)
        let errors = [entry["error"]] + ((entry["images"] as? [[String: Any]]) ?? []).map { $0["error"] }
        return (entry, errors.compactMap { ($0 as? [String: Any])?["code"] as? String }.first)
    }

    @Test func streamsThatNeverSendEndWithinTheTimeout() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let noWriter = folder + "/no-writer.ts", silent = folder + "/silent.ts"
        #expect(mkfifo(noWriter, 0o600) == 0 && mkfifo(silent, 0o600) == 0)
        let commands = [
            ["probe", "--json"], ["play", "--json", "--format", "none", "--out", folder + "/p"],
            ["thumbnails", "--json", "--at", "0.5", "--out", folder + "/t"],
        ]
        // (input, whether a silent writer holds the FIFO open, redirections)
        let cases: [(String, Bool, String)] = [
            (noWriter, false, ""),
            (silent, true, ""),
            // Standard input whose writer is silent.
            ("-", true, "< '\(silent)'"),
        ]
        for (input, holdsWriter, redirections) in cases {
            for command in commands {
                let writer = holdsWriter ? SilentFIFOWriter(silent) : nil
                defer { writer?.stop() }
                let start = ContinuousClock.now
                let run = try await HostileRun.shell(command + ["--timeout", "1", input], redirections: redirections)
                let elapsed = ContinuousClock.now - start
                #expect(elapsed < .seconds(3), "\(command[0]) of \(input) took \(elapsed)")
                let (_, code) = try Self.firstEntry((run.status, run.stdout, run.stderr))
                #expect(run.status == 1 && code == "io.timedOut", "\(command[0]) \(input): \(run.stdout) \(run.stderr)")
            }
        }
        // Cancelled while it waits for a writer: at once, with a true summary.
        let outcome = try await HostileRun.signalled(
            ["play", "--format", "none", "--out", folder + "/c", noWriter], signal: SIGTERM, after: .milliseconds(700))
        #expect(outcome.status == 143 && !outcome.killedBySignal, "\(outcome.stderr)")
        let summary = try readJSONObject(URL(fileURLWithPath: folder + "/c/summary.json"))
        #expect(
            summary["state"] as? String == "cancelled" && (summary["files"] as? [[String: Any]])?.first?["status"] as? String == "cancelled",
            "\(summary)")
    }

    /// A playlist of ten segments (a keyframe every 5 frames) with one of them changed: missing
    /// (404), or served by a server that stalls on it.
    static func playlist(in folder: String, replacingSegment number: Int, with replacement: String) throws -> String {
        let name = "with-\(replacement.split(separator: "/").first ?? "x").m3u8"
        let text = try String(contentsOfFile: folder + "/k.m3u8", encoding: .utf8)
        try text.replacingOccurrences(of: "\nk\(number).ts\n", with: "\n\(replacement)\n").write(
            toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        return name
    }

    /// A segment that is missing leaves a hole that the account shows (damage; a failure with
    /// `--strict`), wherever it is, the first segment included; a segment whose server stalls
    /// ends the run in `io.timedOut` within the timeout + 2 s, not a wait per segment.
    @Test func playlistsWithAMissingOrStallingSegment() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", try Fixtures.clip("h264-aac.mp4"),
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "5", "-c:a", "copy", "-f", "hls", "-hls_time", "0.2",
                "-hls_list_size", "0", "-hls_segment_filename", root + "/k%d.ts", root + "/k.m3u8",
            ])
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let whole = try await CLI.run(["play", "--json", "--format", "none", "--out", root + "/whole", server.url("ok", "k.m3u8")])
        let (wholeEntry, _) = try Self.firstEntry((whole.status, whole.stdout, whole.stderr))
        #expect(whole.status == 0 && wholeEntry["damagedPackets"] as? Int == 0 && wholeEntry["framesDecoded"] as? Int == 50, "\(whole.stdout)")
        for number in [0, 4] {
            let name = try Self.playlist(in: root, replacingSegment: number, with: "missing\(number).ts")
            let run = try await CLI.run(["play", "--json", "--format", "none", "--out", root + "/m\(number)", server.url("ok", name)])
            let (entry, _) = try Self.firstEntry((run.status, run.stdout, run.stderr))
            let frames = entry["framesDecoded"] as? Int ?? 0
            #expect(run.status == 0 && frames < 50 && frames > 0, "segment \(number) missing: \(run.stdout)")
            #expect((entry["damagedPackets"] as? Int ?? 0) >= 1, "a missing segment \(number) is damage: \(run.stdout)")
            let message = (entry["firstDamage"] as? [String: Any])?["message"] as? String ?? ""
            if number == 0 { #expect(message.contains("segment 0"), "\(message)") }
            let strict = try await CLI.run(["play", "--json", "--strict", "--format", "none", "--out", root + "/s\(number)", server.url("ok", name)])
            #expect(strict.status == 1, "--strict fails on a hole: \(strict.stdout)")
        }
        for mode in ["stall-headers", "stall-body"] {
            let name = try Self.playlist(in: root, replacingSegment: 6, with: "../\(mode)/k6.ts")
            for command in [
                ["play", "--json", "--format", "none", "--out", root + "/\(mode)"],
                ["thumbnails", "--json", "--at", "1.9", "--out", root + "/t\(mode)"],
            ] {
                let start = ContinuousClock.now
                let run = try await CLI.run(command + ["--timeout", "2", server.url("ok", name)])
                let elapsed = ContinuousClock.now - start
                #expect(elapsed < .seconds(4), "\(command[0]) with segment 6 \(mode) took \(elapsed)")
                let (_, code) = try Self.firstEntry((run.status, run.stdout, run.stderr))
                #expect(run.status == 1 && code == "io.timedOut", "\(command[0]) \(mode): \(run.stdout)")
            }
        }
    }
}

extension SourceTests {
    /// A fragmented MP4 (an empty `moov`, then fragments) from standard input: only its first
    /// fragments are read while probing, so its duration is unknown there — never that of the
    /// fragments read (which made later times "outside the clip"); images at any time equal the
    /// file's; playing gives every frame; the same file by path knows its duration.
    @Test func fragmentedMP4FromAPipe() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/fragmented.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=12",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-movflags", "frag_keyframe+empty_moov", clip,
            ])
        let byPath = try await CLI.run(["probe", "--json", clip])
        let piped = try await HostileRun.shell(["probe", "--json", "-"], redirections: "< '\(clip)'")
        let fileAsset = try #require(try CLI.assets(byPath.stdout).first),
            pipeAsset = try #require(try CLI.assets(piped.stdout).first, "\(piped.stderr)")
        #expect(abs((fileAsset["duration"] as? Double ?? 0) - 12) < 0.05, "\(fileAsset)")
        #expect(pipeAsset["duration"] is NSNull, "from a pipe only the first fragments were read: \(pipeAsset["duration"] ?? "none")")
        let thumbnails = ["thumbnails", "--at", "9.5,2.2,5"]
        let local = try await Self.outputs(thumbnails, out: folder + "/tl", input: clip)
        let fromPipe = try await Self.outputs(thumbnails, out: folder + "/tp", input: "-", stdin: clip)
        #expect(local.count == 3 && fromPipe == local)
        let play = try await HostileRun.shell(["play", "--json", "--format", "none", "--out", folder + "/p", "-"], redirections: "< '\(clip)'")
        let (entry, _) = try Self.firstEntry((play.status, play.stdout, play.stderr))
        #expect(play.status == 0 && entry["framesDecoded"] as? Int == 360, "\(play.stdout)")
    }
}

/// Opens a FIFO for writing once a reader has it open (retrying without blocking, for 10 s at
/// most) and sends nothing until stopped.
final class SilentFIFOWriter: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(_ path: String) {
        let done = self.done
        Thread {
            let deadline = Date().addingTimeInterval(10)
            var fd: Int32 = -1
            while fd < 0, Date() < deadline {
                fd = open(path, O_WRONLY | O_NONBLOCK)
                if fd < 0 { usleep(5_000) }
            }
            _ = done.wait(timeout: .now() + 10)
            if fd >= 0 { close(fd) }
        }.start()
    }

    func stop() { done.signal() }
}
