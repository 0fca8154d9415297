import Foundation

/// The clock that paces realtime playback. Injectable, so timing is tested without sleeping.
/// `sleep` is called on presentation threads (never on Swift's cooperative pool).
public protocol PlaybackClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    func now() -> Duration
    /// Blocks the calling thread for about `duration`.
    func sleep(for duration: Duration)
}

/// The machine's monotonic clock.
public struct SystemPlaybackClock: PlaybackClock {
    public init() {}

    public func now() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(ts.tv_sec) + .nanoseconds(ts.tv_nsec)
    }

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

    public init() {}

    public func now() -> Duration { current.withLock { $0 } }

    public func sleep(for duration: Duration) {
        if duration > .zero { current.withLock { $0 += duration } }
        // Let other threads run: a paused presenter polls in a loop.
        usleep(50)
    }

    /// Moves time forward without anyone sleeping (to simulate a slow consumer).
    public func advance(by duration: Duration) {
        current.withLock { $0 += duration }
    }
}

extension Duration {
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}
