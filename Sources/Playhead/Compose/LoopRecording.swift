import PlayheadMedia

/// The memory a render's layers may keep recorded pictures in (``Compositor/loopCacheBytes``),
/// shared by all its layers — recorded on the render thread, or in a realtime render on the
/// threads decoding the layers' items (``LayerDecodeRequest``): taken and given back under a lock.
final class LoopCacheBudget: Sendable {
    let limit: Int
    private let taken = Locked(0)
    /// The bytes taken now.
    var used: Int { taken.withLock { $0 } }

    init(limit: Int) { self.limit = max(0, limit) }

    /// Takes `bytes` from the budget; false, and nothing taken, when they do not fit.
    func take(_ bytes: Int) -> Bool {
        taken.withLock { used in
            guard bytes >= 0, bytes <= limit - used else { return false }
            used += bytes
            return true
        }
    }

    func giveBack(_ bytes: Int) { taken.withLock { $0 = max(0, $0 - bytes) } }
}

/// Every picture one item of a layer decoded, in order from where decoding began, each scaled
/// into the layer's rectangle as the layer draws it: recorded during the item's first pass, then
/// drawn instead of decoding on the passes after it, so that a loop decodes each item once.
///
/// It answers by the one rule — the last frame whose time is at or before the target — only
/// where it is sure: from its first frame (or before it, when it began at the stream's first
/// frame), up to its last frame exclusive, or through it when it reached the stream's end. Where
/// it cannot tell, the layer decodes as it would without one. Frames come from the decoder in
/// presentation order; one out of order, a restart of decoding (a seek), a budget that is spent
/// or a picture that cannot be made ends the recording (it is given up, never half trusted).
/// One thread at a time: the render thread, or the one decoding its item for a realtime render
/// (``LayerDecodeRequest``) while the render thread waits for it or has let it go.
final class LoopRecording: DecodedFrameRecorder, LoopCacheRecording {
    struct Picture {
        let pts: Int64
        let duration: Int64
        let picture: OwnedFrame
    }

    /// Where the pictures go in the canvas (the layer's content rectangle).
    let rect: PixelRect
    /// Where the item's frames start (as the layer counts its passes), and its stream's time base.
    let itemStart: MediaTime
    let timeBase: Rational
    private(set) var pictures: [Picture] = []
    /// Began at the stream's first frame (nothing restarted decoding since the reader opened).
    private(set) var beganAtStreamStart = true
    /// Holds every frame up to the stream's complete end.
    private(set) var reachedEnd = false
    /// The item's pass ended with the recording whole: later passes draw from it.
    private(set) var isSealed = false
    /// Given up (see the type's description): holds nothing and records nothing more.
    private(set) var isAbandoned = false
    private let scaler: FrameConverter
    private let format: PictureFormat
    private let budget: LoopCacheBudget
    private let pictureBytes: Int

    /// A recording of pictures scaled by `layout` (whose content rectangle is where they go in the
    /// canvas), in `format`, drawing on `budget`.
    init(layout: FrameLayout, format: PictureFormat, itemStart: MediaTime, timeBase: Rational, budget: LoopCacheBudget, source: String) {
        rect = layout.content
        // The same scaling, into a picture of the content's size rather than into the canvas.
        var own = layout
        own.canvas = layout.content.size
        own.content = PixelRect(size: layout.content.size)
        scaler = FrameConverter(layout: own, format: format, source: source)
        self.format = format
        self.itemStart = itemStart
        self.timeBase = timeBase
        self.budget = budget
        pictureBytes = format.bytes(of: rect.size)
    }

    deinit { budget.giveBack(pictureBytes * pictures.count) }

    /// Subtitles drawn into each picture as it is recorded (the layer's, as it shows them).
    var burner: SubtitleBurner? {
        get { scaler.burner }
        set { scaler.burner = newValue }
    }

    /// Memory the recording holds now.
    var bytes: Int { pictureBytes * pictures.count }

