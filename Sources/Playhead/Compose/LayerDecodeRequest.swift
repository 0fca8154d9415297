import Dispatch
import PlayheadMedia

/// When a realtime render's frame is due on its clock: a layer whose picture is not decoded by
/// then holds its last one, and the frame leaves on time.
struct FrameDeadline {
    let clock: any PlaybackClock
    /// The clock time a layer may wait for its picture until.
    let due: Duration

    var hasPassed: Bool { clock.now() > due }
}

/// One decode of a realtime layer's current item, on a worker thread: its reader positioned for
/// `target` and the frame displayed then (``MediaReader/seek(to:)``, ``MediaReader/selectedFrame()``).
/// The render thread waits for it until its frame is due; past that the layer holds its last
/// picture, and the request goes on (a source that stalls holds a worker, never the channel).
/// A later frame shows its picture once it has ended (never waiting for it again); an item
/// closed meanwhile leaves the worker to let go of its reader when the decode ends.
///
/// `@unchecked Sendable` is safe because the reader (and the frame it answers with) is touched by
/// one thread at a time: the worker from `start()` until it records that it finished, under the
/// lock; the render thread only after it has seen that (``isFinished``, or a `wait` that returned
/// true), and it sends no second request for a reader while one is out. The closure left by
/// ``abandon(then:)`` runs exactly once, on whichever thread sees the other side done.
final class LayerDecodeRequest: @unchecked Sendable {
    typealias Held = DisplayedFrameWindow<OwnedFrame>.Held

    let target: MediaTime
    /// When it was sent, on the machine's monotonic clock (as a source's stall timeout is
    /// counted, whatever clock paces the render); nil: not in a realtime render.
    let sentAt: ContinuousClock.Instant?
    /// The reader's damage count once positioned, before the frame was decoded (what it met
    /// after is counted): set by the worker, read once the decode ended.
    private(set) var damageBefore: Int
    private let reader: MediaReader
    private let finished = DispatchSemaphore(value: 0)

    private enum Phase {
        case running
        case done(Result<Held?, PlayheadError>)
        case abandoned(() -> Void)
    }
    private let phase = Locked(Phase.running)

    init(reader: MediaReader, target: MediaTime, sentAt: ContinuousClock.Instant? = nil) {
        self.reader = reader
        self.target = target
        self.sentAt = sentAt
        damageBefore = reader.damage.count
    }

    /// Decodes on a worker thread.
    func start() {
        WorkerPool.shared.run("playhead.layer-decode") { [self] in
            let result = Result { () throws(PlayheadError) -> Held? in
                let decoded = try Self.decode(reader, to: target)
                damageBefore = decoded.damageBefore
                return decoded.frame
            }
            let leftBehind = phase.withLock { phase -> (() -> Void)? in
                if case .abandoned(let cleanup) = phase { return cleanup }
                phase = .done(result)
                return nil
            }
            leftBehind?()
            finished.signal()
        }
    }

    /// A layer's decode of the frame displayed at `target`, on the calling thread (a render's, or
    /// a request's worker): the reader positioned, then its selected frame.
    /// - Returns: the frame (nil: none to show), and the reader's damage count once positioned
    ///   (what it met decoding the frame is counted against it).
    /// - Throws: what positioning or decoding threw.
    static func decode(_ reader: MediaReader, to target: MediaTime) throws(PlayheadError) -> (frame: Held?, damageBefore: Int) {
        try reader.seek(to: SeekRequest(time: target))
        let damageBefore = reader.damage.count
        return (try reader.selectedFrame(), damageBefore)
    }

    /// Whether the decode has ended (its answer can be read, the reader is the render thread's).
    var isFinished: Bool {
        phase.withLock {
            if case .done = $0 { return true }
            return false
        }
    }

    /// Waits until the decode ends or `deadline` passes (nil: until it ends).
    /// - Returns: whether it ended.
    func wait(until deadline: FrameDeadline?) -> Bool {
        while !isFinished {
            var slice = Duration.milliseconds(50)
            if let deadline {
                // Woken by the decode's end, or when the deadline comes (on a clock other than
                // the machine's, looked at again at least every 50 ms).
                let left = deadline.due - deadline.clock.now()
                if left < .zero { return false }
                slice = min(slice, left + .microseconds(100))
            }
            _ = finished.wait(timeout: .now() + slice.seconds)
        }
        return true
    }

    /// The frame decoded (nil: none to show), once finished.
    /// - Throws: what the decode threw.
    func answer() throws(PlayheadError) -> Held? {
        let result = phase.withLock { phase -> Result<Held?, PlayheadError>? in
            if case .done(let result) = phase { return result }
            return nil
        }
        guard let result else { throw PlayheadError(code: .invalidState, message: "a layer's decode was read before it ended") }
        return try result.get()
    }

    /// The render thread lets go of the reader: `cleanup` (which gives it back) runs now when the
    /// decode has ended, else on the worker when it does.
    func abandon(then cleanup: @escaping () -> Void) {
        let now = phase.withLock { phase -> Bool in
            if case .done = phase { return true }
            phase = .abandoned(cleanup)
            return false
        }
        if now { cleanup() }
    }
}
