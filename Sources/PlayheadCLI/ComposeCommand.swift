import ArgumentParser
import Foundation
import Playhead
import PlayheadRunFolder

/// `playhead compose`: several sources in one picture — layers with a rectangle, a gravity, a
/// z-order and a loop policy each, or a grid — rendered at the canvas's frame rate into
/// `OUT/composition/` (PNG/PPM frames or one Y4M), with `OUT/summary.json`.
struct ComposeCommand: AsyncParsableCommand {
    /// How long a signalled render may take to leave its frame loop before it is cancelled (its
    /// output then kept as far as it is valid).
    static let stopPatience = Duration.seconds(2)

    static let configuration = CommandConfiguration(
        commandName: "compose",
        abstract: "Compose several videos into one picture (layers or a grid), frame by frame.",
        discussion: """
            A layer is comma-separated key=value pairs, `source=` last (its value is the rest):
              --layer "x=0,y=0,w=1280,h=720,gravity=aspect-fill,loop=forever,z=0,source=bg.mp4"
            Keys: x, y, w, h (canvas pixels, rounded down to even), z, gravity (aspect-fit, aspect-fill, stretch),
            loop (once, N, forever), start and duration (seconds of each source), after-end
            (hold, clear), audio (yes: this layer's sound is heard, mixed with other such layers: into the MP4, or audio.wav beside frames),
            audio-track (which sound of a file with several: an index, lang:CODE, default; else --audio-track),
            variant, max-bitrate, max-resolution (which variant of an HLS master; else the command's),
            subtitles (drawn into the items' pictures: a track, a subtitle file, none), source. --grid RxC lays the sources given after the options out in
            R rows and C columns, each aspect-fit.
            A layout file is a JSON array, one object per layer (bottom first unless z says):
              {"source": "bg.mp4" | "sources": ["a.mp4", "b.mp4"], "rect": [x, y, w, h],
               "z": 0, "gravity": "aspect-fit", "loop": "once" | N | "forever",
               "timeRange": {"start": 0, "duration": 2}, "afterEnd": "hold" | "clear", "audio": true,
               "audioTrack": "lang:fra" | 2, "variant": "highest" | "lowest", "maxBitRate": 800000 | "800k",
               "maxResolution": "1280x720", "subtitles": "lang:fra" | "film.srt"}
            Relative sources are found beside the layout file. Examples: examples/*.json.
            """)

    @Option(parsing: .unconditional, help: "Canvas size WxH (even).", transform: PlayCommand.parseSize)
    var size: PixelSize

    @Option(parsing: .unconditional, help: "Frames per second (30, 29.97, 24000/1001).")
    var rate: String = "30"

    @Option(
        parsing: .unconditional,
        help:
            "Seconds of output: the frames at least half within them (2.3 s at 29.97 fps: 69 frames, as ffmpeg -t). Default: until every layer has ended (a layer that loops forever needs --duration)."
    )
    var duration: Double?

    @Option(help: "Background colour: #RRGGBB or black, white, gray, red, green, blue.")
    var background: String = "black"

    @Option(help: "A layer (repeatable); see below.")
    var layer: [String] = []

    @Option(help: "A JSON layout file: an array of layers (see below).")
    var layout: String?

    @Option(help: "RxC: lay the sources out in a grid of R rows and C columns.")
    var grid: String?

    @Option(
        help:
            "Folder for the frames and summary.json; a new file NAME.mp4 or NAME.y4m (the summary on standard output with --json); or - for Y4M on standard output (| mpv -)."
    )
    var out: String

    @Option(
        help: "Output: png or ppm frames, y4m (one file), mp4 (H.264 and AAC) or none (default: from --out's NAME.mp4 or NAME.y4m, else y4m).")
    var format: PlayCommand.DumpFormat?

    /// `--out NAME.mp4` or `NAME.y4m` that is not an existing folder: that one file is written.
    var fileTarget: PlayCommand.DumpFormat? {
        var info = stat()
        if stat(out, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return nil }
        let name = out.lowercased()
        return name.hasSuffix(".mp4") ? .mp4 : name.hasSuffix(".y4m") ? .y4m : nil
    }

