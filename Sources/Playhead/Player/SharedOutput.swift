import PlayheadMedia
import Synchronization

/// The one output sink of a player, used in turn by the presenters of successive items.
///
/// `@unchecked Sendable` is safe because every use of the sink is made under `state`'s lock, so
/// no two uses overlap, and the order of items holds too: a presenter begins using it after its
/// gate opened, and a gate opens only once no earlier run may still write — the previous item's
/// session ended (its output thread finished and was joined), or, for a run cancelled by a seek,
/// an advance or a removal, its session returned (``QueuePlayer``'s drain rule, under the
/// player's mutex).
///
/// Once the owner finished or gave up the output, it is closed: a frame that a presenter still
/// had on its way (an item that failed while its output thread was writing) is refused rather
/// than written after the end was told — a frame file put in place after the run's summary.
///
/// The player holds the sink (``OutputClaims``) from its first frame until it finishes or gives
/// it up: a sink that another session, render or player is writing is refused
/// (`state.invalidState`, the item fails) and left as that writer has it.
final class SharedOutput: @unchecked Sendable {
    private struct State {
        var lastInfo: FrameStreamInfo?
        var hold: PlayerOutputHold
        /// Where the last frame written ends on the player's timeline (seconds), while the picture
        /// it belongs to goes on (nil once that picture reached its end).
        var lastEnd: Double?
    }
    private let sink: any FrameSink
    private let state: Locked<State>

    init(_ sink: sending any FrameSink, writer: OutputWriter) {
        let hold = PlayerOutputHold(sink, writer: writer, closedMessage: "the player's output was already completed or given up")
        self.sink = sink
        state = Locked(State(hold: hold))
    }

    var pixelFormat: OutputPixelFormat { sink.pixelFormat }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            try s.hold.checkWritable()
            if s.lastInfo?.size != info.size || s.lastInfo?.pixelFormat != info.pixelFormat {
                try sink.begin(info)
                s.lastInfo = info
            }
        }
    }

    func write(_ frame: VideoFrame) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            try s.hold.checkWritable()
            try sink.write(frame)
            if let position = frame.timelinePosition {
                // A frame that keeps the sound past it (a picture near its end, or paced with its
                // sound on a clock): nothing is cut for it.
                s.lastEnd = frame.keepsSoundPast ? nil : position + (frame.duration.isNumeric ? max(0, frame.duration.seconds) : 0)
            }
        }
    }

    /// Where the last frame written ends on the player's timeline (seconds), while its item's
    /// picture goes on: where a picture stopped short ends; nil once it reached its end.
    var lastEnd: Double? { state.withLock { $0.lastEnd } }

    /// The picture of the item written last reached its end (the sink is told too).
    func pictureEnded() {
        state.withLock { s in
            s.lastEnd = nil
            if (try? s.hold.checkWritable()) != nil { (sink as? any PictureEndFollowing)?.pictureEnded() }
        }
    }

    /// Completes the sink — unless another session, render or player is writing it (the player
    /// never wrote to it): then it is left to that writer.
    /// - Throws: `state.invalidState` for a sink another writer holds; the sink's error.
    func finish() throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            try s.hold.finish { () throws(PlayheadError) in try sink.finish() }
        }
    }

    /// Gives the sink up, unless another writer holds it.
    func abort() {
        state.withLock { s in s.hold.giveUp(onlyIfOpen: false) { sink.abort() } }
    }

    /// Gives the sink up unless its owner already finished or gave it up (a player let go of).
    func giveUpIfOpen() {
        state.withLock { s in s.hold.giveUp(onlyIfOpen: true) { sink.abort() } }
    }
}
