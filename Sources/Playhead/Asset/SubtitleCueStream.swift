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

    private let state: Locked<PullQueueState<SubtitleCue>>
    /// Signalled when the consumer takes a cue or leaves while the read waits for room.
    private let room = DispatchSemaphore(value: 0)
    /// Raised when the consumer is gone: the read stops where it is.
    private let stop = InterruptFlag()
    private let facts = Locked<SubtitleTrack?>(nil)
    /// What the read is, until the first `next()` starts it (nil afterwards).
    private let unstarted: Locked<(asset: Asset, choice: TrackChoice, pictures: Bool)?>
    private let completed = Locked(false)

    /// A stream of `choice` of `asset`, read once iterated.
    /// - Parameter bufferingLimit: cues that may wait (held to 1…256).
    init(_ asset: Asset, choice: TrackChoice, pictures: Bool, bufferingLimit: Int) {
        state = Locked(PullQueueState(limit: Swift.min(Swift.max(bufferingLimit, 1), 256)))
        unstarted = Locked((asset, choice, pictures))
    }

    deinit {
        // Nobody can iterate any more: the read stops and gives its thread back.
        stop.raise()
        state.withLock { $0.end() }?.resume(returning: .end)
        room.signal()
    }

    /// The track read (its index, the damage passed over, a bitmap track's canvas size) once the
    /// read has ended; ``SubtitleTrack/cues`` is empty (they came through the sequence).
    public var track: SubtitleTrack? { facts.withLock { $0 } }

    /// Whether the consumer has taken every cue of the track (the loop reached the track's end,
    /// neither cancelled nor failed): false after a loop that a cancel or a failure ended.
    public var isComplete: Bool { completed.withLock { $0 } }

    /// Whether the read is over: at the track's end, failed, or stopped because the consumer left.
    var readHasEnded: Bool { state.withLock { $0.hasEnded } }

    /// Starts the read on a worker thread, the first time it is called.
    fileprivate func startOnce() {
        guard
            let (asset, choice, pictures) = unstarted.withLock({ read in
                defer { read = nil }
                return read
            })
        else { return }
        let (state, room, stop, facts) = (self.state, self.room, self.stop, self.facts)
        WorkerPool.shared.run("playhead.subtitles") {
            let result: Result<SubtitleTrack, PlayheadError>
            do throws(PlayheadError) {
                let demuxer = try asset.openDemuxer(interrupt: stop)
                defer { asset.giveBack(demuxer) }
                result = .success(
                    try SubtitleTrackReader.read(choice, demuxer: demuxer, pictures: pictures) { (cue) throws(PlayheadError) in
                        try Self.offer(cue, state: state, room: room, stop: stop, file: demuxer.source)
                    })
            } catch {
                result = .failure(error)
            }
            if case .success(let track) = result { facts.withLock { $0 = track } }
            let failure: PlayheadError? = if case .failure(let error) = result, !stop.isRaised { error } else { nil }
            state.withLock { $0.end(failure: failure) }?.resume(returning: .end)
        }
    }

    /// Hands `cue` to the consumer, waiting while the queue is full.
    /// - Throws: `state.cancelled` once the consumer is gone (the read stops).
    private static func offer(
        _ cue: SubtitleCue, state: Locked<PullQueueState<SubtitleCue>>, room: DispatchSemaphore, stop: InterruptFlag, file: String
    ) throws(PlayheadError) {
        while true {
            if stop.isRaised { throw .cancelled(file: file) }
            switch state.withLock({ $0.offer(cue) }) {
            case .queued:
                return
            case .handOver(let continuation):
                continuation.resume(returning: .element(cue))
                return
            case .dropped:
                stop.raise()
                throw .cancelled(file: file)
            case .full:
                _ = room.wait(timeout: .now() + .milliseconds(50))
            }
        }
    }

    // MARK: AsyncSequence

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self, consumer: Consumer(stream: self, id: state.withLock { $0.startConsumer() }))
    }

    /// The one consumer's iterator. Not `Sendable`: it is used by the task that iterates.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: SubtitleCueStream
        let consumer: Consumer

        /// The next cue, waiting for it when none is queued.
        /// - Returns: the cue, or nil at the end of the track, when the calling task is cancelled
        ///   (the read then stops), or for an iterator that is not the stream's consumer.
        /// - Throws: the read's failure, once, after the cues read before it.
        public mutating func next() async throws(PlayheadError) -> SubtitleCue? {
            let id = consumer.id
            if id != nil { stream.startOnce() }
            let answer = await cancellableWait(stream.state, cancelled: PullQueueState<SubtitleCue>.Pull.end) { state, key, continuation in
                if let now = state.next(consumer: id) { return now }
                state.wait(key: key, continuation: continuation)
                return nil
            } unregister: { state, key in
                state.cancelWait(key: key)
            }
            switch answer {
            case .element(let cue):
                stream.wakeProducerIfWaiting()
                return cue
            case .end:
                if Task.isCancelled, let id {
                    stream.state.withLock { $0.consumerGone(id) }
                    stream.stop.raise()
                }
                stream.wakeProducerIfWaiting()
                guard id != nil else { return nil }
                if let failure = stream.state.withLock({ $0.takeFailure() }) { throw failure }
                // Every cue taken: the read reached the track's end (its facts are there) and this
                // loop was not cut off by a cancel.
                if !Task.isCancelled, stream.track != nil { stream.completed.withLock { $0 = true } }
                return nil
            }
        }
    }

    /// Ends the consumer (and the read) when its iterator, every copy of it, is dropped.
    final class Consumer: Sendable {
        let stream: SubtitleCueStream
        let id: UInt64?

        init(stream: SubtitleCueStream, id: UInt64?) {
            self.stream = stream
            self.id = id
        }

        deinit {
            guard let id else { return }
            stream.state.withLock { $0.consumerGone(id) }
            stream.stop.raise()
            stream.room.signal()
        }
    }

    /// Wakes a read that waits for room, once (no wake-ups pile up while none waits).
    private func wakeProducerIfWaiting() {
        if state.withLock({ $0.takeProducerWake() }) { room.signal() }
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
