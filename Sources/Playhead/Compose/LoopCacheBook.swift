/// What ``LoopCacheBook`` asks of a recording (``LoopRecording``; a stand-in in its tests).
protocol LoopCacheRecording: AnyObject {
    /// Sealed whole: later passes may draw from it.
    var isSealed: Bool { get }
    /// Given up (its budget spent, a frame out of order, a restart it cannot follow).
    var isAbandoned: Bool { get }
    /// Whether it tells what is displayed from the item's start on (it began at the stream's first
    /// frame, or at or before the item's start): a pass from the start needs nothing decoded.
    var coversItemStart: Bool { get }
    /// The pass ended with every frame recorded (`reachedEnd`: through the stream's complete end).
    func seal(reachedEnd: Bool)
    /// Gives it up: its pictures go back to the budget.
    func abandon()
}

/// Which of a layer's items are recorded for their later passes (the loop cache,
/// docs/decisions/0008), decided without FFmpeg, threads or a clock: when a recording begins,
/// when it is kept, when it is given up, and which items are not tried again. The
/// ``LayerReader`` holds one and attaches (or detaches) the recording it names to its reader;
/// the tests drive it alone (`LoopCacheBookTests`).
///
/// - An item is recorded only on a layer that plays its items more than once, one item at a time
///   (the one whose reader is open), and never while it has a kept recording.
/// - A recording is kept only whole (no damage; through its data's complete end, or through a
///   pass that its range ended); a pass that ended otherwise, or a recording that gave up, makes
///   the item unrecordable for this version of the layer (it is decoded on every pass, as without
///   a cache). A recording cut off with its reader (a live edit, a seek) is given up without that
///   verdict: the item is recorded again at its next open.
/// - A recording made from part way in (a scheduled start, a seek) is made again, whole, from a
///   pass's start — once per item.
/// - A new version of the layer forgets everything.
struct LoopCacheBook<Recording: LoopCacheRecording> {
    /// Recordings kept whole, by item: later passes draw them without decoding.
    private(set) var kept: [Int: Recording] = [:]
    /// The recording the open reader feeds, and its item.
    private(set) var feeding: (item: Int, recording: Recording)?
    /// Items not tried again for this version of the layer.
    private(set) var unrecordable: Set<Int> = []
    /// Items whose part-way recording was made again from a pass's start (once each).
    private(set) var rerecorded: Set<Int> = []

    /// The recording to draw `item`'s passes from, if one is kept.
    func recording(of item: Int) -> Recording? { kept[item] }

    /// A pass of `item` begins: a kept recording made from part way in is given up, once, so that
    /// this pass records it whole.
    /// - Parameter item: the item whose pass begins.
    mutating func passBegins(_ item: Int) {
        guard let recorded = kept[item], !rerecorded.contains(item), !recorded.coversItemStart else { return }
        rerecorded.insert(item)
        recorded.abandon()
        kept[item] = nil
    }

    /// Whether `item` is to be recorded when its reader next opens.
    /// - Parameters:
    ///   - item: the item.
    ///   - repeats: whether the layer plays its items more than once.
    /// - Returns: true when a recording should begin.
    func wants(_ item: Int, repeats: Bool) -> Bool {
        repeats && kept[item] == nil && !unrecordable.contains(item)
    }

    /// Whether a recording of `frames` pictures of `pictureBytes` each has room in what is left of
    /// the budget (an item that says it is longer than the room is not begun: it would take the
    /// budget from the others while it fills, and give up anyway).
    /// - Parameters:
    ///   - frames: the pictures the item declares (its duration over its frame duration).
    ///   - pictureBytes: bytes of one recorded picture.
    ///   - room: bytes left in the budget.
    /// - Returns: false when it would not fit.
    static func fits(frames: Double, pictureBytes: Int, room: Int) -> Bool {
        guard !frames.isNaN else { return true }
        return frames * Double(max(0, pictureBytes)) <= Double(max(0, room))
    }

    /// `item` will not be recorded for this version of the layer (it does not fit).
    mutating func refuse(_ item: Int) { unrecordable.insert(item) }

    /// The open reader of `item` feeds `recording` from now on.
    mutating func began(_ recording: Recording, for item: Int) {
        if let previous = feeding, previous.recording !== recording { previous.recording.abandon() }
        feeding = (item, recording)
    }

    /// The current item's pass ended: the recording it fed is kept when `whole`, else given up
    /// and the item not tried again.
    /// - Parameters:
    ///   - whole: no damage, and (`reachedEnd`) the data ended complete.
    ///   - reachedEnd: the pass ended at the data's end (not at its range's end).
    /// - Returns: the recording the reader fed, to detach from it (nil: it fed none).
    mutating func passEnded(whole: Bool, reachedEnd: Bool) -> Recording? {
        guard let (item, recorded) = feeding else { return nil }
        feeding = nil
        if whole { recorded.seal(reachedEnd: reachedEnd) }
        if recorded.isSealed {
            kept[item] = recorded
        } else {
            recorded.abandon()
            unrecordable.insert(item)
        }
        return recorded
    }

    /// A recording that gave up stops costing the decoder anything at once: the item is not
    /// recorded again.
    /// - Returns: the recording to detach from the reader (nil: none fed, or it still records).
    mutating func dropIfGivenUp() -> Recording? {
        guard let (item, recorded) = feeding, recorded.isAbandoned else { return nil }
        feeding = nil
        unrecordable.insert(item)
        return recorded
    }

    /// The reader was closed before its pass ended: the recording it fed holds part of the item.
    /// - Returns: the recording, for the caller to detach and give up once the reader is its own
    ///   again (a decode still out may write to it until it ends); the item may be recorded again.
    mutating func cutOff() -> Recording? {
        defer { feeding = nil }
        return feeding?.recording
    }

    /// The layer moved or became a new version: every recording is given up and every verdict
    /// forgotten.
    /// - Returns: the recording the open reader fed, to detach from it.
    mutating func forget() -> Recording? {
        let fed = feeding?.recording
        fed?.abandon()
        for recorded in kept.values { recorded.abandon() }
        self = LoopCacheBook()
        return fed
    }
}
