import PlayheadMedia

/// Follows jumps in a stream's timestamps (two captures joined, a wrap FFmpeg did not correct)
/// instead of waiting them out or dropping what follows: each stream keeps an offset that is added
/// to its timestamps, changed at a discontinuity so that the packet after it lands where the
/// stream expected its next packet.
///
/// A jump is a decoding timestamp that moves backwards by more than two frames (or 0.1 s), or —
/// in containers that allow discontinuities, such as MPEG-TS — forwards by more than five frames
/// (or 1 s). A stream that jumps adopts the offset another stream already took for the same jump,
/// so audio and video stay together. Pure: microseconds in, microseconds out.
struct TimestampContinuity {
    /// `true` for containers whose timestamps may jump forward (FFmpeg's `AVFMT_TS_DISCONT`).
    let followsForwardJumps: Bool
    private var offsets: [Int32: Int64] = [:]
    private var expected: [Int32: Int64] = [:]
    /// Jumps followed so far.
    private(set) var discontinuities = 0

    init(followsForwardJumps: Bool) {
        self.followsForwardJumps = followsForwardJumps
    }

    /// The offset (microseconds) to add to the timestamps of a packet of `stream` whose decoding
    /// time is `dts` (microseconds, as read; nil when unknown), lasting `duration`, in a stream
    /// whose frames last about `frameDuration`.
    mutating func offset(stream: Int32, dts: Int64?, duration: Int64, frameDuration: Int64) -> Int64 {
        var offset = offsets[stream] ?? 0
        guard let dts else { return offset }
        let step = max(duration, frameDuration, 1)
        if let expected = expected[stream] {
            let delta = dts + offset - expected
            let forwardLimit = followsForwardJumps ? max(5 * step, 1_000_000) : Int64.max
            let backwardLimit = max(2 * step, 100_000)
            if delta > forwardLimit || delta < -backwardLimit {
                discontinuities += 1
                offset -= delta
                // Another stream that already jumped the same way: take its offset exactly.
                for (other, shared) in offsets
                where other != stream && abs(dts + shared - expected) <= max(forwardLimit == Int64.max ? backwardLimit : forwardLimit, backwardLimit)
                {
                    offset = shared
                    break
                }
                offsets[stream] = offset
            }
        } else if offsets[stream] == nil {
            // A stream's first packet: if another stream has moved, its timeline is ours too.
            if let shared = offsets.values.first(where: { $0 != 0 }) { offset = shared }
            offsets[stream] = offset
        }
        expected[stream] = dts + offset + max(duration > 0 ? duration : frameDuration, 0)
        return offset
    }

    /// Starts over (after a seek): seeking works on the container's own timestamps, so what
    /// follows a seek is placed by them again.
    mutating func reset() {
        expected.removeAll()
        offsets.removeAll()
    }
}
