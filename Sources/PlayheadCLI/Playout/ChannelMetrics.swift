import CoreMetrics
import Foundation
import Metrics
import Playhead
import Prometheus

/// The channel's metrics through swift-metrics, kept by swift-prometheus's registry and read as
/// Prometheus text at `/metrics`. A sampler brings them up to date twice a second (and before each
/// `/metrics` answer) from the compositor's progress and the outputs' status.
final class ChannelMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let frames: Metrics.Counter
    private let late: Metrics.Counter
    private let dropped: Metrics.Counter
    private let offset: Metrics.Gauge
    private let canvasTime: Metrics.Gauge
    private let loopCache: Metrics.Gauge
    private let seen = Locked<(frames: Int, late: Int, dropped: Int, reconnects: [String: Int], counters: [String: Metrics.Counter])>(
        (0, 0, 0, [:], [:]))

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        MetricsSystem.bootstrap(factory)
        frames = Metrics.Counter(label: "playhead_frames_total")
        late = Metrics.Counter(label: "playhead_late_frames_total")
        dropped = Metrics.Counter(label: "playhead_dropped_frames_total")
        offset = Metrics.Gauge(label: "playhead_av_offset_seconds")
        canvasTime = Metrics.Gauge(label: "playhead_canvas_seconds")
        loopCache = Metrics.Gauge(label: "playhead_loop_cache_bytes")
    }

    /// Brings the metrics up to what the channel says now.
    func update(progress: CompositionProgress, outputs: [ChannelTargetStatus], soundPictureOffset: Double) {
        seen.withLock { s in
            if progress.frames > s.frames { frames.increment(by: Int64(progress.frames - s.frames)) }
            if progress.lateFrames > s.late { late.increment(by: Int64(progress.lateFrames - s.late)) }
            let droppedNow = outputs.reduce(0) { $0 + $1.framesDropped }
            if droppedNow > s.dropped { dropped.increment(by: Int64(droppedNow - s.dropped)) }
            (s.frames, s.late, s.dropped) = (max(s.frames, progress.frames), max(s.late, progress.lateFrames), max(s.dropped, droppedNow))
            for output in outputs {
                let reconnects = max(0, output.connects - 1)
                let counter =
                    s.counters[output.target] ?? Metrics.Counter(label: "playhead_output_reconnects_total", dimensions: [("output", output.target)])
                s.counters[output.target] = counter
                let before = s.reconnects[output.target] ?? 0
                if reconnects > before { counter.increment(by: Int64(reconnects - before)) }
                s.reconnects[output.target] = max(before, reconnects)
            }
        }
        offset.record(soundPictureOffset)
        canvasTime.record(progress.time.seconds)
        loopCache.record(Double(progress.loopCacheBytes))
    }

    /// The Prometheus text.
    var text: String { registry.emitToString() }
}
