import Foundation
import PlayheadMedia

/// The clock that paces realtime playback. Injectable, so timing is tested without sleeping.
/// `sleep` is called on presentation threads (never on Swift's cooperative pool).
public protocol PlaybackClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    /// - Returns: the time now; never earlier than an answer given before.
    func now() -> Duration
    /// Blocks the calling thread for about `duration`.
    /// - Parameter duration: how long to block.
    func sleep(for duration: Duration)
}

/// The machine's monotonic clock.
public struct SystemPlaybackClock: PlaybackClock {
    /// The machine's clock.
    public init() {}

    /// The time of the monotonic clock (`CLOCK_MONOTONIC`).
    /// - Returns: the time since the clock's origin.
    public func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(ts.tv_sec) + .nanoseconds(ts.tv_nsec)
    }

    /// Blocks the calling thread for `duration`, sleeping on after a signal; returns at once for zero or less.
    /// - Parameter duration: how long to block.
    public func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

/// A virtual clock for tests: time stands still until advanced, and `sleep` advances it at once,
/// so a five-second realtime playback runs in milliseconds and still lands exactly on its times.
///
/// It suits one paced consumer: video without an audio output. With an audio output, the audio
/// thread's sleeps would move virtual time as fast as audio decodes, and the video (which follows
/// the audio clock) would find every frame late: test audio pacing on ``SystemPlaybackClock``.
public final class ManualPlaybackClock: PlaybackClock {
    private let current = Locked(Duration.zero)

    /// A clock standing at zero.
    public init() {}

    /// The virtual time.
    /// - Returns: the sum of every duration slept and advanced so far.
    public func now() -> Duration { current.withLock { $0 } }

    /// Moves the virtual time forward by `duration` at once (not for zero or less), then lets other threads run
    /// for a moment.
    /// - Parameter duration: how far to move time.
    public func sleep(for duration: Duration) {
        if duration > .zero { current.withLock { $0 += duration } }
        // Let other threads run: a paused presenter polls in a loop.
        usleep(50)
    }

    /// Moves time forward without anyone sleeping (to simulate a slow consumer).
    /// - Parameter duration: how far to move time; a negative one moves nothing (a playback clock
    ///   never goes back).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        current.withLock { $0 += duration }
    }
}

extension Duration {
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}
