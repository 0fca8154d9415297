import Foundation
import Playhead

/// `playhead play --queue`: every file in sequence through one QueuePlayer into `DIR/queue/`,
/// frames numbered continuously across files, and all their audio in one `audio.wav` (in the
/// first audio's format), sample for sample. `--loop N` plays the whole queue N times; `--loop
/// forever` keeps it going until a signal.
struct QueuePlayback {
    var paths: [String]
    var output: RunOutput
    var format: PlayCommand.DumpFormat
    var decoding: DecodeConfiguration
    var realtime: Bool
    var audio: Bool
    var loop: LoopArgument
    var json: Bool
    var assetOptions: AssetOptions

    /// Queued copies of each file kept ahead when looping forever.
    private static let foreverAhead = 2

    func run() async throws -> PlaySummary {
        let start = ContinuousClock.now
        var running = PlaySummary(files: paths.map { FileReport(running: $0) }, elapsed: 0)
        running.state = .running
        try await output.writeSummary(running)

        var folder: String?
        if format != .none {
            switch await output.folder.claimFolders(["queue"])[0] {
            case .success(let path): folder = path
            case .failure(let error):
                var summary = PlaySummary(
                    files: paths.map { FileReport(path: $0, output: nil, result: nil, error: error) },
                    elapsed: (ContinuousClock.now - start).inSeconds)
                summary.state = RunState.atTheEnd
                summary.signal = RunState.signalName
                try await output.writeSummary(summary)
                for report in summary.files where !json { Console.err(report.line + "\n") }
                return summary
            }
        }
        let place = folder ?? ""
        let sink = PlayJob.makeSink(format: format, folder: place, native: decoding.outputSize == nil)
        let assets = paths.map { Asset(source: $0, options: assetOptions) }
        let plays = QueuedPlays(assets: assets)
        let copies: Int
        switch loop {
        case .count(let n): copies = n
        case .forever: copies = Self.foreverAhead
        }
        let items = (0..<copies).flatMap { _ in assets.indices.map { plays.makeItem(for: $0) } }
        let audioSink = audio ? ((sink as? MP4Sink)?.soundInput() ?? PlayJob.makeAudioSink(format: format, folder: place)) : nil
        let player = QueuePlayer(
            items: items, output: sink, audioOutput: audioSink,
            configuration: PlayerConfiguration(realtime: realtime, decoding: decoding))
        let events = player.events
        let forever = loop == .forever
        let watcher = Task {
            for await event in events {
                switch event {
                case .itemEnded(let item):
                    // Looping forever: the file that ended goes to the back of the queue again.
                    if forever, let position = plays.position(of: item), SignalWatcher.shared.received == nil {
                        player.insert(plays.makeItem(for: position), after: nil)
                    }
                default:
                    break
                }
            }
        }
        SignalWatcher.shared.onSignal { _ in player.removeAllItems() }
        player.play()
        await player.waitUntilIdle()
        var outputError: PlayheadError?
        do throws(PlayheadError) {
            try await WorkerPool.shared.mustRun("playhead.queue-output") { () throws(PlayheadError) in try player.finishOutput() }
        } catch {
            outputError = error
        }
        watcher.cancel()
        let summary = try await finalSummary(player: player, plays: plays, folder: folder, outputError: outputError, start: start)
        if !json { for report in summary.files { Console.err(report.line + "\n") } }
        return summary
    }