    /// What is written.
    var outputFormat: PlayCommand.DumpFormat { format ?? fileTarget ?? .y4m }

    /// `--out -`: Y4M on standard output.
    var toStandardOutputTarget: Bool { out == "-" }

    @Flag(help: "Write frames at the canvas's rate on the machine's clock; late frames are counted, never dropped.")
    var realtime = false

    @Flag(help: "Fail a layer's item on any damaged data (by default damaged packets are decoded past and counted in each layer's damagedPackets).")
    var strict = false

    @Flag(help: "Print the summary as JSON on standard output.")
    var json = false

    @Flag(help: "If another run is writing into --out, wait for it to finish (default: fail at once).")
    var wait = false

    @Argument(help: "Sources for --grid.")
    var paths: [String] = []

    @OptionGroup var encoding: EncodingArguments

    @OptionGroup var sourceOptions: SourceArguments

    mutating func validate() throws {
        paths = RawArguments.restoring(paths)
        if layer.isEmpty && grid == nil && layout == nil { throw ValidationError("give --layout, at least one --layer, or --grid with sources") }
        if grid == nil && !paths.isEmpty { throw ValidationError("sources after the options are for --grid") }
        if let duration, !(duration > 0 && duration <= 86_400) { throw ValidationError("--duration must be more than 0 and at most 86400 seconds") }
        try Limits.checkCanvas(size, option: "--size")
        if let anyRate = FrameRate(numerator: 1) {
            do throws(PlayheadError) {
                try CompositionCanvas(size: size, frameRate: anyRate).check()
            } catch {
                throw ValidationError("--size: \(error.message)")
            }
        }
        if let fileTarget {
            if let format, format != fileTarget {
                throw ValidationError("--out \(out) is one \(fileTarget.rawValue) file: --format \(fileTarget.rawValue) or no --format")
            }
            var info = stat()
            if lstat(out, &info) == 0 { throw ValidationError("--out \(out) exists: it is left alone (remove it, or give a new name or a folder)") }
            if wait { throw ValidationError("--wait is for an output folder") }
        }
        if out == "-" {
            if outputFormat != .y4m { throw ValidationError("--out - writes Y4M to standard output (--format y4m)") }
            if json { throw ValidationError("--out - takes standard output for the frames: no --json") }
        }
        guard let parsed = FrameRate(parsing: rate), parsed.value >= 0.001, parsed.value <= 1000 else {
            throw ValidationError("--rate must be 0.001 … 1000 frames per second: a number (30, 29.97) or N/D (30000/1001), not \(rate)")
        }
        guard RGBColor(parsing: background) != nil else { throw ValidationError("--background must be #RRGGBB or a colour name") }
        // Layers given on the command line are checked here, so that a bad one is a usage error of
        // this command (with its usage); `run` builds them again with the layout's.
        for spec in layer { _ = try LayerSpec(parsing: spec) }
        if let grid { _ = try LayerSpec.grid(grid, sources: paths, canvas: size, zBase: 0) }
    }

