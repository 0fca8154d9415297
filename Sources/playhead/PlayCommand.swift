import ArgumentParser
import Foundation
import Playhead

/// `playhead play <path>... --out DIR`: decode files into frame dumps.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Decode media files into frame dumps (PNG, PPM or Y4M).",
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

    @Option(name: .customLong("max-sessions"), help: "Files played at once (the rest wait their turn).")
    var maxSessions: Int = 4

    @Option(help: "Play each file N times back to back, gaplessly, frames numbered on; or 'forever' (stop with Ctrl-C).")
    var loop: LoopArgument?

    @Flag(name: .customLong("no-audio"), help: "Do not write audio.wav for files with audio.")
    var noAudio = false

    @Flag(help: "Play the files in sequence through one queue player into DIR/queue/, frames numbered continuously.")
    var queue = false

    @Flag(help: "Pace presentation at rate 1.0 on the clock (late frames are dropped and counted); default: as fast as possible.")
    var realtime = false

    @Flag(help: "Fail a file on any damaged data (by default damaged packets are decoded past and counted in damagedPackets).")
    var strict = false

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
        let outURL = try JSONOutput.outputFolder(out)
        if queue {
            let decoding = DecodeConfiguration(outputSize: size, gravity: gravity.videoGravity, frameLimit: frames, strict: strict)
            let summary = try await QueuePlayback(paths: paths, out: outURL, format: format, decoding: decoding, realtime: realtime,
                                                  audio: !noAudio).run()
            try summary.write(to: outURL.appendingPathComponent("summary.json"))
            if json { try JSONOutput.write(summary) } else {
                for report in summary.files { FileHandle.standardError.write(Data((report.line + "\n").utf8)) }
            }
            if summary.files.contains(where: { $0.status != "completed" }) { throw ExitCode.someFilesFailed }
            return
        }
        try await playConcurrently(outURL)
    }

    /// Every file at once through the coordinator's pool.
    private func playConcurrently(_ outURL: URL) async throws {
        let start = ContinuousClock.now
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: maxSessions)
        // Ctrl-C cancels every session cleanly; the summary says so. Installed before anything starts.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
        interrupt.setEventHandler { Task { await coordinator.cancelAll() } }
        interrupt.resume()
        defer { interrupt.cancel() }
        let log = OutputLog()
        let jobs = paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element, outDirectory: outURL) }
        // All the files are known here: share the cores between the sessions that will run at once
        // (one session alone lets FFmpeg choose).
        let atOnce = min(maxSessions, paths.count)
        let decoderThreads = atOnce == 1 ? 0 : max(1, ProcessInfo.processInfo.activeProcessorCount / atOnce)
        var sessions: [(job: PlayJob, id: SessionID, folder: URL)] = []
        for job in jobs {
            let folder = outURL.appendingPathComponent(job.folderName)
            try? FileManager.default.removeItem(at: folder)
            if format != .none {
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                } catch {
                    throw ValidationError("cannot create \(folder.path): \(error.localizedDescription)")
                }
            }
            let request = PlaybackRequest(source: job.path, loop: loop?.policy ?? .none, realtime: realtime,
                                          decoding: DecodeConfiguration(outputSize: size, gravity: gravity.videoGravity, frameLimit: frames,
                                                                        decoderThreads: decoderThreads, strict: strict))
            let key = job.folderName, format = self.format, native = size == nil
            let audio = noAudio ? nil : PlayJob.makeAudioSink(format: format, folder: folder)
            let id = await coordinator.submit(request, output: {
                RecordingSink(PlayJob.makeSink(format: format, folder: folder, native: native), log: log, key: { _ in key })
            }, audioOutput: { audio })
            sessions.append((job, id, folder))
        }

        let names = Dictionary(uniqueKeysWithValues: sessions.map { ($0.id, $0.job.folderName) })
        let showProgress = !json && ProgressDisplay.isTerminal
        let total = sessions.count
        let drawer = Task {
            guard showProgress else { return }
            let display = ProgressDisplay(names: names)
            while !Task.isCancelled {
                let running = await coordinator.progress()
                let left = await coordinator.runningSessions.count + coordinator.waitingSessions.count
                display.draw(running, finished: total - left, total: total)
                try? await Task.sleep(for: .milliseconds(200))
            }
            display.clear()
        }

        var reports: [FileReport] = []
        for session in sessions {
            let outcome = await coordinator.outcome(of: session.id)
            let written = log.entry(session.job.folderName)
            let wav = session.folder.appendingPathComponent("audio.wav").path
            let wroteAudio = format != .none && FileManager.default.fileExists(atPath: wav)
            var output: String? = format == .none ? nil : session.folder.path
            if written.frames == 0, !wroteAudio, output != nil {
                try? FileManager.default.removeItem(at: session.folder)
                output = nil
            }
            var report = FileReport(session: outcome, path: session.job.path, output: output, written: written)
            report.audioFrames = outcome.audioFramesPresented > 0 ? outcome.audioFramesPresented : nil
            report.audioPath = wroteAudio ? wav : nil
            // Output of a file that did not complete is kept, as far as it got, and said to be so.
            if report.status != "completed", written.frames > 0 || wroteAudio, output != nil { report.partial = true }
            reports.append(report)
            if !json, !showProgress { FileHandle.standardError.write(Data((report.line + "\n").utf8)) }
        }
        drawer.cancel()
        await drawer.value
        if showProgress {
            for report in reports { FileHandle.standardError.write(Data((report.line + "\n").utf8)) }
        }

        let elapsed = ContinuousClock.now - start
        var summary = PlaySummary(files: reports, elapsed: elapsed.inSeconds)
        summary.maxConcurrentSessions = maxSessions
        summary.peakConcurrentSessions = await coordinator.peakConcurrentSessions
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

    /// The audio sink for a dump format: `folder/audio.wav`, or nothing kept for `none` (the audio
    /// is still decoded, as a decode-only run should). A file without audio leaves no WAV behind.
    static func makeAudioSink(format: PlayCommand.DumpFormat, folder: URL) -> any AudioSink {
        format == .none ? NullAudioSink() : WAVSink(path: folder.appendingPathComponent("audio.wav").path)
    }

    /// The sink for a dump format, writing into `folder`.
    static func makeSink(format: PlayCommand.DumpFormat, folder: URL, native: Bool) -> any FrameSink {
        switch format {
        case .png: return ImageSequenceSink(directory: folder.path, format: .png)
        case .ppm: return ImageSequenceSink(directory: folder.path, format: .ppm)
        case .y4m: return Y4MSink(path: folder.appendingPathComponent("frames.y4m").path)
        case .none: return NullSink(pixelFormat: native ? .native : .yuv420p)
        }
    }
}
