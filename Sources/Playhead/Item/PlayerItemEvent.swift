import PlayheadMedia

/// Where a ``PlayerItem`` stands. It only moves forward: `unknown` → `readyToPlay` or `failed`,
/// and `readyToPlay` → `failed` when playback fails; `failed` is final.
public enum PlayerItemStatus: Sendable, Hashable {
    case unknown
    case readyToPlay
    case failed(PlayheadError)
}

/// What a ``PlayerItem`` tells its observers, in the order it happens.
public enum PlayerItemEvent: Sendable, Hashable {
    /// The status changed (also delivered first to every new observer, with the current status).
    case statusChanged(PlayerItemStatus)
    /// Playback reached the end of the item.
    case playedToEnd(at: MediaTime)
    /// Playback stopped before the end.
    case failedToPlayToEnd(PlayheadError)
    /// Playback is waiting for data.
    case stalled
    /// The current time jumped (after a seek), from one time to another.
    case timeJumped(from: MediaTime, to: MediaTime)
}

/// Receives a ``PlayerItem``'s events. Held weakly: an observer that goes away is dropped and gets
/// nothing more. Events arrive one at a time, in order, never while the item holds a lock, and
/// never re-entrantly (an event posted from inside a callback is delivered after it returns).
public protocol PlayerItemObserver: AnyObject, Sendable {
    /// Receives one of `item`'s events.
    /// - Parameters:
    ///   - item: the item the event is about.
    ///   - event: what happened.
    func playerItem(_ item: PlayerItem, didReceive event: PlayerItemEvent)
}
