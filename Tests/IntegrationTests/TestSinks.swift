import Foundation
import Playhead

/// Calls `cancel` once `after` frames arrived; remembers whether it was aborted.
final class CancellingSink: FrameSink, Sendable {
    let pixelFormat = OutputPixelFormat.rgb24
    let after: Int
    let cancel: @Sendable () -> Void
    private let state = Locked((received: 0, aborted: false))

    init(after: Int, cancel: @escaping @Sendable () -> Void) {
        self.after = after
        self.cancel = cancel
    }

    var aborted: Bool { state.withLock { $0.aborted } }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        let received = state.withLock { s -> Int in
            s.received += 1
            return s.received
        }
        if received == after { cancel() }
    }
    func finish() throws(PlayheadError) {}
    func abort() { state.withLock { $0.aborted = true } }
}

/// Takes a while per frame (20 ms by default), so a session is still running when a test looks.
final class SlowSink: FrameSink {
    let pixelFormat = OutputPixelFormat.rgb24
    let microseconds: UInt32
    init(microseconds: UInt32 = 20_000) { self.microseconds = microseconds }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) { usleep(microseconds) }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// Records a player item's events, and how many callbacks ever ran at once.
final class RecordingObserver: PlayerItemObserver, Sendable {
    private let state = Locked((events: [PlayerItemEvent](), active: 0, maximum: 0))
    private let onEvent: (@Sendable (PlayerItem, PlayerItemEvent) -> Void)?

    init(onEvent: (@Sendable (PlayerItem, PlayerItemEvent) -> Void)? = nil) {
        self.onEvent = onEvent
    }

    var events: [PlayerItemEvent] { state.withLock { $0.events } }
    var maximumConcurrentCallbacks: Int { state.withLock { $0.maximum } }

    func playerItem(_ item: PlayerItem, didReceive event: PlayerItemEvent) {
        state.withLock { s in
            s.active += 1
            s.maximum = max(s.maximum, s.active)
            s.events.append(event)
        }
        onEvent?(item, event)
        state.withLock { $0.active -= 1 }
    }
}

/// Clock times at which frames reached the output.
final class TimeLog: Sendable {
    struct Entry: Sendable { var clock: Duration; var presentationTime: MediaTime }
    let clock: any PlaybackClock
    private let log = Locked([Entry]())
    init(clock: any PlaybackClock) { self.clock = clock }
    func record(_ time: MediaTime) { log.withLock { $0.append(Entry(clock: clock.now(), presentationTime: time)) } }
    var entries: [Entry] { log.withLock { $0 } }
}

/// Records when each frame arrives; optionally "takes" `cost` of clock time per frame.
final class TimestampSink: FrameSink, Sendable {
    let pixelFormat = OutputPixelFormat.rgb24
    let log: TimeLog
    let cost: Duration
    let clock: ManualPlaybackClock?
    init(log: TimeLog, cost: Duration = .zero, clock: ManualPlaybackClock? = nil) {
        self.log = log
        self.cost = cost
        self.clock = clock
    }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        log.record(frame.presentationTime)
        if cost > .zero { clock?.advance(by: cost) }
    }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// Times passed to a periodic observer, in seconds.
final class TickLog: Sendable {
    private let log = Locked([Double]())
    func add(_ time: MediaTime) { log.withLock { $0.append(time.seconds) } }
    var times: [Double] { log.withLock { $0 } }
}
