import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Where images and outputs meet the edges of what a file says: a picture fitted once (no column
/// of black beside a rounded size), times taken as the exact decimals they are written as, the
/// last frame when the header's duration stops at its start, and a header that claims hours more
/// than the file holds — each compared with what ffmpeg decodes.
@Suite struct ImageEdgeTests {
    /// Fully black columns at the left and right of packed RGB pixels of `width`.
    static func blackColumns(_ pixels: [UInt8], width: Int) -> (left: Int, right: Int) {
        let height = pixels.count / (3 * width)
        let black = { (x: Int) in (0..<height).allSatisfy { y in (0..<3).allSatisfy { pixels[(y * width + x) * 3 + $0] < 20 } } }
        let left = (0..<width).prefix { black($0) }.count
        let right = (0..<width).reversed().prefix { black($0) }.count
        return (left, right)
    }

    @Test func aPictureIsFittedOnce() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try Reference.ffmpeg()
        // 960x400 (2.4:1) into a 320x180 box: 320x133, every column picture.
        let wide = folder + "/wide.mp4"
        _ = try await Reference.run(
            ffmpeg, ["-v", "error", "-f", "lavfi", "-i", "color=c=white:s=960x400:r=25:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p", wide])
        var generator = AssetImageGenerator(asset: Asset(path: wide))
        generator.maximumSize = PixelSize(width: 320, height: 180)
        let (image, _) = try await generator.image(at: MediaTime(value: 1, timescale: 2))
        #expect(image.size == PixelSize(width: 320, height: 133))
        let bars = Self.blackColumns(image.pixels, width: image.size.width)
        #expect(bars.left == 0 && bars.right == 0, "black columns \(bars)")
        // 320x240 stored with 4:3 pixels shows 426.7x240: a Y4M (even sides) of 426x240 with no bar,
        // as ffmpeg's scale=iw*sar:ih gives; a PPM of 427x240.
        let anamorphic = folder + "/sar.mp4"
        _ = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-f", "lavfi", "-i", "color=c=white:s=320x240:r=25:d=1", "-vf", "setsar=4/3",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", anamorphic,
            ])
        let y4m = InMemorySink(pixelFormat: .yuv420p), rgb = InMemorySink(pixelFormat: .rgb24)
        _ = await DecodeSession(source: anamorphic, configuration: DecodeConfiguration(frameLimit: 1)).run(into: y4m)
        _ = await DecodeSession(source: anamorphic, configuration: DecodeConfiguration(frameLimit: 1)).run(into: rgb)
        let planar = try #require(y4m.frames.first), packed = try #require(rgb.frames.first)
        #expect(
            planar.size == PixelSize(width: 426, height: 240) && packed.size == PixelSize(width: 427, height: 240), "\(planar.size), \(packed.size)")
        let lumaColumns = (0..<planar.size.width).filter { x in (0..<planar.size.height).allSatisfy { planar.bytes[$0 * planar.size.width + x] < 40 }
        }
        #expect(lumaColumns.isEmpty, "black columns in the Y4M picture: \(lumaColumns)")
        let packedBars = Self.blackColumns(packed.bytes, width: packed.size.width)
        #expect(packedBars.left == 0 && packedBars.right == 0, "black columns in the RGB picture: \(packedBars)")
    }

    /// `--at 6.4731334` is that time, not the nearest microsecond: a frame starting exactly there
    /// is the one shown; a time just before a frame's start shows the frame before.
    @Test func timesAreExactDecimals() async throws {
        #expect(MediaTime(decimal: "6.4731334") == MediaTime(value: 64_731_334, timescale: 10_000_000))
        #expect(MediaTime(decimal: "-0.5") == MediaTime(value: -1, timescale: 2))
        #expect(MediaTime(decimal: "2") == MediaTime(value: 2, timescale: 1))
        #expect(MediaTime(decimal: "0.1234567894")?.value == 123_456_789 && MediaTime(decimal: "0.1234567895")?.value == 123_456_790)
        for bad in ["", ".", "1e3", "1.2.3", "inf", "nan", "12345678901", "0x10", "--1"] { #expect(MediaTime(decimal: bad) == nil, "\(bad)") }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Frame 65 at exactly 6.4731334 s and frame 66 at 6.5999998 s (a 1/10⁷ s time base).
        let path = folder + "/fine.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=10:duration=7",
                "-vf", "settb=1/10000000,setpts='if(eq(N,65),64731334,if(eq(N,66),65999998,N*1000000))'",
                "-fps_mode", "passthrough", "-enc_time_base:v", "1/10000000", "-c:v", "libx264", "-bf", "0",
                "-pix_fmt", "yuv420p", "-video_track_timescale", "10000000", path,
            ])
        let frames = try await Reference.frameTimes(path)
        try #require(
            frames.count > 66 && frames[65] == MediaTime(value: 64_731_334, timescale: 10_000_000),
            "\(frames.count) frames; 65 at \(frames.count > 65 ? frames[65].seconds : -1)")
        let run = try await CLI.run(["thumbnails", "--json", "--at", "6.4731334,6.5999996,6.5999998", "--out", folder + "/t", path])
        #expect(run.status == 0, "\(run.stderr)")
        let images = try #require(
            ((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]])?.first?["images"]
                as? [[String: Any]])
        #expect(images.compactMap { $0["actualTime"] as? Double } == [6.4731334, 6.4731334, 6.5999998], "\(images)")
        #expect(images.compactMap { $0["requestedTime"] as? Double } == [6.4731334, 6.5999996, 6.5999998], "\(images)")
    }

    /// A copy of the Matroska file at `source` whose segment duration (EBML 0x4489, a float64 of
    /// milliseconds) says `milliseconds`.
    static func matroska(_ source: String, declaring milliseconds: Double, to path: String) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let at = try #require(
            (0..<(bytes.count - 11)).first { bytes[$0] == 0x44 && bytes[$0 + 1] == 0x89 && bytes[$0 + 2] == 0x88 }, "no Duration in \(source)")
        let bits = milliseconds.bitPattern
        for i in 0..<8 { bytes[at + 3 + i] = UInt8((bits >> UInt64(56 - 8 * i)) & 0xFF) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Durations are hints: a header that ends at the last frame's start still lets its last
    /// frame be asked for; one that claims 3900 s of a 10 s file gives an image past the video
    /// that says where the video ends (not its last frame again), and `thumbnails --count`
    /// spreads its times over the video's own 10 s (its track's length), not the 3900 s (every
    /// cell failed before).
    @Test func theDataSaysWhereAClipEnds() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let plain = folder + "/plain.mkv"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=10",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", plain,
            ])
        let short = try Self.matroska(plain, declaring: 9960, to: folder + "/short.mkv")
        let long = try Self.matroska(plain, declaring: 3_900_000, to: folder + "/long.mkv")
        #expect(try await Asset(path: long).load(.duration).seconds > 3000, "the fixture claims 3900 s")
        // The picture's own length is its track's tag (10 s) — believed only within the
        // container's: a header of 5 s makes a 10 s tag a stale one.
        func videoLength(_ path: String) async throws -> Double? {
            let tracks = try await Asset(path: path).load(.tracks)
            return tracks.first { $0.mediaType == .video }?.timeRange.duration.seconds
        }
        #expect(try await videoLength(long) == 10)
        let cut = try Self.matroska(plain, declaring: 5000, to: folder + "/cut.mkv")
        #expect(try await videoLength(cut) == 5)
        let generator = AssetImageGenerator(asset: Asset(path: short))
        let (_, actual) = try await generator.image(at: MediaTime(value: 997, timescale: 100))
        #expect(actual == MediaTime(value: 996, timescale: 100), "the last frame (at 9.96 s) at 9.97 s: \(actual.seconds)")
        do {
            let image = try await AssetImageGenerator(asset: Asset(path: long)).image(at: MediaTime(seconds: 1170))
            Issue.record("an image at 1170 s of a 10 s video: \(image.actualTime.seconds)")
        } catch {
            #expect(error.message.contains("the video ends at 10"), "\(error)")
        }
        let run = try await CLI.run(["thumbnails", "--json", "--count", "5", "--sheet", "--out", folder + "/t", long])
        #expect(run.status == 0, "\(run.stderr)")
        let file = try #require(
            ((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["files"] as? [[String: Any]])?.first)
        let images = try #require(file["images"] as? [[String: Any]])
        #expect(images.map { $0["requestedTime"] as? Double } == [1, 3, 5, 7, 9], "\(images)")
        #expect(images.allSatisfy { $0["path"] != nil && $0["error"] == nil }, "\(images)")
        // Its contact sheet is drawn too (none was, every cell having failed).
        let sheet = try #require(file["sheet"] as? String, "no sheet: \(file)")
        let drawn = try await Reference.displayedSize(sheet)
        #expect(drawn.width > 0 && drawn.height > 0, "the sheet \(sheet) reads back as \(drawn)")
    }
    /// A copy of `clip` whose media data from `fraction` of the way on is noise (its header
    /// intact): what a damaged download or a bad disk leaves.
    static func garbled(_ clip: String, from fraction: Double, to path: String) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
        var offset = 0
        var generator = SeededGenerator(seed: 7)
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard size >= 8 else { break }
            if bytes[(offset + 4)..<(offset + 8)].elementsEqual("mdat".utf8) {
                let start = offset + 8 + Int(Double(size - 8) * fraction)
                for i in start..<min(offset + size, bytes.count) { bytes[i] = UInt8(truncatingIfNeeded: generator.next()) }
            }
            offset += size
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Images over noise fail as the data's damage (`decode.decodeFailed`, its damaged packets
    /// counted and the first one's cause given), as a session counts them — not as a caller's
    /// time past the video's end (`state.invalidArgument`, nothing counted).
    @Test func imagesOverNoiseFailAsDamageAndCountIt() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        for (fraction, times) in [(0.0, [0.5, 1.5]), (0.5, [1.5])] {
            let path = try Self.garbled(clip, from: fraction, to: folder + "/noise-\(fraction).mp4")
            let session = await DecodeSession(source: path).run(into: NullSink())
            #expect(session.damagedPackets > 0, "the session counts the damage of \(path)")
            let generator = AssetImageGenerator(asset: Asset(path: path))
            for await result in generator.images(for: times.map { MediaTime(seconds: $0) }) {
                #expect(result.error?.code == .decodeFailed, "\(fraction) at \(result.requestedTime.seconds): \(String(describing: result.error))")
                #expect(result.damagedPackets > 0 && result.firstDamage != nil, "\(fraction) at \(result.requestedTime.seconds): damage counted")
            }
        }
        // The command's report counts it too, for the file that failed whole.
        let run = try await CLI.run(["thumbnails", "--json", "--at", "0.5,1.5", "--out", folder + "/t", folder + "/noise-0.0.mp4"])
        let file = (try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]).flatMap {
            ($0["files"] as? [[String: Any]])?.first
        }
        #expect(file?["status"] as? String == "failed" && (file?["damagedPackets"] as? Int ?? 0) > 0, "\(run.stdout)")
    }
}
