import Foundation
import Testing

/// Frames as the ffmpeg CLI decodes them, to compare Playhead's against.
enum Reference {
    static func ffmpeg(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = "/usr/bin/ffmpeg"
        try #require(FileManager.default.isExecutableFile(atPath: path), "ffmpeg CLI missing: run scripts/setup.sh", sourceLocation: sourceLocation)
        return path
    }

    /// Frame `index` (in decode output order) of `clip` as packed rgb24 bytes.
    static func rgbFrame(_ clip: String, index: Int, autorotate: Bool = false) async throws -> [UInt8] {
        var arguments = ["-hide_banner", "-loglevel", "error"]
        if !autorotate { arguments.append("-noautorotate") }
        arguments += ["-i", clip, "-vf", "select=eq(n\\,\(index))", "-vsync", "0", "-frames:v", "1",
                      "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        return try await run(try ffmpeg(), arguments)
    }

    /// Samples per channel in a WAV file, as ffprobe counts them (nil when it has no audio stream).
    static func wavFrames(_ path: String) async throws -> Int? {
        let text = String(decoding: try await run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path]),
                          as: UTF8.self)
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The interleaved 16-bit samples of a WAV file, read by ffmpeg.
    static func wavSamples(_ path: String) async throws -> [Int16] {
        let bytes = try await run(try ffmpeg(), ["-hide_banner", "-loglevel", "error", "-i", path, "-f", "s16le", "-"])
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> [UInt8] {
        try await offPool { try runBlocking(executable, arguments) }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ReferenceFailure(command: ([executable] + arguments).joined(separator: " ")) }
        return [UInt8](data)
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
