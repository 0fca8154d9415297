import PlayheadMedia

/// Where an item's frames and samples go on a player's timeline when the source's timestamps
/// jump (two captures joined, a wrap FFmpeg did not correct): realtime presentation follows the
/// jump instead of waiting it out. Shared by an item run's two presenters (video and audio) so
/// both follow the same jump by the same amount (``TimestampContinuity``); started over at each
/// segment (a seek). Offline, nothing is moved: frames keep the container's own times.
final class PresentationContinuity: Sendable {
    enum Stream: Int32 {
        case video = 0
        case audio = 1
    }

    private let state = Locked<(segment: Int, continuity: TimestampContinuity)?>(nil)

    /// Starts over at segment `number` (the item's first, or a seek's), following forward jumps
    /// too when the container allows them. The first of the two presenters to begin the segment
    /// starts it; the other finds it started.
    func restart(segment number: Int, followsForwardJumps: Bool) {
        state.withLock { s in
            if s?.segment == number { return }
            s = (number, TimestampContinuity(followsForwardJumps: followsForwardJumps))
        }
    }

    /// The seconds to add to a frame or buffer of `stream` at `time` (seconds) lasting
    /// `duration`, so that it follows on from the last one.
    func offset(_ stream: Stream, time: Double, duration: Double, frameDuration: Double) -> Double {
        let micro = { (seconds: Double) -> Int64 in Int64((seconds * 1_000_000).rounded()) }
        return state.withLock { s -> Double in
            var current = s ?? (-1, TimestampContinuity(followsForwardJumps: false))
            let offset = current.continuity.offset(
                stream: stream.rawValue, dts: micro(time), duration: micro(duration), frameDuration: micro(frameDuration))
            s = current
            return Double(offset) / 1_000_000
        }
    }

    /// Jumps followed so far.
    var jumps: Int { state.withLock { $0?.continuity.discontinuities ?? 0 } }
}
