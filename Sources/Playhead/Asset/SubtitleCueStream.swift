import Dispatch
import PlayheadMedia

/// The cues of one subtitle track, as an `AsyncSequence` with back-pressure, read as the loop
/// takes them (``Asset/subtitleCues(_:pictures:bufferingLimit:)``): a track of pictures (a film's
/// PGS subtitles) is never held whole, only `bufferingLimit` cues and the one being read.
///
/// ```swift
/// for try await cue in asset.subtitleCues(pictures: true) {
///     for picture in cue.pictures { try save(picture.pngData(), at: picture.rect) }
/// }
/// ```
///
/// The read starts at the first `next()`, on one of Playhead's worker threads, and waits while
/// `bufferingLimit` cues are waiting (a stream never iterated holds no thread). The sequence ends after the last cue, or throws the read's
/// failure (`demux.trackNotFound`, `io.truncated`, …) once the cues read before it have been
/// taken. Dropping the iterator, cancelling the task that iterates or letting go of the stream
/// stops the read. One consumer: another iterator ends at once.
public final class SubtitleCueStream: AsyncSequence, Sendable {
    public typealias Element = SubtitleCue
    public typealias Failure = PlayheadError

    private let queue: PullQueue<SubtitleCue>
    /// Raised when the consumer is gone: the read stops where it is.
    private let stop = InterruptFlag()
    private let facts = Locked<SubtitleTrack?>(nil)
    /// What the read is, until the first `next()` starts it (nil afterwards).
    private let unstarted: Locked<(asset: Asset, choice: TrackChoice, pictures: Bool)?>
    private let completed = Locked(false)

    /// A stream of `choice` of `asset`, read once iterated.
    /// - Parameter bufferingLimit: cues that may wait (held to 1…256).
    init(_ asset: Asset, choice: TrackChoice, pictures: Bool, bufferingLimit: Int) {
        queue = PullQueue(limit: Swift.min(Swift.max(bufferingLimit, 1), 256))
        unstarted = Locked((asset, choice, pictures))
    }

    deinit {
        // Nobody can iterate any more: the read stops and gives its thread back.
        stop.raise()
        queue.end()
        queue.wakeProducerIfWaiting()
    }

    /// The track read (its index, the damage passed over, a bitmap track's canvas size) once the
    /// read has ended; ``SubtitleTrack/cues`` is empty (they came through the sequence).
    public var track: SubtitleTrack? { facts.withLock { $0 } }

    /// Whether the consumer has taken every cue of the track (the loop reached the track's end,
    /// neither cancelled nor failed): false after a loop that a cancel or a failure ended.
    public var isComplete: Bool { completed.withLock { $0 } }

    /// Whether the read is over: at the track's end, failed, or stopped because the consumer left.
    var readHasEnded: Bool { queue.state.withLock { $0.hasEnded } }

    /// Starts the read on a worker thread, the first time it is called.
    fileprivate func startOnce() {
        guard
            let (asset, choice, pictures) = unstarted.withLock({ read in
                defer { read = nil }
                return read
            })
        else { return }
        let (queue, stop, facts) = (self.queue, self.stop, self.facts)
        WorkerPool.shared.run("playhead.subtitles") {
            let result: Result<SubtitleTrack, PlayheadError>
            do throws(PlayheadError) {
                let demuxer = try asset.openDemuxer(interrupt: stop)
                defer { asset.giveBack(demuxer) }
                result = .success(
                    try SubtitleTrackReader.read(choice, demuxer: demuxer, pictures: pictures) { (cue) throws(PlayheadError) in
                        // Waits while the queue is full; a consumer gone stops the read.
                        guard !stop.isRaised, case .taken = queue.offer(cue, poll: .milliseconds(50), giveUp: { stop.isRaised }) else {
                            stop.raise()
                            throw .cancelled(file: demuxer.source)
                        }
                    })
            } catch {
                result = .failure(error)
            }
            if case .success(let track) = result { facts.withLock { $0 = track } }
            let failure: PlayheadError? = if case .failure(let error) = result, !stop.isRaised { error } else { nil }
            queue.end(failure: failure)
        }
    }

    // MARK: AsyncSequence

    public func makeAsyncIterator() -> AsyncIterator {
        let (queue, stop) = (self.queue, self.stop)
        let consumer = PullQueue<SubtitleCue>.Consumer(id: queue.startConsumer()) { id in
            queue.consumerGone(id)
            stop.raise()
        }
        return AsyncIterator(stream: self, consumer: consumer)
    }

    /// The one consumer's iterator. Not `Sendable`: it is used by the task that iterates.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: SubtitleCueStream
        let consumer: PullQueue<SubtitleCue>.Consumer

        /// The next cue, waiting for it when none is queued.
        /// - Returns: the cue, or nil at the end of the track, when the calling task is cancelled
        ///   (the read then stops), or for an iterator that is not the stream's consumer.
        /// - Throws: the read's failure, once, after the cues read before it.
        public mutating func next() async throws(PlayheadError) -> SubtitleCue? {
            guard consumer.id != nil else { return nil }
            stream.startOnce()
            if let cue = await stream.queue.next(consumer: consumer.id) { return cue }
            if Task.isCancelled {
                stream.stop.raise()
                return nil
            }
            if let failure = stream.queue.takeFailure() { throw failure }
            // Every cue taken: the read reached the track's end (its facts are there).
            if stream.track != nil { stream.completed.withLock { $0 = true } }
            return nil
        }
    }
}

extension Asset {
    /// The cues of one of the asset's subtitle tracks, read as they are taken: text cues as
    /// ``subtitles(_:)`` gives them, and a bitmap track's (PGS, DVB, DVD) with their pictures and
    /// places when `pictures` is true (``SubtitleCue/pictures``, on the canvas of
    /// ``SubtitleCueStream/track``'s ``SubtitleTrack/canvasSize``), on the asset's timeline.
    /// - Parameters:
    ///   - choice: the track: ``TrackChoice/default``, an index, or a language.
    ///   - pictures: whether a bitmap cue carries its pictures (each is converted to RGBA).
    ///   - bufferingLimit: cues read ahead of the loop at most (1…256).
    /// - Returns: the sequence; its read begins with the first `next()`.
    public nonisolated func subtitleCues(_ choice: TrackChoice = .default, pictures: Bool = false, bufferingLimit: Int = 8) -> SubtitleCueStream {
        SubtitleCueStream(self, choice: choice, pictures: pictures, bufferingLimit: bufferingLimit)
    }
}
