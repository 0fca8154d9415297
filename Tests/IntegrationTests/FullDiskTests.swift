import Foundation
import Testing

/// Runs that fill the disk: each writes into a small tmpfs of its own (mounted by the test; the
/// test command runs as root) until a write fails with ENOSPC. The MP4 of `play`, of
/// `play --queue` and of `compose` is kept as a valid, shorter file that ffmpeg decodes without
/// an error, the summary says `partial` and the error (`output.diskFull`) and is no longer
/// `running`, and no temporary file is left.
extension HostileOperationsTests {
    @Test(arguments: ["play", "queue", "compose"])
    func aFullDiskKeepsThePartialMP4AndSaysSo(command: String) async throws {
        let disk = try await FullDisk.mount(kilobytes: 160)
        defer { disk.unmount() }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let other = try Fixtures.clip("hevc-aac.mkv")
        let out = disk.path + "/out"
        let arguments: [String]
        switch command {
        case "play": arguments = ["play", "--format", "mp4", "--loop", "12", "--out", out, clip]
        case "queue": arguments = ["play", "--queue", "--format", "mp4", "--loop", "4", "--out", out, clip, other]
        default: arguments = ["compose", "--grid", "2x1", "--size", "320x180", "--duration", "30", "--format", "mp4", "--out", out, clip, other]
        }
        let result = try await CLI.run(arguments)
        #expect(result.status == 1, "\(command): status \(result.status), \(result.stderr)")
        let summary = try Self.summary(out)
        let video: String
        switch command {
        case "play":
            #expect(summary["state"] as? String == "finished")
            let file = try #require((summary["files"] as? [[String: Any]])?.first)
            #expect((file["error"] as? [String: Any])?["code"] as? String == "output.diskFull", "\(file)")
            #expect(file["partial"] as? Bool == true, "\(file)")
            video = try #require(file["output"] as? String, "\(file)") + "/video.mp4"
            let frames = try await Self.decodedFrames(video)
            #expect(frames > 0 && frames == file["framesWritten"] as? Int, "\(frames) frames in \(video), summary \(file)")
        case "queue":
            #expect(summary["state"] as? String == "finished")
            let queue = try #require(summary["queue"] as? [String: Any])
            #expect(queue["partial"] as? Bool == true, "\(queue)")
            for file in summary["files"] as? [[String: Any]] ?? [] {
                #expect((file["error"] as? [String: Any])?["code"] as? String == "output.diskFull", "\(file)")
            }
            video = try #require(queue["output"] as? String, "\(queue)") + "/video.mp4"
            let frames = try await Self.decodedFrames(video)
            #expect(frames > 0 && frames == queue["framesWritten"] as? Int, "\(frames) frames in \(video), summary \(queue)")
        default:
            #expect(summary["state"] as? String == "failed")
            #expect((summary["error"] as? [String: Any])?["code"] as? String == "output.diskFull", "\(summary)")
            #expect(summary["partial"] as? Bool == true, "\(summary)")
            video = try #require(summary["output"] as? String, "\(summary)")
            let frames = try await Self.decodedFrames(video)
            #expect(frames > 0 && frames == summary["framesWritten"] as? Int && frames < 900, "\(frames) frames in \(video), summary \(summary)")
        }
        #expect(leftoverTemporaryFiles(in: out).isEmpty, "\(command): \(leftoverTemporaryFiles(in: out))")
    }

    /// The frames ffmpeg decodes from `path`; any error it reports (a torn fragment) fails the test.
    static func decodedFrames(_ path: String) async throws -> Int {
        let ffmpeg = try Reference.ffmpeg()
        let (output, status) = try await Reference.runAllowingFailure(
            "/bin/sh", ["-c", "\"$0\" -hide_banner -v error -i \"$1\" -map 0:v:0 -f framecrc - 2>&1", ffmpeg, path])
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        let frames = lines.filter { $0.hasPrefix("0,") }
        let complaints = lines.filter { !$0.hasPrefix("0,") }
        #expect(status == 0 && complaints.isEmpty, "ffmpeg on \(path): status \(status), \(complaints.prefix(5))")
        return frames.count
    }
}

/// An output on a read-only file system is refused before anything runs, by every command, with
/// `io.permissionDenied` naming the place and the reason ("Read-only file system") — never a
/// missing file, never a run that goes on writing nowhere.
@Suite struct ReadOnlyOutputTests {
    @Test func aReadOnlyOutputIsNamedAsSuch() async throws {
        let disk = try await FullDisk.mount(kilobytes: 64, options: "ro")
        defer { disk.unmount() }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let layer = "x=0,y=0,w=64,h=36,source=\(clip)"
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let channel = ["playout", "--layout", layout, "--size", "64x36", "--clock", "virtual", "--duration", "1", "--out"]
        for arguments in [
            channel + [disk.path + "/rec.ts"], channel + [disk.path + "/rec.mp4"], channel + [disk.path + "/live.m3u8"],
            ["play", "--format", "png", "--out", disk.path, clip],
            ["play", "--format", "png", "--out", disk.path + "/new", clip],
            ["thumbnails", "--count", "2", "--out", disk.path, clip],
            ["compose", "--size", "64x36", "--duration", "1", "--layer", layer, "--out", disk.path],
            ["compose", "--size", "64x36", "--duration", "1", "--layer", layer, "--out", disk.path + "/x.mp4"],
        ] {
            let run = try await CLI.run(arguments)
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("Read-only file system") && run.stderr.contains(disk.path), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("No such file"), "\(arguments): \(run.stderr)")
        }
        let json = try await CLI.run(["play", "--format", "png", "--json", "--out", disk.path, clip])
        #expect(json.status == 1 && json.stderr.contains("io.permissionDenied"), "\(json.stderr)")
    }
}

/// A tmpfs of a chosen size, mounted for one test (which needs CAP_SYS_ADMIN: the test command
/// runs as root, in CI too). A mount that fails fails the test.
struct FullDisk {
    let path: String

    static func mount(kilobytes: Int, options: String? = nil) async throws -> FullDisk {
        let path = try HostileOperationsTests.temporaryFolder()
        let all = ["size=\(kilobytes)k"] + (options.map { [$0] } ?? [])
        let (output, status) = try await Reference.runAllowingFailure(
            "/bin/mount", ["-t", "tmpfs", "-o", all.joined(separator: ","), "tmpfs", path])
        try #require(status == 0, "could not mount a \(kilobytes) KiB tmpfs at \(path) (needs root): \(String(decoding: output, as: UTF8.self))")
        return FullDisk(path: path)
    }

    func unmount() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = ["-l", path]
        try? process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: path)
    }
}
