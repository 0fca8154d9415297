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
            has any. A bitmap track (PGS, DVB, DVD) can only be written as JSON: each picture of a cue \
            goes beside it as a PNG with its transparency (cue-000001-1.png), listed in the cue with \
            where it goes ({"file", "x", "y", "width", "height"}) on the canvas the stream declares \
            ("canvas": {"width", "height"}). --track chooses the track as probe numbers them (an index), by language \
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
                let origin = start.isNumeric ? start : .zero
                let (cues, track, pictures) = try await Self.readCues(of: asset, track: track, origin: origin, folder: folder)
                do throws(PlayheadError) {
                    let bytes: [UInt8]
                    do {
                        bytes = try JSONOutput.encode(cues)
                    } catch {
                        throw PlayheadError(code: .writeFailed, message: "could not encode the cues: \(error)", file: target)
                    }
                    try await WorkerPool.shared.value("playhead.output") { () throws(PlayheadError) in
                        try SafeFile.write(bytes, to: target)
                    }
                } catch {
                    // Pictures without their index are not passed off as a track.
                    await Self.remove(pictures, in: folder)
                    throw error
                }
                (report.track, report.cues, report.damagedPackets) = (track.trackIndex, cues.count, track.damagedPackets)
                report.pictures = cues.reduce(0) { $0 + ($1.pictures?.count ?? 0) }
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

extension SubtitlesCommand {
    /// Every cue of `track`, a bitmap cue's pictures written into `folder` as PNGs as they come
    /// (`cue-000001-1.png`: a track of pictures is never held whole); on a failure or a cancel
    /// (a signal), the pictures written are removed again.
    /// - Returns: the cues as JSON lists them, the track read, and the pictures' names.
    /// - Throws: the read's or a write's failure; `state.cancelled` when the loop was cut off.
    static func readCues(
        of asset: Asset, track: TrackChoice, origin: MediaTime, folder: String
    ) async throws(PlayheadError) -> ([SubtitleCueReport], SubtitleTrack, [String]) {
        var reports: [SubtitleCueReport] = []
        var written: [String] = []
        do throws(PlayheadError) {
            let stream = asset.subtitleCues(track, pictures: true)
            var cues = stream.makeAsyncIterator()
            while let cue = try await cues.next() {
                var report = SubtitleCueReport(cue, origin: origin)
                if !cue.pictures.isEmpty {
                    let number = reports.count + 1
                    let names = cue.pictures.indices.map { OutputNames.subtitlePicture(cue: number, picture: $0 + 1) }
                    let pictures = cue.pictures
                    // Named before they are written: a failure halfway through a cue removes its first ones too.
                    written += names
                    try await WorkerPool.shared.value("playhead.output") { () throws(PlayheadError) in
                        for (picture, name) in zip(pictures, names) {
                            try SafeFile.write(try picture.pngData(), to: folder + "/" + name, syncFolder: false)
                        }
                    }
                    report.pictures = zip(pictures, names).map { SubtitlePictureReport(file: $1, rect: $0.rect) }
                }
                reports.append(report)
            }
            guard stream.isComplete, let read = stream.track else {
                throw PlayheadError(code: .cancelled, message: "the read stopped before its end", file: asset.source)
            }
            if let canvas = read.canvasSize {
                for index in reports.indices where reports[index].pictures != nil {
                    reports[index].canvas = SubtitleCanvasReport(width: canvas.width, height: canvas.height)
                }
            }
            return (reports, read, written)
        } catch {
            await remove(written, in: folder)
            throw error
        }
    }

    /// Removes the files `names` of `folder` (the pictures of a track not written whole).
    static func remove(_ names: [String], in folder: String) async {
        guard !names.isEmpty else { return }
        await WorkerPool.shared.value("playhead.output") { for name in names { unlink(folder + "/" + name) } }
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
    /// A bitmap track's pictures written (PNGs beside the JSON).
    var pictures: Int?
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

/// One cue as `subtitles --format json` writes it: seconds from the file's start; a bitmap
/// cue's pictures as the PNG files beside it and their places on the canvas.
struct SubtitleCueReport: Encodable {
    var start: Double?
    var end: Double?
    var text: String
    var styledText: String?
    /// A bitmap cue's pictures: written as files (JSON with pictures), else counted.
    var pictures: [SubtitlePictureReport]?
    var pictureCount: Int
    var canvas: SubtitleCanvasReport?
    var forced: Bool?

    init(_ cue: SubtitleCue, origin: MediaTime) {
        start = (cue.start - origin).jsonSeconds
        end = cue.end.isNumeric ? (cue.end - origin).jsonSeconds : nil
        text = cue.text
        styledText = cue.styledText == cue.text ? nil : cue.styledText
        pictureCount = cue.pictureCount
        forced = cue.isForced ? true : nil
    }

    enum CodingKeys: String, CodingKey { case start, end, text, styledText, pictures, canvas, forced }

    /// `end` is always there (`null` when the stream does not say).
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(text, forKey: .text)
        try container.encodeIfPresent(styledText, forKey: .styledText)
        if let pictures {
            try container.encode(pictures, forKey: .pictures)
        } else if pictureCount > 0 {
            try container.encode([SubtitlePictureReport](), forKey: .pictures)
        }
        try container.encodeIfPresent(canvas, forKey: .canvas)
        try container.encodeIfPresent(forced, forKey: .forced)
    }
}

/// A bitmap cue's picture in `subtitles.json`: its PNG and where it goes on the canvas.
struct SubtitlePictureReport: Encodable {
    var file: String
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    init(file: String, rect: PixelRect) {
        self.file = file
        (x, y, width, height) = (rect.x, rect.y, rect.width, rect.height)
    }
}

/// The picture size a bitmap track's places count in.
struct SubtitleCanvasReport: Encodable {
    var width: Int
    var height: Int
}
