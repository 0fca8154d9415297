import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The same streams remuxed into every container give the same exact images: the frame
/// displayed at random times (between frames, on frames, at the ends) is, pixel for pixel, the
/// one ffmpeg decodes there — in MP4, Matroska, WebM, FLV, MPEG-TS, NUT and AVI, and in a
/// Matroska whose packets claim 1 ms durations (as phone recordings do); AVI with a stream
/// without B-frames (it keeps no presentation times). Decisions rest on
/// presentation times seen, never on declared durations.
@Suite struct RemuxExactImageTests {
    /// H.264 with three B-frames and a VP9 stream (with invisible alt-ref frames), each remuxed.
    static func corpus(in folder: String) async throws -> [String] {
        let ffmpeg = try Reference.ffmpeg()
        let quiet = ["-v", "error", "-y"]
        let h264 = folder + "/h264.mp4", vp9 = folder + "/vp9.webm"
        _ = try await Reference.run(
            ffmpeg,
            quiet + [
                "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=3", "-c:v", "libx264", "-preset", "veryfast",
                "-bf", "3", "-x264-params", "b-adapt=0", "-g", "40", "-pix_fmt", "yuv420p", h264,
            ])
        _ = try await Reference.run(
            ffmpeg,
            quiet + [
                "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=3", "-c:v", "libvpx-vp9", "-deadline", "good",
                "-cpu-used", "8", "-auto-alt-ref", "1", "-lag-in-frames", "16", "-g", "40", "-pix_fmt", "yuv420p", vp9,
            ])
        var files = [h264, vp9]
        for container in ["mkv", "flv", "ts", "nut"] {
            let path = folder + "/h264." + container
            _ = try await Reference.run(ffmpeg, quiet + ["-i", h264, "-c", "copy", path])
            files.append(path)
        }
        // AVI keeps no presentation times, so B-frames have none (ffprobe cannot time them): a
        // stream without B-frames, in MP4 and AVI.
        let plain = folder + "/plain.mp4"
        _ = try await Reference.run(
            ffmpeg,
            quiet + [
                "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=3", "-c:v", "libx264", "-preset", "veryfast",
                "-bf", "0", "-g", "40", "-pix_fmt", "yuv420p", plain,
            ])
        _ = try await Reference.run(ffmpeg, quiet + ["-i", plain, "-c", "copy", folder + "/plain.avi"])
        files += [plain, folder + "/plain.avi"]
        let vp9mkv = folder + "/vp9.mkv"
        _ = try await Reference.run(ffmpeg, quiet + ["-i", vp9, "-c", "copy", vp9mkv])
        files.append(vp9mkv)
        // Every packet claims 1 ms: the track's default duration (40 ms) patched to 1 ms.
        files.append(try oneMillisecondMatroska(from: folder + "/h264.mkv", to: folder + "/h264-1ms.mkv"))
        return files
    }

    /// A copy of `source` whose Matroska DefaultDuration element (ID 0x23E383, 4-byte value in
    /// nanoseconds) says 1 ms.
    static func oneMillisecondMatroska(from source: String, to path: String) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let id: [UInt8] = [0x23, 0xE3, 0x83]
        let at = try #require(
            (0..<(bytes.count - 8)).first { bytes[$0..<($0 + 3)].elementsEqual(id) && bytes[$0 + 3] == 0x84 }, "no DefaultDuration in \(source)")
        let nanoseconds: UInt32 = 1_000_000
        for i in 0..<4 { bytes[at + 4 + i] = UInt8((nanoseconds >> UInt32(24 - 8 * i)) & 0xFF) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func exactImagesAgreeWithFFmpegInEveryContainer() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var random = SeededGenerator()
        for path in try await Self.corpus(in: folder) {
            let name = URL(fileURLWithPath: path).lastPathComponent
            if name.hasSuffix("1ms.mkv") {
                // The fixture says what it claims to: packets of 1 ms.
                let text = String(
                    decoding: try await Reference.run(
                        "/usr/bin/ffprobe",
                        [
                            "-v", "error", "-select_streams", "v", "-show_entries", "packet=duration_time",
                            "-read_intervals", "%+#3", "-of", "csv=p=0", path,
                        ]), as: UTF8.self)
                #expect(text.split(separator: "\n").allSatisfy { $0.hasPrefix("0.001") }, "\(name): \(text)")
            }
            let frames = try await Reference.frameTimes(path)
            let reference = try await Reference.allFrames(path)
            try #require(frames.count == reference.count && frames.count >= 70, "\(name): \(frames.count) times, \(reference.count) frames")
            let asset = Asset(path: path)
            let (start, duration) = try await asset.load(.startTime, .duration)
            let end = duration.isNumeric ? start + duration : frames[frames.count - 1]
            let times = ExactTimeTests.randomTimes(
                frames, start: start, end: min(end, frames[frames.count - 1] + MediaTime(value: 39, timescale: 1000)),
                count: 60, using: &random)
            var wrong: [String] = []
            for await result in AssetImageGenerator(asset: asset).images(for: times) {
                let k = ExactTimeTests.displayed(at: result.requestedTime, frames)
                guard let image = result.image else {
                    wrong.append("\(result.requestedTime.seconds): \(String(describing: result.error))")
                    continue
                }
                if result.actualTime != frames[k] || image.pixels != reference[k] {
                    wrong.append("\(result.requestedTime.seconds): frame at \(result.actualTime?.seconds ?? -1), want \(frames[k].seconds)")
                }
            }
            #expect(wrong.isEmpty, "\(name) (seed \(random.seed)): \(wrong.count) of \(times.count) wrong: \(wrong.prefix(6))")
        }
    }
}