    func run() async throws {
        guard let rate = FrameRate(parsing: rate), let colour = RGBColor(parsing: background) else {
            throw ValidationError("bad --rate or --background")
        }
        let canvas = CompositionCanvas(size: size, frameRate: rate, background: colour)
        let layout = self.layout, timeout = sourceOptions.timeout
        var specs = try await blocking("playhead.layout") { try layout.map { try LayerSpec.layoutFile($0, timeout: timeout) } ?? [] }
        specs += try layer.map { try LayerSpec(parsing: $0) }
        if let grid { specs += try LayerSpec.grid(grid, sources: paths, canvas: size, zBase: (specs.map(\.z).max() ?? -1) + 1) }
        // What a layout allows, whatever gives the layers (--layer, --grid, --layout).
        guard specs.count <= LayerSpec.maximumLayers else {
            throw ValidationError("\(specs.count) layers: a composition holds at most \(LayerSpec.maximumLayers)")
        }
        // A layout read from standard input has used it up: no layer may read it too.
        try StandardInput.checkReadOnce(specs.flatMap(\.sources), alsoReading: layout)
        // A duration's frames, or as long as the longest layer (none may loop forever then).
        if duration == nil, let endless = specs.first(where: { $0.loop == .forever }) {
            throw ValidationError(
                "the layer of \(SourceRedaction.redacted(endless.sources[0])) loops forever: give --duration (or a loop count)")
        }
        let frames = duration.map { rate.frames(in: $0) }
        let length: CompositionLength = frames.map { .frames($0) } ?? .untilLayersEnd
        let format = outputFormat
        let file = fileTarget == nil ? nil : out
        let hasSound = specs.contains(where: \.audio)
        if hasSound, format != .mp4, file != nil || toStandardOutputTarget {
            throw ValidationError(
                "a layer's sound (audio) goes into an MP4 (--format mp4) or, beside frames written into a folder, into audio.wav: not into \(out)")
        }

        // Every layer is checked before the output folder is touched.
        let compositor = Compositor(canvas: canvas, strict: strict, loopCacheBytes: encoding.loopCacheBytes)
        var ids: [CompositionLayer.ID] = []
        for spec in specs {
            let assets = spec.sources.map { Asset(source: $0, options: spec.assetOptions(sourceOptions.assetOptions)) }
            do throws(PlayheadError) {
                ids.append(try compositor.add(spec.layer(assets: assets)))
            } catch {
                throw ValidationError("layer \(SourceRedaction.redacted(spec.sources[0])): \(error.message)")
            }
        }
        let toStandardOutput = toStandardOutputTarget
        // A folder of our own (summary.json, frames); not for standard output or one named file.
        let output =
            toStandardOutput || file != nil ? nil : try await RunOutput.open(out, wait: wait, inputs: specs.flatMap(\.sources), echoing: json)
        let start = ContinuousClock.now
        var summary = ComposeSummary(
            state: .running, canvas: "\(size) @ \(rate) fps", framesWritten: 0, framesExpected: frames,
            layers: specs.map { ComposeLayerReport(source: $0.sources.map(SourceRedaction.redacted).joined(separator: " + ")) }, elapsed: 0)
        try await output?.writeSummary(summary)
        if output == nil, json {
            // No summary file (one named output): a second signal still leaves the summary, stopped,
            // on standard output.
            let running = try JSONOutput.encode(summary)
            SignalWatcher.shared.beforeStoppingAtOnce { signal, kept in
                if let stopped = SummaryFile.stopped(running, by: signal, kept: kept) { Console.out(String(decoding: stopped, as: UTF8.self) + "\n") }
                return false
            }
        }
        var folder = ""
        if let output, format != .none {
            switch await output.folder.claimFolders(["composition"])[0] {
            case .success(let path): folder = path
            case .failure(let error):
                // Refused (a name taken by something not ours): the summary says so — failed, not
                // "running" nor "finished" (nothing was composed).
                summary.state = RunState.atTheEnd == .cancelled ? .cancelled : .failed
                summary.error = ErrorReport(error)
                try await output.writeSummary(summary)
                throw CommandFailure(description: error.description)
            }
        }
        let clock: (any PlaybackClock)? = realtime ? SystemPlaybackClock() : nil
        // Beside frames (Y4M, PNG, PPM), the sound goes into its own WAV; nothing is kept for none.
        let soundPath = hasSound && format != .mp4 && format != .none && !folder.isEmpty ? folder + "/" + OutputNames.audio : nil
        let work = Task { [format, folder, preset = encoding.preset, crf = encoding.crf, length] in
            if toStandardOutput {
                return await compositor.render(length, into: Y4MSink(descriptor: STDOUT_FILENO, name: "standard output"), realtime: clock)
            }
            if let file {
                // The user's name: never replacing a file that appears there meanwhile.
                if format == .mp4 {
                    return await compositor.render(
                        length, into: MP4Sink(path: file, preset: preset, crf: crf, replacing: false), realtime: clock)
                }
                return await compositor.render(length, into: Y4MSink(path: file, replacing: false), realtime: clock)
            }
            if format == .mp4 {
                return await compositor.render(
                    length, into: MP4Sink(path: folder + "/" + OutputNames.video, preset: preset, crf: crf, replacing: false), realtime: clock)
            }
            let sound: (any AudioSink)? = !hasSound ? nil : PlayJob.makeAudioSink(format: format, folder: folder)
            return await compositor.render(
                length, into: PlayJob.makeSink(format: format, folder: folder, native: false), sound: sound, realtime: clock)
        }
        // A signal ends the render after the frame being drawn, as its last counted frame would:
        // the output is finished with its sound to that frame's end (however long the finish
        // takes: a second signal stops at once). A render that has not left its frame loop after a
        // moment cannot see the stop (a write that does not return): it is cancelled.
        SignalWatcher.shared.onSignal { _ in
            compositor.stop()
            Task {
                try? await Task.sleep(for: ComposeCommand.stopPatience)
                if !compositor.isFinishing { work.cancel() }
            }
        }
        let report = await work.value

        summary.state = RunState.atTheEnd
        // The composition itself stopped on an error (its output could not be written): not a
        // run that was worked through.
        if summary.state == .finished, let error = report.error, error.code != .cancelled { summary.state = .failed }
        summary.signal = RunState.signalName
        summary.framesWritten = report.framesWritten
        summary.elapsed = (ContinuousClock.now - start).inSeconds
        summary.error = report.error.map(ErrorReport.init)
        if realtime {
            summary.lateFrames = report.lateFrames
            summary.latenessP99 = report.lateness?.percentile(0.99)
        }
        switch format {
        case _ where toStandardOutput: summary.output = "-"
        case _ where file != nil: summary.output = file
        case .none: summary.output = nil
        case .y4m: summary.output = folder + "/" + OutputNames.frames
        case .mp4: summary.output = folder + "/" + OutputNames.video
        case .png, .ppm: summary.output = folder
        }
        // A render that completed wrote every frame it counted into an output it finished whole:
        // the report's count is the output's. One that stopped short kept a valid part, counted
        // on the disk (the only place that knows where a full disk cut it).
        let whole = report.error == nil
        if let file {
            // What is on the disk — unless the name was taken meanwhile by a file not ours.
            let ours = report.error?.code != .outputExists
            summary.framesWritten =
                !ours
                ? 0
                : whole
                    ? report.framesWritten
                    : await blocking("playhead.inventory") {
                        (format == .mp4 ? WrittenMedia.videoFrames(file) : OutputInventory.y4mFrames(file)) ?? 0
                    }
            if !ours || !FileManager.default.fileExists(atPath: file) { summary.output = nil }
        } else if !toStandardOutput, format != .none {
            // What is on the disk, not what was meant: a run stopped before its first frame has no file.
            let written = folder
            summary.framesWritten =
                whole ? report.framesWritten : await blocking("playhead.inventory") { OutputInventory.Folder(written, format: format).frames }
            if summary.framesWritten == 0, let path = summary.output, format == .y4m || format == .mp4, !FileManager.default.fileExists(atPath: path)
            {
                summary.output = nil
            }
        }
        // An output that stopped short (a failure, a signal) is kept as far as it got, and said to be so.
        if summary.state != .finished, summary.framesWritten > 0, let output = summary.output, output != "-" { summary.partial = true }
        if specs.contains(where: \.audio) {
            let silent = report.soundlessSources.map(SourceRedaction.redacted)
            let sources = specs.filter(\.audio).map { SourceRedaction.redacted($0.sources[0]) }
            summary.audio = ComposeAudioReport(
                source: sources[0], sources: sources.count > 1 ? sources : nil, error: report.audioFailure.map(ErrorReport.init),
                silent: silent.isEmpty ? nil : silent)
            let written = await blocking("playhead.inventory") { () -> Int? in
                guard let soundPath, WrittenLog.counts(soundPath) else { return nil }
                return OutputInventory.wavFrames(soundPath)
            }
            if let soundPath, let written {
                summary.audio?.path = soundPath
                summary.audio?.frames = written
            }
            if !json, !silent.isEmpty { Console.err("  the sound's layer has no sound in: \(silent.joined(separator: ", "))\n") }
        }
        for (index, id) in ids.enumerated() {
            guard let account = report.layers.first(where: { $0.id == id }) else { continue }
            summary.layers[index].framesShown = account.framesShown
            summary.layers[index].loopsCompleted = account.loopsCompleted
            summary.layers[index].error = account.failure.map(ErrorReport.init)
            summary.layers[index].damagedPackets = account.damagedPackets
            summary.layers[index].framesFromLoopCache = account.framesFromLoopCache
            summary.layers[index].firstDamage = account.firstDamage.map(ErrorReport.init)
            // Each failed item of a playlist (passed over; all of them when the layer failed).
            let passedOver = specs[index].sources.count > 1 ? account.itemFailures : []
            if !passedOver.isEmpty {
                summary.layers[index].itemErrors = passedOver.map {
                    ComposeItemError(item: $0.item + 1, source: SourceRedaction.redacted(specs[index].sources[$0.item]), error: ErrorReport($0.error))
                }
            }
        }
        try await output?.writeSummary(summary)
        if json {
            try JSONOutput.write(summary)
        } else {
            Console.err(
                "composition: \(summary.framesWritten)\(frames.map { " of \($0)" } ?? "") frames" + (summary.error.map { " — \($0.message)" } ?? "")
                    + "\n")
            for layer in summary.layers where layer.error != nil { Console.err("  \(layer.source): \(layer.error?.message ?? "")\n") }
            for item in summary.layers.flatMap({ $0.itemErrors ?? [] }) { Console.err("  \(item.source) (passed over): \(item.error.message)\n") }
        }
        // The sound cut short (or failing) fails the run like a layer would.
        let failed = report.error != nil || report.audioFailure != nil || summary.layers.contains { $0.error != nil || $0.itemErrors != nil }
        if let exit = CommandExit.status(failed: failed) { throw exit }
    }
}

