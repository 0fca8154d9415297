import Foundation
import Playhead
import PlayheadRunFolder

/// `playhead play` without `--queue`: every file at once through the coordinator's pool, each
/// into a folder of its own that the run claims (an earlier run's is taken back; anything else of
/// that name fails that file with `output.outputExists`).
struct ConcurrentPlayback {
    var command: PlayCommand
    var output: RunOutput

    private struct Session {
        var job: PlayJob
        var folder: String?
        var id: SessionID?
        var failure: PlayheadError?
        /// With `--format mp4`, the file's sink: its own count of what it wrote.
        var mp4: MP4Sink?
    }

    func run() async throws -> PlaySummary {
        let start = ContinuousClock.now
        let format = command.format
        let jobs = command.paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element) }
        // Before anything else: the summary says a run is going on (and an earlier one is gone).
        var running = PlaySummary(files: jobs.map { FileReport(running: $0.path) }, elapsed: 0)
        running.state = .running
        try await output.writeSummary(running)

        let claims: [Result<String, PlayheadError>?] =
            format == .none
            ? jobs.map { _ in nil }
            : await output.folder.claimFolders(jobs.map(\.folderName)).map { Optional($0) }
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: command.maxSessions)
        let log = OutputLog()
        // All the files are known here: share the cores between the sessions that will run at once
        // (one session alone lets FFmpeg choose).
        let decoderThreads = DecodeConfiguration.decoderThreads(sharedBy: min(command.maxSessions, jobs.count))
        var sessions: [Session] = []
        for (job, claim) in zip(jobs, claims) {
            var session = Session(job: job)
            switch claim {
            case .failure(let error)?:
                session.failure = error.naming(file: job.path)
                sessions.append(session)
                continue
            case .success(let folder)?:
                session.folder = folder
            case nil:
                break
            }
            (session.id, session.mp4) = await submit(job, folder: session.folder, to: coordinator, log: log, decoderThreads: decoderThreads)
            sessions.append(session)
        }
        // A signal stops every session; each keeps what it wrote, and the summary says so.
        SignalWatcher.shared.onSignal { _ in Task { await coordinator.cancelAll() } }

        let names = Dictionary(uniqueKeysWithValues: sessions.compactMap { s in s.id.map { ($0, s.job.folderName) } })
        let showProgress = !command.json && ProgressDisplay.isTerminal
        let total = sessions.count
        let drawer = Task {
            guard showProgress else { return }
            let display = ProgressDisplay(names: names)
            while !Task.isCancelled {
                let progress = await coordinator.progress()
                let left = await coordinator.runningSessions.count + coordinator.waitingSessions.count
                display.draw(progress, finished: total - left, total: total)
                try? await Task.sleep(for: .milliseconds(200))
            }
            display.clear()
        }

        var reports: [FileReport] = []
        for session in sessions {
            let report = await report(for: session, coordinator: coordinator, log: log)
            reports.append(report)
            if !command.json, !showProgress { Console.err(report.line + "\n") }
        }
        drawer.cancel()
        await drawer.value
        if showProgress {
            for report in reports { Console.err(report.line + "\n") }
        }

        var summary = PlaySummary(files: reports, elapsed: (ContinuousClock.now - start).inSeconds)
        summary.state = RunState.atTheEnd
        summary.signal = RunState.signalName
        summary.maxConcurrentSessions = command.maxSessions
        summary.peakConcurrentSessions = await coordinator.peakConcurrentSessions
        try await output.writeSummary(summary)
        return summary
    }

    /// Starts one file's session (into `folder`, or nothing kept for `--format none`).
    /// - Returns: the session, and with `--format mp4` the file's sink.
    private func submit(
        _ job: PlayJob, folder: String?, to coordinator: PlaybackCoordinator, log: OutputLog, decoderThreads: Int
    ) async -> (SessionID, MP4Sink?) {
        let format = command.format
        var decoding = DecodeConfiguration(
            outputSize: command.size, gravity: command.gravity.videoGravity, frameLimit: command.frames, decoderThreads: decoderThreads,
            strict: command.strict)
        decoding.subtitles = command.subtitles?.burnIn
        let request = PlaybackRequest(
            source: job.path, loop: command.loop?.policy ?? .none, realtime: command.realtime, decoding: decoding,
            assetOptions: command.sourceOptions.assetOptions)
        let key = job.folderName, folder = folder ?? "", native = command.size == nil
        if format == .mp4 {
            // One file: the sound goes into the MP4 beside the picture.
            // In a folder of ours, cleaned of what earlier runs wrote: a file still there is not ours.
            let mp4 = MP4Sink(path: folder + "/" + OutputNames.video, replacing: false)
            let sound = command.noAudio ? nil : mp4.soundInput()
            return (await coordinator.submit(request, output: { RecordingSink(mp4, log: log, key: { _ in key }) }, audioOutput: { sound }), mp4)
        }
        let audio = command.noAudio ? nil : PlayJob.makeAudioSink(format: format, folder: folder)
        let id = await coordinator.submit(
            request,
            output: {
                RecordingSink(PlayJob.makeSink(format: format, folder: folder, native: native), log: log, key: { _ in key })
            }, audioOutput: { audio })
        return (id, nil)
    }

    /// `--manifest`: each source of the shard into `OUT/<key>-<file name>/` (with several shards,
    /// under `OUT/shard-K-of-N/`), `--max-sessions` at a time, one JSON Lines record each; the
    /// summary holds the shard's counts.
    func runBatch(_ batch: BatchOptions) async throws -> BatchRun.Tally {
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: command.maxSessions)
        let log = OutputLog()
        let decoderThreads = DecodeConfiguration.decoderThreads(sharedBy: command.maxSessions)
        let keepsOutput = command.format != .none
        let output = self.output
        let run = BatchRun(options: batch, concurrency: command.maxSessions, command: "play", wait: command.wait)
        let tally = try await run.run(
            ready: {
                try await output.writeSummary(BatchRun.Tally(command: "play", shard: "", shardFrom: ""))
            },
            prepare: { entries -> [BatchRun.Prepared<Result<String, PlayheadError>?>] in
                guard keepsOutput else { return entries.map { _ in .start(nil) } }
                return await BatchRun.claim(entries, in: output.folder).map {
                    switch $0 {
                    case .start(let claim): return .start(claim)
                    case .repeated: return .repeated
                    }
                }
            },
            release: { claims in
                for case .success(let path)? in claims { _ = await output.folder.removeIfEmpty(URL(fileURLWithPath: path).lastPathComponent) }
            },
            onStop: {
                Task { await coordinator.cancelAll() }
            }
        ) { entry, claim -> BatchRun.Outcome<FileReport> in
            let job = PlayJob(source: entry.source, line: entry.line)
            var session = Session(job: job)
            if let problem = entry.problem {
                session.failure = PlayheadError(code: .invalidArgument, message: problem, file: entry.source)
                if case .success? = claim { _ = await output.folder.removeIfEmpty(job.folderName) }
            } else {
                switch claim {
                case .failure(let error)?:
                    session.failure = error.naming(file: job.path)
                case .success(let folder)?:
                    session.folder = folder
                    (session.id, session.mp4) = await submit(job, folder: folder, to: coordinator, log: log, decoderThreads: decoderThreads)
                case nil:
                    (session.id, session.mp4) = await submit(job, folder: nil, to: coordinator, log: log, decoderThreads: decoderThreads)
                }
            }
            let report = await self.report(for: session, coordinator: coordinator, log: log)
            log.forget(job.folderName)
            if report.status == "cancelled" { return .init(report: nil, failed: false) }
            let stopped = report.error?.code == PlayheadError.Code.cancelled.description
            return .init(report: report, failed: report.status != "completed", stopped: stopped)
        }
        try await output.writeSummary(tally)
        return tally
    }

    /// A file's entry, its numbers read back from what is on disk.
    private func report(for session: Session, coordinator: PlaybackCoordinator, log: OutputLog) async -> FileReport {
        guard let id = session.id else {
            return FileReport(
                path: session.job.path, output: nil, result: nil,
                error: session.failure ?? PlayheadError(code: .invalidState, message: "not started", file: session.job.path))
        }
        let outcome: SessionOutcome
        do {
            outcome = try await coordinator.takeOutcome(of: id)
        } catch {
            // The command's task was cancelled while waiting (a signal): the session was cancelled with it.
            return FileReport(path: session.job.path, output: session.folder, result: nil, error: error.naming(file: session.job.path))
        }
        let written = log.entry(session.job.folderName)
        guard let folder = session.folder else {
            var report = FileReport(session: outcome, path: session.job.path, output: nil, written: written)
            // With --format none nothing is written: no samples are reported as if they were.
            report.audioFrames = outcome.audioFramesPresented > 0 && command.format != .none ? outcome.audioFramesPresented : nil
            return report
        }
        let format = command.format
        // A completed MP4 holds what its sink wrote: its count, not a second read of the file.
        let counted = outcome.status == .completed ? session.mp4.map(OutputInventory.Written.init) : nil
        let onDisk = await blocking("playhead.inventory") { OutputInventory.Folder(folder, format: format, written: counted) }
        var output: String? = folder
        if onDisk.frames == 0, onDisk.audioFrames == nil, await self.output.folder.removeIfEmpty(session.job.folderName) {
            output = nil
        }
        var report = FileReport(session: outcome, path: session.job.path, output: output, written: written)
        report.framesWritten = onDisk.frames
        // The times of the first and last frame on disk: known while the log and the disk agree.
        if onDisk.frames != written.frames { report.lastPTS = nil }
        if onDisk.frames == 0 { report.firstPTS = nil }
        report.audioFrames = onDisk.audioFrames
        report.audioPath = onDisk.audioFrames == nil ? nil : onDisk.audioPath
        // Output of a file that did not complete is kept, as far as it got, and said to be so.
        if report.status != "completed", onDisk.frames > 0 || onDisk.audioFrames != nil { report.partial = true }
        return report
    }
}

