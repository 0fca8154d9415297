import PlayheadMedia

/// A layer's own timeline over its playlist: which item plays at a layer time, from what point of
/// that item, and when the content ends. Each pass through an item lasts until its last frame's
/// end (found when the reader reaches it) or its time range's end, and the next pass starts
/// exactly there, so a loop's seam neither repeats nor drops a frame. Pure: tested without FFmpeg.
struct LayerTimeline: Sendable, Hashable {
    let itemCount: Int
    let loop: LayerLoop
    /// The item playing.
    private(set) var item = 0
    /// The layer time at which the current pass began.
    private(set) var passStart: MediaTime = .zero
    /// Times the playlist went back to its first item.
    private(set) var loopsCompleted = 0
    /// The content has ended (every pass the loop policy allows was played).
    private(set) var hasEnded: Bool

    /// A timeline whose first pass (of `item`, after `loops` loops of the playlist) begins at
    /// layer time `start`.
    init(itemCount: Int, loop: LayerLoop, start: MediaTime = .zero, item: Int = 0, loops: Int = 0) {
        self.itemCount = itemCount
        self.loop = loop
        passStart = start
        self.item = max(0, min(item, itemCount - 1))
        loopsCompleted = loops
        hasEnded = itemCount == 0
    }

    /// Where a playlist whose passes last `lengths` stands `elapsed` after its first item began:
    /// the item, how far into it, the loops completed; nil once the loop policy has ended it.
    static func position(after elapsed: MediaTime, lengths: [MediaTime], loop: LayerLoop) -> (item: Int, offset: MediaTime, loops: Int)? {
        let cycle = lengths.reduce(MediaTime.zero, +)
        guard cycle > .zero, !lengths.isEmpty else { return nil }
        let seconds = max(0, elapsed.seconds)
        let loops = Int((seconds / cycle.seconds).rounded(.down))
        switch loop {
        case .once where loops >= 1: return nil
        case .times(let count) where loops >= max(1, count): return nil
        default: break
        }
        var into = MediaTime(seconds: seconds - Double(loops) * cycle.seconds, preferredTimescale: 90_000)
        for (index, length) in lengths.enumerated() {
            if into < length { return (index, into, loops) }
            into = into - length
        }
        return (lengths.count - 1, .zero, loops)
    }

    /// How far into the current pass layer time `time` is.
    func offset(at time: MediaTime) -> MediaTime { time - passStart }

    /// The current pass lasted `length`: the next item (or the first again, if the loop policy
    /// allows) starts where it ended. Returns whether a new pass begins (false once ended).
    @discardableResult
    mutating func passEnded(length: MediaTime) -> Bool {
        guard !hasEnded else { return false }
        passStart = passStart + length
        if item + 1 < itemCount {
            item += 1
            return true
        }
        let plays: Int? =
            switch loop {
            case .once: 1
            case .times(let count): max(1, count)
            case .forever: nil
            }
        if let plays, loopsCompleted + 1 >= plays {
            hasEnded = true
            return false
        }
        loopsCompleted += 1
        item = 0
        return true
    }

    /// Whether a pass follows the current one (the loop policy allows another).
    var hasPassAfterCurrent: Bool {
        var next = self
        return next.passEnded(length: .zero)
    }

    /// Ends the content now (a failed source).
    mutating func end() { hasEnded = true }
}
