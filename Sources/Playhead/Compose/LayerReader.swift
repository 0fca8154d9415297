import Foundation
import PlayheadMedia

/// Draws one layer into the canvas at each output time, on the compositor's thread: the frame of
/// its playlist displayed at that time on the layer's own timeline (the last frame whose
/// presentation time is at or before it — the one ``MediaReader`` rule), scaled by its gravity
/// into its rectangle of the canvas.
///
/// Not `Sendable`: owned by the compositor's render thread.
final class LayerReader {
    let id: CompositionLayer.ID
    private(set) var layer: CompositionLayer
    private var timeline: LayerTimeline
    private let interrupt: InterruptFlag
    private let outputFormat: PictureFormat
    private let canvasSize: PixelSize

    private var reader: MediaReader?
    /// The current item has sound and no picture (music under a composition): it draws nothing
    /// for this long, and its sound plays if the layer gives the composition's.
    private var soundLength: MediaTime?
    private var demuxerOwner: Asset?
    private var converter: FrameConverter?
    /// Where the current item's frames start (its time range's start, or its first frame).
    private var itemStart: MediaTime = .zero
    /// The last frame drawn, kept to hold after the content ends: its own reference to the
    /// picture (the reader reuses the frames it holds).
    private var lastFrame: OwnedFrame?
    /// Where `lastFrame` came from (its reader and time), so that it is referenced once.
    private var lastFrameOrigin: (reader: ObjectIdentifier, pts: Int64)?
    private var lastConverter: FrameConverter?
    /// What plays in place of a failed item (``LayerFailurePolicy/filler(_:slot:)``).
    private let failurePolicy: LayerFailurePolicy
    /// The filler slot playing now, if one is.
    private var fillerSlot: FillerSlot?
    /// A new version of the layer (a live edit), taken up at its next item boundary.
    private var pending: CompositionLayer?
    /// Sound-only items' lengths, by evidence (shared by the compositor's layers).
    private let soundExtents: SoundExtentTable
    /// What recorded pictures may take (nil: the layer records none).
    private let loopBudget: LoopCacheBudget?
    /// Items whose pictures were recorded whole, by item: later passes draw them without decoding.
    private var recordings: [Int: LoopRecording] = [:]
    /// The recording the current reader feeds, and its item.
    private var recording: (item: Int, recording: LoopRecording)?
    /// Items that could not be recorded (the budget was spent, damage, frames out of order): not
    /// tried again for this version of the layer.
    private var unrecordable: Set<Int> = []
    /// Items whose recording began part way (a scheduled start, a seek) and were recorded again,
    /// whole, from a pass's start: once each.
    private var rerecorded: Set<Int> = []
    /// What was drawn last, to hold after the content ends: the decoded frame kept in
    /// `lastFrame`, or a recorded picture.
    private var lastShown: LastShown?
    private enum LastShown {
        case decoded
        case recorded(OwnedFrame, PixelRect)
    }

    /// A picture to draw: a decoded frame (scaled by the current converter) or a recorded one
    /// (already scaled; copied into its rectangle).
    enum Shown {
        case decoded(OwnedFrame)
        /// A recorded picture; `fromCache`: from a sealed recording (nothing decoded for it).
        case recorded(OwnedFrame, PixelRect, fromCache: Bool)
    }

    /// The passes its timeline has played so far (the last one may still be playing): what the
    /// composition's sound follows.
    private(set) var passes: [LayerPass]
    private(set) var framesShown = 0
    /// Frames drawn from a recording, without decoding (``Compositor/loopCacheBytes``).
    private(set) var framesFromLoopCache = 0
    /// Damaged packets decoded past in this layer's items, and the first.
    private(set) var damagedPackets = 0
    private(set) var firstDamage: PlayheadError?
    /// Any damage fails the item (``Compositor/strict``).
    private let strict: Bool
    private(set) var failure: PlayheadError?
    /// Items of a playlist that failed and were passed over (as a queue player skips a failed
    /// item), by item: the layer fails only when every item has.
    private(set) var itemFailures: [Int: PlayheadError] = [:]
    /// Told of every pass that ends (an item played, one that failed, a filler slot), on the
    /// render thread: what an as-run log records.
    var onRecord: ((LayerItemRecord) -> Void)?
    var loopsCompleted: Int { timeline.loopsCompleted }
    var hasEnded: Bool { timeline.hasEnded }

