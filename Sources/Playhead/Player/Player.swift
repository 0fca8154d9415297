import PlayheadMedia

/// Plays one item at a time into an output sink (and its audio into an audio sink, when given):
/// play, pause, rate, seek, a playback clock, and what to do at the item's end (`.pause` by
/// default). ``QueuePlayer`` plays several in sequence.
public final class Player: Sendable {
    private let queue: QueuePlayer

    /// A player of `item` (or of nothing yet) into `output`, that pauses at the item's end.
    /// - Parameters:
    ///   - item: the item to play; nil: none until ``replaceCurrentItem(with:)``.
    ///   - output: where presented frames go; the player owns it from here.
    ///   - audioOutput: where the item's audio goes; nil: the audio is not decoded.
    ///   - configuration: realtime pacing, decoding and the audio format.
    ///   - clock: the clock realtime playback is paced on.
    public init(
        item: PlayerItem? = nil, output: sending some FrameSink, audioOutput: (any AudioSink)? = nil,
        configuration: PlayerConfiguration = PlayerConfiguration(), clock: any PlaybackClock = SystemPlaybackClock()
    ) {
        queue = QueuePlayer(
            items: item.map { [$0] } ?? [], output: output, audioOutput: audioOutput, configuration: configuration,
            clock: clock, actionAtItemEnd: .pause)
    }

    public var currentItem: PlayerItem? { queue.currentItem }

    /// Replaces the current item (nil empties the player).
    /// - Parameter item: the item to play; nil empties the player.
    public func replaceCurrentItem(with item: PlayerItem?) {
        queue.removeAllItems()
        if let item { queue.insert(item, after: nil) }
    }

    /// Plays (rate 1).
    public func play() { queue.play() }
    /// Pauses (rate 0).
    public func pause() { queue.pause() }

    /// The current item's time now (``QueuePlayer/currentTime()``).
    /// - Returns: the item time; `.invalid` without a current item.
    public func currentTime() -> MediaTime { queue.currentTime() }

    public var rate: Double {
        get { queue.rate }
        set { queue.rate = newValue }
    }

    public var timeControlStatus: TimeControlStatus { queue.timeControlStatus }

    public var actionAtItemEnd: ActionAtItemEnd {
        get { queue.actionAtItemEnd }
        set { queue.actionAtItemEnd = newValue }
    }

    public var statistics: PlaybackStatistics { queue.statistics }
    public var events: AsyncStream<PlayerEvent> { queue.events }

    /// Moves the current item to `time`, in place, as ``QueuePlayer/seek(to:toleranceBefore:toleranceAfter:)`` does.
    /// - Parameters:
    ///   - time: where to go, on the item's timeline.
    ///   - toleranceBefore: how much earlier the first frame may be.
    ///   - toleranceAfter: how much later the first frame may be.
    /// - Returns: the time of the first frame shown from there; nil when there is no item, a newer seek superseded
    ///   this one, or nothing is left to show.
    @discardableResult
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .zero, toleranceAfter: MediaTime = .zero) async -> MediaTime? {
        await queue.seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter)
    }

    /// Calls `block` with the item's time every `interval` of media time while frames are presented, as
    /// ``QueuePlayer/addPeriodicTimeObserver(forInterval:using:)`` does.
    /// - Parameters:
    ///   - interval: the media time between two calls.
    ///   - block: called, on a presentation thread, with the time of the frame presented.
    /// - Returns: a token for ``removeTimeObserver(_:)``.
    @discardableResult
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        queue.addPeriodicTimeObserver(forInterval: interval, using: block)
    }

    /// Stops calling a periodic time observer.
    /// - Parameter token: what ``addPeriodicTimeObserver(forInterval:using:)`` returned.
    public func removeTimeObserver(_ token: TimeObserverToken) { queue.removeTimeObserver(token) }

    /// Returns once the item ended (or the player is empty), or once the waiting task is cancelled.
    public func waitUntilIdle() async { await queue.waitUntilIdle() }

    /// Completes the outputs once playing is over (a Y4M or WAV file gets its end and is renamed
    /// into place; a ``FrameStream``'s consumer gets the end after the last frame).
    /// Blocks the calling thread while the files are completed (an MP4 is copied into its final
    /// form): from async code, `try await finishOutput()`.
    /// - Throws: ``PlayheadError`` when an output cannot be completed (`output.writeFailed`, …);
    ///   `state.invalidState` for an output another session, render or player holds.
    @available(*, noasync, message: "blocks while the outputs are completed: use `try await finishOutput()`")
    public func finishOutput() throws(PlayheadError) { try queue.finishOutputNow() }

    /// Completes the outputs, as `finishOutput()` does, on a worker thread: what an async caller
    /// uses, since writing a file's end blocks. Asked for by a task that is cancelled, the
    /// outputs are completed all the same.
    /// - Throws: ``PlayheadError``, as `finishOutput()`.
    public func finishOutput() async throws(PlayheadError) { try await queue.finishOutput() }

    /// Gives the outputs up: a Y4M, MP4 or WAV file keeps what was written as a valid, shorter
    /// file marked partial; a ``FrameStream``'s consumer gets the end after the frames queued.
    public func abortOutput() { queue.abortOutput() }
}