    /// Every file's entry, and the queue's, with what is on disk.
    private func finalSummary(
        player: QueuePlayer, plays: QueuedPlays, folder: String?, outputError: PlayheadError?,
        start: ContinuousClock.Instant
    ) async throws -> PlaySummary {
        let format = self.format
        let onDisk: OutputInventory.Folder? =
            if let folder { await blocking("playhead.inventory") { OutputInventory.Folder(folder, format: format) } } else { nil }
        let statistics = player.statistics
        let cancelled = SignalWatcher.shared.received != nil
        // Frames and samples went to the outputs in queue order: what is on disk is each item's
        // share of it, in that order.
        var framesLeft = onDisk?.frames ?? 0
        // With --format none nothing is written: no samples are reported as if they were.
        var samplesLeft = onDisk?.audioFrames ?? (folder == nil && format != .none ? Int.max : 0)
        var totals = [(presented: Int, frames: Int, samples: Int, damage: Int, firstDamage: PlayheadError?)](
            repeating: (0, 0, 0, 0, nil), count: paths.count)
        for (item, position) in plays.all {
            let frames = min(item.framesPresented, framesLeft), samples = min(item.audioFramesPresented, samplesLeft)
            framesLeft -= frames
            samplesLeft -= samples
            totals[position].presented += item.framesPresented
            totals[position].frames += frames
            totals[position].samples += samples
            totals[position].damage += item.damagedPackets
            totals[position].firstDamage = totals[position].firstDamage ?? item.firstDamage
        }
        let reports = paths.indices.map { position -> FileReport in
            let error = plays.error(for: position) ?? outputError
            let status = error != nil ? "failed" : (cancelled ? "cancelled" : "completed")
            var report = FileReport(
                queued: paths[position], status: status, presented: totals[position].presented,
                written: totals[position].frames, error: error)
            report.audioFrames = totals[position].samples > 0 ? totals[position].samples : nil
            report.damagedPackets = totals[position].damage
            report.firstDamage = totals[position].firstDamage.map(ErrorReport.init)
            if loop != .count(1) { report.loopsCompleted = plays.completed(position) }
            return report
        }
        var summary = PlaySummary(files: reports, elapsed: (ContinuousClock.now - start).inSeconds)
        summary.state = RunState.atTheEnd
        summary.signal = RunState.signalName
        var queue = QueueReport(
            output: folder, framesPresented: statistics.framesPresented, framesDropped: statistics.framesDropped,
            latenessP99: statistics.latenessPercentile(0.99), realtime: realtime)
        queue.framesWritten = onDisk?.frames ?? 0
        if statistics.audioFramesPresented > 0, format != .none {
            queue.audioFrames = onDisk.map { $0.audioFrames ?? 0 } ?? statistics.audioFramesPresented
            queue.audioResyncs = statistics.audioResyncs
            queue.audioPath = onDisk?.audioFrames == nil ? nil : onDisk?.audioPath
        }
        if reports.contains(where: { $0.status != "completed" }), (onDisk?.frames ?? 0) > 0 || onDisk?.audioFrames != nil {
            queue.partial = true
        }
        summary.queue = queue
        if onDisk?.frames == 0, onDisk?.audioFrames == nil, await output.folder.removeIfEmpty("queue") {
            summary.queue?.output = nil
        }
        try await output.writeSummary(summary)
        return summary
    }
}

/// The items a queue run made, in the order they were queued, and which file each plays.
final class QueuedPlays: Sendable {
    private let assets: [Asset]
    private let state = Locked([(item: PlayerItem, position: Int)]())

    init(assets: [Asset]) { self.assets = assets }

    /// A new item for the file at `position` (its asset shared, so its demuxer is reused).
    func makeItem(for position: Int) -> PlayerItem {
        let item = PlayerItem(asset: assets[position])
        state.withLock { $0.append((item, position)) }
        return item
    }

    func position(of item: PlayerItem) -> Int? {
        state.withLock { items in items.first { $0.item === item }?.position }
    }

    /// The first failure of an item playing the file at `position`.
    func error(for position: Int) -> PlayheadError? {
        for (item, at) in all where at == position {
            if case .failed(let error) = item.status { return error }
        }
        return nil
    }

    /// Plays of the file at `position` that reached their end.
    func completed(_ position: Int) -> Int {
        all.filter { $0.position == position && $0.item.hasPlayedToEnd }.count
    }

    var all: [(item: PlayerItem, position: Int)] { state.withLock { $0 } }
}

/// Passes frames to the real sink and notes, per key, how many, their size and first/last times.
final class RecordingSink: FrameSink {
    let inner: any FrameSink
    let log: OutputLog
    let key: (VideoFrame) -> String
    var pixelFormat: OutputPixelFormat { inner.pixelFormat }

    init(_ inner: any FrameSink, log: OutputLog, key: @escaping (VideoFrame) -> String) {
        self.inner = inner
        self.log = log
        self.key = key
    }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) { try inner.begin(info) }
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        try inner.write(frame)
        log.record(key(frame), frame)
    }
    func finish() throws(PlayheadError) { try inner.finish() }
    func abort() { inner.abort() }
}

/// What reached each output.
final class OutputLog: Sendable {
    struct Entry: Sendable {
        var frames = 0
        var size: PixelSize?
        var first: MediaTime?
        var last: MediaTime?
    }
    private let entries = Locked([String: Entry]())

    func record(_ key: String, _ frame: VideoFrame) {
        entries.withLock { e in
            var entry = e[key] ?? Entry()
            entry.frames += 1
            entry.size = frame.size
            if entry.first == nil { entry.first = frame.presentationTime }
            entry.last = frame.presentationTime
            e[key] = entry
        }
    }

    func entry(_ key: String) -> Entry { entries.withLock { $0[key] ?? Entry() } }

    /// Drops a file's entry once it is reported (a manifest run goes through millions).
    func forget(_ key: String) { _ = entries.withLock { $0.removeValue(forKey: key) } }
}

extension Duration {
    var inSeconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}
