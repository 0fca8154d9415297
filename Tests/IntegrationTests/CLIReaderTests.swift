import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The reader's rules as `playhead` users see them: truncation with its output kept and said to
/// be partial, damage counted (and fatal with --strict), unknown durations as null, colours in
/// the probe, a FIFO read once.
@Suite struct CLIReaderTests {
    @Test func aTruncatedFileFailsAndKeepsWhatItWrote() async throws {
        let out = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.reader("cut.mkv")
        let run = try await CLI.run(["play", "--out", out.path, "--format", "y4m", clip])
        #expect(run.status == 1, "stderr: \(run.stderr)")
        let file = try #require((try readJSONObject(out.appendingPathComponent("summary.json"))["files"] as? [[String: Any]])?.first)
        #expect(file["status"] as? String == "failed")
        #expect((file["error"] as? [String: Any])?["code"] as? String == "io.truncated")
        #expect(file["partial"] as? Bool == true)
        // What the summary counts is what is on disk: a valid Y4M with that many frames, and the WAV.
        let folder = out.appendingPathComponent("01-cut.mkv")
        let y4m = folder.appendingPathComponent("frames.y4m").path
        let frames = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-count_frames", "-show_entries",
                    "stream=nb_read_frames", "-of", "csv=p=0", y4m,
                ]), as: UTF8.self)
        #expect(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)) == file["framesWritten"] as? Int)
        #expect((file["framesWritten"] as? Int ?? 0) > 0)
        let wav = try #require(file["audioPath"] as? String)
        #expect(try await Reference.wavFrames(wav) == file["audioFrames"] as? Int)
        #expect(leftoverTemporaryFiles(in: folder.path).isEmpty, "no temporary file left")
    }

    @Test func damageIsCountedAndStrictMakesItFatal() async throws {
        let out = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.reader("bad-nal.mp4")
        let lenient = try await CLI.run(["play", "--out", out.path, "--format", "none", "--json", clip])
        #expect(lenient.status == 0, "stderr: \(lenient.stderr)")
        let file = try #require((try JSONSerialization.jsonObject(with: Data(lenient.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]])
        #expect(file.first?["status"] as? String == "completed")
        #expect(file.first?["damagedPackets"] as? Int == 1)
        #expect(file.first?["framesDecoded"] as? Int == 29)
        let strict = try await CLI.run(["play", "--out", out.path, "--format", "none", "--strict", clip])
        #expect(strict.status == 1)
        let strictFile = try #require((try readJSONObject(out.appendingPathComponent("summary.json"))["files"] as? [[String: Any]])?.first)
        #expect(strictFile["status"] as? String == "failed")
    }

    /// A raw stream has no duration: probe says null; thumbnails that need a duration fail alone
    /// with a clear error and a valid summary; explicit times work.
    @Test func unknownDurationsAreNullNotInvented() async throws {
        let out = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let raw = try Fixtures.reader("raw.h264")
        let fragmented = try Fixtures.reader("fragmented-unknown.mp4")
        let probe = try await CLI.run(["probe", "--json", raw, fragmented])
        #expect(probe.status == 0)
        for asset in try CLI.assets(probe.stdout) {
            #expect(asset["status"] as? String == "loaded")
            #expect(asset.keys.contains("duration") && asset["duration"] is NSNull, "\(asset["path"] ?? ""): duration must be null")
        }
        let counted = try await CLI.run(["thumbnails", "--out", out.path, "--count", "3", raw, try Fixtures.clip("h264-aac.mp4")])
        #expect(counted.status == 1)
        let files = try #require(try readJSONObject(out.appendingPathComponent("summary.json"))["files"] as? [[String: Any]])
        #expect(files.first?["status"] as? String == "failed")
        #expect(((files.first?["error"] as? [String: Any])?["message"] as? String)?.contains("duration is unknown") == true)
        #expect(files.last?["status"] as? String == "completed", "the other file goes on")
        let explicit = try await CLI.run(["thumbnails", "--out", out.path, "--at", "0.5,1.5", raw])
        #expect(explicit.status == 0, "stderr: \(explicit.stderr)")
        let images = try #require(
            (try readJSONObject(out.appendingPathComponent("summary.json"))["files"] as? [[String: Any]])?.first?["images"] as? [[String: Any]])
        #expect(images.compactMap { $0["actualTime"] as? Double } == [0.48, 1.48])
    }

    @Test func probeShowsColourTags() async throws {
        let run = try await CLI.run(["probe", "--json", try Fixtures.reader("bt709-limited.mp4")])
        let track = try #require((try CLI.assets(run.stdout).first?["tracks"] as? [[String: Any]])?.first { $0["mediaType"] as? String == "video" })
        let color = try #require(track["color"] as? [String: String])
        #expect(color == ["matrix": "bt709", "range": "limited", "primaries": "bt709", "transfer": "bt709"])
        let table = try await CLI.run(["probe", try Fixtures.reader("bt709-limited.mp4")])
        #expect(table.stdout.contains("bt709 limited"))
    }

    /// A FIFO with one writer can be read only once: the probe's open is handed to the player.
    @Test func playReadsAFIFO() async throws {
        let out = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let fifo = out.appendingPathComponent("stream.ts").path
        // A transport stream: a container that streams (an MP4's index may sit at the end).
        let clip = try Fixtures.reader("jump.ts")
        try #require(makeFIFO(at: fifo, writing: try Data(contentsOf: URL(fileURLWithPath: clip))))
        let run = await withDeadline(Bound.seconds(30), "play of a FIFO") {
            try? await CLI.run(["play", "--out", out.appendingPathComponent("frames").path, "--format", "none", "--json", fifo])
        }
        let result = try #require(run ?? nil)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let file = try #require((try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]])
        #expect(file.first?["status"] as? String == "completed")
        #expect(file.first?["framesDecoded"] as? Int == 100)
    }
}
