import Foundation
import PlayheadMedia

/// The pure rules of one composition layer's playlist — which pass plays, where each begins and
/// ends, what a failed item, a filler slot and a live edit do, what is recorded — decided without
/// FFmpeg, threads or a clock. ``LayerReader`` asks it at every event and performs what it returns
/// (closing the item's reader, letting its loop recordings go, playing a filler); the tests drive
/// it alone (`LayerStateMachineTests`), each live-edit, filler and schedule case among them.
struct LayerStateMachine {
    /// What the layer is doing.
    enum Phase: Sendable, Equatable {
        /// A pass of the timeline's current item plays (decoded, drawn from a recording, or sound
        /// alone: the reader's business).
        case playing
        /// A filler plays in a failed item's slot, from `start` for `length` (layer times).
        case filler(start: MediaTime, length: MediaTime, asset: Asset?)
        /// The playlist played out: the last frame is held (or the layer clears, by its policy).
        case ended
        /// Every item failed (or, without a policy that passes over, one did): the layer shows
        /// the background.
        case failed(PlayheadError)
        /// In a channel (failures that lapse), every item's failure stands at once: the layer
        /// shows the background until the first of them lapses (`until`), then its playlist goes
        /// on (``retryIfDue(at:now:lengths:)``). `error` is the last failure.
        case waiting(until: Date, error: PlayheadError)

        static func == (a: Phase, b: Phase) -> Bool {
            switch (a, b) {
            case (.playing, .playing), (.ended, .ended): true
            case (.filler(let s1, let l1, let a1), .filler(let s2, let l2, let a2)): s1 == s2 && l1 == l2 && a1 === a2
            case (.failed(let e1), .failed(let e2)): e1 == e2
            case (.waiting(let u1, let e1), .waiting(let u2, let e2)): u1 == u2 && e1 == e2
            default: false
            }
        }
    }

    /// What the owner does, in order.
    enum Effect: Sendable {
        /// Let the current item's reader go (its pass ended, or its layer changed).
        case closeItem
        /// Let every loop recording go (the content ended: nothing plays again).
        case forgetRecordings
        /// A new version became the layer's: its reader, recordings and held picture are let go.
        case tookVersion
        /// A pass ended: tell the as-run log.
        case record(LayerItemRecord)
        /// A pass of `item` began; `continuing`: the item played before it is the same one.
        case passBegan(item: Int, continuing: Bool)
        /// Measure ahead what the next pass needs (a sound-only item's length).
        case prefetch(Asset)
        /// Play a filler for a failed item's slot (or stop the one playing: nil).
        case filler(asset: Asset?, start: MediaTime, length: MediaTime)
        /// The background shows from here for a while (the layer waits): the picture held is let
        /// go, so that it never shows again, stale, when the playlist goes on.
        case letPictureGo
        case stopFiller
    }

    let id: CompositionLayer.ID
    let failurePolicy: LayerFailurePolicy
    private(set) var phase = Phase.playing
    private(set) var timeline: LayerTimeline
    /// The version playing.
    private(set) var layer: CompositionLayer
    /// A new version (a live edit), taken at the next item boundary.
    private(set) var pending: CompositionLayer?
    /// Items of the playlist that failed and were passed over, by item (the first failure of
    /// each): the layer fails only when every item's failure stands at once.
    private(set) var itemFailures: [Int: PlayheadError] = [:]
    /// When each item last failed.
    private(set) var failedAt: [Int: Date] = [:]
    /// How long an item's failure stands before the item is opened again (a channel's source
    /// down for a moment); nil: for good (an export's broken file fails every pass at once).
    let retryFailedItemsAfter: Duration?
    /// The passes played so far (the last one may still be playing): what the sound follows.
    private(set) var passes: [LayerPass] = []

