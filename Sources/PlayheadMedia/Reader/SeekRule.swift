internal import CFFmpeg

/// A request to position a reader: a time, and how far before and after it the first frame may
/// lie (zero both: frame-exact, the frame displayed at `time`).
package struct SeekRequest: Sendable, Hashable {
    package var time: MediaTime
    package var toleranceBefore: MediaTime = .zero
    package var toleranceAfter: MediaTime = .zero

    var isExact: Bool { !(toleranceBefore > .zero) && !(toleranceAfter > .zero) }

    /// A request for `time`, exact unless a tolerance is given.
    /// - Parameters:
    ///   - time: the time asked for.
    ///   - toleranceBefore: how far before `time` the frame may lie.
    ///   - toleranceAfter: how far after `time` the frame may lie.
    package init(time: MediaTime, toleranceBefore: MediaTime = .zero, toleranceAfter: MediaTime = .zero) {
        self.time = time
        self.toleranceBefore = toleranceBefore
        self.toleranceAfter = toleranceAfter
    }

    /// A time past the end of any media (2^31 s, some 68 years): what +infinity means to a seek.
    /// Finite, so that it converts into every stream's time base (up to 1/2^31) without overflow.
    static let pastAnyEnd = MediaTime(value: 1 << 31, timescale: 1)

    /// The request a caller's arguments mean: +infinity is past the end (the last frame is shown),
    /// -infinity before the start (the first frame); an invalid or indefinite time is no request (nil). A tolerance that
    /// is not a number counts as zero, a negative one too.
    package static func resolving(time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime) -> SeekRequest? {
        let target: MediaTime
        if time.isNumeric {
            target = min(max(time, -pastAnyEnd), pastAnyEnd)
        } else if time.isPositiveInfinity {
            target = pastAnyEnd
        } else if time.isNegativeInfinity {
            target = -pastAnyEnd
        } else {
            return nil
        }
        // A tolerance is at most the whole range a time can hold: the window's ends then always
        // convert (a larger one overflowed into no timestamp at all).
        func tolerance(_ t: MediaTime) -> MediaTime {
            if t.isPositiveInfinity { return pastAnyEnd * 2 }
            return t.isNumeric && t > .zero ? min(t, pastAnyEnd * 2) : .zero
        }
        return SeekRequest(time: target, toleranceBefore: tolerance(toleranceBefore), toleranceAfter: tolerance(toleranceAfter))
    }
}

/// Where decoding stands, for deciding between decoding forward and seeking.
package struct DecodePosition: Sendable, Hashable {
    /// Nothing read since the data's start (a fresh demuxer, or one just rewound).
    var atStart: Bool
    /// The oldest and newest frames held (presentation times), when decoding can go on from there.
    var oldestHeld: Int64?
    var newestHeld: Int64?
    /// The decoding time of the last packet sent to the decoder.
    var lastPacketDTS: Int64?

    package static let unknown = DecodePosition(atStart: false)
    /// Nothing read since the data's start.
    package static let atTheStart = DecodePosition(atStart: true)
}