    /// A reader whose timeline starts at canvas time `start` (a layer added while rendering starts
    /// its playlist when it is added).
    init(
        id: CompositionLayer.ID, layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat, interrupt: InterruptFlag,
        strict: Bool = false, start: MediaTime = .zero, failurePolicy: LayerFailurePolicy = .passOver,
        soundExtents: SoundExtentTable = SoundExtentTable(), loopBudget: LoopCacheBudget? = nil
    ) {
        self.id = id
        self.loopBudget = loopBudget.flatMap { $0.limit > 0 ? $0 : nil }
        self.soundExtents = soundExtents
        self.strict = strict
        self.layer = layer
        self.canvasSize = canvasSize
        self.outputFormat = outputFormat
        self.interrupt = interrupt
        self.failurePolicy = failurePolicy
        timeline = LayerTimeline(itemCount: layer.assets.count, loop: layer.loop, start: start)
        passes = []
        join(at: start)
    }

    /// Starts the layer's playlist at layer time `start`: on schedule when it has one (the item the
    /// schedule plays now, begun as long ago as it says), else from its first item.
    private func join(at start: MediaTime) {
        timeline = LayerTimeline(itemCount: layer.assets.count, loop: layer.loop, start: start)
        if let scheduled = layer.scheduledStart, let lengths = Self.lengths(of: layer, soundExtents: soundExtents, interrupt: interrupt) {
            let elapsed = MediaTime(seconds: Date().timeIntervalSince(scheduled), preferredTimescale: 90_000)
            guard let position = LayerTimeline.position(after: elapsed, lengths: lengths, loop: layer.loop) else {
                timeline.end()
                return
            }
            timeline = LayerTimeline(
                itemCount: layer.assets.count, loop: layer.loop, start: start - position.offset, item: position.item, loops: position.loops)
            beginPass(at: start - position.offset)
            return
        }
        if !timeline.hasEnded { beginPass(at: start) }
    }

    /// How long each item's pass lasts (its time range's duration, else its picture's declared
    /// duration, else its decoded sound's), for a schedule; nil when one is not known.
    private static func lengths(of layer: CompositionLayer, soundExtents: SoundExtentTable, interrupt: InterruptFlag) -> [MediaTime]? {
        var lengths: [MediaTime] = []
        for asset in layer.assets {
            if let range = layer.timeRange, range.duration.isNumeric, range.duration > .zero {
                lengths.append(range.duration)
                continue
            }
            guard let demuxer = try? asset.openDemuxer(interrupt: interrupt) else { return nil }
            let declared = demuxer.video?.duration
            asset.giveBack(demuxer)
            if let declared, declared.isNumeric, declared > .zero {
                lengths.append(declared)
                continue
            }
            guard let extent = try? soundExtents.extent(of: asset, interrupt: interrupt), extent.end > extent.start else { return nil }
            lengths.append(extent.end - extent.start)
        }
        return lengths
    }

    deinit { closeItem() }

    /// The layer was removed: what it holds to draw (readers, frames) is let go; its passes stay
    /// for the sound's last span and its account for the report.
    func retire() {
        closeItem()
        forgetRecordings()
        lastShown = nil
        lastFrame = nil
        lastFrameOrigin = nil
        lastConverter = nil
        fillerSlot = nil
        isRetired = true
    }

    private(set) var isRetired = false

    /// The item playing now and how far into it (its own time), for a status report.
    var now: (item: Int, source: String, filler: Bool)? {
        guard !timeline.hasEnded, failure == nil else { return nil }
        if let fillerSlot { return (timeline.item, fillerSlot.asset?.source ?? "background", true) }
        return (timeline.item, layer.assets[timeline.item].source, false)
    }

    /// Forgets the passes that ended at or before `time` (keeping the last one), so that a layer
    /// looping for days keeps only what its sound may still read.
    func forgetPasses(endedBy time: MediaTime) {
        let ended = passes.prefix { pass in pass.length.map { !(time < pass.layerStart + $0) } ?? false }.count
        let drop = min(ended, passes.count - 1)
        if drop > 0 { passes.removeFirst(drop) }
    }