    func record(_ frame: OwnedFrame, pts: Int64, duration: Int64) throws(PlayheadError) {
        guard !isAbandoned, !isSealed else { return }
        if let last = pictures.last, pts <= last.pts { return abandon() }
        // A frame without a time after a restart was given one that decoding from the start
        // would not give it.
        if !beganAtStreamStart, frame.bestEffortTimestamp == FFmpegConstants.noPTS { return abandon() }
        guard pictureBytes > 0, budget.take(pictureBytes) else { return abandon() }
        do throws(PlayheadError) {
            // Scaled over whole: no need to paint it first.
            let picture = try OwnedFrame(size: rect.size, format: format, filled: false)
            try scaler.convert(frame, into: picture)
            pictures.append(Picture(pts: pts, duration: duration, picture: picture))
        } catch {
            // The layer's own drawing meets the same failure, and reports it.
            budget.giveBack(pictureBytes)
            abandon()
        }
    }

    func restarted() {
        guard !isSealed, !isAbandoned else { return }
        // Frames from a new point would not follow the ones held: they start a new recording.
        budget.giveBack(bytes)
        pictures.removeAll()
        beganAtStreamStart = false
    }

    /// The pass ended with every frame recorded from its start (`reachedEnd`: through the stream's
    /// complete end): later passes may draw from it.
    func seal(reachedEnd: Bool) {
        guard !isAbandoned, !pictures.isEmpty else { return abandon() }
        self.reachedEnd = reachedEnd
        isSealed = true
    }

    /// Gives the recording up: its pictures go back to the budget.
    func abandon() {
        budget.giveBack(bytes)
        pictures.removeAll()
        isAbandoned = true
    }

    /// The layer's target `offset` into a pass of the item — half a tick late, as the layer asks
    /// its reader — as a time and in stream ticks (rounded down, as the reader rounds it).
    func target(at offset: MediaTime) -> (time: MediaTime, tick: Int64) {
        let time = itemStart + offset + LayerReader.halfTick(timeBase)
        return (time, time.ticks(in: timeBase, rounding: .down))
    }

    /// Whether the recording tells what is displayed from the item's start on.
    var coversItemStart: Bool { covers(target(at: .zero).tick) }

    /// Whether the recording can tell what is displayed at `target` (in stream ticks) and after it,
    /// up to its end: a pass that starts there needs nothing decoded.
    func covers(_ target: Int64) -> Bool {
        guard isSealed, let first = pictures.first else { return false }
        return beganAtStreamStart || first.pts <= target
    }

    /// The picture displayed at `target` (in stream ticks) and whether it is the stream's last;
    /// nil when the recording cannot tell.
    func picture(at target: Int64) -> (picture: Picture, isLast: Bool)? {
        guard isSealed, let first = pictures.first else { return nil }
        if target < first.pts {
            // Before the first frame the first is the best there is — if it is the stream's first.
            guard beganAtStreamStart else { return nil }
            return (first, pictures.count == 1 && reachedEnd)
        }
        var low = 0, high = pictures.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if pictures[middle].pts <= target { low = middle } else { high = middle - 1 }
        }
        let isLast = low == pictures.count - 1
        // The last frame held is displayed only if nothing comes after it.
        if isLast, !reachedEnd { return nil }
        return (pictures[low], isLast)
    }

    /// Where the recorded last picture ends, by the reader's one rule (``MediaReader/lastFrameEnd(pts:duration:previousInterval:)``).
    var lastPictureEnd: Int64? {
        guard let last = pictures.last else { return nil }
        let before = pictures.count > 1 ? pictures[pictures.count - 2].pts : last.pts
        return MediaReader.lastFrameEnd(pts: last.pts, duration: last.duration, previousInterval: max(0, last.pts - before))
    }

    /// The recorded picture of the frame at `pts` (the first pass draws what it recorded).
    func picture(withPTS pts: Int64) -> Picture? {
        guard !isAbandoned else { return nil }
        return pictures.last { $0.pts == pts }
    }
}