/// `summary.json` of a `compose` run.
struct ComposeSummary: Encodable {
    var state: RunState
    var signal: String?
    var canvas: String
    var framesWritten: Int
    /// The frames of `--duration`; nil for a composition as long as its longest layer.
    var framesExpected: Int?
    var output: String?
    /// The output is kept but did not get to its end (a full disk, a signal).
    var partial: Bool?
    var layers: [ComposeLayerReport]
    /// Where the sound came from (into the MP4, or audio.wav beside frames), and why it went silent if it did.
    var audio: ComposeAudioReport?
    /// With --realtime: frames written more than half a frame late, and the 99th percentile of
    /// lateness in seconds.
    var lateFrames: Int?
    var latenessP99: Double?
    var error: ErrorReport?
    var elapsed: Double
}

struct ComposeLayerReport: Encodable {
    var source: String
    var framesShown = 0
    var loopsCompleted = 0
    var error: ErrorReport?
    /// Items of the layer's playlist that failed and were passed over.
    var itemErrors: [ComposeItemError]?
    /// Damaged packets decoded past in the layer's items (`--strict` fails them), and the first.
    var damagedPackets = 0
    var firstDamage: ErrorReport?
    /// Frames drawn from the item's recorded pictures, not decoded again (`--loop-cache`).
    var framesFromLoopCache = 0
}

/// An item of a layer's playlist that failed: its position (from 1), its source, why.
struct ComposeItemError: Encodable {
    var item: Int
    var source: String
    var error: ErrorReport
}

struct ComposeAudioReport: Encodable {
    /// The first layer that gives sound, and every one when several are mixed.
    var source: String
    var sources: [String]?
    /// Beside frames: the WAV the sound went into, and its samples per channel.
    var path: String?
    var frames: Int?
    var error: ErrorReport?
    /// Items of the sound's layer that have no sound: silent where they played.
    var silent: [String]?
}