    /// The version the layer is heading for: the one waiting for the next item boundary, else the
    /// one playing.
    var intended: CompositionLayer { pending ?? layer }

    /// Moves the layer (and the version waiting, if any): the next frame is drawn at the new place.
    func move(rect: PixelRect, zIndex: Int) {
        pending?.rect = rect
        pending?.zIndex = zIndex
        let moved = rect != layer.rect
        layer.rect = rect
        layer.zIndex = zIndex
        guard moved else { return }
        converter = nil
        lastConverter = nil
        // Recorded pictures were scaled for the old place.
        forgetRecordings()
        lastShown = nil
        fillerSlot?.converter = nil
    }

    /// A new version of the layer (its playlist, place, sound), taken up at its next item boundary
    /// (see `advance`). A layer whose content has ended (played out, or failed) has no boundary to
    /// come: it takes the new version at once, at layer time `time`, as a new layer would start.
    func update(to layer: CompositionLayer, at time: MediaTime) {
        guard timeline.hasEnded else {
            pending = layer
            return
        }
        pending = nil
        _ = take(layer)
        failure = nil
        fillerSlot = nil
        join(at: time)
    }

    /// Makes `next` the layer's version: the old one's reader, recordings and failures let go.
    /// - Returns: whether it plays the same sources in the same order.
    private func take(_ next: CompositionLayer) -> Bool {
        closeItem()
        forgetRecordings()
        let samePlaylist = next.assets.map(\.source) == layer.assets.map(\.source)
        layer = next
        itemFailures = [:]
        lastConverter = nil
        lastShown = nil
        return samePlaylist
    }

    /// Draws the layer's frame at layer time `time` into `canvas`. A source that fails ends the
    /// layer (``failure``), which then shows the background; cancellation is thrown.
    func draw(at time: MediaTime, into canvas: OwnedFrame) throws(PlayheadError) {
        try follow(to: time) { shown throws(PlayheadError) in
            if case .decoded(let frame) = shown {
                try converterForCurrent().convert(frame, into: canvas)
                framesShown += 1
            } else if case .recorded(let picture, let rect, let fromCache) = shown {
                FrameConverter.blit(picture, into: canvas, at: rect)
                framesShown += 1
                if fromCache { framesFromLoopCache += 1 }
            } else if let slot = fillerSlot, let filler = slot.frame {
                try slot.converter(layer: layer, canvasSize: canvasSize, outputFormat: outputFormat).convert(filler, into: canvas)
                framesShown += 1
            } else if timeline.hasEnded, layer.afterEnd == .holdLastFrame, let lastShown {
                switch lastShown {
                case .decoded:
                    guard let lastFrame, let lastConverter else { return }
                    try lastConverter.convert(lastFrame, into: canvas)
                case .recorded(let picture, let rect):
                    FrameConverter.blit(picture, into: canvas, at: rect)
                }
                framesShown += 1
            }
        }
    }

    /// Moves the layer's timeline to `time` without drawing (so that ``passes`` account for it).
    func reach(_ time: MediaTime) throws(PlayheadError) {
        try follow(to: time) { _ throws(PlayheadError) in }
    }

    /// A source's failure passes over its item when others of the playlist may still play (the
    /// pass ends at `time`, the next begins there), or, with a filler policy, plays the filler
    /// for the item's slot; otherwise it ends the layer. Cancellation is thrown.
    private func follow(to time: MediaTime, _ body: (Shown?) throws(PlayheadError) -> Void) throws(PlayheadError) {
        while failure == nil {
            do throws(PlayheadError) {
                try body(try frame(at: time))
                return
            } catch {
                if error.code == .cancelled || interrupt.isRaised { throw .cancelled(file: error.file) }
                let item = timeline.item
                itemFailures[item] = itemFailures[item] ?? error
                closeItem()
                if case .filler(let asset, let slot) = failurePolicy, !timeline.hasEnded {
                    // The failed item's pass ends here; the filler plays for its slot.
                    let played = max(.zero, timeline.offset(at: time))
                    closePass(endingAt: timeline.passStart + played, status: .failed, error: error)
                    let length = layer.timeRange.map(\.duration).flatMap { $0.isNumeric && $0 > .zero ? $0 : nil } ?? slot
                    fillerSlot = FillerSlot(asset: asset, start: timeline.passStart + played, length: length, interrupt: interrupt)
                    passes.append(
                        LayerPass(
                            number: (passes.last?.number ?? -1) + 1, item: item, layerStart: timeline.passStart + played,
                            sourceStart: .zero, asset: asset, audible: layer.providesAudio, filler: true, wallClockStart: Date()))
                    continue
                }
                if itemFailures.count < layer.assets.count, !timeline.hasEnded {
                    // Passed over: what it showed of its pass stays, the next item starts now.
                    let length = max(.zero, timeline.offset(at: time))
                    advance(length: length, status: .failed, error: error)
                    continue
                }
                failure = error
                endPass(at: time, status: .failed, error: error)
                timeline.end()
            }
        }
    }

