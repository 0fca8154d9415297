import Foundation
import Playhead
import Testing

/// `playhead thumbnails` end to end.
@Suite struct CLIThumbnailsTests {
    @Test func sheetsOfThreeFilesShowTheirDisplayedProportions() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-thumbs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let paths = try ["4x3.mp4", "portrait.mp4", "anamorphic.mp4"].map { try Fixtures.clip($0) }
        let run = try await CLI.run(["thumbnails", "--out", out.path, "--sheet", "--count", "4", "--size", "160x90"] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        // Each file's sheet: its header, then one row of 4 cells of 160x90, 10 pixels around each.
        func cells(_ folder: String) async throws -> (black: (Int, Int) -> Bool, top: Int) {
            let path = out.appendingPathComponent(folder + "/sheet.png").path
            let sheet = try await Reference.run(
                try Reference.ffmpeg(), ["-loglevel", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            let width = 10 + 4 * 170
            try #require(sheet.count % (width * 3) == 0, "the sheet must be \(width) wide")
            let height = sheet.count / (width * 3)
            let black = { (x: Int, y: Int) -> Bool in
                let i = (y * width + x) * 3
                return sheet[i] < 10 && sheet[i + 1] < 10 && sheet[i + 2] < 10
            }
            return (black, height - 100)
        }
        // 4:3 in a 16:9 cell: 120 wide, pillarbox bars of 20 columns.
        let (fourThree, a) = try await cells("01-4x3.mp4")
        #expect((a..<a + 90).allSatisfy { fourThree(10 + 5, $0) && fourThree(10 + 155, $0) })
        #expect(!(a..<a + 90).allSatisfy { fourThree(10 + 25, $0) })
        // Portrait 9:16: about 51 wide, so wide bars; its middle is picture.
        let (portrait, b) = try await cells("02-portrait.mp4")
        #expect((b..<b + 90).allSatisfy { portrait(10 + 30, $0) && portrait(10 + 130, $0) })
        #expect(!(b..<b + 90).allSatisfy { portrait(10 + 80, $0) })
        // Anamorphic shown 16:9: fills its cells, no bars.
        let (anamorphic, c) = try await cells("03-anamorphic.mp4")
        #expect(!(c..<c + 90).allSatisfy { anamorphic(10 + 2, $0) })
        #expect(!(c..<c + 90).allSatisfy { anamorphic(10 + 157, $0) })

        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("summary.json"))) as? [String: Any])
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["completed", "completed", "completed"])
        let images = try #require(files[0]["images"] as? [[String: Any]])
        #expect(images.map { $0["requestedTime"] as? Double } == [0.25, 0.75, 1.25, 1.75])
        #expect(images.allSatisfy { FileManager.default.fileExists(atPath: $0["path"] as? String ?? "") })
    }

    @Test func exactTimesAreExactAndABadFileFailsAlone() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-thumbs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let paths = [try Fixtures.clip("h264-aac.mp4"), try Fixtures.clip("bad-random.mp4"), try Fixtures.clip("vp9-opus.webm")]
        let run = try await CLI.run(["thumbnails", "--out", out.path, "--at", "1,0.4,3", "--sheet", "--overview", "--json"] + paths)
        #expect(run.status == 1)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["completed", "failed", "completed"])
        let images = try #require(files[0]["images"] as? [[String: Any]])
        #expect(images.map { $0["requestedTime"] as? Double } == [0.4, 1, 3])
        #expect(images[0]["actualTime"] as? Double == 0.4)
        #expect(images[1]["actualTime"] as? Double == 1)
        // 3 s is past the 2 s clip: that image alone fails.
        #expect((images[2]["error"] as? [String: Any])?["code"] as? String == "state.invalidArgument")
        #expect(images[2]["path"] == nil)
        // The good files' images are all written.
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("03-vp9-opus.webm/thumb-0002.png").path))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("overview.png").path))
        #expect(files[0]["sheet"] as? String == out.appendingPathComponent("01-h264-aac.mp4/sheet.png").path)
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("03-vp9-opus.webm/sheet.png").path))
        #expect(files[1]["sheet"] == nil)
    }

    /// `--count` spreads its times over the picture: a 2 s picture under 6 s of sound gets its
    /// four images at 0.25, 0.75, 1.25 and 1.75 s, all made (spread over the container's 6 s, the
    /// last two fell past the picture and failed).
    @Test(arguments: ["sound", "subtitles"]) func countSpreadsOverThePictureNotTheLongerSound(outlasting: String) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/short-picture." + (outlasting == "sound" ? "mp4" : "mkv")
        if outlasting == "sound" {
            _ = try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=2", "-f", "lavfi", "-i",
                    "sine=f=440:sample_rate=48000:d=6", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", clip,
                ])
        } else {
            // A subtitle cue from 5 s to 6 s: the container lasts 6 s, the picture 2 s.
            try "1\n00:00:05,000 --> 00:00:06,000\nlate words\n".write(toFile: folder + "/late.srt", atomically: true, encoding: .utf8)
            _ = try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=2", "-i", folder + "/late.srt",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:s", "srt", clip,
                ])
        }
        let run = try await CLI.run(["thumbnails", "--json", "--count", "4", "--out", folder + "/t", clip])
        #expect(run.status == 0, "\(run.stdout)")
        let images = try #require(
            ((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]])?.first?["images"]
                as? [[String: Any]])
        #expect(images.map { $0["requestedTime"] as? Double } == [0.25, 0.75, 1.25, 1.75], "\(images)")
        #expect(images.allSatisfy { $0["path"] != nil && $0["error"] == nil }, "\(images)")
    }

    /// `--at` given twice adds its times to the first's (it once kept the last alone).
    @Test func repeatedAtOptionsAddTheirTimes() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let run = try await CLI.run(["thumbnails", "--json", "--at", "0.5", "--at", "1.5,0.25", "--out", folder + "/t", clip])
        #expect(run.status == 0, "\(run.stdout)")
        let images = try #require(
            ((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]])?.first?["images"]
                as? [[String: Any]])
        #expect(images.map { $0["requestedTime"] as? Double } == [0.25, 0.5, 1.5], "\(images)")
        #expect(try await CLI.run(["thumbnails", "--out", folder + "/u", "--at", "1", "--at", "x", clip]).status == 2)
    }

    @Test func usageErrors() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        #expect(try await CLI.run(["thumbnails", "--out", "/tmp/x", clip]).status == 2)
        #expect(try await CLI.run(["thumbnails", "--out", "/tmp/x", "--count", "3", "--every", "1", clip]).status == 2)
        #expect(try await CLI.run(["thumbnails", "--out", "/tmp/x", "--count", "3", "--exact", "--tolerance", "1", clip]).status == 2)
        #expect(try await CLI.run(["thumbnails", "--out", "/tmp/x", "--at", "a,b", clip]).status == 2)
        // The message says the limit the parser holds: the largest time is read (past the clip's
        // end: that image fails), one more is a usage error that names it.
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let largest = "\(MediaTime.largestDecimalSeconds)"
        #expect(try await CLI.run(["thumbnails", "--out", folder + "/l", "--at", largest, clip]).status == 1)
        let beyond = try await CLI.run(["thumbnails", "--out", folder + "/b", "--at", "\(MediaTime.largestDecimalSeconds + 1)", clip])
        #expect(beyond.status == 2 && beyond.stderr.contains(largest), "\(beyond.stderr)")
    }
}
