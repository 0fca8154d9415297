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
    /// The playlist's rules: passes, failures, fillers, live edits (pure; see its tests).
    private var machine: LayerStateMachine
    private let interrupt: InterruptFlag
    /// Opens the layer's items ahead of their turn (shared by the render's layers and sound).
    private let preparer: ItemPreparer
    private let outputFormat: PictureFormat
    private let canvasSize: PixelSize

    /// What the current item draws from, while its pass plays.
    private enum Content {
        /// Nothing open (between passes, or not opened yet; in a channel, an item whose source has
        /// not opened yet: the layer holds its last picture meanwhile).
        case closed
        /// A decoded item (its reader, its decode out, its converter).
        case decoding(Decoding)
        /// An item of sound and no picture (music under a composition): it draws nothing for
        /// `length` from `itemStart`, and its sound plays if the layer gives the composition's.
        /// In a channel it starts before its sound is measured (`length` nil until it is, from
        /// the start its stream declares), so that an hours-long item delays nothing.
        case soundOnly(itemStart: MediaTime, length: MediaTime?)
    }
    /// A decoded item's reader and what goes with it, for as long as it is open.
    private struct Decoding {
        /// Its reader (its demuxer given back to `owner` at the end).
        let reader: MediaReader
        let owner: Asset
        /// Where its frames start: its time range's start, or its first frame.
        let itemStart: MediaTime
        /// Its converter into the canvas (made at the first frame drawn; nil again when the layer
        /// moves).
        var converter: FrameConverter?
        /// In a realtime render: its decode on a worker, while it is out (the reader is the
        /// worker's until it ends).
        var inFlight: LayerDecodeRequest?
        /// A decode of this reader answered with a picture (its source has sent one at least: a
        /// later decode of it is held to the stall timeout, not the open timeout more).
        var answered = false
    }
    private var content = Content.closed
    /// In a realtime render, while a frame is drawn: when it is due (a picture not decoded by then
    /// is held); nil: the render waits for every picture.
    private var deadline: FrameDeadline?
    /// The filler playing in a failed item's slot (``LayerFailurePolicy/filler(_:slot:)``), while
    /// the machine's phase is `filler`.
    private var fillerSlot: FillerSlot?
    /// Sound-only items' lengths, by evidence (shared by the compositor's layers).
    private let soundExtents: SoundExtentTable
    /// Items' lengths for a schedule, measured ahead (shared by the compositor's layers).
    private let itemLengths: ItemLengthTable
    /// What recorded pictures may take (nil: the layer records none).
    private let loopBudget: LoopCacheBudget?
    /// Which items are recorded, kept and given up (pure; see its tests); this type attaches the
    /// recording it names to the reader.
    private var loopCache = LoopCacheBook<LoopRecording>()
    /// What was drawn last, to hold while there is no new picture (a decode still out, a source
    /// not open yet) and after the content ends.
    private var lastShown = LastShown.nothing
    private enum LastShown {
        case nothing
        /// A decoded frame: its own reference to the picture (the reader reuses the frames it
        /// holds), the converter that drew it, and where it came from (its reader and time; nil
        /// once that reader is closed), so that a frame drawn again is not referenced again.
        case decoded(OwnedFrame, FrameConverter, origin: (reader: ObjectIdentifier, pts: Int64)?)
        /// A recorded picture (already scaled) and its rectangle.
        case recorded(OwnedFrame, PixelRect)
    }

    /// What the layer shows at a time: a decoded frame (scaled by the current converter), a
    /// recorded one (already scaled; copied into its rectangle), a filler's frame, the last frame
    /// held after the content ended, or nothing (the background shows: a sound-only item, a
    /// filler with no frame, a layer that clears or failed).
    enum Shown {
        case decoded(OwnedFrame)
        /// A recorded picture; `fromCache`: from a sealed recording (nothing decoded for it).
        case recorded(OwnedFrame, PixelRect, fromCache: Bool)
        case filler(OwnedFrame, FillerSlot)
        case held
        case nothing
    }

    /// What a layer shows while it has no new picture: the last one again, if any.
    private var holding: Shown {
        if case .nothing = lastShown { return .nothing }
        return .held
    }

    private(set) var framesShown = 0
    /// Frames drawn from a recording, without decoding (``Compositor/loopCacheBytes``).
    private(set) var framesFromLoopCache = 0
    /// Damaged packets decoded past in this layer's items, and the first.
    private(set) var damagedPackets = 0
    private(set) var firstDamage: PlayheadError?
    /// Any damage fails the item (``Compositor/strict``).
    private let strict: Bool
    /// Told of every pass that ends (an item played, one that failed, a filler slot), on the
    /// render thread: what an as-run log records.
    var onRecord: ((LayerItemRecord) -> Void)?

    /// The version playing.
    var layer: CompositionLayer { machine.layer }
    /// The passes its timeline has played so far (the last one may still be playing): what the
    /// composition's sound follows.
    var passes: [LayerPass] { machine.passes }
    /// Whether the layer failed for good (it shows the background for the rest of the render; a
    /// channel's layer that waits to try its items again has not).
    var hasFailedForGood: Bool {
        if case .failed = machine.phase { return true }
        return false
    }
    /// Why the layer failed (every item failed, or one did without a policy that passes over);
    /// in a channel, also while every item's failure stands and the layer waits to try again.
    var failure: PlayheadError? {
        switch machine.phase {
        case .failed(let error), .waiting(_, let error): error
        case .playing, .ended, .filler: nil
        }
    }
    /// Items of a playlist that failed and were passed over, by item.
    var itemFailures: [Int: PlayheadError] { machine.itemFailures }
    var loopsCompleted: Int { machine.timeline.loopsCompleted }
    var hasEnded: Bool { machine.timeline.hasEnded }
    private var timeline: LayerTimeline { machine.timeline }

    /// A reader whose timeline starts at canvas time `start` (a layer added while rendering starts
    /// its playlist when it is added).
    init(
        id: CompositionLayer.ID, layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat, interrupt: InterruptFlag,
        strict: Bool = false, start: MediaTime = .zero, failurePolicy: LayerFailurePolicy = .passOver,
        soundExtents: SoundExtentTable = SoundExtentTable(), itemLengths: ItemLengthTable? = nil, loopBudget: LoopCacheBudget? = nil,
        preparer: ItemPreparer = ItemPreparer(waits: true), retryFailedItemsAfter: Duration? = nil
    ) {
        self.preparer = preparer
        let itemLengths = itemLengths ?? ItemLengthTable(soundExtents: soundExtents)
        self.itemLengths = itemLengths
        self.id = id
        self.loopBudget = loopBudget.flatMap { $0.limit > 0 ? $0 : nil }
        self.soundExtents = soundExtents
        self.strict = strict
        self.canvasSize = canvasSize
        self.outputFormat = outputFormat
        self.interrupt = interrupt
        machine = LayerStateMachine(
            id: id, layer: layer, failurePolicy: failurePolicy, start: start, now: Date(), retryFailedItemsAfter: retryFailedItemsAfter,
            lengths: { Self.lengths(of: $0, table: itemLengths, interrupt: interrupt, waits: preparer.waits) })
        if case .filler(let filler?, _) = failurePolicy { preparer.prepare(filler) }
        perform(machine.effectsAtStart)
    }

    /// The lengths of a version's passes, for its schedule: asked by the machine of the version
    /// it joins (a pending one taken at a boundary, not the one ending).
    private var lengths: (CompositionLayer) -> [MediaTime]? {
        let itemLengths = itemLengths, interrupt = interrupt, waits = preparer.waits
        return { Self.lengths(of: $0, table: itemLengths, interrupt: interrupt, waits: waits) }
    }

    /// Does what the machine decided, in order.
    private func perform(_ effects: [LayerStateMachine.Effect]) {
        for effect in effects {
            switch effect {
            case .closeItem: closeItem()
            case .forgetRecordings: forgetRecordings()
            case .tookVersion:
                closeItem()
                forgetRecordings()
                lastShown = .nothing
            case .record(let record): onRecord?(record)
            case .passBegan(let item, let continuing): passBegan(item, continuing: continuing)
            case .prefetch(let asset):
                soundExtents.prefetch([asset])
                preparer.prepare(asset, copies: preparer.copies(for: layer))
            case .filler(let asset, let start, let length):
                fillerSlot = FillerSlot(asset: asset, start: start, length: length, interrupt: interrupt, preparer: preparer)
            case .stopFiller: fillerSlot = nil
            case .letPictureGo:
                lastShown = .nothing
            }
        }
    }

    /// A pass of `item` began: a recording made from part way in is made again, whole, on this
    /// pass; a recorded item needs no reader on its later passes, and one to be recorded a fresh one.
    private func passBegan(_ item: Int, continuing: Bool) {
        loopCache.passBegins(item)
        if !continuing || loopCache.recording(of: item) != nil || wantsRecording { closeItem() }
        // Opened ahead (in a channel, the render does not wait for it).
        if case .closed = content {
            let copies = preparer.copies(for: layer, pictures: loopCache.recording(of: item) == nil)
            if copies > 0 { preparer.prepare(layer.assets[item], copies: copies) }
        }
    }

    /// How long each item's pass lasts (its time range's duration, else its measured length:
    /// ``ItemLengthTable``), for a schedule; nil when one is not known. A render that must not
    /// wait (a channel's: `waits` false) takes the measures its workers have taken (the channel
    /// took the version once they were, or gave up waiting): a source that does not answer never
    /// holds it (the layer then plays its playlist from the first item).
    private static func lengths(of layer: CompositionLayer, table: ItemLengthTable, interrupt: InterruptFlag, waits: Bool) -> [MediaTime]? {
        var lengths: [MediaTime] = []
        for asset in layer.assets {
            if let range = layer.timeRange, range.duration.isNumeric, range.duration > .zero {
                lengths.append(range.duration)
                continue
            }
            let measured: MediaTime??
            if waits {
                measured = try? table.value(of: asset, interrupt: interrupt)
            } else {
                measured = try? table.measured(asset)?.get()
            }
            guard let length = measured ?? nil else { return nil }
            lengths.append(length)
        }
        return lengths
    }

    deinit { closeItem() }

    /// The layer was removed: what it holds to draw (readers, frames) is let go; its passes stay
    /// for the sound's last span and its account for the report.
    func retire() {
        closeItem()
        forgetRecordings()
        lastShown = .nothing
        fillerSlot = nil
        isRetired = true
    }

    private(set) var isRetired = false

    /// The asset the layer plays now (its item's, or a filler's), if any.
    var currentAsset: Asset? {
        switch machine.phase {
        case .ended, .failed, .waiting: return nil
        case .filler(_, _, let asset): return asset
        case .playing: return layer.assets[timeline.item]
        }
    }

    /// The item playing now, for a status report.
    var now: (item: Int, source: String, filler: Bool)? {
        switch machine.phase {
        case .ended, .failed, .waiting: return nil
        case .filler(_, _, let asset): return (timeline.item, asset?.source ?? "background", true)
        case .playing: return (timeline.item, layer.assets[timeline.item].source, false)
        }
    }

    /// Forgets the passes that ended at or before `time` (keeping the last one), so that a layer
    /// looping for days keeps only what its sound may still read.
    func forgetPasses(endedBy time: MediaTime) { machine.forgetPasses(endedBy: time) }

    /// The version the layer is heading for: the one waiting for the next item boundary, else the
    /// one playing.
    var intended: CompositionLayer { machine.intended }

    /// Moves the layer (and the version waiting, if any): the next frame is drawn at the new place.
    func move(rect: PixelRect, zIndex: Int) {
        guard machine.move(rect: rect, zIndex: zIndex) else { return }
        updateDecoding { $0.converter = nil }
        // The pictures held and recorded were scaled for the old place.
        forgetRecordings()
        lastShown = .nothing
        fillerSlot?.converter = nil
    }

    /// A new version of the layer (its playlist, place, sound), taken up at its next item boundary.
    /// A layer whose content has ended (played out, or failed) has no boundary to come: it takes
    /// the new version at once, at layer time `time`, as a new layer would start.
    func update(to layer: CompositionLayer, at time: MediaTime) {
        let playing = machine.layer
        perform(machine.update(to: layer, at: time, now: Date(), lengths: lengths))
        // The item the new version starts with at the boundary, opened now (in a channel the
        // boundary does not wait for it): the next one of the same playlist, else its first.
        guard machine.pending != nil, !layer.assets.isEmpty else { return }
        let samePlaylist = layer.assets.map(\.source) == playing.assets.map(\.source)
        let next = samePlaylist ? (timeline.item + 1) % layer.assets.count : 0
        preparer.prepare(layer.assets[next], copies: preparer.copies(for: layer))
    }

    /// Draws the layer's frame at layer time `time` into `canvas`. A source that fails ends the
    /// layer (``failure``), which then shows the background; cancellation is thrown.
    /// - Parameter deadline: in a realtime render, when the frame is due: a picture that is not
    ///   decoded by then is held (the last one shows again) while its decode goes on on a worker,
    ///   so that a source that stalls never holds the render; nil: waits for every picture.
    func draw(at time: MediaTime, into canvas: OwnedFrame, deadline: FrameDeadline? = nil) throws(PlayheadError) {
        self.deadline = deadline
        defer { self.deadline = nil }
        try follow(to: time) { shown throws(PlayheadError) in
            switch shown {
            case .decoded(let frame):
                try converterForCurrent().convert(frame, into: canvas)
            case .recorded(let picture, let rect, let fromCache):
                FrameConverter.blit(picture, into: canvas, at: rect)
                if fromCache { framesFromLoopCache += 1 }
            case .filler(let frame, let slot):
                try slot.converter(layer: layer, canvasSize: canvasSize, outputFormat: outputFormat).convert(frame, into: canvas)
            case .held:
                switch lastShown {
                case .decoded(let frame, let converter, _):
                    try converter.convert(frame, into: canvas)
                case .recorded(let picture, let rect):
                    FrameConverter.blit(picture, into: canvas, at: rect)
                case .nothing:
                    return
                }
            case .nothing:
                return
            }
            framesShown += 1
        }
    }

    /// Moves the layer's timeline to `time` without drawing (so that ``passes`` account for it).
    func reach(_ time: MediaTime) throws(PlayheadError) {
        try follow(to: time) { _ throws(PlayheadError) in }
    }

    /// A source's failure is the machine's to settle (passed over, a filler for its slot, or the
    /// layer's end); cancellation is thrown.
    private func follow(to time: MediaTime, _ body: (Shown) throws(PlayheadError) -> Void) throws(PlayheadError) {
        while true {
            if case .failed = machine.phase {
                try body(.nothing)
                return
            }
            do throws(PlayheadError) {
                try body(try frame(at: time))
                return
            } catch {
                if error.code == .cancelled || interrupt.isRaised { throw .cancelled(file: error.file) }
                perform(machine.itemFailed(error, at: time, now: Date(), lengths: lengths))
            }
        }
    }

    /// The layer stops here (removed, or failed): its last pass, if still playing, ends at `time`.
    func endPass(at time: MediaTime, status: LayerItemRecord.Status = .played, error: PlayheadError? = nil) {
        perform(machine.endPass(at: time, status: status, error: error))
    }

    /// What the layer shows at `time`.
    private func frame(at time: MediaTime) throws(PlayheadError) -> Shown {
        var tries = 0
        while true {
            tries += 1
            if tries > 10_000 {
                throw PlayheadError(code: .decodeFailed, message: "the layer's items hold no time to play", file: layer.assets.first?.source)
            }
            switch machine.phase {
            case .failed:
                return .nothing
            case .waiting:
                // The background until a failure lapses; then the playlist goes on.
                perform(machine.retryIfDue(at: time, now: Date(), lengths: lengths))
                if case .waiting = machine.phase { return .nothing }
            case .ended:
                return layer.afterEnd == .holdLastFrame ? holding : .nothing
            case .filler(let start, let length, _):
                guard time < start + length, let slot = fillerSlot else {
                    // The slot is over: the failed item's pass (its part and the filler's) ends.
                    perform(machine.fillerEnded(now: Date(), lengths: lengths))
                    continue
                }
                slot.show(at: time, deadline: deadline)
                return slot.frame.map { .filler($0, slot) } ?? .nothing
            case .playing:
                if let shown = try playing(at: time) { return shown }
            }
        }
    }

    /// The current item's frame at `time`, or nil when its pass ended (the next one began).
    private func playing(at time: MediaTime) throws(PlayheadError) -> Shown? {
        if let recorded = loopCache.recording(of: timeline.item) {
            switch recordedFrame(at: time, from: recorded) {
            case .shown(let shown): return shown
            case .passEnded: return nil
            case .unknown: break  // Decoded as without a recording.
            }
        }
        let offset = timeline.offset(at: time)
        switch try openItem() {
        case .closed:
            // Its source has not opened yet (a channel does not wait): the layer keeps its time
            // and holds its last picture; the item joins where its pass is when it opens, or
            // fails when its open fails or times out.
            if LayerStateMachine.rangeEnd(of: layer.timeRange, at: offset) != nil {
                throw PlayheadError(code: .timedOut, message: "the item did not open within its time range", file: layer.assets[timeline.item].source)
            }
            return holding
        case .soundOnly(let itemStart, let known):
            machine.passSourceStarts(at: itemStart)
            let asset = layer.assets[timeline.item]
            var length = known
            if length == nil { length = try soundLength(of: asset, from: itemStart, wait: false) }
            guard let length else {
                // Still being measured: the pass goes on (its range may end it first).
                if let length = LayerStateMachine.rangeEnd(of: layer.timeRange, at: offset) {
                    passEnded(length: length, status: .played)
                    return nil
                }
                return .nothing
            }
            if known == nil { content = .soundOnly(itemStart: itemStart, length: length) }
            // Sound alone: nothing drawn until the pass has lasted the item's length.
            if !(offset < length) {
                passEnded(length: length, status: .played)
                return nil
            }
            return .nothing
        case .decoding(let open):
            let reader = open.reader, itemStart = open.itemStart
            machine.passSourceStarts(at: itemStart)
            if let length = LayerStateMachine.rangeEnd(of: layer.timeRange, at: offset) {
                // The pass's range ended (a decode still out lets go of the item when it ends).
                if open.inFlight != nil { closeItem() } else { settleRecording(of: reader, reachedEnd: false) }
                passEnded(length: length, status: .played)
                return nil
            }
            // Half a tick of the stream's time base later: a frame whose time the container
            // rounded up (milliseconds in Matroska) is still the one displayed at its own instant.
            let timeBase = reader.facts.timeBase
            let found: LayerDecodeRequest.Held?
            let damageBefore: Int
            var target = itemStart + offset + Self.halfTick(timeBase)
            if let flight = open.inFlight {
                // A decode out since an earlier frame (in a realtime render): the reader is the
                // worker's until it ends; never waited for (the other layers' pictures are due
                // too). Once it has ended, its picture — a frame or more late, newer than the one
                // held — is shown; the next frame asks anew.
                guard flight.isFinished else {
                    // A source slower than its own rate: the channel keeps its time, and the pass
                    // ends at the length its picture declares (its decode let go when it ends) —
                    // once a second past it, so that a decode merely late at the item's end (or a
                    // length declared a little short) ends the pass as played, by its frames.
                    if let declared = reader.facts.duration, declared.isNumeric, declared > .zero {
                        let length = (reader.facts.startTime ?? .zero) + declared - itemStart
                        if length > .zero, !(offset < length + Self.slownessGrace) {
                            closeItem()
                            perform(
                                machine.passEnded(
                                    length: length, status: .failed, error: Self.tooSlow(reader.source), now: Date(), lengths: lengths))
                            return nil
                        }
                    }
                    // Whatever it declares: a decode out longer than the source's stall timeout
                    // fails the item where the layer is — its data comes, but its picture has
                    // fallen that far behind — as a source that stopped sending would. The first
                    // decode of an opened item (an index read, a seek, a whole group of pictures)
                    // has its open timeout more. Never a regular file's (its reads do not stall).
                    let asset = layer.assets[timeline.item]
                    if let stall = asset.stallTimeout, let sentAt = flight.sentAt {
                        let limit = stall + (open.answered ? .zero : asset.openTimeout ?? stall)
                        if ContinuousClock.now - sentAt > limit, asset.readsCanStall { throw Self.tooSlow(reader.source, behindBy: limit) }
                    }
                    return holding
                }
                updateDecoding { $0.inFlight = nil }
                found = try flight.answer()
                damageBefore = flight.damageBefore
                target = flight.target
            } else if let deadline {
                // On a worker, waited for until the frame is due: a source that stalls holds the
                // worker (until its stall timeout), never the render.
                let request = LayerDecodeRequest(reader: reader, target: target, sentAt: .now)
                request.start()
                guard request.wait(until: deadline) else {
                    updateDecoding { $0.inFlight = request }
                    return holding
                }
                found = try request.answer()
                damageBefore = request.damageBefore
            } else {
                (found, damageBefore) = try LayerDecodeRequest.decode(reader, to: target)
            }
            guard let held = found else {
                throw reader.end?.failure ?? PlayheadError(code: .decodeFailed, message: "no frame could be decoded", file: reader.source)
            }
            updateDecoding { $0.answered = true }
            dropRecordingIfGivenUp(reader)
            noteDamage(of: reader, since: damageBefore)
            // The one rule: an item cut short fails where its data stops (it does not loop at the
            // cut); with `strict`, any damage fails it.
            if let failure = reader.verdict(for: held, strict: strict) { throw failure }
            if let end = reader.picturesEnd(after: held, target: target) {
                // Past the last frame: this pass ended where that frame ends.
                let length = end - itemStart
                guard length > .zero else {
                    throw PlayheadError(code: .decodeFailed, message: "the item holds no time to play", file: reader.source)
                }
                settleRecording(of: reader, reachedEnd: true)
                passEnded(length: length, status: .played)
                return nil
            }
            if let recording = loopCache.feeding?.recording, let recorded = recording.picture(withPTS: held.pts) {
                // Recorded as it was decoded: drawn from the recording (scaled once).
                lastShown = .recorded(recorded.picture, recording.rect)
                return .recorded(recorded.picture, recording.rect, fromCache: false)
            }
            try keep(held, of: reader, drawnBy: try converterForCurrent())
            return .decoded(held.frame)
        }
    }

    /// Counts the damaged packets `reader` met since its count was `before`.
    private func noteDamage(of reader: MediaReader, since before: Int) {
        let damage = reader.damage
        guard damage.count > before else { return }
        damagedPackets += damage.count - before
        firstDamage = firstDamage ?? damage.first
    }

    /// The current pass ended after `length`: the machine starts the next.
    private func passEnded(length: MediaTime, status: LayerItemRecord.Status?) {
        perform(machine.passEnded(length: length, status: status, error: nil, now: Date(), lengths: lengths))
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
        machine.passSourceStarts(at: recorded.itemStart)
        let offset = timeline.offset(at: time)
        if let length = LayerStateMachine.rangeEnd(of: layer.timeRange, at: offset) {
            passEnded(length: length, status: .played)
            return .passEnded
        }
        let (target, tick) = recorded.target(at: offset)
        guard let (picture, isLast) = recorded.picture(at: tick) else { return .unknown }
        if isLast, let last = recorded.lastPictureEnd,
            let end = MediaReader.passEnd(lastFrameEnd: MediaTime(ticks: last, timeBase: recorded.timeBase), target: target)
        {
            let length = end - recorded.itemStart
            guard length > .zero else { return .unknown }
            passEnded(length: length, status: .played)
            return .passEnded
        }
        lastShown = .recorded(picture.picture, recorded.rect)
        return .shown(.recorded(picture.picture, recorded.rect, fromCache: true))
    }

    /// The current item's pass ended: its recording, if it was fed, is kept for later passes when
    /// it is whole (no damage; `reachedEnd`: the data ended complete), else given up for good.
    private func settleRecording(of reader: MediaReader, reachedEnd: Bool) {
        let whole = reader.damage.count == 0 && (!reachedEnd || (reader.end != nil && reader.end?.failure == nil))
        guard loopCache.passEnded(whole: whole, reachedEnd: reachedEnd) != nil else { return }
        Self.detachRecording(from: reader)
    }

    /// A recording that gave up (its budget spent, a frame out of order) stops costing the
    /// decoder anything at once: the item is not recorded again.
    private func dropRecordingIfGivenUp(_ reader: MediaReader) {
        guard loopCache.dropIfGivenUp() != nil else { return }
        Self.detachRecording(from: reader)
    }

    /// The reader decodes for drawing alone again (no recorder, only the frames it needs).
    private static func detachRecording(from reader: MediaReader) {
        reader.video.recorder = nil
        reader.video.decodesEveryFrame = false
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
        loopBudget != nil && loopCache.wants(timeline.item, repeats: repeats)
    }

    /// Starts recording the pictures of the reader just opened for the current item, when the
    /// layer plays its items more than once, its source can be read again and the item was not
    /// found unrecordable.
    private func startRecording(_ reader: MediaReader, itemStart: MediaTime) {
        // A source read once (a pipe) is not recorded: its later passes fail as they would without.
        guard let loopBudget, wantsRecording, reader.demuxer.canSeek else { return }
        let layout = Self.converter(for: reader, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat).layout
        // An item that says it is longer than the budget has room for is not begun: it would take
        // the budget from the others while it fills, and give up anyway.
        if let duration = reader.facts.duration, duration.isNumeric, let frame = reader.facts.frameDuration, frame > .zero,
            !LoopCacheBook<LoopRecording>.fits(
                frames: duration.seconds / frame.seconds, pictureBytes: outputFormat.bytes(of: layout.content.size),
                room: loopBudget.limit - loopBudget.used)
        {
            loopCache.refuse(timeline.item)
            return
        }
        let recorded = LoopRecording(
            layout: layout, format: outputFormat, itemStart: itemStart, timeBase: reader.facts.timeBase, budget: loopBudget,
            source: reader.source)
        // Recorded as shown: with the layer's subtitles drawn in (an item whose subtitles cannot
        // be drawn is not recorded; showing it fails as it would without a recording).
        if let subtitles = layer.subtitles {
            guard let burner = try? SubtitleBurner(subtitles, demuxer: reader.demuxer, timeBase: reader.facts.timeBase) else { return }
            recorded.burner = burner
        }
        loopCache.began(recorded, for: timeline.item)
        reader.video.recorder = recorded
        reader.video.decodesEveryFrame = true
    }

    /// Lets every recording go (the layer moved, or became a new version).
    private func forgetRecordings() {
        // A decode still out feeds the recording: the item is let go (when the decode ends) and
        // opened again.
        if case .decoding(let open) = content, open.inFlight != nil, loopCache.feeding != nil { closeItem() }
        if loopCache.forget() != nil, case .decoding(let open) = content { Self.detachRecording(from: open.reader) }
    }

    /// Keeps its own reference to the frame drawn (once per frame: a frame drawn again is not
    /// referenced again), to hold after the content ends.
    private func keep(_ held: DisplayedFrameWindow<OwnedFrame>.Held, of reader: MediaReader, drawnBy converter: FrameConverter) throws(PlayheadError)
    {
        let origin = (reader: ObjectIdentifier(reader), pts: held.pts)
        let frame: OwnedFrame
        if case .decoded(let kept, _, let keptOrigin) = lastShown {
            if let keptOrigin, keptOrigin == origin {
                lastShown = .decoded(kept, converter, origin: origin)
                return
            }
            // The same allocation, for the next picture.
            frame = kept
        } else {
            frame = try OwnedFrame()
        }
        // Emptied by the reference's first step: held nowhere until it succeeds.
        lastShown = .nothing
        try frame.reference(held.frame)
        lastShown = .decoded(frame, converter, origin: origin)
    }

    /// How long past its declared length a pass waits for a decode still out before it ends as
    /// too slow.
    static let slownessGrace = MediaTime(value: 1, timescale: 1)

    /// Why a pass ended with its picture still being decoded: its source sent too slowly (the
    /// pass reached its declared length, or — `behindBy` — a decode was out longer than that).
    static func tooSlow(_ source: String, behindBy limit: Duration? = nil) -> PlayheadError {
        let when =
            limit.map {
                "a decode of its picture was out for more than \(String(format: "%g", $0.seconds)) s (its stall timeout; an item's first, its open timeout more)"
            }
            ?? "the pass ended at its length while its picture was still decoding"
        return PlayheadError(code: .timedOut, message: "its data came too slowly to play: " + when, file: source)
    }

    /// Half a tick of `timeBase`, as a time.
    static func halfTick(_ timeBase: Rational) -> MediaTime {
        guard timeBase.num > 0, timeBase.den > 0, timeBase.den <= Int32.max / 2 else { return .zero }
        return MediaTime(value: Int64(timeBase.num), timescale: timeBase.den * 2)
    }

    /// The current item's content, opened now if it is not yet; `.closed` when its source has
    /// not opened yet and the render does not wait (a channel).
    private func openItem() throws(PlayheadError) -> Content {
        if case .closed = content {} else { return content }
        // An item that failed before fails again at once (a loop does not retry it every pass;
        // a channel opens it again once its failure is old enough: a source down for a moment).
        if let failed = machine.standingFailure(of: timeline.item, now: Date()) { throw failed }
        let asset = layer.assets[timeline.item]
        // After a lapsed failure, an opening that failed before it lapsed is tried again.
        guard let demuxer = try preparer.take(asset, interrupt: interrupt, staleBefore: machine.failureLapsed(of: timeline.item)) else {
            return .closed
        }
        // A time range counts from the item's start (as the container gives it), whatever its
        // first timestamp: the same span of every item of a playlist.
        let rangeStart = layer.timeRange.map { demuxer.containerStart + $0.start }
        if demuxer.video == nil, demuxer.audio == nil, let failure = demuxer.audioChoiceFailure {
            preparer.giveBack(demuxer, of: asset)
            throw failure
        }
        if demuxer.video == nil, let audio = demuxer.audio {
            preparer.giveBack(demuxer, of: asset)
            if preparer.waits {
                let extent = try measuredExtent(of: asset, wait: true)
                let start = rangeStart ?? extent?.start ?? .zero
                content = .soundOnly(itemStart: start, length: try soundLength(of: asset, from: start, wait: true))
            } else {
                // Measured ahead; until it is, from the start its stream declares.
                let measured = try measuredExtent(of: asset, wait: false)
                let start = rangeStart ?? measured?.start ?? audio.startTime ?? .zero
                content = .soundOnly(itemStart: start, length: try soundLength(of: asset, from: start, wait: false))
            }
            return content
        }
        let opened: MediaReader
        do throws(PlayheadError) {
            opened = try MediaReader(demuxer: demuxer, threads: 0)
        } catch {
            preparer.giveBack(demuxer, of: asset)
            throw error
        }
        let itemStart = rangeStart ?? opened.facts.startTime ?? .zero
        content = .decoding(Decoding(reader: opened, owner: asset, itemStart: itemStart))
        startRecording(opened, itemStart: itemStart)
        return content
    }

    /// The decoded extent of the sound-only item `asset` (measured once, ahead); nil while it is
    /// measured and `wait` is false.
    /// - Throws: the measure's failure; `noVideoTrack` when no sound decodes.
    private func measuredExtent(of asset: Asset, wait: Bool) throws(PlayheadError) -> SoundExtent? {
        let measured: SoundExtent?
        if wait {
            measured = try soundExtents.extent(of: asset, interrupt: interrupt)
        } else {
            guard let known = soundExtents.measured(asset) else { return nil }
            measured = try known.get()
        }
        guard let measured else {
            throw PlayheadError(code: .noVideoTrack, message: "the item has neither a picture nor any sound that decodes", file: asset.source)
        }
        return measured
    }

    /// How long a pass of the sound-only item `asset` from `start` lasts: to its sound's decoded
    /// end, or its time range's; nil while it is measured and `wait` is false.
    /// - Throws: the measure's failure; `decodeFailed` when it holds no time from `start`.
    private func soundLength(of asset: Asset, from start: MediaTime, wait: Bool) throws(PlayheadError) -> MediaTime? {
        guard let extent = try measuredExtent(of: asset, wait: wait) else { return nil }
        var length = extent.end - start
        if let range = layer.timeRange, range.duration.isNumeric, range.duration < length { length = range.duration }
        guard length > .zero else {
            throw PlayheadError(code: .decodeFailed, message: "the item holds no time to play", file: asset.source)
        }
        return length
    }

    private func converterForCurrent() throws(PlayheadError) -> FrameConverter {
        guard case .decoding(let open) = content else {
            throw PlayheadError(code: .invalidState, message: "no item open", file: nil)
        }
        if let converter = open.converter { return converter }
        let made = Self.converter(for: open.reader, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat)
        if let subtitles = layer.subtitles {
            made.burner = try SubtitleBurner(subtitles, demuxer: open.reader.demuxer, timeBase: open.reader.facts.timeBase)
        }
        updateDecoding { $0.converter = made }
        return made
    }

    /// Changes the open item's reader state (nothing when no decoded item is open).
    private func updateDecoding(_ body: (inout Decoding) -> Void) {
        guard case .decoding(var open) = content else { return }
        body(&open)
        content = .decoding(open)
    }

    /// A converter of `reader`'s pictures into `layer`'s rectangle of the canvas.
    static func converter(for reader: MediaReader, layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat) -> FrameConverter {
        converter(facts: reader.facts, source: reader.source, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat)
    }

    /// The converter of pictures with `facts` (from `source`) into `layer`'s rectangle.
    static func converter(
        facts: VideoStreamFacts, source: String, layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat
    ) -> FrameConverter {
        let rect = layer.rect
        var layout = layer.gravity.layout(
            stored: facts.storedSize, pixelAspectRatio: facts.pixelAspectRatio, orientation: facts.orientation,
            canvas: rect.size, alignment: 2)
        layout.canvas = canvasSize
        layout.content.x += rect.x
        layout.content.y += rect.y
        return FrameConverter(layout: layout, format: outputFormat, source: source)
    }

    private func closeItem() {
        if case .decoding(let decoding) = content {
            let open = decoding.reader, owner = decoding.owner
            // A recording cut off before its pass ended holds part of the item: let go.
            let recorded = loopCache.cutOff()
            let preparer = preparer
            let letGo = {
                if let recorded {
                    Self.detachRecording(from: open)
                    recorded.abandon()
                }
                preparer.giveBack(open.demuxer, of: owner)
            }
            // A decode still out lets go of the reader when it ends, on its worker.
            if let flight = decoding.inFlight {
                flight.abandon(then: letGo)
            } else {
                letGo()
            }
        }
        content = .closed
        // A later reader may have this one's address: its frames are kept afresh.
        if case .decoded(let frame, let converter, _) = lastShown { lastShown = .decoded(frame, converter, origin: nil) }
    }
}