    /// The layer stops here (removed, or failed): its last pass, if still playing, ends at `time`.
    func endPass(at time: MediaTime, status: LayerItemRecord.Status = .played, error: PlayheadError? = nil) {
        guard let last = passes.indices.last, passes[last].length == nil else { return }
        let length = max(.zero, time - passes[last].layerStart)
        passes[last].length = length
        // A pass that had not begun to play (the render ended where it starts) is not a record.
        if length == .zero, status == .played { return }
        record(passes[last], status: passes[last].filler ? .filler : status, error: error)
    }

    /// The frame displayed at `time`, or nil once the content has ended (or a filler slot shows
    /// its own frame, or nothing).
    private func frame(at time: MediaTime) throws(PlayheadError) -> Shown? {
        var tries = 0
        while !timeline.hasEnded {
            tries += 1
            if tries > 10_000 {
                throw PlayheadError(code: .decodeFailed, message: "the layer's items hold no time to play", file: layer.assets.first?.source)
            }
            if let slot = fillerSlot {
                if time < slot.start + slot.length {
                    slot.show(at: time)
                    return nil
                }
                // The slot is over: the failed item's pass (its part and the filler's) ends.
                fillerSlot = nil
                closePass(endingAt: slot.start + slot.length, status: .filler, error: nil)
                advance(length: slot.start + slot.length - timeline.passStart, status: nil, error: nil)
                continue
            }
            if let recorded = recordings[timeline.item] {
                switch recordedFrame(at: time, from: recorded) {
                case .shown(let shown): return shown
                case .passEnded: continue
                case .unknown: break  // Decoded as without a recording.
                }
            }
            let opened = try openItem()
            if let last = self.passes.indices.last, self.passes[last].sourceStart == nil { self.passes[last].sourceStart = itemStart }
            let offset = timeline.offset(at: time)
            guard let reader = opened else {
                // Sound alone: nothing drawn until the pass has lasted the item's length.
                guard let soundLength else { throw PlayheadError(code: .invalidState, message: "no item open", file: nil) }
                if !(offset < soundLength) {
                    advance(length: soundLength, status: .played, error: nil)
                    continue
                }
                return nil
            }
            if let range = layer.timeRange, range.duration.isNumeric, !(offset < range.duration) {
                settleRecording(of: reader, reachedEnd: false)
                advance(length: range.duration, status: .played, error: nil)
                continue
            }
            // Half a tick of the stream's time base later: a frame whose time the container
            // rounded up (milliseconds in Matroska) is still the one displayed at its own instant.
            let timeBase = reader.facts.timeBase
            let target = itemStart + offset + Self.halfTick(timeBase)
            try reader.seek(to: SeekRequest(time: target))
            let damageBefore = reader.damage.count
            guard let held = try reader.selectedFrame() else {
                throw reader.end?.failure ?? PlayheadError(code: .decodeFailed, message: "no frame could be decoded", file: reader.source)
            }
            dropRecordingIfGivenUp(reader)
            let damage = reader.damage
            if damage.count > damageBefore {
                damagedPackets += damage.count - damageBefore
                firstDamage = firstDamage ?? damage.first
            }
            // The one rule: an item cut short fails where its data stops (it does not loop at the
            // cut); with `strict`, any damage fails it.
            if let failure = reader.verdict(for: held, strict: strict) { throw failure }
            let end = MediaTime(ticks: held.pts + held.duration, timeBase: timeBase)
            let window = reader.video.window
            let isLast = window.ended && held.pts >= (window.newestPTS ?? held.pts)
            if isLast, !(target < end) {
                // Past the last frame: this pass ended where that frame ends.
                let length = end - itemStart
                guard length > .zero else {
                    throw PlayheadError(code: .decodeFailed, message: "the item holds no time to play", file: reader.source)
                }
                settleRecording(of: reader, reachedEnd: true)
                advance(length: length, status: .played, error: nil)
                continue
            }
            if let recording, let recorded = recording.recording.picture(withPTS: held.pts) {
                // Recorded as it was decoded: drawn from the recording (scaled once).
                lastShown = .recorded(recorded.picture, recording.recording.rect)
                return .recorded(recorded.picture, recording.recording.rect, fromCache: false)
            }
            try keep(held, of: reader)
            lastConverter = try converterForCurrent()
            lastShown = .decoded
            return .decoded(held.frame)
        }
        return nil
    }

