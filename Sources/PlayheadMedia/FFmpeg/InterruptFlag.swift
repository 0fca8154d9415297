internal import CFFmpeg
import Synchronization

/// The flag FFmpeg's interrupt callback polls during blocking I/O. Setting it makes the blocking
/// call return `AVERROR_EXIT` promptly. Optionally also trips on a deadline.
package final class InterruptFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    private let deadlineNanos: UInt64?

    package init(timeout: Duration? = nil) {
        if let timeout {
            let (s, attos) = timeout.components
            let nanos = UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, attos) / 1_000_000_000)
            deadlineNanos = DispatchTimeNanos.now() + nanos
        } else {
            deadlineNanos = nil
        }
    }

    package func raise() { raised.store(true, ordering: .releasing) }

    package var isRaised: Bool { raised.load(ordering: .acquiring) }

    /// `true` when the deadline (if any) has passed.
    var hasTimedOut: Bool {
        guard let deadlineNanos else { return false }
        return DispatchTimeNanos.now() >= deadlineNanos
    }

    var shouldInterrupt: Bool { isRaised || hasTimedOut }

    /// What a wait stopped by this flag ends with, as an open it stops would end: cancelled when
    /// it was raised, timed out when its deadline passed; nil while the wait may go on.
    /// - Parameter file: the display name of the source waited for.
    /// - Returns: the error, or nil.
    package func stopped(file: String) -> PlayheadError? {
        if isRaised { return PlayheadError(code: .cancelled, message: "cancelled while opening", file: file) }
        if hasTimedOut { return PlayheadError(code: .timedOut, message: "did not open within the open timeout", file: file) }
        return nil
    }
}

/// What a format context's interrupt callback asks: the ``InterruptFlag`` of whoever owns the
/// context now (the probe that opened it, then the session or request it was handed to).
final class InterruptRelay: Sendable {
    private let flag: Locked<InterruptFlag?>
    /// The open timeout: trips the callback while a source is being opened, lifted once it is.
    private let deadline: Locked<InterruptFlag?>

    init(_ flag: InterruptFlag?, openTimeout: Duration? = nil) {
        self.flag = Locked(flag)
        deadline = Locked(openTimeout.map { InterruptFlag(timeout: $0) })
    }

    var current: InterruptFlag? { flag.withLock { $0 } }

    /// Makes `flag` the one the callback asks.
    func attach(_ flag: InterruptFlag?) { self.flag.withLock { $0 = flag } }

    /// Ends the open timeout (the source is open and its streams known).
    func liftDeadline() { deadline.withLock { $0 = nil } }

    /// The open timeout has passed.
    var openTimedOut: Bool { deadline.withLock { $0?.hasTimedOut ?? false } }

    var shouldInterrupt: Bool { (current?.shouldInterrupt ?? false) || openTimedOut || watchdogTrips() }

    /// The stall watchdog of an HTTP source once open: a read during which the bytes taken from
    /// the connection stop moving for the stall timeout — or move by less than
    /// ``minimumProgress`` in that time (a server that trickles a byte now and then) — is
    /// interrupted, and the source has stalled for good. FFmpeg's HTTP reconnect would otherwise follow every stall with another
    /// request (and, on a server that stalls each time, another wait): a dropped connection is
    /// resumed, a silent one ends in `io.timedOut` within the timeout.
    private struct Watch {
        /// The `AVIOContext` whose position shows progress, as bits (it outlives the relay's use).
        var context: UInt
        var stallNanos: UInt64
        /// Where the position stood when progress was last counted, and when.
        var lastPosition: Int64 = -1
        var lastChange: UInt64 = 0
        var stalled = false
    }

    /// Bytes that count as progress within a stall timeout: a slow network brings this much in
    /// well under a second; a server that sends a byte now and then does not.
    static let minimumProgress: Int64 = 4096
    private let watch = Locked<Watch?>(nil)

    /// Starts watching `context`'s position (call on the thread that owns it); nil: a playlist
    /// (HLS), whose segments come through connections of their own, is watched by its reads: one
    /// read that brings no packet for the stall timeout has stalled.
    func watchStalls(of context: UnsafeMutablePointer<AVIOContext>?, stall: Duration) {
        let nanos = SourceOptions.nanoseconds(stall)
        watch.withLock { $0 = Watch(context: context.map { UInt(bitPattern: $0) } ?? 0, stallNanos: nanos) }
    }

    /// A read begins: the stall is measured from now.
    func readBegins() {
        watch.withLock { w in
            guard w != nil, !(w?.stalled ?? false) else { return }
            w?.lastPosition = -1
            w?.lastChange = DispatchTimeNanos.now()
        }
    }

    /// The watchdog interrupted a read: the source stopped sending.
    var hasStalled: Bool { watch.withLock { $0?.stalled ?? false } }

    /// Called from the interrupt callback, on the thread blocked in FFmpeg for this context.
    private func watchdogTrips() -> Bool {
        watch.withLock { w -> Bool in
            guard var current = w else { return false }
            defer { w = current }
            if current.stalled { return true }
            let now = DispatchTimeNanos.now()
            // Watched by reads: the time since the read began.
            guard let context = UnsafeMutablePointer<AVIOContext>(bitPattern: current.context) else {
                if current.lastChange > 0, now - current.lastChange >= current.stallNanos { current.stalled = true }
                return current.stalled
            }
            let position = context.pointee.pos
            if current.lastPosition < 0 || position - current.lastPosition >= Self.minimumProgress || position < current.lastPosition {
                current.lastPosition = position
                current.lastChange = now
                return false
            }
            if now - current.lastChange >= current.stallNanos { current.stalled = true }
            return current.stalled
        }
    }

    /// The callback record for `AVFormatContext.interrupt_callback`. The caller must keep `self`
    /// alive for as long as the context may call it.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                let relay = Unmanaged<InterruptRelay>.fromOpaque(opaque).takeUnretainedValue()
                return relay.shouldInterrupt ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(self).toOpaque()
        )
    }
}

/// Monotonic nanoseconds, for deadlines.
package enum DispatchTimeNanos {
    package static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
