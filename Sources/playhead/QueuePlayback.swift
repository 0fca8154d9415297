import Foundation
import Playhead

/// `playhead play --queue`: every file in sequence through one QueuePlayer into `DIR/queue/`,
/// frames numbered continuously across files, and all their audio in one `audio.wav` (in the
/// first audio's format), sample for sample.
struct QueuePlayback {
    var paths: [String]
    var out: URL
    var format: PlayCommand.DumpFormat
    var decoding: DecodeConfiguration
    var realtime: Bool
    var audio: Bool

    func run() async throws -> PlaySummary {
        let folder = out.appendingPathComponent("queue")
        try? FileManager.default.removeItem(at: folder)
        if format != .none { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let log = OutputLog()
        let sink = PlayJob.makeSink(format: format, folder: folder, native: decoding.outputSize == nil)
        let items = paths.map { PlayerItem(asset: Asset(url: MediaLocation.url(for: $0))) }
        let wav = folder.appendingPathComponent("audio.wav").path
        let audioLog = audio ? AudioLog(PlayJob.makeAudioSink(format: format, folder: folder)) : nil
        let player = QueuePlayer(items: items, output: RecordingSink(sink, log: log, key: { $0.source }), audioOutput: audioLog,
                                 configuration: PlayerConfiguration(realtime: realtime, decoding: decoding))
        let failures = FailureLog()
        let events = player.events
        let watcher = Task {
            for await event in events {
                if case .itemFailed(let item, let error) = event { failures.record(item.asset.source, error) }
            }
        }
        let start = ContinuousClock.now
        player.play()
        await player.waitUntilIdle()
        var outputError: PlayheadError?
        do { try player.finishOutput() } catch { outputError = error }
        watcher.cancel()
        let elapsed = ContinuousClock.now - start

        let statistics = player.statistics
        let reports = items.map { item -> FileReport in
            let source = item.asset.source
            let written = log.entry(source).frames
            let error = failures.error(for: source) ?? outputError
            var report = FileReport(queued: source, path: paths[items.firstIndex(of: item)!], status: error == nil ? "completed" : "failed",
                                    frames: written, error: error)
            let audioFrames = audioLog?.frames(for: source) ?? 0
            report.audioFrames = audioFrames > 0 ? audioFrames : nil
            report.damagedPackets = item.damagedPackets
            report.firstDamage = item.firstDamage.map(ErrorReport.init)
            return report
        }
        var summary = PlaySummary(files: reports, elapsed: elapsed.inSeconds)
        summary.queue = QueueReport(output: format == .none ? nil : folder.path, framesPresented: statistics.framesPresented,
                                    framesDropped: statistics.framesDropped, latenessP99: statistics.latenessPercentile(0.99),
                                    realtime: realtime)
        if statistics.audioFramesPresented > 0 {
            summary.queue?.audioFrames = statistics.audioFramesPresented
            summary.queue?.audioResyncs = statistics.audioResyncs
            if format != .none, FileManager.default.fileExists(atPath: wav) { summary.queue?.audioPath = wav }
        }
        return summary
    }
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
}

/// Passes audio to the real sink and counts, per source, the samples per channel it took.
final class AudioLog: AudioSink {
    private let inner: any AudioSink
    private let state = Locked((current: "", frames: [String: Int]()))

    init(_ inner: any AudioSink) { self.inner = inner }

    func frames(for source: String) -> Int { state.withLock { $0.frames[source] ?? 0 } }

    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {
        try inner.begin(info)
        state.withLock { $0.current = info.source }
    }
    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        try inner.write(buffer)
        state.withLock { $0.frames[$0.current, default: 0] += buffer.frameCount }
    }
    func finish() throws(PlayheadError) { try inner.finish() }
    func abort() { inner.abort() }
}

final class FailureLog: Sendable {
    private let errors = Locked([String: PlayheadError]())
    func record(_ source: String, _ error: PlayheadError) { errors.withLock { $0[source] = $0[source] ?? error } }
    func error(for source: String) -> PlayheadError? { errors.withLock { $0[source] } }
}

extension Duration {
    var inSeconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}