    private enum RecordedAnswer {
        case shown(Shown)
        case passEnded
        /// The recording cannot tell: decode.
        case unknown
    }

    /// The frame displayed at `time` from the current item's recording — or the pass ends there,
    /// by the same rule as decoding (past the last frame's end, or past the time range).
    private func recordedFrame(at time: MediaTime, from recorded: LoopRecording) -> RecordedAnswer {
        if let last = passes.indices.last, passes[last].sourceStart == nil { passes[last].sourceStart = recorded.itemStart }
        let offset = timeline.offset(at: time)
        if let range = layer.timeRange, range.duration.isNumeric, !(offset < range.duration) {
            advance(length: range.duration, status: .played, error: nil)
            return .passEnded
        }
        let (target, tick) = recorded.target(at: offset)
        guard let (picture, isLast) = recorded.picture(at: tick) else { return .unknown }
        let end = MediaTime(ticks: picture.pts + picture.duration, timeBase: recorded.timeBase)
        if isLast, !(target < end) {
            let length = end - recorded.itemStart
            guard length > .zero else { return .unknown }
            advance(length: length, status: .played, error: nil)
            return .passEnded
        }
        lastShown = .recorded(picture.picture, recorded.rect)
        return .shown(.recorded(picture.picture, recorded.rect, fromCache: true))
    }

    /// The current item's pass ended: its recording, if it was fed, is kept for later passes when
    /// it is whole (no damage; `reachedEnd`: the data ended complete), else given up for good.
    private func settleRecording(of reader: MediaReader, reachedEnd: Bool) {
        guard let (item, recorded) = recording else { return }
        recording = nil
        reader.video.recorder = nil
        reader.video.decodesEveryFrame = false
        let whole = reader.damage.count == 0 && (!reachedEnd || (reader.end != nil && reader.end?.failure == nil))
        if whole { recorded.seal(reachedEnd: reachedEnd) }
        if recorded.isSealed {
            recordings[item] = recorded
        } else {
            recorded.abandon()
            unrecordable.insert(item)
        }
    }

    /// A recording that gave up (its budget spent, a frame out of order) stops costing the
    /// decoder anything at once: the item is not recorded again.
    private func dropRecordingIfGivenUp(_ reader: MediaReader) {
        guard let (item, recorded) = recording, recorded.isAbandoned else { return }
        recording = nil
        reader.video.recorder = nil
        reader.video.decodesEveryFrame = false
        unrecordable.insert(item)
    }

    /// Whether the layer plays its items more than once (what makes recording them worth it).
    private var repeats: Bool {
        switch layer.loop {
        case .once: false
        case .times(let count): count > 1
        case .forever: true
        }
    }

    /// Whether the current item is to be recorded when its reader next opens.
    private var wantsRecording: Bool {
        loopBudget != nil && repeats && recordings[timeline.item] == nil && !unrecordable.contains(timeline.item)
    }

