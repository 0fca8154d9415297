import Foundation
import Playhead

/// `playhead play --queue`: every file in sequence through one QueuePlayer into `DIR/queue/`,
/// frames numbered continuously across files.
struct QueuePlayback {
    var paths: [String]
    var out: URL
    var format: PlayCommand.DumpFormat
    var decoding: DecodeConfiguration
    var realtime: Bool

    func run() async throws -> PlaySummary {
        let folder = out.appendingPathComponent("queue")
        try? FileManager.default.removeItem(at: folder)
        if format != .none { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let log = OutputLog()
        let sink = PlayJob.makeSink(format: format, folder: folder, native: decoding.outputSize == nil)
        let items = paths.map { PlayerItem(asset: Asset(url: MediaLocation.url(for: $0))) }
        let player = QueuePlayer(items: items, output: RecordingSink(sink, log: log, key: { $0.source }),
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
            if let error = failures.error(for: source) ?? outputError {
                return FileReport(queued: source, path: paths[items.firstIndex(of: item)!], status: "failed", frames: written, error: error)
            }
            return FileReport(queued: source, path: paths[items.firstIndex(of: item)!], status: "completed", frames: written, error: nil)
        }
        var summary = PlaySummary(files: reports, elapsed: elapsed.inSeconds)
        summary.queue = QueueReport(output: format == .none ? nil : folder.path, framesPresented: statistics.framesPresented,
                                    framesDropped: statistics.framesDropped, latenessP99: statistics.latenessPercentile(0.99),
                                    realtime: realtime)
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
