import Synchronization

/// The one output sink of a player, used in turn by the presenters of successive items.
///
/// `@unchecked Sendable` is safe because the sink is touched only by the presenter of the item
/// that is presenting, and only one item presents at a time: a presenter begins using it after its
/// gate opened, and a gate opens only once no earlier run may still write — the previous item's
/// session ended (its output thread finished and was joined), or, for a run cancelled by a seek,
/// an advance or a removal, its session returned (``QueuePlayer``'s drain rule, under the
/// player's mutex). So every use is ordered after the previous one. `finish` is called by the
/// owner once no item runs.
final class SharedOutput: @unchecked Sendable {
    private let sink: any FrameSink
    private var lastInfo: FrameStreamInfo?

    init(_ sink: sending any FrameSink) {
        self.sink = sink
    }

    var pixelFormat: OutputPixelFormat { sink.pixelFormat }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        if lastInfo?.size != info.size || lastInfo?.pixelFormat != info.pixelFormat {
            try sink.begin(info)
            lastInfo = info
        }
    }

    func write(_ frame: VideoFrame) throws(PlayheadError) { try sink.write(frame) }
    func finish() throws(PlayheadError) { try sink.finish() }
    func abort() { sink.abort() }
}