    /// Starts recording the pictures of the reader just opened for the current item, when the
    /// layer plays its items more than once, its source can be read again and the item was not
    /// found unrecordable.
    private func startRecording(_ reader: MediaReader) {
        // A source read once (a pipe) is not recorded: its later passes fail as they would without.
        guard let loopBudget, wantsRecording, reader.demuxer.canSeek else { return }
        let layout = Self.converter(for: reader, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat).layout
        // An item that says it is longer than the budget has room for is not begun: it would take
        // the budget from the others while it fills, and give up anyway.
        if let duration = reader.facts.duration, duration.isNumeric, let frame = reader.facts.frameDuration, frame > .zero {
            let frames = duration.seconds / frame.seconds
            let needed = frames * Double(outputFormat.bytes(of: layout.content.size))
            if needed > Double(loopBudget.limit - loopBudget.used) {
                unrecordable.insert(timeline.item)
                return
            }
        }
        let recorded = LoopRecording(
            layout: layout, format: outputFormat, itemStart: itemStart, timeBase: reader.facts.timeBase, budget: loopBudget,
            source: reader.source)
        recording = (timeline.item, recorded)
        reader.video.recorder = recorded
        reader.video.decodesEveryFrame = true
    }

    /// Lets every recording go (the layer moved, or became a new version).
    private func forgetRecordings() {
        if let reader, recording != nil {
            reader.video.recorder = nil
            reader.video.decodesEveryFrame = false
        }
        recording?.recording.abandon()
        recording = nil
        for recorded in recordings.values { recorded.abandon() }
        recordings = [:]
        unrecordable = []
        rerecorded = []
    }

    /// Keeps its own reference to the frame drawn (once per frame), to hold after the content ends.
    private func keep(_ held: DisplayedFrameWindow<OwnedFrame>.Held, of reader: MediaReader) throws(PlayheadError) {
        let origin = (reader: ObjectIdentifier(reader), pts: held.pts)
        if let kept = lastFrameOrigin, kept == origin { return }
        let frame: OwnedFrame
        if let lastFrame { frame = lastFrame } else { frame = try OwnedFrame() }
        try frame.reference(held.frame)
        lastFrame = frame
        lastFrameOrigin = origin
    }

    /// Half a tick of `timeBase`, as a time.
    static func halfTick(_ timeBase: Rational) -> MediaTime {
        guard timeBase.num > 0, timeBase.den > 0, timeBase.den <= Int32.max / 2 else { return .zero }
        return MediaTime(value: Int64(timeBase.num), timescale: timeBase.den * 2)
    }

    /// The current item's pass ended after `length` (a nil `status`: its record was made already):
    /// the next item (or the first again) starts there — in a new version of the layer, if one
    /// is waiting: on its schedule when it has one; else with the item after this one when it
    /// plays the same sources in the same order (a move, a new look, a file replaced in place);
    /// else from its first item.
    private func advance(length: MediaTime, status: LayerItemRecord.Status?, error: PlayheadError?) {
        let item = timeline.item
        if let status { closePass(endingAt: timeline.passStart + length, status: status, error: error) }
        let end = timeline.passStart + length
        if let next = pending {
            pending = nil
            let loops = timeline.loopsCompleted
            guard take(next), next.scheduledStart == nil else {
                join(at: end)
                return
            }
            // The same playlist under the new version's loop policy: it goes on below.
            timeline = LayerTimeline(itemCount: next.assets.count, loop: next.loop, start: timeline.passStart, item: item, loops: loops)
        }
        let more = timeline.passEnded(length: length)
        if more { beginPass(at: timeline.passStart) }
        guard more else {
            // The content ended: nothing recorded plays again (a held last frame keeps its picture).
            closeItem()
            forgetRecordings()
            return
        }
        let next = timeline.item
        if let recorded = recordings[next], !rerecorded.contains(next), !recorded.covers(recorded.target(at: .zero).tick) {
            // Recorded from part way in (a scheduled start, a seek): this pass records it whole.
            rerecorded.insert(next)
            recorded.abandon()
            recordings[next] = nil
        }
        // A recorded item needs no reader on its later passes; one to be recorded needs a fresh one.
        if next != item || recordings[item] != nil || wantsRecording { closeItem() }
    }

    private func beginPass(at start: MediaTime) {
        let asset = layer.assets[timeline.item]
        passes.append(
            LayerPass(
                number: (passes.last?.number ?? -1) + 1, item: timeline.item, layerStart: start, asset: asset,
                audible: layer.providesAudio, wallClockStart: Date()))
        // The next item, if it is sound alone, is measured while this one plays.
        if layer.assets.count > 1 { soundExtents.prefetch([layer.assets[(timeline.item + 1) % layer.assets.count]]) }
    }

