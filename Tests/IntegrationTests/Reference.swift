import Foundation
import Playhead
import Testing

/// Frames as the ffmpeg CLI decodes them, to compare Playhead's against.
enum Reference {
    static func ffmpeg(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = "/usr/bin/ffmpeg"
        try #require(FileManager.default.isExecutableFile(atPath: path), "ffmpeg CLI missing: run scripts/setup.sh", sourceLocation: sourceLocation)
        return path
    }

    /// Makes a clip whose picture (testsrc2, 160x90 at 25 fps, H.264 with `video` options) lasts
    /// `picture` seconds beside a longer sound (`sound`, a lavfi source, in AAC): a short video
    /// track, whose last frames the decoder holds until the data ends.
    static func pictureShorterThanSound(
        at path: String, picture: String, sound: String, video: [String] = ["-preset", "ultrafast"]
    ) async throws {
        _ = try await run(
            try ffmpeg(),
            ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=\(picture)", "-f", "lavfi", "-i", sound, "-c:v", "libx264"]
                + video + ["-c:a", "aac", path])
    }

    /// Frame `index` (in decode output order) of `clip` as packed rgb24 bytes.
    static func rgbFrame(_ clip: String, index: Int, autorotate: Bool = false) async throws -> [UInt8] {
        var arguments = ["-hide_banner", "-loglevel", "error"]
        if !autorotate { arguments.append("-noautorotate") }
        arguments += [
            "-i", clip, "-vf", "select=eq(n\\,\(index))", "-vsync", "0", "-frames:v", "1",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
        ]
        return try await run(try ffmpeg(), arguments)
    }

    /// Every frame of `clip` as ffmpeg decodes it, in presentation order, as packed bytes of
    /// `pixelFormat` (`rgb24`, `yuv420p`), at `size` (nil: the displayed size), autorotated.
    static func allFrames(_ clip: String, pixelFormat: String = "rgb24", size: PixelSize? = nil) async throws -> [[UInt8]] {
        var arguments = ["-hide_banner", "-loglevel", "error", "-i", clip, "-map", "0:v:0", "-vsync", "passthrough"]
        if let size { arguments += ["-s", "\(size.width)x\(size.height)"] }
        arguments += ["-f", "rawvideo", "-pix_fmt", pixelFormat, "-"]
        let bytes = try await run(try ffmpeg(), arguments)
        let displayed = try await displayedSize(clip)
        let shown = size ?? displayed
        let frameBytes =
            pixelFormat == "rgb24"
            ? shown.width * shown.height * 3
            : shown.width * shown.height + 2 * ((shown.width + 1) / 2) * ((shown.height + 1) / 2)
        try #require(frameBytes > 0 && bytes.count % frameBytes == 0, "ffmpeg gave \(bytes.count) bytes, not whole \(shown) frames")
        return stride(from: 0, to: bytes.count, by: frameBytes).map { Array(bytes[$0..<($0 + frameBytes)]) }
    }

    /// The size ffmpeg shows `clip`'s video at (after autorotation).
    static func displayedSize(_ clip: String) async throws -> PixelSize {
        let bytes = try await run(
            try ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", clip, "-frames:v", "1", "-f", "image2pipe",
                "-vcodec", "ppm", "-",
            ])
        // A P6 header: "P6\n<width> <height>\n255\n".
        let header = String(decoding: bytes.prefix(32), as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == " " })
        let width = try #require(header.count > 2 ? Int(header[1]) : nil), height = try #require(Int(header[2]))
        return PixelSize(width: width, height: height)
    }

    /// The presentation times of `clip`'s video frames as ffprobe reports them (best-effort
    /// timestamps, in presentation order), as exact times in the stream's time base.
    static func frameTimes(_ clip: String) async throws -> [MediaTime] {
        let data = try await run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=time_base:frame=best_effort_timestamp", "-of", "json", clip,
            ])
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // ffprobe's own field names.
        struct Document: Decodable {
            struct Stream: Decodable { var time_base: String }
            struct Frame: Decodable { var best_effort_timestamp: Int64? }
            var streams: [Stream]
            var frames: [Frame]
        }
        let document = try JSONDecoder().decode(Document.self, from: Data(data))
        let base = try #require(document.streams.first?.time_base.split(separator: "/").compactMap { Int32($0) })
        try #require(base.count == 2)
        let ticks = document.frames.compactMap(\.best_effort_timestamp).sorted()
        try #require(ticks.count == document.frames.count, "\(clip): frames without a timestamp")
        return ticks.map { MediaTime(value: $0 * Int64(base[0]), timescale: base[1]) }
    }

    /// Samples per channel in a WAV file, as ffprobe counts them (nil when it has no audio stream).
    static func wavFrames(_ path: String) async throws -> Int? {
        let text = String(
            decoding: try await run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path]),
            as: UTF8.self)
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The interleaved 16-bit samples of a WAV file, read by ffmpeg.
    static func wavSamples(_ path: String) async throws -> [Int16] {
        let bytes = try await run(try ffmpeg(), ["-hide_banner", "-loglevel", "error", "-i", path, "-f", "s16le", "-"])
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> [UInt8] {
        try await ProcessGate.reference.run { try await offPool { try runBlocking(executable, arguments) } }
    }

    /// Runs a command and returns its standard output and exit status, whatever the status.
    static func runAllowingFailure(_ executable: String, _ arguments: [String]) async throws -> (output: [UInt8], status: Int32) {
        try await ProcessGate.reference.run { try await offPool { try runAndWait(executable, arguments) } }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String]) throws -> [UInt8] {
        let (output, status) = try runAndWait(executable, arguments)
        guard status == 0 else { throw ReferenceFailure(command: ([executable] + arguments).joined(separator: " ")) }
        return output
    }

    private static func runAndWait(_ executable: String, _ arguments: [String]) throws -> (output: [UInt8], status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ([UInt8](data), process.terminationStatus)
    }

    /// Peak signal-to-noise ratio of two equally long 8-bit images; infinity when identical.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count && !a.isEmpty)
        var sum: Double = 0
        for i in 0..<a.count {
            let d = Double(Int(a[i]) - Int(b[i]))
            sum += d * d
        }
        if sum == 0 { return .infinity }
        let mse = sum / Double(a.count)
        return 10 * log10(255 * 255 / mse)
    }
}

struct ReferenceFailure: Error, CustomStringConvertible {
    var command: String
    var description: String { "failed: \(command)" }
}
