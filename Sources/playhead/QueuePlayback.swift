import Foundation
import Playhead
import Synchronization

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
        let counts = FrameCounts()
        let sink: any FrameSink
        switch format {
        case .png, .ppm: sink = ImageSequenceSink(directory: folder.path, format: format == .png ? .png : .ppm)
        case .y4m: sink = Y4MSink(path: folder.appendingPathComponent("frames.y4m").path)
        case .none: sink = NullSink(pixelFormat: decoding.outputSize == nil ? .native : .yuv420p)
        }
        let items = paths.map { PlayerItem(asset: Asset(url: MediaLocation.url(for: $0))) }
        let player = QueuePlayer(items: items, output: CountingSink(sink, counts: counts),
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
            let written = counts.count(for: source)
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

/// Counts frames per source as they pass to the real sink.
final class CountingSink: FrameSink {
    let inner: any FrameSink
    let counts: FrameCounts
    var pixelFormat: OutputPixelFormat { inner.pixelFormat }

    init(_ inner: any FrameSink, counts: FrameCounts) {
        self.inner = inner
        self.counts = counts
    }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) { try inner.begin(info) }
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        try inner.write(frame)
        counts.add(frame.source)
    }
    func finish() throws(PlayheadError) { try inner.finish() }
    func abort() { inner.abort() }
}

final class FrameCounts: Sendable {
    private let counts = Mutex([String: Int]())
    func add(_ source: String) { counts.withLock { $0[source, default: 0] += 1 } }
    func count(for source: String) -> Int { counts.withLock { $0[source] ?? 0 } }
}

final class FailureLog: Sendable {
    private let errors = Mutex([String: PlayheadError]())
    func record(_ source: String, _ error: PlayheadError) { errors.withLock { $0[source] = $0[source] ?? error } }
    func error(for source: String) -> PlayheadError? { errors.withLock { $0[source] } }
}

extension Duration {
    var inSeconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}