    /// Gives the last pass its length (ending at canvas time `end`), if it has none yet, and
    /// records it.
    private func closePass(endingAt end: MediaTime, status: LayerItemRecord.Status, error: PlayheadError?) {
        guard let last = passes.indices.last, passes[last].length == nil else { return }
        passes[last].length = max(.zero, end - passes[last].layerStart)
        record(passes[last], status: status, error: error)
    }

    private func record(_ pass: LayerPass, status: LayerItemRecord.Status, error: PlayheadError?) {
        guard let onRecord else { return }
        onRecord(
            LayerItemRecord(
                layer: id, item: pass.item, source: pass.filler ? (pass.asset?.source ?? "background") : (pass.asset?.source ?? ""),
                start: pass.layerStart, end: pass.layerStart + (pass.length ?? .zero), wallClockStart: pass.wallClockStart,
                status: status, error: error, asset: pass.asset))
    }

    /// The current item's reader; nil for an item of sound alone (``soundLength`` is then set).
    private func openItem() throws(PlayheadError) -> MediaReader? {
        if let reader { return reader }
        if soundLength != nil { return nil }
        // An item that failed before fails again at once (a loop does not retry it every pass).
        if let failed = itemFailures[timeline.item] { throw failed }
        let asset = layer.assets[timeline.item]
        let demuxer = try asset.openDemuxer(interrupt: interrupt)
        // A time range counts from the item's start (as the container gives it), whatever its
        // first timestamp: the same span of every item of a playlist.
        let rangeStart = layer.timeRange.map { demuxer.containerStart + $0.start }
        if demuxer.video == nil, demuxer.audio != nil {
            let source = demuxer.source
            asset.giveBack(demuxer)
            // As long as its sound decodes (measured once), not as its header says.
            guard let extent = try soundExtents.extent(of: asset, interrupt: interrupt) else {
                throw PlayheadError(code: .noVideoTrack, message: "the item has neither a picture nor any sound that decodes", file: source)
            }
            let start = rangeStart ?? extent.start
            var length = extent.end - start
            if let range = layer.timeRange, range.duration.isNumeric, range.duration < length { length = range.duration }
            guard length > .zero else {
                throw PlayheadError(code: .decodeFailed, message: "the item holds no time to play", file: source)
            }
            itemStart = start
            soundLength = length
            converter = nil
            return nil
        }
        let opened: MediaReader
        do throws(PlayheadError) {
            opened = try MediaReader(demuxer: demuxer, threads: 0)
        } catch {
            asset.giveBack(demuxer)
            throw error
        }
        reader = opened
        demuxerOwner = asset
        converter = nil
        itemStart = rangeStart ?? opened.facts.startTime ?? .zero
        startRecording(opened)
        return opened
    }

    private func converterForCurrent() throws(PlayheadError) -> FrameConverter {
        if let converter { return converter }
        guard let reader else { throw PlayheadError(code: .invalidState, message: "no item open", file: nil) }
        let made = Self.converter(for: reader, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat)
        converter = made
        return made
    }

    /// A converter of `reader`'s pictures into `layer`'s rectangle of the canvas.
    static func converter(for reader: MediaReader, layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat) -> FrameConverter {
        let facts = reader.facts
        let rect = layer.rect
        var layout = layer.gravity.layout(
            stored: facts.storedSize, pixelAspectRatio: facts.pixelAspectRatio, orientation: facts.orientation,
            canvas: rect.size, alignment: 2)
        layout.canvas = canvasSize
        layout.content.x += rect.x
        layout.content.y += rect.y
        return FrameConverter(layout: layout, format: outputFormat, source: reader.source)
    }

    private func closeItem() {
        // A recording cut off before its pass ended holds part of the item: let go.
        if let (_, recorded) = recording {
            reader?.video.recorder = nil
            reader?.video.decodesEveryFrame = false
            recorded.abandon()
            recording = nil
        }
        if let reader, let demuxerOwner { demuxerOwner.giveBack(reader.demuxer) }
        reader = nil
        demuxerOwner = nil
        converter = nil
        soundLength = nil
        // A later reader may have this one's address: its frames are kept afresh.
        lastFrameOrigin = nil
    }
}
