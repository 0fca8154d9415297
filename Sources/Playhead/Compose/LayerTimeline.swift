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

    /// A timeline whose first pass begins at layer time `start`.
    init(itemCount: Int, loop: LayerLoop, start: MediaTime = .zero) {
        self.itemCount = itemCount
        self.loop = loop
        passStart = start
        hasEnded = itemCount == 0
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
        let plays: Int? = switch loop {
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

    /// Ends the content now (a failed source).
    mutating func end() { hasEnded = true }
}
