import PlayheadMedia

/// What a ``VideoOutput`` knows, without locks or threads: the last few frames received, in the
/// order they came, and which of them was last handed out.
///
/// A render loop asks for an item time that only moves forward while one timeline plays, so a
/// frame older than the one handed out is never wanted again and is dropped. A frame whose time is
/// earlier than the one before it starts a new timeline (a seek back, a loop's next pass, the next
/// item of a queue): what came before it is dropped.
struct LatestFrameWindow {
    private struct Entry {
        var number: Int
        var frame: CapturedFrame
    }

    /// How many frames are kept at most.
    let capacity: Int
    private var entries: [Entry] = []
    private var received = 0
    private var lastHandedOut: Int?

    /// - Parameter capacity: at least 1.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The frames kept now, oldest first.
    var frames: [CapturedFrame] { entries.map(\.frame) }

    /// The newest frame received.
    var latest: CapturedFrame? { entries.last?.frame }

    /// Keeps a frame that was just presented.
    mutating func receive(_ frame: CapturedFrame) {
        if let last = entries.last, frame.itemTime < last.frame.itemTime || frame.source != last.frame.source {
            entries.removeAll()
        }
        received += 1
        entries.append(Entry(number: received, frame: frame))
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// The newest frame whose time is at or before `time`, if it was not handed out already.
    func hasNewFrame(forItemTime time: MediaTime) -> Bool {
        guard let index = newestIndex(atOrBefore: time) else { return false }
        return entries[index].number != lastHandedOut
    }

    /// The newest frame whose time is at or before `time` (nil when every kept frame is later, or
    /// the time is invalid, indefinite or −∞; +∞ asks for the newest); the frames before it are dropped.
    mutating func frame(forItemTime time: MediaTime) -> CapturedFrame? {
        guard let index = newestIndex(atOrBefore: time) else { return nil }
        entries.removeFirst(index)
        lastHandedOut = entries[0].number
        return entries[0].frame
    }

    private func newestIndex(atOrBefore time: MediaTime) -> Int? {
        if time == .positiveInfinity { return entries.indices.last }
        guard time.isNumeric else { return nil }
        return entries.lastIndex { $0.frame.itemTime <= time }
    }
}
