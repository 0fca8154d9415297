import ArgumentParser
import Foundation
import Playhead
import PlayheadRunFolder

/// `playhead subtitles`: a subtitle track of each file, as a file of its own.
struct SubtitlesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subtitles",
        abstract: "Write a subtitle track of each file as SubRip, WebVTT, ASS or a JSON list of cues.",
        discussion: """
            The Nth file's track goes to DIR/NN-<file name>/subtitles.<srt|vtt|ass|json>; DIR/summary.json \
            says which track each file gave and how many cues. SubRip, WebVTT and ASS are written by \
            FFmpeg's own encoders and muxers, as `ffmpeg -i FILE -map 0:s:N out.srt` writes them, times \
            counted from the file's start; JSON lists each cue's start and end (seconds, from the file's \
            start; end null when the stream does not say) and its text, with its styling (ASS) when it \
            has any: a bitmap track (PGS, DVB, DVD) has times and picture counts only, and can only be \
            written as JSON. --track chooses the track as probe numbers them (an index), by language \
            (lang:fra), or the file's default one. Exit status: 0 when every file gave its track, 1 when \
            any failed (demux.trackNotFound naming what it holds, decode.decoderNotFound naming the \
            codec, …), 2 on usage errors.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case srt, vtt, ass, json
        var format: SubtitleFormat { SubtitleFormat(rawValue: rawValue) ?? .json }
    }

    @Option(help: "Folder for the subtitle files and summary.json.")
    var out: String

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The subtitle track: a stream index as probe prints it, lang:CODE, or default.", valueName: "spec"),
        transform: SourceArguments.parseTrack)
    var track: TrackChoice = .default

    @Option(help: "What is written: srt, vtt, ass or json.")
    var format: Format = .srt

    @Flag(help: "Print the summary as JSON on standard output.")
    var json = false

    @Flag(help: "If another run is writing into --out, wait for it to finish (default: fail at once).")
    var wait = false

    @Argument(help: "Media files or URLs.")
    var paths: [String] = []

    @OptionGroup var sourceOptions: SourceArguments

    mutating func validate() throws {
        paths = RawArguments.restoring(paths)
        try StandardInput.checkReadOnce(paths, alsoReading: nil)
        if paths.isEmpty { throw ValidationError("give at least one file") }
        if case .none = track { throw ValidationError("--track none reads nothing: give an index, lang:CODE or default") }
    }

    func run() async throws {
        let start = ContinuousClock.now
        let output = try await RunOutput.open(out, wait: wait, inputs: paths, echoing: json)
        let jobs = paths.enumerated().map { PlayJob(position: $0.offset + 1, path: $0.element) }
        var summary = SubtitlesSummary(files: jobs.map { SubtitleFileReport(path: $0.path, status: "running") })
        summary.state = .running
        try await output.writeSummary(summary)
        let claims = await output.folder.claimFolders(jobs.map(\.folderName))
        let options = sourceOptions.assetOptions
        let (track, format, json) = (self.track, self.format.format, self.json)
        let work = Task {
            var reports: [SubtitleFileReport] = []
            for (job, claim) in zip(jobs, claims) {
                let report = await Self.extract(job, claim: claim, track: track, format: format, options: options, output: output)
                if !json { Console.err(report.line + "\n") }
                reports.append(report)
            }
            return reports
        }
        // A signal stops the work: files written so far stay, and the summary lists them.
        SignalWatcher.shared.onSignal { _ in work.cancel() }
        summary.files = await work.value
        for index in summary.files.count..<jobs.count {
            summary.files.append(SubtitleFileReport(path: jobs[index].path, status: "cancelled"))
        }
        summary.state = RunState.atTheEnd
        summary.signal = RunState.signalName
        summary.elapsed = (ContinuousClock.now - start).inSeconds
        try await output.writeSummary(summary)
        if json { try JSONOutput.write(summary) }
        if let exit = CommandExit.status(failed: summary.files.contains { $0.status != "completed" }) { throw exit }
    }

    /// One file's track, written into its folder.
    private static func extract(
        _ job: PlayJob, claim: Result<String, PlayheadError>, track: TrackChoice, format: SubtitleFormat, options: AssetOptions, output: RunOutput
    ) async -> SubtitleFileReport {
        if Task.isCancelled {
            if case .success = claim { await output.folder.removeIfEmpty(job.folderName) }
            return SubtitleFileReport(path: job.path, status: "cancelled")
        }
        let folder: String
        switch claim {
        case .success(let path): folder = path
        case .failure(let error): return SubtitleFileReport(path: job.path, error: error)
        }
        let asset = Asset(source: job.path, options: options)
        let target = folder + "/" + OutputNames.subtitles(format.fileExtension)
        do throws(PlayheadError) {
            var report = SubtitleFileReport(path: job.path, status: "completed")
            if format == .json {
                // The start first: a source read once (a pipe) is not opened again after the read.
                let start = try await asset.load(.startTime)
                let read = try await asset.subtitles(track)
                let origin = start.isNumeric ? start : .zero
                let bytes: [UInt8]
                do {
                    bytes = try JSONOutput.encode(read.cues.map { SubtitleCueReport($0, origin: origin) })
                } catch {
                    throw PlayheadError(code: .writeFailed, message: "could not encode the cues: \(error)", file: target)
                }
                try await WorkerPool.shared.value("playhead.output") { () throws(PlayheadError) in
                    try SafeFile.write(bytes, to: target)
                }
                (report.track, report.cues, report.damagedPackets) = (read.trackIndex, read.cues.count, read.damagedPackets)
            } else {
                let written = try await asset.writeSubtitles(track, as: format, to: target, replacing: true)
                (report.track, report.cues, report.damagedPackets) = (written.trackIndex, written.cueCount, written.damagedPackets)
            }
            report.output = target
            await output.folder.sync(folder)
            return report
        } catch {
            await output.folder.removeIfEmpty(job.folderName)
            if error.code == .cancelled || Task.isCancelled { return SubtitleFileReport(path: job.path, status: "cancelled", error: error) }
            return SubtitleFileReport(path: job.path, error: error)
        }
    }
}

/// `summary.json` of a `subtitles` run.
struct SubtitlesSummary: Encodable {
    var state = RunState.finished
    var signal: String?
    var files: [SubtitleFileReport]
    var elapsed = 0.0
}

/// One file of a `subtitles` run: the track it gave, its cues, where they went, or why not.
struct SubtitleFileReport: Encodable {
    var path: String
    var status: String
    var track: Int?
    var cues: Int?
    var output: String?
    var damagedPackets: Int?
    var error: ErrorReport?

    init(path: String, status: String, error: PlayheadError? = nil) {
        self.path = SourceRedaction.redacted(path)
        self.status = status
        self.error = error.map(ErrorReport.init)
    }

    init(path: String, error: PlayheadError) {
        self.init(path: path, status: "failed", error: error)
    }

    /// The line printed on standard error as the file ends.
    var line: String {
        let name = Console.name(path)
        if let error, status != "completed" { return "\(name)  \(status)  [\(error.code)] \(error.reason)" }
        if status != "completed" { return "\(name)  \(status)" }
        return "\(name)  \(status)  track #\(track ?? -1), \(cues ?? 0) cues → \(output.map(Console.name) ?? "")"
    }
}

/// One cue as `subtitles --format json` writes it: seconds from the file's start.
struct SubtitleCueReport: Encodable {
    var start: Double?
    var end: Double?
    var text: String
    var styledText: String?
    var pictures: Int?
    var forced: Bool?

    init(_ cue: SubtitleCue, origin: MediaTime) {
        start = (cue.start - origin).jsonSeconds
        end = cue.end.isNumeric ? (cue.end - origin).jsonSeconds : nil
        text = cue.text
        styledText = cue.styledText == cue.text ? nil : cue.styledText
        pictures = cue.pictureCount > 0 ? cue.pictureCount : nil
        forced = cue.isForced ? true : nil
    }

    enum CodingKeys: String, CodingKey { case start, end, text, styledText, pictures, forced }

    /// `end` is always there (`null` when the stream does not say).
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(text, forKey: .text)
        try container.encodeIfPresent(styledText, forKey: .styledText)
        try container.encodeIfPresent(pictures, forKey: .pictures)
        try container.encodeIfPresent(forced, forKey: .forced)
    }
}
