import CFFmpeg

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
    private let outputFormat: AVPixelFormat
    private let canvasSize: PixelSize

    private var reader: MediaReader?
    /// The current item has sound and no picture (music under a composition): it draws nothing
    /// for this long, and its sound plays if the layer gives the composition's.
    private var soundLength: MediaTime?
    private var demuxerOwner: Asset?
    private var converter: FrameConverter?
    /// Where the current item's frames start (its time range's start, or its first frame).
    private var itemStart: MediaTime = .zero
    /// The last frame drawn, kept to hold after the content ends.
    private var lastFrame: OwnedFrame?
    private var lastConverter: FrameConverter?

    /// The passes its timeline has played so far (the last one may still be playing): what the
    /// composition's sound follows when it comes from this layer.
    private(set) var passes: [LayerPass]
    private(set) var framesShown = 0
    /// Damaged packets decoded past in this layer's items, and the first.
    private(set) var damagedPackets = 0
    private(set) var firstDamage: PlayheadError?
    /// Any damage fails the item (``Compositor/strict``).
    private let strict: Bool
    private(set) var failure: PlayheadError?
    /// Items of a playlist that failed and were passed over (as a queue player skips a failed
    /// item), by item: the layer fails only when every item has.
    private(set) var itemFailures: [Int: PlayheadError] = [:]
    var loopsCompleted: Int { timeline.loopsCompleted }
    var hasEnded: Bool { timeline.hasEnded }

    init(id: CompositionLayer.ID, layer: CompositionLayer, canvasSize: PixelSize, outputFormat: AVPixelFormat, interrupt: InterruptFlag, strict: Bool = false) {
        self.id = id
        self.strict = strict
        self.layer = layer
        self.canvasSize = canvasSize
        self.outputFormat = outputFormat
        self.interrupt = interrupt
        timeline = LayerTimeline(itemCount: layer.assets.count, loop: layer.loop)
        passes = timeline.hasEnded ? [] : [LayerPass(number: 0, item: 0, layerStart: .zero)]
    }

    deinit { closeItem() }

    /// Forgets the passes that ended at or before `time` (keeping the last one), so that a layer
    /// looping for days keeps only what its sound may still read.
    func forgetPasses(endedBy time: MediaTime) {
        let ended = passes.prefix { pass in pass.length.map { !(time < pass.layerStart + $0) } ?? false }.count
        let drop = min(ended, passes.count - 1)
        if drop > 0 { passes.removeFirst(drop) }
    }

    /// Moves the layer: the next frame is drawn at the new place.
    func move(rect: PixelRect, zIndex: Int) {
        layer.rect = rect
        layer.zIndex = zIndex
        converter = nil
        lastConverter = nil
    }

    /// Draws the layer's frame at layer time `time` into `canvas`. A source that fails ends the
    /// layer (``failure``), which then shows the background; cancellation is thrown.
    func draw(at time: MediaTime, into canvas: OwnedFrame) throws(PlayheadError) {
        try follow(to: time) { frame throws(PlayheadError) in
            if let frame {
                try converterForCurrent().convert(frame, into: canvas)
                framesShown += 1
            } else if timeline.hasEnded, layer.afterEnd == .holdLastFrame, let lastFrame, let lastConverter {
                try lastConverter.convert(lastFrame, into: canvas)
                framesShown += 1
            }
        }
    }

    /// Moves the layer's timeline to `time` without drawing (so that ``passes`` account for it).
    func reach(_ time: MediaTime) throws(PlayheadError) {
        try follow(to: time) { _ throws(PlayheadError) in }
    }

    /// A source's failure passes over its item when others of the playlist may still play (the
    /// pass ends at `time`, the next begins there); otherwise it ends the layer. Cancellation is
    /// thrown.
    private func follow(to time: MediaTime, _ body: (OwnedFrame?) throws(PlayheadError) -> Void) throws(PlayheadError) {
        while failure == nil {
            do throws(PlayheadError) {
                try body(try frame(at: time))
                return
            } catch {
                if error.code == .cancelled || interrupt.isRaised { throw .cancelled(file: error.file) }
                let item = timeline.item
                itemFailures[item] = itemFailures[item] ?? error
                closeItem()
                if itemFailures.count < layer.assets.count, !timeline.hasEnded {
                    // Passed over: what it showed of its pass stays, the next item starts now.
                    let length = max(.zero, timeline.offset(at: time))
                    advance(length: length)
                    continue
                }
                failure = error
                endPass(at: time)
                timeline.end()
            }
        }
    }

    /// The layer stops here (removed, or failed): its last pass, if still playing, ends at `time`.
    func endPass(at time: MediaTime) {
        guard let last = passes.indices.last, passes[last].length == nil else { return }
        passes[last].length = max(.zero, time - passes[last].layerStart)
    }

    /// The frame displayed at `time`, or nil once the content has ended.
    private func frame(at time: MediaTime) throws(PlayheadError) -> OwnedFrame? {
        var tries = 0
        while !timeline.hasEnded {
            tries += 1
            if tries > 10_000 {
                throw PlayheadError(code: .decodeFailed, message: "the layer's items hold no time to play", file: layer.assets.first?.source)
            }
            let opened = try openItem()
            if let last = self.passes.indices.last, self.passes[last].sourceStart == nil { self.passes[last].sourceStart = itemStart }
            let offset = timeline.offset(at: time)
            guard let reader = opened else {
                // Sound alone: nothing drawn until the pass has lasted the item's length.
                guard let soundLength else { throw PlayheadError(code: .invalidState, message: "no item open", file: nil) }
                if !(offset < soundLength) {
                    advance(length: soundLength)
                    continue
                }
                return nil
            }
            if let range = layer.timeRange, range.duration.isNumeric, !(offset < range.duration) {
                advance(length: range.duration)
                continue
            }
            let target = itemStart + offset
            try reader.seek(to: SeekRequest(time: target))
            let damageBefore = reader.damage.count
            guard let held = try reader.selectedFrame() else {
                throw reader.end?.failure ?? PlayheadError(code: .decodeFailed, message: "no frame could be decoded", file: reader.source)
            }
            let damage = reader.damage
            if damage.count > damageBefore {
                damagedPackets += damage.count - damageBefore
                firstDamage = firstDamage ?? damage.first
            }
            // The one rule: an item cut short fails where its data stops (it does not loop at the
            // cut); with `strict`, any damage fails it.
            if let failure = reader.verdict(for: held, strict: strict) { throw failure }
            let timeBase = reader.facts.timeBase.ffmpeg
            let end = MediaTime(ffmpegTimestamp: held.pts + held.duration, timeBase: timeBase)
            if reader.end != nil, !(target < end) {
                // Past the last frame: this pass ended where that frame ends.
                let length = end - itemStart
                guard length > .zero else {
                    throw PlayheadError(code: .decodeFailed, message: "the item holds no time to play", file: reader.source)
                }
                advance(length: length)
                continue
            }
            lastFrame = held.frame
            lastConverter = try converterForCurrent()
            return held.frame
        }
        return nil
    }

    private func advance(length: MediaTime) {
        let item = timeline.item
        let next = timeline.passEnded(length: length)
        if let last = passes.indices.last { passes[last].length = length }
        if next { passes.append(LayerPass(number: (passes.last?.number ?? -1) + 1, item: timeline.item, layerStart: timeline.passStart)) }
        if !next || timeline.item != item { closeItem() }
    }

    /// The current item's reader; nil for an item of sound alone (``soundLength`` is then set).
    private func openItem() throws(PlayheadError) -> MediaReader? {
        if let reader { return reader }
        if soundLength != nil { return nil }
        // An item that failed before fails again at once (a loop does not retry it every pass).
        if let failed = itemFailures[timeline.item] { throw failed }
        let asset = layer.assets[timeline.item]
        let demuxer = try asset.openDemuxer(interrupt: interrupt)
        if demuxer.video == nil, let audio = demuxer.audio {
            defer { asset.giveBack(demuxer) }
            let audioStart = audio.startTime ?? .zero
            guard let full = audio.duration, full.isNumeric, full > .zero else {
                throw PlayheadError(code: .noVideoTrack, message: "a sound-only item needs a known duration to be played in a layer", file: demuxer.source)
            }
            let start = layer.timeRange?.start ?? audioStart
            var length = full - (start - audioStart)
            if let range = layer.timeRange, range.duration.isNumeric, range.duration < length { length = range.duration }
            guard length > .zero else {
                throw PlayheadError(code: .decodeFailed, message: "the item holds no time to play", file: demuxer.source)
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
        itemStart = layer.timeRange?.start ?? opened.facts.startTime ?? .zero
        return opened
    }

    private func converterForCurrent() throws(PlayheadError) -> FrameConverter {
        if let converter { return converter }
        guard let reader else { throw PlayheadError(code: .invalidState, message: "no item open", file: nil) }
        let facts = reader.facts
        let rect = layer.rect
        var layout = layer.gravity.layout(stored: facts.storedSize, pixelAspectRatio: facts.pixelAspectRatio, orientation: facts.orientation,
                                          canvas: rect.size, alignment: 2)
        layout.canvas = canvasSize
        layout.content.x += rect.x
        layout.content.y += rect.y
        let made = FrameConverter(layout: layout, outputFormat: outputFormat, source: reader.source)
        converter = made
        return made
    }

    private func closeItem() {
        if let reader, let demuxerOwner { demuxerOwner.giveBack(reader.demuxer) }
        reader = nil
        demuxerOwner = nil
        converter = nil
        soundLength = nil
    }
}
