import PlayheadMedia

/// Frames pulled into an app's own render loop, the way `AVPlayerItemVideoOutput` hands pixel
/// buffers: give it to a ``Player``, ``QueuePlayer`` or ``DecodeSession`` as the output, and ask
/// it, whenever the loop draws, for the frame to show at an item time.
///
/// ```swift
/// let output = VideoOutput(pixelFormat: .rgb24)
/// let player = Player(item: PlayerItem(asset: asset), output: output)
/// player.play()  // keep `player` (a property) for as long as it should play
/// // In the render loop, at each tick: the item time the player shows now
/// // (or at the host time the picture will be on screen: `itemTime(forHostTime:)`).
/// if let now = output.currentItemTime, output.hasNewFrame(forItemTime: now), let frame = output.copyFrame(forItemTime: now) {
///     draw(frame.planes[0], frame.size)
/// }
/// ```
///
/// It never holds the player back: it keeps the last `keptFrames` frames presented (a player
/// presents each at its time; in realtime, a frame that comes too late is dropped before it gets
/// here) and drops older ones. ``copyFrame(forItemTime:)`` returns the same frame for as long as it
/// is the one to show; ``hasNewFrame(forItemTime:)`` tells each frame once. One render loop per
/// output: a second one's asks drop frames the first still wants. It is `Sendable`, so the app
/// keeps using it after handing it to a player. For every frame, with back-pressure, use
/// ``FrameStream``.
public final class VideoOutput: FrameSink, Sendable {
    public let pixelFormat: OutputPixelFormat
    private struct State {
        var window: LatestFrameWindow
        var info: FrameStreamInfo?
        var finished = false
        /// The timeline of the realtime player it was given to, if any.
        var timeline: PlaybackTimeline?
    }
    private let state: Locked<State>

    /// - Parameters:
    ///   - pixelFormat: the layout frames are converted to (rgb24 by default).
    ///   - keptFrames: how many of the latest frames are kept for a render loop that asks for a
    ///     time a little behind the newest (1…64; values outside are held to the range).
    public init(pixelFormat: OutputPixelFormat = .rgb24, keptFrames: Int = 4) {
        self.pixelFormat = pixelFormat
        state = Locked(State(window: LatestFrameWindow(capacity: min(max(keptFrames, 1), 64))))
    }

    /// Whether a frame to show at `time` has come that ``copyFrame(forItemTime:)`` has not handed out.
    /// - Parameter time: an item time (a frame's ``CapturedFrame/itemTime`` scale).
    /// - Returns: `true` when the newest frame at or before `time` is new to the caller.
    public func hasNewFrame(forItemTime time: MediaTime) -> Bool {
        state.withLock { $0.window.hasNewFrame(forItemTime: time) }
    }

    /// The frame to show at an item time: the newest presented frame whose time is at or before
    /// it. Frames before it are dropped (a render loop's time moves forward).
    /// - Parameter time: an item time; `.positiveInfinity` asks for the newest frame.
    /// - Returns: the frame, or nil when every kept frame is later than `time` (none has come yet,
    ///   or the time asked for is behind what was kept) or `time` is invalid.
    public func copyFrame(forItemTime time: MediaTime) -> CapturedFrame? {
        state.withLock { $0.window.frame(forItemTime: time) }
    }

    /// The item time the player shows at a time of its clock, as `AVPlayerItemVideoOutput`'s
    /// `itemTime(forHostTime:)`: what a render loop asks ``copyFrame(forItemTime:)`` for at the
    /// time its picture will be on screen. Past frames follow the clock at the player's rate;
    /// paused, the time stands still; at the end of an item that stays current
    /// (`actionAtItemEnd` `.pause` or `.none`), it stands at the item's end until a seek.
    /// - Parameter hostTime: a time of the player's ``PlaybackClock`` (``PlaybackClock/now()``;
    ///   for ``SystemPlaybackClock``, `CLOCK_MONOTONIC`), now or to come.
    /// - Returns: the item time; nil unless the output was given to a realtime ``Player`` or
    ///   ``QueuePlayer`` that has shown a frame (after a seek or at a new item: until its first).
    public func itemTime(forHostTime hostTime: Duration) -> MediaTime? {
        let timeline = state.withLock { $0.timeline }
        return timeline?.itemTime(atHostTime: hostTime).map { MediaTime(seconds: $0) }
    }

    /// The item time the player shows now (``itemTime(forHostTime:)`` at its clock's time now).
    public var currentItemTime: MediaTime? {
        guard let timeline = state.withLock({ $0.timeline }) else { return nil }
        return timeline.itemTime(atHostTime: timeline.clock.now()).map { MediaTime(seconds: $0) }
    }

    /// Follows `timeline` for ``itemTime(forHostTime:)``: the player it was given to (the last).
    func follow(_ timeline: PlaybackTimeline) {
        state.withLock { $0.timeline = timeline }
    }

    /// The newest frame presented, if any.
    public var latestFrame: CapturedFrame? { state.withLock { $0.window.latest } }

    /// What the latest stream of frames is (size, layout, rate), once the first has begun.
    public var streamInfo: FrameStreamInfo? { state.withLock { $0.info } }

    /// `true` once the player or session ended its output — finished or gave it up
    /// (`Player/finishOutput()`, ``Player/abortOutput()``, the player let go of, the end of a
    /// ``DecodeSession``); `false` again when a new frame comes. An output belongs to one player
    /// or session: a player let go of gives it up on a worker thread, moments later.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Notes the frames' description (``streamInfo``); ``isFinished`` is `false` again.
    /// - Parameter info: the frames' description.
    /// - Throws: never.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        state.withLock {
            $0.info = info
            $0.finished = false
        }
    }

    /// Keeps a copy of the frame among the latest; the oldest beyond `keptFrames` is dropped, and a frame earlier
    /// than the newest, or of another source, starts the kept frames afresh.
    /// - Parameter frame: the frame presented.
    /// - Throws: never.
    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        let copy = CapturedFrame(copying: frame)
        state.withLock {
            $0.window.receive(copy)
            $0.finished = false
        }
    }

    /// Marks the output finished (``isFinished``); the frames kept stay.
    /// - Throws: never.
    public func finish() throws(PlayheadError) { state.withLock { $0.finished = true } }

    /// Marks the output ended (``isFinished``); the frames kept stay.
    public func abort() { state.withLock { $0.finished = true } }
}