/// The one seek rule, used by sessions (starts and player seeks) and the image generator:
///
/// - **Tolerant** requests take the keyframe nearest the time inside the window, found from the
///   index (or the container's search) and checked by the keyframe's own presentation time; a
///   keyframe outside the window is never used. With none inside, decoding goes to the first
///   frame that starts inside the window (or, failing that, the frame displayed at the time).
/// - **Exact** requests, and tolerant ones without a keyframe inside: decode forward when the
///   frames held or about to be decoded reach the time without passing a keyframe after the
///   decoding position (index-aware); otherwise seek to the keyframe at or before the time —
///   checked by its presentation time, since an index keeps decoding times and a keyframe
///   indexed before the time may still be shown after it.
/// - Non-reference frames that end before the start are skipped while decoding to it (see
///   ``VideoFrameStepper``).
package enum SeekRule {
    /// How far forward decoding is preferred to seeking when the container has no index.
    static let unindexedForwardLimit = MediaTime(value: 5, timescale: 1)

    /// Positions `demuxer` for `request` on `facts`'s stream and returns the selection the
    /// decoder then applies, and whether the demuxer moved (the decoder must then be flushed).
    /// The selection `request` asks of `facts`'s stream, in its time base, without moving anything:
    /// frames at or before the time (the tick at or before it); a window's frames from its start's
    /// tick at or after, to its end's tick at or before.
    package static func selection(for request: SeekRequest, facts: VideoStreamFacts) -> StartSelection {
        let tb = facts.timeBase.ffmpeg
        let t = request.time.ffmpegTimestamp(in: tb, rounding: .down)
        guard !request.isExact else { return .displayed(at: t) }
        // A bound that does not convert (an overflow gives no timestamp) is open; the window
        // always holds the target.
        let before = request.time - request.toleranceBefore, after = request.time + request.toleranceAfter
        let lowTick = before.isNumeric ? before.ffmpegTimestamp(in: tb, rounding: .up) : FFmpegConstants.noPTS
        let highTick = after.isNumeric ? after.ffmpegTimestamp(in: tb, rounding: .down) : FFmpegConstants.noPTS
        let low = lowTick == FFmpegConstants.noPTS ? Int64.min : min(lowTick, t)
        let high = highTick == FFmpegConstants.noPTS ? Int64.max : max(highTick, t)
        return StartSelection(low: low, target: t, high: high)
    }

    package static func position(
        _ demuxer: Demuxer, facts: VideoStreamFacts, request: SeekRequest, from position: DecodePosition,
        scratch: OwnedPacket
    ) throws(PlayheadError) -> (selection: StartSelection, moved: Bool) {
        let t = request.time.ffmpegTimestamp(in: facts.timeBase.ffmpeg, rounding: .down)
        let stream = facts.index
        if !request.isExact {
            let window = selection(for: request, facts: facts)
            let (low, high) = (window.low, window.high)
            guard demuxer.canSeek else { return try exact(demuxer, facts: facts, selection: window, from: position, scratch: scratch) }
            if let keyframe = nearestKeyframe(demuxer, facts: facts, to: t, in: low...high, scratch: scratch) {
                if keyframe.isUnderReadPosition {
                    // The last look landed on it and put its packets back: the demuxer is where
                    // that seek left it (over a network, one request fewer).
                } else if let query = keyframe.query {
                    // The same seek that found it lands on it again.
                    try demuxer.seek(stream: stream, minimum: query.minimum, timestamp: query.timestamp, maximum: query.maximum)
                } else {
                    // Found by reading: back to a point before it; decoding goes on to it.
                    try seekToShow(keyframe.pts, demuxer: demuxer, stream: stream, timeBase: facts.timeBase.ffmpeg, scratch: scratch)
                }
                return (.from(keyframe: keyframe.pts), true)
            }
            // Looking for keyframes moved the demuxer: decoding cannot go on from where it was.
            return try exact(demuxer, facts: facts, selection: window, from: .unknown, scratch: scratch)
        }
        return try exact(demuxer, facts: facts, selection: selection(for: request, facts: facts), from: position, scratch: scratch)
    }

    /// Decodes forward or seeks so that decoding reaches `selection.low`.
    private static func exact(
        _ demuxer: Demuxer, facts: VideoStreamFacts, selection: StartSelection, from position: DecodePosition,
        scratch: OwnedPacket
    ) throws(PlayheadError) -> (selection: StartSelection, moved: Bool) {
        let stream = facts.index
        let r = selection.low
        let keyframe = demuxer.hasIndex(stream: stream) ? demuxer.indexedKeyframe(stream: stream, atOrBefore: r) : nil
        let forwardLimit = unindexedForwardLimit.ffmpegTimestamp(in: facts.timeBase.ffmpeg)
        let seek = shouldSeek(
            to: r, from: position, indexedKeyframe: keyframe, hasIndex: demuxer.hasIndex(stream: stream),
            canSeek: demuxer.canSeek, streamStart: facts.startTime?.ffmpegTimestamp(in: facts.timeBase.ffmpeg), forwardLimit: forwardLimit)
        guard seek else {
            if !demuxer.canSeek, let oldest = position.oldestHeld, r < oldest {
                throw PlayheadError(
                    code: .seekFailed, message: "the source cannot seek (a pipe or a live stream): it cannot go back", file: demuxer.source)
            }
            return (selection, false)
        }
        do throws(PlayheadError) {
            try seekToShow(r, demuxer: demuxer, stream: stream, timeBase: facts.timeBase.ffmpeg, scratch: scratch)
            return (selection, true)
        } catch {
            // A source that cannot seek by time (a raw stream) is read forward from its start.
            try demuxer.rewind()
            return (selection, true)
        }
    }

    /// Whether seeking beats decoding forward to `r`.
    static func shouldSeek(
        to r: Int64, from position: DecodePosition, indexedKeyframe: Int64?, hasIndex: Bool, canSeek: Bool,
        streamStart: Int64?, forwardLimit: Int64
    ) -> Bool {
        guard canSeek else { return false }
        if position.atStart {
            // From the beginning, unless a keyframe later than the start lies at or before r.
            if hasIndex { return indexedKeyframe.map { $0 > (streamStart ?? Int64.min) } ?? false }
            return r - (streamStart ?? 0) > forwardLimit
        }
        guard let oldest = position.oldestHeld, r >= oldest else { return true }
        if hasIndex {
            guard let last = position.lastPacketDTS else { return true }
            return (indexedKeyframe ?? .min) > last
        }
        return r - (position.newestHeld ?? oldest) > forwardLimit
    }

    /// Seeks to a keyframe at or before `r` whose own presentation time is at or before `r` — where
    /// decoding can begin and reach `r`. An index keeps decoding times, so a keyframe indexed
    /// before `r` may be shown after it; a search by timestamp (MPEG-PS, MPEG-TS) lands only near
    /// its target, often after it. Either way it goes further back — a keyframe of the index, or
    /// twice as far as the last try — until the first keyframe there is at or before `r`; after
    /// eight tries, from the start of the data.
    static func seekToShow(_ r: Int64, demuxer: Demuxer, stream: Int32, timeBase: AVRational, scratch: OwnedPacket) throws(PlayheadError) {
        var target = r
        var backoff = MediaTime(value: 1, timescale: 1).ffmpegTimestamp(in: timeBase)
        for _ in 0..<8 {
            do throws(PlayheadError) {
                try demuxer.seek(stream: stream, minimum: .min, timestamp: target, maximum: target)
            } catch {
                // Nothing at or before: the start of the data.
                try demuxer.rewind()
                return
            }
            guard let landed = try demuxer.peekKeyframe(stream: stream, scratch: scratch) else {
                // No keyframe to begin from after here (past the end): further back.
                target -= backoff
                backoff *= 2
                continue
            }
            guard landed.pts > r else { return }
            let earlier = demuxer.indexedKeyframe(stream: stream, before: min(target, landed.dts != FFmpegConstants.noPTS ? landed.dts : landed.pts))
            target = min(earlier ?? .max, min(target, landed.pts) - backoff)
            backoff *= 2
        }
        try demuxer.rewind()
    }

    /// The one audio seek rule, for audio read on its own (an audio-only session, a composition's
    /// sound): positions `demuxer` so that a freshly opened decoder (``StreamDecoder/reset()``),
    /// trimmed to `start` by the ``AudioStage``, gives from `start` on exactly what decoding the
    /// stream from its beginning gives.
    ///
    /// - From the beginning (no start, or at or before the stream's first sample): an exact
    ///   ``Demuxer/rewind()`` — the priming a fresh open drops is dropped again.
    /// - Near the beginning (within ``unindexedForwardLimit``): from the beginning too, decoding
    ///   forward; the samples are then counted from the stream's first, exact even where the
    ///   container's timestamps are coarser than a sample (Matroska's milliseconds).
    /// - Further in: a seek to the stream's pre-roll before `start` (``AudioStreamFacts/preroll``),
    ///   checked by the first packet's own time and moved further back when it lands late, as
    ///   video seeks are (``seekToShow(_:demuxer:stream:timeBase:scratch:)``).
    package static func positionAudio(_ demuxer: Demuxer, facts: AudioStreamFacts, at start: MediaTime?, scratch: OwnedPacket) throws(PlayheadError) {
        let first = facts.startTime ?? .zero
        guard let start, start.isNumeric, start - first > unindexedForwardLimit, demuxer.canSeek else {
            // A fresh demuxer is at the beginning already; a pipe read once cannot go back (a typed error).
            try demuxer.rewind()
            return
        }
        let tb = facts.timeBase.ffmpeg
        let from = (start - facts.preroll).ffmpegTimestamp(in: tb, rounding: .down)
        do throws(PlayheadError) {
            try seekToShow(from, demuxer: demuxer, stream: facts.index, timeBase: tb, scratch: scratch)
        } catch {
            if error.code == .cancelled || error.code == .timedOut { throw error }
            // A source that cannot seek by time: from the beginning, decoding forward.
            try demuxer.rewind()
        }
    }

    struct Keyframe {
        var pts: Int64
        /// The seek that lands on it, with an index; nil when it was found by reading.
        var query: (minimum: Int64, timestamp: Int64, maximum: Int64)?
        /// The demuxer stands at the seek that found it, its packets put back.
        var isUnderReadPosition = false
    }

    /// The keyframe nearest `t` whose presentation time lies in `window`. With an index of the
    /// demuxer's own: the one at or before and the one after, each found by a seek and the first
    /// keyframe read there. Without one: decoding-free reading across the window from a point
    /// before it. Nothing is decoded.
    static func nearestKeyframe(
        _ demuxer: Demuxer, facts: VideoStreamFacts, to t: Int64, in window: ClosedRange<Int64>,
        scratch: OwnedPacket
    ) -> Keyframe? {
        let stream = facts.index
        var found: [Keyframe] = []
        if demuxer.hasIndex(stream: stream) {
            for (min, ts, max) in [(Int64.min, t, t), (t + 1, t + 1, Int64.max)] {
                if min != Int64.min, let before = found.first, window.contains(before.pts) {
                    // The next keyframe shows no earlier than its index time (a decoding time
                    // or a presentation time, never later than the presentation): when that is
                    // no nearer than the one found, it cannot win, and is not looked at.
                    guard let next = demuxer.indexedKeyframe(stream: stream, after: t) else { break }
                    if abs(before.pts - t) <= next - t { break }
                }
                for i in found.indices { found[i].isUnderReadPosition = false }
                guard (try? demuxer.seek(stream: stream, minimum: min, timestamp: ts, maximum: max)) != nil,
                    let landed = (try? demuxer.peekKeyframe(stream: stream, scratch: scratch)) ?? nil
                else { continue }
                found.append(Keyframe(pts: landed.pts, query: (min, ts, max), isUnderReadPosition: true))
            }
        } else {
            guard (try? seekToShow(window.lowerBound, demuxer: demuxer, stream: stream, timeBase: facts.timeBase.ffmpeg, scratch: scratch)) != nil
            else { return nil }
            found = demuxer.scanKeyframes(stream: stream, in: window, scratch: scratch).map { Keyframe(pts: $0, query: nil) }
        }
        return found.filter { window.contains($0.pts) }.min { abs($0.pts - t) < abs($1.pts - t) }
    }
}
