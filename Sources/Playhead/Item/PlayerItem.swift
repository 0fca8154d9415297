import PlayheadMedia

/// One thing to play: an ``Asset`` with its playback status and events.
///
/// An item plays in one player at a time (its status, time and counts are that player's): a
/// player that reaches an item another player holds reports it failed to itself
/// (``PlayerEvent/itemFailed(_:_:)`` with `state.invalidState`) and goes on, leaving the item as
/// the other player has it. A player lets the item go when it leaves its queue; to play one
/// asset in two players at once, give each a `PlayerItem` of its own.
///
/// ```swift
/// let item = PlayerItem(asset: Asset(path: "clip.mp4"))
/// item.addObserver(myObserver)          // gets .statusChanged(.unknown) first
/// for await event in item.events { … }  // or as an AsyncSequence
/// await item.prepare()                  // loads what it plays: readyToPlay, or failed
/// ```
public final class PlayerItem: Sendable {
    /// The asset this item was made of (with its own selection; the item plays
    /// ``playedAsset``, the same source with the item's ``selection``).
    public let asset: Asset

    private struct Guarded: Sendable {
        var state = PlayerItemState<ObjectIdentifier>()
        var observers: [ObjectIdentifier: WeakObserver] = [:]
        var duration = MediaTime.indefinite
        /// Where the asset's timeline ends (its start plus its duration), once ready.
        var end: MediaTime?
        var presentationSize: PixelSize?
        var currentTime = MediaTime.zero
        var damagedPackets = 0
        var firstDamage: PlayheadError?
        var framesPresented = 0
        var audioFramesPresented = 0
        var playedToEnd = false
        /// The player whose queue holds the item (from when it first starts it until the item
        /// leaves its queue, or its run ends after the player was let go of): an item plays in one
        /// player at a time. Held strongly, so its identity cannot pass to a new player.
        var player: OutputWriter?
    }

    private struct WeakObserver: Sendable {
        weak var observer: (any PlayerItemObserver)?
    }

    private let guarded = Locked(Guarded())

    /// The part of the asset this item plays; nil plays all of it.
    public let timeRange: TimeRange?

    /// The tracks this item plays: the sound, the HLS variant (as `AVPlayerItem`'s media
    /// selection). The asset's own (``AssetOptions/selection``) unless the item was given another.
    public let selection: MediaSelection

    /// What the item reads: ``asset``, or the same source with the item's ``selection``
    /// (``Asset/selecting(_:)``) when that differs from the asset's own. Its keys say what
    /// plays: `.tracks` (which are selected), `.unmetSelection` (why a sound cannot).
    public let playedAsset: Asset

    /// An item playing `asset`, or only `timeRange` of it (from its start, frame-exact, to its end),
    /// with the tracks `selection` chooses.
    ///
    /// ```swift
    /// let film = Asset(path: "film.mkv")
    /// let french = PlayerItem(asset: film, selection: MediaSelection(audio: .language("fra")))
    /// ```
    ///
    /// A selection is the item's for its life (as its time range is): to hear another sound from
    /// where this one stands, put an item with that selection in its place and seek the player
    /// to the old item's ``currentTime``.
    /// - Parameters:
    ///   - asset: the asset to play.
    ///   - timeRange: the part of it to play; nil: all of it.
    ///   - selection: the tracks to play; nil: the asset's own (``AssetOptions/selection``). A
    ///     sound the file does not have (no French track) fails the item with
    ///     `demux.trackNotFound` in a player that plays sound; one without an audio output
    ///     plays its picture (``playedAsset``'s ``AssetKey/unmetSelection`` says why). A source
    ///     read once (a pipe, standard input, a FIFO, a stream byte source) is read by the first
    ///     of the asset and the items with their own selection of it to open it; the others fail
    ///     with `state.invalidArgument` (give the selection in the asset's
    ///     ``AssetOptions/selection`` instead).
    public convenience init(asset: Asset, timeRange: TimeRange? = nil, selection: MediaSelection? = nil) {
        let chosen = selection ?? asset.selection
        self.init(asset: asset, timeRange: timeRange, selection: chosen, played: chosen == asset.selection ? asset : asset.selecting(chosen))
    }

