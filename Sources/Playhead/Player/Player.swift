/// Plays one item at a time into an output sink (and its audio into an audio sink, when given):
/// play, pause, rate, seek, a playback clock, and what to do at the item's end (`.pause` by
/// default). ``QueuePlayer`` plays several in sequence.
public final class Player: Sendable {
    private let queue: QueuePlayer

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
    public func replaceCurrentItem(with item: PlayerItem?) {
        queue.removeAllItems()
        if let item { queue.insert(item, after: nil) }
    }

    public func play() { queue.play() }
    public func pause() { queue.pause() }

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

    @discardableResult
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .zero, toleranceAfter: MediaTime = .zero) async -> MediaTime? {
        await queue.seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter)
    }

    @discardableResult
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        queue.addPeriodicTimeObserver(forInterval: interval, using: block)
    }

    public func removeTimeObserver(_ token: TimeObserverToken) { queue.removeTimeObserver(token) }

    /// Returns once the item ended (or the player is empty), or once the waiting task is cancelled.
    public func waitUntilIdle() async { await queue.waitUntilIdle() }

    public func finishOutput() throws(PlayheadError) { try queue.finishOutput() }
}