    /// A layer whose timeline starts at `start` (joined on its schedule: `lengths` gives each
    /// item's pass length when the schedule needs them, nil when not known).
    init(
        id: CompositionLayer.ID, layer: CompositionLayer, failurePolicy: LayerFailurePolicy, start: MediaTime, now: Date,
        retryFailedItemsAfter: Duration? = nil, lengths: (CompositionLayer) -> [MediaTime]?
    ) {
        self.retryFailedItemsAfter = retryFailedItemsAfter
        self.id = id
        self.layer = layer
        self.failurePolicy = failurePolicy
        timeline = LayerTimeline(itemCount: layer.assets.count, loop: layer.loop, start: start)
        effectsAtStart = join(at: start, now: now, lengths: lengths)
    }
    /// Where a pass ends by its layer's time range: the range's length once the pass at `offset`
    /// has reached it, else nil — the one rule for an item decoded, drawn from its recording,
    /// sound alone, or still opening.
    /// - Parameters:
    ///   - range: the layer's time range of each item, if any.
    ///   - offset: how far into the pass the frame asked for is.
    /// - Returns: the pass's length when it ended there.
    static func rangeEnd(of range: TimeRange?, at offset: MediaTime) -> MediaTime? {
        guard let range, range.duration.isNumeric, !(offset < range.duration) else { return nil }
        return range.duration
    }

    /// The failure `item` still stands under at `now` (it is failed again at once, not opened):
    /// for good, or until ``retryFailedItemsAfter`` has passed since it last failed.
    func standingFailure(of item: Int, now: Date) -> PlayheadError? {
        guard let error = itemFailures[item] else { return nil }
        guard let lapsed = failureLapsed(of: item) else { return error }
        return now < lapsed ? error : nil
    }

    /// When `item`'s last failure lapsed (it is opened again from then; an opening's failure
    /// from before is stale); nil when it has not failed, or its failures stand for good.
    func failureLapsed(of item: Int) -> Date? {
        guard let retry = retryFailedItemsAfter, let at = failedAt[item] else { return nil }
        return at.addingTimeInterval(Double(retry.components.seconds) + Double(retry.components.attoseconds) / 1e18)
    }

    /// What the owner does as the layer starts (its first pass).
    private(set) var effectsAtStart: [Effect] = []

    // MARK: Events

    /// The current pass ended after `length` (`status` nil: its record was made already): the
    /// next item (or the first again) starts there — in the new version, if one waits: on its
    /// schedule when it has one; else with the item after this one when it plays the same sources
    /// in the same order (a move, a new look, a file replaced in place); else from its first item.
    mutating func passEnded(
        length: MediaTime, status: LayerItemRecord.Status?, error: PlayheadError?, now: Date, lengths: (CompositionLayer) -> [MediaTime]?
    ) -> [Effect] {
        var effects: [Effect] = []
        let item = timeline.item
        if let status { effects += closePass(endingAt: timeline.passStart + length, status: status, error: error) }
        let end = timeline.passStart + length
        if let next = pending {
            pending = nil
            let loops = timeline.loopsCompleted
            let samePlaylist = next.assets.map(\.source) == layer.assets.map(\.source)
            effects += take(next)
            guard samePlaylist, next.scheduledStart == nil else { return effects + join(at: end, now: now, lengths: lengths) }
            // The same playlist under the new version's loop policy: it goes on below.
            timeline = LayerTimeline(itemCount: next.assets.count, loop: next.loop, start: timeline.passStart, item: item, loops: loops)
        }
        guard timeline.passEnded(length: length) else {
            // The content ended: nothing recorded plays again (a held last frame keeps its picture).
            phase = .ended
            return effects + [.closeItem, .forgetRecordings]
        }
        return effects + beginPass(at: timeline.passStart, now: now, continuing: timeline.item == item)
    }

