import ArgumentParser
import Foundation
import Playhead

/// `playhead play <path>... --out DIR`: decode files into frame dumps.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Decode media files into frame dumps (PNG, PPM or Y4M).",
        discussion: """
        Frames of the Nth file go to DIR/NN-<file name>/frame-000001.<ext> (Y4M: one frames.y4m), and \
        DIR/summary.json records how each file went. Exit status: 0 when every file completed, 1 when \
        any failed or was cancelled (all are still reported), 2 on usage errors.
        """
    )

    enum Gravity: String, ExpressibleByArgument, CaseIterable {
        case aspectFit = "aspect-fit", aspectFill = "aspect-fill", stretch

        var videoGravity: VideoGravity {
            switch self {
            case .aspectFit: return .resizeAspect
            case .aspectFill: return .resizeAspectFill
            case .stretch: return .resize
            }
        }
    }

    enum DumpFormat: String, ExpressibleByArgument, CaseIterable {
        case png, ppm, y4m, none
    }

    @Option(help: "Folder for the frame dumps and summary.json.")
    var out: String

    @Option(help: "Canvas size WxH (default: each file's displayed size).", transform: PlayCommand.parseSize)
    var size: PixelSize?

    @Option(help: "How the picture fills the canvas: \(Gravity.allCases.map(\.rawValue).joined(separator: ", ")).")
    var gravity: Gravity = .aspectFit

    @Option(help: "Dump format: \(DumpFormat.allCases.map(\.rawValue).joined(separator: ", ")) (none decodes without writing).")
    var format: DumpFormat = .png

    @Option(help: "Stop each file after N frames.")
    var frames: Int?

    @Option(name: .customLong("max-sessions"), help: "Files decoded at once.")
    var maxSessions: Int = 4

    @Flag(help: "Play the files in sequence through one queue player into DIR/queue/, frames numbered continuously.")
    var queue = false

    @Flag(help: "Pace presentation at rate 1.0 on the clock (late frames are dropped and counted); default: as fast as possible.")
    var realtime = false

    @Flag(help: "Print the summary as JSON on standard output.")
    var json = false

    @Argument(help: "Media files or URLs.")
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file to play") }
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        if maxSessions < 1 { throw ValidationError("--max-sessions must be at least 1") }
    }

    static func parseSize(_ text: String) throws -> PixelSize {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w <= 16384, h <= 16384 else {
            throw ValidationError("size must look like 640x360")
        }
        return PixelSize(width: w, height: h)
    }

    func run() async throws {
        let outURL = URL(fileURLWithPath: out)
        do {
            try FileManager.default.createDirectory(at: outURL, withIntermediateDirectories: true)
        } catch {
            throw ValidationError("cannot create the output folder \(out): \(error.localizedDescription)")
        }
        if queue {
            let decoding = DecodeConfiguration(outputSize: size, gravity: gravity.videoGravity, frameLimit: frames)
            let summary = try await QueuePlayback(paths: paths, out: outURL, format: format, decoding: decoding, realtime: realtime).run()
            try summary.write(to: outURL.appendingPathComponent("summary.json"))
            if json { try JSONOutput.write(summary) } else {
                for report in summary.files { FileHandle.standardError.write(Data((report.line + "\n").utf8)) }
            }
            if summary.files.contains(where: { $0.status != "completed" }) { throw ExitCode.someFilesFailed }
            return
        }
        if realtime { throw ValidationError("--realtime goes with --queue") }
        let start = ContinuousClock.now
        let concurrent = min(maxSessions, paths.count)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // One session alone lets FFmpeg choose; several share the cores instead of each taking all.
        let threads = concurrent == 1 ? 0 : max(1, cores / concurrent)
        let jobs = paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element, outDirectory: outURL) }

        let reports = await withTaskGroup(of: (Int, FileReport).self) { group in
            var reports = [FileReport?](repeating: nil, count: jobs.count)
            var next = 0
            func startNext() {
                guard next < jobs.count else { return }
                let job = jobs[next]
                next += 1
                let configuration = DecodeConfiguration(outputSize: size, gravity: gravity.videoGravity,
                                                        frameLimit: frames, decoderThreads: threads)
                group.addTask { [format] in (job.position, await job.play(configuration: configuration, format: format)) }
            }
            for _ in 0..<concurrent { startNext() }
            for await (position, report) in group {
                reports[position - 1] = report
                if !json { FileHandle.standardError.write(Data((report.line + "\n").utf8)) }
                startNext()
            }
            return reports.map { $0! }
        }

        let elapsed = ContinuousClock.now - start
        let summary = PlaySummary(files: reports, elapsed: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        try summary.write(to: outURL.appendingPathComponent("summary.json"))
        if json { try JSONOutput.write(summary) }
        if reports.contains(where: { $0.status != "completed" }) {
            throw ExitCode.someFilesFailed
        }
    }
}

/// One file of a `play` run.
struct PlayJob: Sendable {
    var position: Int
    var path: String
    var outDirectory: URL

    var folderName: String {
        let number = position < 10 ? "0\(position)" : "\(position)"
        return "\(number)-\(URL(fileURLWithPath: path).lastPathComponent)"
    }

    func play(configuration: DecodeConfiguration, format: PlayCommand.DumpFormat) async -> FileReport {
        let folder = outDirectory.appendingPathComponent(folderName)
        do {
            // A fresh folder: frames of an earlier, longer run must not pass for this run's.
            try? FileManager.default.removeItem(at: folder)
            if format != .none { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        } catch {
            let failure = PlayheadError(code: .outputOpenFailed, message: "cannot create \(folder.path): \(error.localizedDescription)", file: path)
            return FileReport(path: path, output: nil, result: nil, error: failure)
        }
        let session = DecodeSession(source: path, configuration: configuration)
        let result: DecodeResult
        switch format {
        case .png, .ppm:
            result = await session.run(into: ImageSequenceSink(directory: folder.path, format: format == .png ? .png : .ppm))
        case .y4m:
            result = await session.run(into: Y4MSink(path: folder.appendingPathComponent("frames.y4m").path))
        case .none:
            result = await session.run(into: NullSink(pixelFormat: configuration.outputSize == nil ? .native : .yuv420p))
        }
        if result.framesDelivered == 0 {
            // Nothing was written: leave no empty folder that looks like output.
            try? FileManager.default.removeItem(at: folder)
            return FileReport(path: path, output: nil, result: result, error: nil)
        }
        return FileReport(path: path, output: format == .none ? nil : folder.path, result: result, error: nil)
    }
}
