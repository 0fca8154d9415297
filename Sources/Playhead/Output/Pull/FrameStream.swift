import Dispatch
import PlayheadMedia

/// Every presented frame, as an `AsyncSequence` with back-pressure: give it to a ``Player``,
/// ``QueuePlayer`` or ``DecodeSession`` as the output and iterate it.
///
/// ```swift
/// let stream = FrameStream(pixelFormat: .yuv420p, bufferingLimit: 4)
/// async let result = DecodeSession(asset: asset).run(into: stream)
/// for await frame in stream { try await upload(frame) }
/// ```
///
/// Frames queue from the start (none is lost before the loop begins); once `bufferingLimit`
/// wait, the producer waits for the consumer — a session decodes no faster than it is read, and a
/// realtime player's frames then come late and are dropped and counted
/// (``PlaybackStatistics/framesDropped``). Read the stream while the producer runs (`async let`,
/// or another task): waiting for a session or a player to end before reading would wait for ever.
/// Each frame held costs its size (`bufferingLimit` + 1 frames at most).
///
/// The producer never waits for a frame nobody wants: a seek, a skip, a stopped session or a
/// cancelled composition frees it. The frames already queued stay, so after a seek up to
/// `bufferingLimit` frames from before it come first. ``Compositor/stop()`` lets the consumer take
/// the frames already made before the sequence ends.
///
/// One producer, one consumer. The first iterator gets the frames; another one made while it
/// lives, or after it, ends at once. The sequence ends after the last frame: the session's end,
/// `Player/finishOutput()` or ``Player/abortOutput()`` (a finish and a give-up look the same here:
/// the session's result or the player's item tells which); with a player, only those end it, or
/// the app letting go of the player.
/// Once ended, it stays ended. Dropping the iterator, or cancelling the task that iterates, ends
/// the consumer: later frames are dropped and the producer never waits again.
public final class FrameStream: FrameSink, AsyncSequence, Sendable {
    public typealias Element = CapturedFrame
    public typealias Failure = Never

    public let pixelFormat: OutputPixelFormat
    private let queue: PullQueue<CapturedFrame>
    private let info = Locked<FrameStreamInfo?>(nil)

    /// - Parameters:
    ///   - pixelFormat: the layout frames are converted to (rgb24 by default).
    ///   - bufferingLimit: frames that may wait for the consumer before the producer waits
    ///     (1…64; values outside are held to the range).
    public init(pixelFormat: OutputPixelFormat = .rgb24, bufferingLimit: Int = 4) {
        self.pixelFormat = pixelFormat
        queue = PullQueue(limit: Swift.min(Swift.max(bufferingLimit, 1), 64))
    }

    /// Frames waiting for the consumer now.
    public var bufferedFrameCount: Int { queue.state.withLock { $0.queue.count } }

    /// What the latest stream of frames is (size, layout, rate), once the first has begun.
    public var streamInfo: FrameStreamInfo? { info.withLock { $0 } }

    // MARK: AsyncSequence

    public func makeAsyncIterator() -> AsyncIterator {
        let queue = self.queue
        return AsyncIterator(queue: queue, consumer: PullQueue.Consumer(id: queue.startConsumer()) { queue.consumerGone($0) })
    }

    /// The one consumer's iterator. Not `Sendable`: it is used by the task that iterates (a copy
    /// that calls `next()` while another copy waits gets nil).
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: PullQueue<CapturedFrame>
        let consumer: PullQueue<CapturedFrame>.Consumer

        /// The next frame, waiting for it when none is queued.
        /// - Returns: the frame, or nil at the end of the stream, when the calling task is cancelled
        ///   (the consumer then leaves for good), or for an iterator that is not the stream's consumer.
        public mutating func next() async -> CapturedFrame? {
            await queue.next(consumer: consumer.id)
        }
    }

    // MARK: FrameSink

    /// Notes the frames' description (``streamInfo``).
    /// - Parameter info: the frames' description.
    /// - Throws: never.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        self.info.withLock { $0 = info }
    }

    /// Queues a copy of the frame for the consumer, or hands it to the consumer waiting for it. While
    /// `bufferingLimit` frames wait, it waits for room, unless the frame is abandoned (a seek superseded it, or its
    /// session stopped). A frame nobody will take (the consumer is gone, or the stream ended) is dropped.
    /// - Parameter frame: the frame presented.
    /// - Throws: never.
    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        guard queue.state.withLock({ $0.isOpen }) else { return }
        // Nothing waits for a frame a seek superseded or a stopped session made.
        _ = queue.offer(CapturedFrame(copying: frame), poll: .milliseconds(10)) { frame.isAbandoned }
    }

    /// Ends the stream: the consumer gets the frames queued, then the end.
    /// - Throws: never.
    public func finish() throws(PlayheadError) { queue.end() }

    /// Ends the stream, as ``finish()`` does: the consumer gets the frames queued, then the end.
    public func abort() { queue.end() }
}