/// One file of a `play` run.
struct PlayJob: Sendable {
    var position: Int
    var path: String
    /// A manifest run's folder name, from a stable key of the source (not its position).
    var keyedName: String?

    /// A manifest source's job: its folder is `<16 hex digits of the source's stable hash>-<file
    /// name>` (the name cut to 128 bytes), the same in every run and every shard.
    init(source: String, line: Int) {
        position = line
        path = source
        var name = Self.fileName(of: source)
        while name.utf8.count > 128 { name.removeLast() }
        keyedName = StableHash.key(source) + "-" + name
    }

    init(position: Int, path: String) {
        self.position = position
        self.path = path
    }

    /// `NN-<file name>`, or the keyed name of a manifest source.
    var folderName: String {
        if let keyedName { return keyedName }
        let number = position < 10 ? "0\(position)" : "\(position)"
        return "\(number)-\(Self.fileName(of: path))"
    }

    /// The last part of a path, or of a URL's path without its query (a signed URL's signature
    /// does not become a folder name); a URL without a path gives its host.
    static func fileName(of source: String) -> String {
        guard let schemeEnd = source.range(of: "://") else { return URL(fileURLWithPath: source).lastPathComponent }
        let rest = source[schemeEnd.upperBound...]
        let withoutQuery = rest.prefix(while: { $0 != "?" && $0 != "#" })
        let parts = withoutQuery.split(separator: "/")
        let name = parts.count > 1 ? parts.last.map(String.init) : nil
        let host = parts.first.map { $0.split(separator: "@").last.map(String.init) ?? "" } ?? ""
        let result = (name ?? host).replacingOccurrences(of: ":", with: "_")
        return result.isEmpty || result == "." || result == ".." ? "source" : result
    }

    /// The audio sink for a dump format: `folder/audio.wav`, or nothing kept for `none` (the audio
    /// is still decoded, as a decode-only run should). A file without audio leaves no WAV behind.
    /// (For `mp4` the sound goes into the MP4: see ``MP4Sink/soundInput()``.)
    static func makeAudioSink(format: PlayCommand.DumpFormat, folder: String) -> any AudioSink {
        format == .none ? NullAudioSink() : WAVSink(path: folder + "/" + OutputNames.audio, replacing: false)
    }

    /// The sink for a dump format, writing into `folder`.
    static func makeSink(format: PlayCommand.DumpFormat, folder: String, native: Bool) -> any FrameSink {
        switch format {
        case .png: return ImageSequenceSink(directory: folder, format: .png)
        case .ppm: return ImageSequenceSink(directory: folder, format: .ppm)
        case .y4m: return Y4MSink(path: folder + "/" + OutputNames.frames, replacing: false)
        case .mp4: return MP4Sink(path: folder + "/" + OutputNames.video, replacing: false)
        case .none: return NullSink(pixelFormat: native ? .native : .yuv420p)
        }
    }
}
