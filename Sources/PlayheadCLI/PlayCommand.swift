import ArgumentParser
import Foundation
import Playhead

/// `playhead play <path>... --out DIR`: decode files into frame dumps.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Decode media files into frames (PNG, PPM, Y4M), an MP4, or nothing (a check).",
        discussion: """
            Frames of the Nth file go to DIR/NN-<file name>/frame-000001.<ext> (Y4M: one frames.y4m), its \
            audio to DIR/NN-<file name>/audio.wav (files without video play their audio alone), and \
            DIR/summary.json records how each file went. With --queue, everything goes to DIR/queue/. Exit status: 0 when every file completed, 1 when \
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
        case png, ppm, y4m, mp4, none
    }

    @Option(help: "Folder for the frame dumps and summary.json.")
    var out: String

    @Option(parsing: .unconditional, help: "Canvas size WxH (default: each file's displayed size).", transform: PlayCommand.parseSize)
    var size: PixelSize?

    @Option(help: "How the picture fills the canvas: \(Gravity.allCases.map(\.rawValue).joined(separator: ", ")).")
    var gravity: Gravity = .aspectFit

    @Option(help: "Dump format: \(DumpFormat.allCases.map(\.rawValue).joined(separator: ", ")) (none decodes without writing).")
    var format: DumpFormat = .png

    @Option(parsing: .unconditional, help: "Stop each file after N frames (with --loop: N frames each pass).")
    var frames: Int?

    @Option(name: .customLong("max-sessions"), parsing: .unconditional, help: "Files played at once (the rest wait their turn).")
    var maxSessions: Int = 4

    @Option(parsing: .unconditional, help: "Play each file N times back to back, gaplessly, frames numbered on; or 'forever' (stop with Ctrl-C).")
    var loop: LoopArgument?

    @Flag(name: .customLong("no-audio"), help: "Do not write audio.wav for files with audio.")
    var noAudio = false

    @Flag(help: "Play the files in sequence through one queue player into DIR/queue/, frames numbered continuously.")
    var queue = false

    @Flag(help: "Pace presentation at rate 1.0 on the clock (late frames are dropped and counted); default: as fast as possible.")
    var realtime = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Draw subtitles into the picture before it is fitted: a track of the file (an index, lang:CODE, default), a subtitle file (.srt, .ass, .vtt), or none.",
            valueName: "spec"),
        transform: SourceArguments.parseSubtitles)
    var subtitles: SubtitleOption?

    @Flag(help: "Fail a file on any damaged data (by default damaged packets are decoded past and counted in damagedPackets).")
    var strict = false

    @Flag(help: "Print the summary as JSON on standard output.")
    var json = false

    @Flag(help: "If another run is writing into --out, wait for it to finish (default: fail at once).")
    var wait = false

    @Argument(help: "Media files or URLs.")
    var paths: [String] = []

    @OptionGroup(title: "Manifests and shards")
    var batch: BatchOptions

    @OptionGroup var sourceOptions: SourceArguments

    mutating func validate() throws {
        paths = RawArguments.restoring(paths)
        try StandardInput.checkReadOnce(paths, alsoReading: batch.manifest)
        if batch.isBatch {
            try batch.validate(paths: paths, resultsRequired: true)
            if queue { throw ValidationError("--queue plays files given as arguments, not --manifest") }
            if json { throw ValidationError("--json is for files given as arguments; a manifest run writes --results") }
            if loop?.policy == .forever { throw ValidationError("--loop forever never finishes a source: not with --manifest") }
        } else if paths.isEmpty {
            throw ValidationError("give at least one file to play, or --manifest")
        }
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        if maxSessions < 1 || maxSessions > 64 { throw ValidationError("--max-sessions must be 1 … 64") }
        if let size { try Limits.checkCanvas(size, option: "--size") }
    }

    static func parseSize(_ text: String) throws -> PixelSize {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
            throw ValidationError("size must be WIDTHxHEIGHT, each at least 1 (640x360), not \(text)")
        }
        return PixelSize(width: w, height: h)
    }

    func run() async throws {
        if batch.isBatch {
            let (shard, _) = try BatchRun.shard(batch)
            let folder = shard.count == 1 ? out : out + "/shard-\(shard.index)-of-\(shard.count)"
            let output = try await RunOutput.open(folder, wait: wait, inputs: [])
            let tally = try await ConcurrentPlayback(command: self, output: output).runBatch(batch)
            if let exit = CommandExit.status(failed: tally.failed > 0) { throw exit }
            return
        }
        let output = try await RunOutput.open(out, wait: wait, inputs: paths, echoing: json)
        let summary: PlaySummary
        if queue {
            var decoding = DecodeConfiguration(outputSize: size, gravity: gravity.videoGravity, frameLimit: frames, strict: strict)
            decoding.subtitles = subtitles?.burnIn
            summary = try await QueuePlayback(
                paths: paths, output: output, format: format, decoding: decoding, realtime: realtime,
                audio: !noAudio, loop: loop ?? .count(1), json: json, assetOptions: sourceOptions.assetOptions
            ).run()
        } else {
            summary = try await ConcurrentPlayback(command: self, output: output).run()
        }
        if json { try JSONOutput.write(summary) }
        if let exit = CommandExit.status(failed: summary.files.contains { $0.status != "completed" }) { throw exit }
    }
}
