import ArgumentParser
import Foundation
import Glibc
import Playhead

/// `playhead playout`: a composed channel run as a service — the layout's layers over a
/// background, encoded once and written live to HLS, RTMP, SRT, UDP, recordings or standard
/// output, for a duration or until stopped.
struct PlayoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playout",
        abstract:
            "Run a composed channel for days: live HLS, RTMP, SRT, UDP or recordings, live layout edits, fillers, an as-run log, status and metrics.",
        discussion: """
            The layout is compose's JSON layout (see `playhead compose --help`), each layer optionally \
            named ("name": "left") so that edits can tell layers apart. The file is watched: a new \
            version (an atomic rename) takes effect at each changed layer's next item boundary, at once \
            for added or removed layers; a version that does not parse is refused with a line on \
            standard error. SIGHUP reloads too. Layers with "audio": true are mixed into the channel's \
            sound (48 kHz stereo). An item that fails plays --filler (else the background and silence) \
            for its slot. --out is repeatable: NAME.m3u8 (HLS, a rolling window of 2 s segments beside \
            it), rtmp://…, srt://…, udp://…, NAME.ts or NAME.mp4 recordings, - (MPEG-TS on standard \
            output). A network output that drops reconnects with back-off while the timeline keeps its \
            place. SIGTERM or SIGINT stops cleanly: outputs and recordings complete, the as-run log \
            says how each output went. Exit status: 0 at the end of --duration, 128 + N after signal N, \
            1 when an output failed for good, 2 on usage errors.
            """
    )

    enum ClockKind: String, ExpressibleByArgument, CaseIterable {
        case realtime, virtual
    }

    @Option(help: "The channel's JSON layout file (compose's layout; layers may have a \"name\").")
    var layout: String

    @Option(parsing: .unconditional, help: "Canvas size WxH (even).", transform: PlayCommand.parseSize)
    var size: PixelSize

    @Option(parsing: .unconditional, help: "Frames per second (25, 29.97, 30000/1001).")
    var rate = "25"

    @Option(name: .customLong("out"), help: "Where the channel goes (repeatable): NAME.m3u8, rtmp://…, srt://…, udp://…, NAME.ts, NAME.mp4, or -.")
    var outputs: [String] = []

    @Option(help: "realtime: frames leave at the canvas rate on the machine's clock; virtual: as fast as the machine allows.")
    var clock: ClockKind = .realtime

    @Option(parsing: .unconditional, help: "Seconds to run (default: until SIGTERM or SIGINT).")
    var duration: Double?

    @Option(name: .customLong("as-run"), help: "Append the as-run log here (JSON Lines: each item played, each output at the end).")
    var asRun: String?

    @Option(help: "Serve GET /status, /metrics and /health on HOST:PORT (loopback: 127.0.0.1:8080).")
    var status: String?

    @Option(help: "A clip played in place of an item that fails, for its slot (default: the background and silence).")
    var filler: String?

    @Option(
        parsing: .unconditional,
        help: "Seconds a failed item's slot lasts when its layer has no time range (default: the filler's duration, else 10).")
    var slot: Double?

    @Option(
        parsing: .unconditional,
        help: "Bring each item of a layer that gives sound to this loudness (EBU R128 integrated, LUFS; broadcast: -23), measured once per item.")
    var loudness: Double?

    @Option(help: "Background colour: #RRGGBB or black, white, gray, red, green, blue.")
    var background = "black"

    @Option(parsing: .unconditional, help: "Seconds between keyframes: the HLS segment length.")
    var segment = 2.0

    @OptionGroup var encoding: EncodingArguments

    @OptionGroup var sourceOptions: SourceArguments

    mutating func validate() throws {
        guard !outputs.isEmpty else { throw ValidationError("give at least one --out") }
        for output in outputs {
            guard let target = ChannelTarget(output) else {
                throw ValidationError("--out \(SourceRedaction.redacted(output)): not NAME.m3u8, rtmp://…, srt://…, udp://…, NAME.ts, NAME.mp4 or -")
            }
            if target.kind == .transportStreamFile || target.kind == .mp4File {
                var info = stat()
                if lstat(output, &info) == 0 { throw ValidationError("--out \(output) exists: a recording never replaces a file (give a new name)") }
            }
            if target.kind == .hls {
                let folder = URL(fileURLWithPath: output).deletingLastPathComponent().path
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                    throw ValidationError("--out \(output): the folder \(folder) does not exist")
                }
            }
        }
        if outputs.filter({ $0 == "-" }).count > 1 { throw ValidationError("--out - is given twice") }
        try Limits.checkCanvas(size, option: "--size")
        if let duration, !(duration > 0 && duration <= 366 * 86_400) {
            throw ValidationError("--duration must be more than 0 and at most a year of seconds")
        }
        guard let parsed = FrameRate(parsing: rate), parsed.value >= 1, parsed.value <= 120 else {
            throw ValidationError("--rate must be 1 … 120 frames per second: a number (25, 29.97) or N/D (30000/1001), not \(rate)")
        }
        do throws(PlayheadError) {
            try CompositionCanvas(size: size, frameRate: parsed).check()
        } catch {
            throw ValidationError("--size: \(error.message)")
        }
        guard RGBColor(parsing: background) != nil else { throw ValidationError("--background must be #RRGGBB or a colour name") }
        if !(segment >= 0.5 && segment <= 30) { throw ValidationError("--segment must be 0.5 … 30 seconds") }
        if let slot, !(slot >= 0.1 && slot <= 86_400) { throw ValidationError("--slot must be 0.1 … 86400 seconds") }
        if let status, StatusAddress(status) == nil { throw ValidationError("--status must be HOST:PORT, like 127.0.0.1:8080") }
        if let loudness, !(loudness >= -70 && loudness <= -5) { throw ValidationError("--loudness must be -70 … -5 LUFS (broadcast: -23)") }
    }

    func run() async throws {
        guard let rate = FrameRate(parsing: rate), let colour = RGBColor(parsing: background) else {
            throw ValidationError("bad --rate or --background")
        }
        let canvas = CompositionCanvas(size: size, frameRate: rate, background: colour)
        let log = try asRun.map { try AsRunLog(path: $0) }
        // The filler is the operator's own clip: it plays its default sound, whatever sound
        // `--audio-track` chose of the channel's sources (a French choice must not fail it);
        // the variant limits hold for it as for them.
        var fillerOptions = sourceOptions.assetOptions
        fillerOptions.selection.audio = .default
        let fillerAsset = filler.map { Asset(source: $0, options: fillerOptions) }
        var slotLength = slot.map { MediaTime(seconds: $0) }
        if slotLength == nil, let fillerAsset, let length = try? await fillerAsset.load(.duration), length.isNumeric, length > .zero {
            slotLength = length
        }
        let names = Locked<ChannelLayout?>(nil)
        let compositor = Compositor(
            canvas: canvas, soundFormat: AudioStreamInfo(source: "channel", sampleRate: 48_000, channelCount: 2),
            failurePolicy: .filler(fillerAsset, slot: slotLength ?? MediaTime(value: 10, timescale: 1)), loudnessTarget: loudness,
            loopCacheBytes: encoding.loopCacheBytes,
            onRecord: { record in
                let layer = names.withLock { $0?.name(of: record.layer) } ?? record.layer.description
                log?.record(record, layer: layer)
                if record.status == .failed {
                    Console.err("playhead: \(layer) item \(record.item + 1) failed, filler plays: \(record.error?.description ?? "")\n")
                }
            })
        let channelLayout = ChannelLayout(
            path: layout, compositor: compositor, assetOptions: sourceOptions.assetOptions, timeout: sourceOptions.timeout,
            report: { Console.err("playhead: \($0)\n") })
        try await blocking("playhead.layout") { try channelLayout.load() }
        names.withLock { $0 = channelLayout }
        // The first items are measured before the first frame (later ones ahead of their turn).
        await compositor.measureLoudness()
        let targets = outputs.compactMap(ChannelTarget.init)
        let sink = ChannelSink(
            targets: targets, rate: rate, preset: encoding.preset, crf: encoding.crf, segmentSeconds: segment, timeout: min(10, sourceOptions.timeout)
        )
        let started = Date()
        let metrics = ChannelMetrics()
        let update = { @Sendable in metrics.update(progress: compositor.progress, outputs: sink.status, soundPictureOffset: sink.soundPictureOffset) }
        var server: StatusServer?
        if let status, let address = StatusAddress(status) {
            do {
                server = try await StatusServer.start(host: address.host, port: address.port) { path in
                    Self.route(path, compositor: compositor, sink: sink, layout: channelLayout, metrics: metrics, started: started, update: update)
                }
            } catch {
                throw CommandFailure(description: "--status \(status): could not listen: \(error)")
            }
        }
        // The layout is watched (its file's identity and time), SIGHUP reloads it.
        let watcher = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                await blocking("playhead.layout") { channelLayout.reloadIfChanged() }
                update()
            }
        }
        SignalWatcher.shared.onReload { channelLayout.reloadIfChanged(force: true) }
        SignalWatcher.shared.onSignal { _ in compositor.stop() }
        let frames = duration.map { rate.frames(in: $0) }
        let clock: (any PlaybackClock)? = clock == .realtime ? SystemPlaybackClock() : nil
        let report = await compositor.render(frames: frames, into: sink, realtime: clock)
        watcher.cancel()
        update()
        let outputs = sink.status
        for output in outputs { log?.record(output) }
        await server?.stop()
        let signal = SignalWatcher.shared.settle()
        let summary =
            "channel: \(report.framesWritten) frames (\(String(format: "%.3f", Double(report.framesWritten) / rate.value)) s), "
            + "\(report.lateFrames) late; "
            + (report.soundMissed > .zero ? "\(String(format: "%.3f", report.soundMissed.seconds)) s of sound missed (not decoded in time); " : "")
            + outputs.map { output in
                "\(output.target) \(output.state.rawValue) (\(output.connects) connects, \(output.drops) drops, \(output.framesDropped) frames dropped"
                    + (output.lastError.map { "; \($0)" } ?? "") + ")"
            }
            .joined(separator: "; ")
        Console.err(summary + (report.error.map { " — \($0.message)" } ?? "") + "\n")
        if let error = report.error, error.code != .cancelled, signal == nil { throw CommandFailure(description: error.description) }
        if signal == nil, outputs.contains(where: { $0.state == .failed }) { throw CommandExit(status: 1) }
    }

    /// Whether the channel is healthy: every output is up, or down for less than `grace` seconds
    /// (a reconnect under way); one that failed for good, or has been down longer, is not.
    /// - Returns: the verdict and, when unhealthy, why.
    static func health(_ outputs: [ChannelTargetStatus], grace: Double) -> (Bool, String) {
        guard !outputs.isEmpty else { return (false, "no output") }
        if let failed = outputs.first(where: { $0.state == .failed }) { return (false, "\(failed.target) failed: \(failed.lastError ?? "")") }
        if let down = outputs.first(where: { ($0.downFor ?? 0) > grace }) {
            return (false, "\(down.target) has been down for \(Int(down.downFor ?? 0)) s: \(down.lastError ?? "not connected yet")")
        }
        return (true, "")
    }

    /// The answers of the status endpoint.
    static func route(
        _ path: String, compositor: Compositor, sink: ChannelSink, layout: ChannelLayout, metrics: ChannelMetrics, started: Date,
        update: @Sendable () -> Void
    ) -> StatusServer.Response? {
        switch path {
        case "/health":
            let (healthy, why) = Self.health(sink.status, grace: sink.downGrace)
            return .init(status: healthy ? .ok : .serviceUnavailable, contentType: "text/plain", body: healthy ? "ok\n" : why + "\n")
        case "/metrics":
            update()
            return .init(status: .ok, contentType: "text/plain; version=0.0.4", body: metrics.text)
        case "/status":
            let progress = compositor.progress
            let outputs = sink.status
            let document = ChannelStatus(
                uptime: Date().timeIntervalSince(started), canvasTime: progress.time.seconds, framesOut: progress.frames,
                lateFrames: progress.lateFrames,
                latenessP99: progress.lateness.percentile(0.99),
                droppedFrames: outputs.reduce(0) { $0 + $1.framesDropped }, soundPictureOffset: sink.soundPictureOffset,
                loopCacheBytes: progress.loopCacheBytes,
                layers: progress.layers.map { layer in
                    ChannelStatus.Layer(
                        name: layout.name(of: layer.id), item: layer.item.map { $0 + 1 }, source: layer.source.map(SourceRedaction.redacted),
                        filler: layer.filler, position: layer.position?.seconds, loopsCompleted: layer.loopsCompleted)
                },
                outputs: outputs)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let body = (try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) + "\n" } ?? "{}\n"
            return .init(status: .ok, contentType: "application/json", body: body)
        default:
            return nil
        }
    }
}

/// `GET /status`.
struct ChannelStatus: Encodable {
    struct Layer: Encodable {
        var name: String
        var item: Int?
        var source: String?
        var filler: Bool
        var position: Double?
        var loopsCompleted: Int
    }

    var uptime: Double
    var canvasTime: Double
    var framesOut: Int
    var lateFrames: Int
    /// Realtime: the 99th percentile of how late frames were written, in seconds.
    var latenessP99: Double?
    var droppedFrames: Int
    var soundPictureOffset: Double
    /// Memory the layers' recorded pictures hold (`--loop-cache`), in bytes.
    var loopCacheBytes: Int
    var layers: [Layer]
    var outputs: [ChannelTargetStatus]
}

/// `HOST:PORT` for the status endpoint.
struct StatusAddress {
    var host: String
    var port: Int

    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else { return nil }
        let host = String(text[..<colon])
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }
}