    /// A copy of `template` (a looper's next pass) reading the same played asset: its loaded keys
    /// and idle demuxers reused, a source read once not opened again.
    /// - Parameters:
    ///   - template: the item copied.
    ///   - timeRange: the copy's time range.
    convenience init(copying template: PlayerItem, timeRange: TimeRange?) {
        self.init(asset: template.asset, timeRange: timeRange, selection: template.selection, played: template.playedAsset)
    }

    private init(asset: Asset, timeRange: TimeRange?, selection: MediaSelection, played: Asset) {
        self.asset = asset
        self.timeRange = timeRange
        self.selection = selection
        playedAsset = played
    }

    /// The current status.
    public var status: PlayerItemStatus { guarded.withLock { $0.state.status } }
    /// Where the asset's timeline ends (its start time plus its duration), once ready and known.
    var mediaEnd: MediaTime? { guarded.withLock { $0.end } }

    /// The item's duration, once ready (indefinite before).
    public var duration: MediaTime { guarded.withLock { $0.duration } }
    /// The displayed size of the video track, once ready (nil for audio-only items).
    public var presentationSize: PixelSize? { guarded.withLock { $0.presentationSize } }
    /// Where playback of this item stands.
    public var currentTime: MediaTime { guarded.withLock { $0.currentTime } }
    /// Damaged data decoded past while playing this item (see ``DecodeResult/damagedPackets``).
    public var damagedPackets: Int { guarded.withLock { $0.damagedPackets } }
    /// The first damage met while playing this item.
    public var firstDamage: PlayheadError? { guarded.withLock { $0.firstDamage } }
    /// Video frames of this item handed to the player's output.
    public var framesPresented: Int { guarded.withLock { $0.framesPresented } }
    /// Audio samples per channel of this item handed to the player's audio output.
    public var audioFramesPresented: Int { guarded.withLock { $0.audioFramesPresented } }
    /// Whether the item played to its end (it posted ``PlayerItemEvent/playedToEnd(at:)``).
    public var hasPlayedToEnd: Bool { guarded.withLock { $0.playedToEnd } }

    /// Loads what playback needs from the asset and moves to `readyToPlay`, or to `failed` with
    /// the asset's error (also when nothing in it is playable). Safe to call more than once.
    /// Cancelling the calling task ends the wait and leaves the item as it was.
    public func prepare() async {
        do {
            let description = try await playedAsset.loadDescription([.tracks, .duration, .isPlayable])
            if let reason = description.unplayableReason(file: playedAsset.source) {
                fail(reason)
                return
            }
            let (tracks, duration) = (description.tracks, description.duration)
            let size = tracks.first { $0.playsAsVideo && $0.isPlayable }?.presentationSize
            update { guarded in
                guarded.duration = duration
                guarded.end = duration.isNumeric && description.startTime.isNumeric ? description.startTime + duration : nil
                guarded.presentationSize = size
                _ = guarded.state.transition(to: .readyToPlay)
            }
        } catch {
            // A cancelled wait is the caller's, not the item's: the item stays as it was, ready to
            // be prepared again.
            if error.code == .cancelled, Task.isCancelled { return }
            fail(error)
        }
    }

    /// Registers an observer (held weakly). It first receives the current status.
    /// - Parameter observer: the object told of the item's events.
    public func addObserver(_ observer: any PlayerItemObserver) {
        update { guarded in
            let id = ObjectIdentifier(observer)
            guarded.observers[id] = WeakObserver(observer: observer)
            guarded.state.add(id)
        }
    }

    /// Stops delivering to an observer.
    /// - Parameter observer: an observer added with ``addObserver(_:)``.
    public func removeObserver(_ observer: any PlayerItemObserver) {
        update { guarded in
            let id = ObjectIdentifier(observer)
            guarded.observers[id] = nil
            guarded.state.remove(id)
        }
    }

