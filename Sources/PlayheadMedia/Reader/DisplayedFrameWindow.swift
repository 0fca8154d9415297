/// The one rule for which frame is displayed at a time: **the last frame whose presentation time
/// is at or before it** (a decoder hands frames out in presentation order). After the last frame,
/// the last frame stays displayed; before the first, the first is the best there is.
///
/// Knowing that a frame is the last one at or before `t` takes the next frame (or the end of the
/// stream), so the window holds the `candidate` (at or before the target) and the frames decoded
/// after it, in order (a decoder may hand out several at once). They stay held across targets, so
/// ascending targets inside one stretch of decoding never decode a frame twice. Frames it lets go
/// are handed back for reuse.
///
/// Pure: it sees only timestamps, and a frame value it never looks into. The image generator asks
/// it for every requested time; sessions ask it for the first frame after a start or a seek.
package struct DisplayedFrameWindow<Frame> {
    package struct Held {
        package var frame: Frame
        /// Presentation time in the stream's time base.
        package var pts: Int64
        package var duration: Int64
    }

    enum Answer {
        /// This frame is displayed at the target.
        case frame(Held)
        /// Decode and offer more frames (or call `end()`).
        case needFrames
        /// Every frame seen since the last reset lies after the target: decoding began too late
        /// (or the target is before the stream's first frame, and this is the best there is).
        case beforeFirstFrame(Held)
        /// No frame at all since the last reset, and the stream ended.
        case noFrames

        /// The frame this answer holds, if any.
        var heldFrame: Held? {
            switch self {
            case .frame(let held), .beforeFirstFrame(let held): return held
            case .needFrames, .noFrames: return nil
            }
        }
    }

    private(set) var candidate: Held?
    /// Frames decoded after the candidate, in presentation order.
    private(set) var following: [Held] = []
    package private(set) var ended = false

    /// The time of the newest frame held (how far decoding has got), if any.
    package var newestPTS: Int64? { following.last?.pts ?? candidate?.pts }

    /// What is displayed at `target`, as far as the frames offered so far tell. Frames that can
    /// no longer be displayed at this or any later target are added to `released` for reuse.
    mutating func answer(at target: Int64, releasing released: inout [Frame]) -> Answer {
        while let next = following.first, next.pts <= target {
            if let old = candidate { released.append(old.frame) }
            candidate = next
            following.removeFirst()
        }
        if let next = following.first {
            return candidate.map(Answer.frame) ?? .beforeFirstFrame(next)
        }
        // A frame exactly at the target is displayed then: no later frame can start at or before it.
        if let candidate, candidate.pts == target { return .frame(candidate) }
        if ended {
            return candidate.map(Answer.frame) ?? .noFrames
        }
        return .needFrames
    }

    /// Takes the next decoded frame. Returns a frame the caller may reuse (the candidate this one
    /// replaces), if any.
    mutating func offer(_ frame: Frame, pts: Int64, duration: Int64, target: Int64) -> Frame? {
        let held = Held(frame: frame, pts: pts, duration: duration)
        if following.isEmpty, pts <= target {
            let old = candidate?.frame
            candidate = held
            return old
        }
        following.append(held)
        return nil
    }

    /// The stream has no more frames (until the next reset).
    mutating func end() { ended = true }

    /// Forgets everything (after a seek); returns the held frames for reuse.
    mutating func reset() -> [Frame] {
        let frames = (candidate.map { [$0] } ?? []) + following
        candidate = nil
        following.removeAll(keepingCapacity: true)
        ended = false
        return frames.map(\.frame)
    }

    /// Drops the candidate (when a later frame was chosen to start from); returns it for reuse.
    mutating func dropCandidate() -> Frame? {
        defer { candidate = nil }
        return candidate?.frame
    }

    /// Hands every held frame over in presentation order and forgets them: for a caller that
    /// delivers every frame from here on (a session after its start frame).
    mutating func drain() -> [Held] {
        let held = (candidate.map { [$0] } ?? []) + following
        candidate = nil
        following.removeAll(keepingCapacity: true)
        return held
    }
}