    /// The current item failed at layer time `time`: with a filler policy its slot plays the
    /// filler; else, when another item may still play, it is passed over (its pass ends there);
    /// else, in a channel whose playlist has a pass to come, the layer waits for the first
    /// failure to lapse (``Phase/waiting(until:error:)``); else the layer fails.
    mutating func itemFailed(_ error: PlayheadError, at time: MediaTime, now: Date, lengths: (CompositionLayer) -> [MediaTime]?) -> [Effect] {
        let item = timeline.item
        // A failure that still stands, failed again at once, does not move when it lapses (else
        // an item among short ones would never be tried again).
        if standingFailure(of: item, now: now) == nil { failedAt[item] = now }
        itemFailures[item] = itemFailures[item] ?? error
        var effects: [Effect] = [.closeItem]
        if case .filler(let asset, let slot) = failurePolicy, !timeline.hasEnded {
            // The failed item's pass ends here; the filler plays for its slot.
            let played = max(.zero, timeline.offset(at: time))
            effects += closePass(endingAt: timeline.passStart + played, status: .failed, error: error)
            let length = layer.timeRange.map(\.duration).flatMap { $0.isNumeric && $0 > .zero ? $0 : nil } ?? slot
            let start = timeline.passStart + played
            phase = .filler(start: start, length: length, asset: asset)
            passes.append(
                LayerPass(
                    number: (passes.last?.number ?? -1) + 1, item: item, layerStart: start, sourceStart: .zero, asset: asset,
                    audible: layer.providesAudio, filler: true, wallClockStart: now))
            return effects + [.filler(asset: asset, start: start, length: length)]
        }
        let standing = itemFailures.keys.filter { standingFailure(of: $0, now: now) != nil }.count
        // A version waiting for the next boundary is that boundary's: it starts now, whatever
        // the old one's failures (it waited for their retry, or was lost with a layer that failed).
        if standing < layer.assets.count || pending != nil, !timeline.hasEnded {
            // Passed over: what it showed of its pass stays, the next item starts now.
            let length = max(.zero, timeline.offset(at: time))
            return effects + passEnded(length: length, status: .failed, error: error, now: now, lengths: lengths)
        }
        effects += endPass(at: time, status: .failed, error: error)
        if timeline.hasPassAfterCurrent, let until = itemFailures.keys.compactMap({ failureLapsed(of: $0) }).min() {
            // A channel's sources may come back: the background shows until one may be tried.
            phase = .waiting(until: until, error: error)
            return effects + [.letPictureGo]
        }
        phase = .failed(error)
        timeline.end()
        return effects
    }

    /// While the layer waits (``Phase/waiting(until:error:)``), at layer time `time`: once the
    /// first failure has lapsed by `now`, the playlist goes on there, with the item after the one
    /// that failed last (an item whose failure still stands is passed over again at once).
    mutating func retryIfDue(at time: MediaTime, now: Date, lengths: (CompositionLayer) -> [MediaTime]?) -> [Effect] {
        guard case .waiting(let until, _) = phase, now >= until else { return [] }
        phase = .playing
        return passEnded(length: max(.zero, time - timeline.passStart), status: nil, error: nil, now: now, lengths: lengths)
    }

    /// The filler's slot is over at layer time `time` (its end): the failed item's pass (its part
    /// and the filler's) ends, and the next item starts.
    mutating func fillerEnded(now: Date, lengths: (CompositionLayer) -> [MediaTime]?) -> [Effect] {
        guard case .filler(let start, let length, _) = phase else { return [] }
        phase = .playing
        let end = start + length
        var effects: [Effect] = [.stopFiller]
        effects += closePass(endingAt: end, status: .filler, error: nil)
        effects += passEnded(length: end - timeline.passStart, status: nil, error: nil, now: now, lengths: lengths)
        return effects
    }

    /// A new version of the layer, taken at its next item boundary; a layer whose content has
    /// ended (played out, or failed) or that waits for a failure to lapse has no boundary to come:
    /// it takes the new version at once, at layer time `time`, as a new layer would start.
    mutating func update(to next: CompositionLayer, at time: MediaTime, now: Date, lengths: (CompositionLayer) -> [MediaTime]?) -> [Effect] {
        let waiting = if case .waiting = phase { true } else { false }
        guard timeline.hasEnded || waiting else {
            pending = next
            return []
        }
        pending = nil
        var effects = take(next)
        if case .filler = phase { effects.append(.stopFiller) }
        phase = .playing
        effects += join(at: time, now: now, lengths: lengths)
        return effects
    }

    /// The layer moves (and the version waiting, if any).
    /// - Returns: whether its rectangle changed (what was scaled for the old place is let go).
    mutating func move(rect: PixelRect, zIndex: Int) -> Bool {
        pending?.rect = rect
        pending?.zIndex = zIndex
        let moved = rect != layer.rect
        layer.rect = rect
        layer.zIndex = zIndex
        return moved
    }