    /// Every event from now on, starting with the current status, as an `AsyncSequence`. The
    /// stream ends when the consuming task stops iterating.
    public var events: AsyncStream<PlayerItemEvent> {
        let (stream, continuation) = AsyncStream<PlayerItemEvent>.makeStream(bufferingPolicy: .unbounded)
        let relay = StreamRelay(continuation: continuation)
        addObserver(relay)
        continuation.onTermination = { [weak self, relay] _ in self?.removeObserver(relay) }
        return stream
    }

    // MARK: Used by players

    /// Takes the item for `player`: its status, time and counts are that player's from here.
    /// - Parameter player: the player's identity.
    /// - Returns: `false` when another player holds the item.
    func claim(for player: OutputWriter) -> Bool {
        guarded.withLock { g in
            if let holder = g.player, holder !== player { return false }
            g.player = player
            return true
        }
    }

    /// Lets the item go from `player` (it left that player's queue): another may take it.
    /// - Parameter player: the player's identity.
    func release(from player: OutputWriter) {
        guarded.withLock { g in
            if g.player === player { g.player = nil }
        }
    }

    /// Marks the item failed (if it is not already) and tells observers.
    func fail(_ error: PlayheadError) {
        update { _ = $0.state.transition(to: .failed(error)) }
    }

    /// Posts an event to the observers (status changes go through the state rules instead).
    func post(_ event: PlayerItemEvent) {
        update { guarded in
            if case .timeJumped(_, let to) = event { guarded.currentTime = to }
            if case .playedToEnd(let at) = event {
                guarded.currentTime = at
                guarded.playedToEnd = true
            }
            guarded.state.post(event)
        }
    }

    /// Counts damaged data decoded past while playing the item.
    func noteDamage(_ count: Int, first: PlayheadError?) {
        guarded.withLock {
            $0.damagedPackets += count
            $0.firstDamage = $0.firstDamage ?? first
        }
    }

    /// Sets the current time without an event (normal progress).
    func setCurrentTime(_ time: MediaTime) {
        guarded.withLock { $0.currentTime = time }
    }

    /// Counts a video frame handed to the output, and moves the current time to it.
    func notePresented(frameAt time: MediaTime) {
        guarded.withLock {
            $0.framesPresented += 1
            $0.currentTime = time
        }
    }

    /// Counts audio samples handed to the output.
    func notePresented(audioFrames: Int) {
        guarded.withLock { $0.audioFramesPresented += audioFrames }
    }

    /// Changes state under the lock, then delivers whatever is queued outside it.
    private func update(_ change: (inout Guarded) -> Void) {
        var batch = guarded.withLock { g -> [(event: PlayerItemEvent, to: [ObjectIdentifier])]? in
            change(&g)
            return g.state.beginDelivery()
        }
        while let current = batch {
            for (event, ids) in current {
                for id in ids {
                    // Looked up per event so that an observer removed or released meanwhile gets nothing.
                    let observer = guarded.withLock { g -> (any PlayerItemObserver)? in
                        guard g.state.observers.contains(id) else { return nil }
                        if let live = g.observers[id]?.observer { return live }
                        g.observers[id] = nil
                        g.state.remove(id)
                        return nil
                    }
                    observer?.playerItem(self, didReceive: event)
                }
            }
            batch = guarded.withLock { $0.state.continueDelivery() }
        }
    }
}

/// Forwards an item's events into an `AsyncStream`.
private final class StreamRelay: PlayerItemObserver {
    let continuation: AsyncStream<PlayerItemEvent>.Continuation

    init(continuation: AsyncStream<PlayerItemEvent>.Continuation) {
        self.continuation = continuation
    }

    func playerItem(_ item: PlayerItem, didReceive event: PlayerItemEvent) {
        continuation.yield(event)
    }
}