    /// The layer stops here (removed, or failed): its last pass, if still playing, ends at `time`.
    mutating func endPass(at time: MediaTime, status: LayerItemRecord.Status = .played, error: PlayheadError? = nil) -> [Effect] {
        guard let last = passes.indices.last, passes[last].length == nil else { return [] }
        let length = max(.zero, time - passes[last].layerStart)
        passes[last].length = length
        // A pass that had not begun to play (the render ended where it starts) is not a record.
        if length == .zero, status == .played { return [] }
        return [.record(record(passes[last], status: passes[last].filler ? .filler : status, error: error))]
    }

    /// The current pass's source starts at `start` (an item's first frame, or its range's start),
    /// once known.
    mutating func passSourceStarts(at start: MediaTime) {
        if let last = passes.indices.last, passes[last].sourceStart == nil { passes[last].sourceStart = start }
    }

    /// Forgets the passes that ended at or before `time` (keeping the last one), so that a layer
    /// looping for days keeps only what its sound may still read.
    mutating func forgetPasses(endedBy time: MediaTime) {
        let ended = passes.prefix { pass in pass.length.map { !(time < pass.layerStart + $0) } ?? false }.count
        let drop = min(ended, passes.count - 1)
        if drop > 0 { passes.removeFirst(drop) }
    }

    /// The version the layer is heading for: the one waiting for the next item boundary, else the
    /// one playing.
    var intended: CompositionLayer { pending ?? layer }

    // MARK: Steps

    /// Starts the playlist at layer time `start`: on schedule when it has one (the item the
    /// schedule plays now, begun as long ago as it says), else from its first item.
    private mutating func join(at start: MediaTime, now: Date, lengths: (CompositionLayer) -> [MediaTime]?) -> [Effect] {
        timeline = LayerTimeline(itemCount: layer.assets.count, loop: layer.loop, start: start)
        if let scheduled = layer.scheduledStart, let known = lengths(layer) {
            let elapsed = MediaTime(seconds: now.timeIntervalSince(scheduled), preferredTimescale: 90_000)
            guard let position = LayerTimeline.position(after: elapsed, lengths: known, loop: layer.loop) else {
                timeline.end()
                phase = .ended
                return []
            }
            timeline = LayerTimeline(
                itemCount: layer.assets.count, loop: layer.loop, start: start - position.offset, item: position.item, loops: position.loops)
            return beginPass(at: start - position.offset, now: now, continuing: false)
        }
        guard !timeline.hasEnded else {
            phase = .ended
            return []
        }
        return beginPass(at: start, now: now, continuing: false)
    }

    private mutating func beginPass(at start: MediaTime, now: Date, continuing: Bool) -> [Effect] {
        phase = .playing
        let asset = layer.assets[timeline.item]
        passes.append(
            LayerPass(
                number: (passes.last?.number ?? -1) + 1, item: timeline.item, layerStart: start, asset: asset,
                audible: layer.providesAudio, wallClockStart: now))
        var effects: [Effect] = [.passBegan(item: timeline.item, continuing: continuing)]
        // The next item, if it is sound alone, is measured while this one plays.
        if layer.assets.count > 1 { effects.append(.prefetch(layer.assets[(timeline.item + 1) % layer.assets.count])) }
        return effects
    }

    /// Makes `next` the layer's version: the old one's reader, recordings and failures let go.
    private mutating func take(_ next: CompositionLayer) -> [Effect] {
        layer = next
        itemFailures = [:]
        failedAt = [:]
        return [.tookVersion]
    }

    /// Gives the last pass its length (ending at layer time `end`), if it has none yet, and
    /// records it.
    private mutating func closePass(endingAt end: MediaTime, status: LayerItemRecord.Status, error: PlayheadError?) -> [Effect] {
        guard let last = passes.indices.last, passes[last].length == nil else { return [] }
        passes[last].length = max(.zero, end - passes[last].layerStart)
        return [.record(record(passes[last], status: status, error: error))]
    }

    private func record(_ pass: LayerPass, status: LayerItemRecord.Status, error: PlayheadError?) -> LayerItemRecord {
        LayerItemRecord(
            layer: id, item: pass.item, source: pass.filler ? (pass.asset?.source ?? "background") : (pass.asset?.source ?? ""),
            start: pass.layerStart, end: pass.layerStart + (pass.length ?? .zero), wallClockStart: pass.wallClockStart,
            status: status, error: error, asset: pass.asset)
    }
}
