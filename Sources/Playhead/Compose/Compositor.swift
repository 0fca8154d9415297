import Foundation
import Logging
import PlayheadMedia
import Synchronization

/// Puts several layers into one picture, frame by frame, headless: the screen an app builds from
/// player layers, written to any ``FrameSink``.
///
/// ```swift
/// let compositor = Compositor(canvas: CompositionCanvas(size: PixelSize(width: 1280, height: 720),
///                                                       frameRate: FrameRate(numerator: 30)!))
/// try compositor.add(CompositionLayer(assets: [background], rect: PixelRect(x: 0, y: 0, width: 1280, height: 720),
///                                     gravity: .resizeAspectFill, loop: .forever))
/// try compositor.add(CompositionLayer(assets: [left], rect: PixelRect(x: 0, y: 180, width: 640, height: 360), zIndex: 1))
/// let report = await compositor.render(frames: 180, into: Y4MSink(path: "out.y4m"))
/// ```
///
/// Output frame *n* is at *n / rate*. Each layer shows the frame of its own timeline displayed
/// at that time (loops included), so layers of any frame rate compose correctly; layers are drawn
/// in z-order, each scaled into its rectangle of the canvas (never through a
/// full-size copy). Layers can be added,
/// removed and moved while rendering: a change applies from the next frame. A layer whose source
/// fails is reported and shows the background; the rest of the composition goes on.
///
/// Rendering runs on threads of Playhead's bounded I/O budget, never on Swift's cooperative pool:
/// one render thread draws each frame while a second, the output thread, writes the frame before
/// it to the sink; worker threads open the layers' items ahead and decode each audible pass's
/// sound, and, in a render paced on a clock, each layer's pictures. Cancelling the calling task
/// stops the render at the latest before its next frame (the sink is then aborted); the call
/// answers within a second's patience even when the sink's `write` does not return.
public final class Compositor: Sendable {
    public let canvas: CompositionCanvas
    /// The layers, in the order added, and a count of changes (a render picks up a change when
    /// the count moves).
    private let state = Locked<
        (generation: Int, layers: [(id: CompositionLayer.ID, layer: CompositionLayer)], updates: [CompositionLayer.ID: CompositionLayer])
    >(
        (0, [], [:]))
    private let nextID = Locked(0)
    private let logger: Logger
    /// What the render thread shows now (frames, each layer's item), for a status report.
    private let current = Locked(CompositionProgress())
    private let recordHandler: (@Sendable (LayerItemRecord) -> Void)?

    /// Any damaged data in a layer's item fails that item (as ``DecodeConfiguration/strict`` fails
    /// a session); by default damage is decoded past and counted (``LayerReport/damagedPackets``).
    public let strict: Bool
    /// The sound's format; nil: that of the first sound layer's first item (48 kHz stereo when it
    /// has none).
    public let soundFormat: AudioStreamInfo?
    /// What a layer does when an item fails (``LayerFailurePolicy``).
    public let failurePolicy: LayerFailurePolicy
    /// Each item of a layer that gives sound is brought to this loudness (EBU R128 integrated
    /// loudness, LUFS; broadcast: −23) by a gain of at most ±20 dB, measured once per item with
    /// libavfilter's `ebur128` on a worker thread; nil: as it is. An item plays at unity gain
    /// until it has been measured (measuring starts when its layer is added).
    public let loudnessTarget: Double?
    private let loudness: LoudnessTable?
    /// Memory, in bytes, that layers which play their items more than once may keep each item's
    /// decoded pictures in — scaled into the layer's rectangle, every frame from the item's start
    /// — so that later passes draw them instead of decoding again (a looping background decoded
    /// once). Shared by all layers of a render, first come first served; an item that does not fit
    /// is decoded on every pass, as with 0 (the default: nothing kept). The pictures drawn are the
    /// same either way.
    public let loopCacheBytes: Int
    /// In a channel (a render paced on a clock), how long a failed item's failure stands before
    /// the item is opened again: a source down for a moment is not lost for the rest of the run.
    /// (An export fails a broken item on every pass, at once.)
    package var failedItemRetry: Duration {
        get { retry.withLock { $0 } }
        set { retry.withLock { $0 = newValue } }
    }
    private let retry = Locked(Duration.seconds(30))
    /// Sound-only items' lengths, measured once per source for every layer.
    private let soundExtents: SoundExtentTable
    /// Items' lengths for layers that join a schedule, measured when such a layer is added or
    /// edited (off the render thread).
    private let itemLengths: ItemLengthTable

    /// A compositor of `canvas` (its size must be even, at least 2x2 and at most 16384x16384).
    /// `onRecord` is told of every item a layer played, failed or filled, as it ends, on the
    /// render thread (keep it short: an as-run log's line).
    /// - Parameters:
    ///   - canvas: the picture's size, frame rate and background.
    ///   - strict: whether any damage in a layer's item fails that item.
    ///   - soundFormat: the sound's format; nil: that of the first sound layer's first item.
    ///   - failurePolicy: what a layer does when an item fails.
    ///   - loudnessTarget: the loudness in LUFS every item that gives sound is brought to; nil: as it is.
    ///   - loopCacheBytes: memory that looping layers may keep their items' pictures in (``loopCacheBytes``); 0: none.
    ///   - logger: where the compositor logs; nil logs nothing.
    ///   - onRecord: told of every item a layer played, failed or filled, as it ends.
    public init(
        canvas: CompositionCanvas, strict: Bool = false, soundFormat: AudioStreamInfo? = nil, failurePolicy: LayerFailurePolicy = .passOver,
        loudnessTarget: Double? = nil, loopCacheBytes: Int = 0, logger: Logger? = nil,
        onRecord: (@Sendable (LayerItemRecord) -> Void)? = nil
    ) {
        self.canvas = canvas
        let extents = SoundExtentTable()
        soundExtents = extents
        itemLengths = ItemLengthTable(soundExtents: extents)
        self.loopCacheBytes = max(0, loopCacheBytes)
        self.strict = strict
        self.soundFormat = soundFormat
        self.failurePolicy = failurePolicy
        self.loudnessTarget = loudnessTarget
        let table = loudnessTarget.map { LoudnessTable(target: $0) }
        loudness = table
        if let onRecord {
            self.recordHandler = { @Sendable (record: LayerItemRecord) -> Void in
                var record = record
                if let table, record.status != .failed, let asset = record.asset { record.loudness = table.loudness(of: asset) }
                onRecord(record)
            }
        } else {
            self.recordHandler = nil
        }
        self.logger = logger ?? Logger(label: "playhead.compositor", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Measures the loudness of every item of the layers that give sound (with a
    /// ``loudnessTarget``), and returns when all are measured: call before rendering so that the
    /// first items are brought to the target from their first sample.
    public func measureLoudness() async {
        guard let loudness else { return }
        let assets = state.withLock { $0.layers.filter(\.layer.providesAudio).flatMap(\.layer.assets) }
        await loudness.measure(assets)
    }

    /// What is being rendered now: frames so far, the canvas time, each layer's current item.
    public var progress: CompositionProgress { current.withLock { $0 } }

    /// Adds a layer (above those of lower or equal z-index added before it); it shows from the
    /// next frame rendered. Throws `state.invalidArgument` for a layer without assets or whose
    /// rectangle is empty or leaves the canvas.
    /// - Parameter layer: the layer; its rectangle is rounded down to even coordinates and sizes.
    /// - Returns: the layer's identity, for ``update(_:to:)``, ``move(_:to:zIndex:)`` and ``remove(_:)``.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` when the layer has no asset, its rectangle is less
    ///   than 2 pixels wide or high or leaves the canvas, its loop count (``LayerLoop/times(_:)``) is below 1, its
    ///   time range is not valid (``TimeRange/isValid``), or the compositor holds ``maximumLayers`` already.
    @discardableResult
    public func add(_ layer: CompositionLayer) throws(PlayheadError) -> CompositionLayer.ID {
        let layer = try validated(layer)
        let id = CompositionLayer.ID(
            value: nextID.withLock { value in
                value += 1
                return value
            })
        try state.withLock { (state) throws(PlayheadError) in
            // Each layer holds a decoder and its threads: a bound, not whatever a caller asks.
            guard state.layers.count < Self.maximumLayers else {
                throw PlayheadError(code: .invalidArgument, message: "a compositor holds at most \(Self.maximumLayers) layers")
            }
            state.layers.append((id, layer))
            state.generation += 1
        }
        return id
    }

    /// The most layers a compositor holds at once (each decodes on threads of its own).
    public static let maximumLayers = 64

    /// The layer as the compositor keeps it (its rectangle rounded down to even numbers), or why it
    /// cannot be one: no asset, an empty rectangle or one off the canvas, a loop count below 1. One
    /// rule for ``add(_:)`` and ``update(_:to:)``.
    private func validated(_ layer: CompositionLayer) throws(PlayheadError) -> CompositionLayer {
        guard !layer.assets.isEmpty else { throw PlayheadError(code: .invalidArgument, message: "a layer needs at least one asset") }
        if let range = layer.timeRange, !range.isValid {
            throw PlayheadError(code: .invalidArgument, message: "a layer's time range must start at a time and not end before it (\(range))")
        }
        var layer = layer
        layer.rect = try checked(layer.rect)
        if case .times(let count) = layer.loop, count < 1 {
            throw PlayheadError(code: .invalidArgument, message: "a layer plays at least once (loop count \(count))")
        }
        // A layer that joins a schedule needs its items' lengths when it is taken: measured now,
        // on workers, not by the render thread then.
        if layer.scheduledStart != nil { itemLengths.prefetch(layer.assets) }
        return layer
    }

    /// Replaces a layer (its playlist, place, gravity, sound) at its next item boundary. A live edit
    /// of a running channel: a new version anchored to a schedule joins where its schedule is; one
    /// that plays the same sources in the same order (a move, a new look, a file replaced in
    /// place) goes on with the item after the one that ended; another playlist plays from its
    /// first item. A layer whose content has ended (or failed) takes it at once.
    /// - Parameters:
    ///   - id: the layer to replace; an id not in the compositor changes nothing.
    ///   - layer: its new version; its rectangle is rounded down to even coordinates and sizes.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` when the new version has no asset, its rectangle
    ///   is less than 2 pixels wide or high or leaves the canvas, or its loop count is below 1.
    public func update(_ id: CompositionLayer.ID, to layer: CompositionLayer) throws(PlayheadError) {
        let layer = try validated(layer)
        state.withLock {
            guard let index = $0.layers.firstIndex(where: { $0.id == id }) else { return }
            $0.layers[index].layer = layer
            $0.updates[id] = layer
            $0.generation += 1
        }
    }

    /// Checks `layer` as ``add(_:)`` would, without adding it.
    func check(_ layer: CompositionLayer) throws(PlayheadError) { _ = try validated(layer) }

    /// Applies `edit` whole or not at all: every layer it adds or updates is checked, and the
    /// number of layers it leaves, before anything changes; then the render thread takes every
    /// change together, before the same frame.
    /// - Parameter edit: the layers to remove, to update (taken at their next item boundary, as
    ///   ``update(_:to:)`` does) and to add (above those there, in order).
    /// - Returns: the identities of the added layers, in order.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a layer that ``add(_:)`` would refuse, or
    ///   when the edit would leave more than ``maximumLayers``; nothing is changed then.
    @discardableResult
    public func apply(_ edit: CompositionEdit) throws(PlayheadError) -> [CompositionLayer.ID] {
        var updates: [(CompositionLayer.ID, CompositionLayer)] = []
        for (id, layer) in edit.updates { updates.append((id, try validated(layer))) }
        var additions: [CompositionLayer] = []
        for layer in edit.additions { additions.append(try validated(layer)) }
        let removed = Set(edit.removals)
        return try state.withLock { (state) throws(PlayheadError) -> [CompositionLayer.ID] in
            let remaining = state.layers.filter { !removed.contains($0.id) }.count
            guard remaining + additions.count <= Self.maximumLayers else {
                throw PlayheadError(code: .invalidArgument, message: "a compositor holds at most \(Self.maximumLayers) layers")
            }
            state.layers.removeAll { removed.contains($0.id) }
            for (id, layer) in updates {
                guard let index = state.layers.firstIndex(where: { $0.id == id }) else { continue }
                state.layers[index].layer = layer
                state.updates[id] = layer
            }
            let ids = additions.map { _ in
                CompositionLayer.ID(
                    value: nextID.withLock { value in
                        value += 1
                        return value
                    })
            }
            for (id, layer) in zip(ids, additions) { state.layers.append((id, layer)) }
            state.generation += 1
            return ids
        }
    }

    /// Removes a layer from the next frame on.
    /// - Parameter id: the layer to remove; an id not in the compositor changes nothing.
    public func remove(_ id: CompositionLayer.ID) {
        state.withLock {
            $0.layers.removeAll { $0.id == id }
            $0.generation += 1
        }
    }

    /// The layers, in the order added.
    public var layers: [(id: CompositionLayer.ID, layer: CompositionLayer)] { state.withLock { $0.layers } }

    /// Moves a layer to `rect` and `zIndex` from the next frame on.
    /// - Parameters:
    ///   - id: the layer to move; an id not in the compositor changes nothing.
    ///   - rect: its new rectangle, rounded down to even coordinates and sizes.
    ///   - zIndex: its new place in the order of drawing; higher draws above lower.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` when `rect` is less than 2 pixels wide or high or
    ///   leaves the canvas.
    public func move(_ id: CompositionLayer.ID, to rect: PixelRect, zIndex: Int) throws(PlayheadError) {
        let rect = try checked(rect)
        state.withLock {
            guard let index = $0.layers.firstIndex(where: { $0.id == id }) else { return }
            $0.layers[index].layer.rect = rect
            $0.layers[index].layer.zIndex = zIndex
            $0.generation += 1
        }
    }

    private func checked(_ rect: PixelRect) throws(PlayheadError) -> PixelRect {
        let even = PixelRect(x: rect.x & ~1, y: rect.y & ~1, width: rect.width & ~1, height: rect.height & ~1)
        // Compared without sums, so that no value a caller passes can overflow.
        guard even.width >= 2, even.height >= 2, even.x >= 0, even.y >= 0, even.x <= canvas.size.width, even.y <= canvas.size.height,
            even.width <= canvas.size.width - even.x, even.height <= canvas.size.height - even.y
        else {
            throw PlayheadError(code: .invalidArgument, message: "the layer's rectangle \(rect) must lie inside the \(canvas.size) canvas")
        }
        return even
    }

    /// Renders output frames `0 ..< frames` into `sink` (begun, written, then finished; aborted
    /// when rendering stops early), and says what each layer showed. With `frames` nil it renders
    /// until ``stop()`` (then finishing the sink, as at a last frame) or cancellation (aborting it).
    /// As ``render(_:into:sound:realtime:)`` with ``CompositionLength/frames(_:)`` (or
    /// ``CompositionLength/untilStopped``).
    ///
    /// With a `realtime` clock, frames are written at the canvas's rate on that clock (frame *n*
    /// no sooner than *n / rate* after the first); one written more than half a frame late is
    /// counted in ``CompositionReport/lateFrames``, and never dropped.
    ///
    /// The sound of the layers that provide it (``CompositionLayer/providesAudio``), mixed, goes
    /// into `sink` when it carries sound (``MP4Sink``), else into `sound` when one is given (a
    /// ``WAVSink`` beside Y4M or image frames): the samples that go with each frame, from the
    /// first to the end of the last frame.
    /// - Parameters:
    ///   - frames: how many frames to render; nil: until ``stop()`` or cancellation.
    ///   - sink: where the frames go; the render owns it from here.
    ///   - sound: where the mixed sound goes when `sink` carries none; unused when it does.
    ///   - realtime: the clock frames are paced on; nil: as fast as they can be drawn.
    /// - Returns: the frames written, each layer's account, and the error that stopped the render early, if one
    ///   did (a canvas that cannot be made, a negative `frames`, a sink that failed, cancellation); `state.invalidState`
    ///   at once while this compositor renders already, or when another session, render or player writes `sink` or
    ///   `sound`: those are left untouched, the others aborted. Cancelled, a render answers after a second's patience
    ///   even when its sink's `write` does not return: its outputs stay claimed until that write returns.
    public func render(
        frames: Int?, into sink: sending some FrameSink, sound: sending (any AudioSink)? = nil,
        realtime: (any PlaybackClock)? = nil
    ) async -> CompositionReport {
        await render(frames.map { .frames($0) } ?? .untilStopped, into: sink, sound: sound, realtime: realtime)
    }

    /// Renders into `sink` for `length` — a number of frames, until every layer's content has
    /// ended, or until ``stop()`` — and says what each layer showed; as
    /// ``render(frames:into:sound:realtime:)`` in every other way.
    /// - Parameters:
    ///   - length: how long the output is.
    ///   - sink: where the frames go; the render owns it from here.
    ///   - sound: where the mixed sound goes when `sink` carries none; unused when it does.
    ///   - realtime: the clock frames are paced on; nil: as fast as they can be drawn.
    /// - Returns: the frames written, each layer's account, and the error that stopped the render early, if one
    ///   did (as ``render(frames:into:sound:realtime:)``).
    public func render(
        _ length: CompositionLength, into sink: sending some FrameSink, sound: sending (any AudioSink)? = nil,
        realtime: (any PlaybackClock)? = nil
    ) async -> CompositionReport {
        // One render at a time (its layers' readers are the compositor's), and outputs that no
        // other writer holds: refused before anything touches them.
        let claim: OutputClaim
        let writer = OutputWriter("this render")
        let usedSound = sound != nil && !(sink is any AudioCarryingFrameSink) ? sound : nil
        guard !rendering.exchange(true, ordering: .acquiringAndReleasing) else {
            OutputClaims.giveUpFree(frames: sink, sound: usedSound, for: writer)
            return CompositionReport(
                framesWritten: 0, layers: [],
                error: PlayheadError(code: .invalidState, message: "this compositor is rendering already: one render at a time"))
        }
        do throws(PlayheadError) {
            claim = try OutputClaims.claimOrGiveUp(frames: sink, sound: usedSound, for: writer, file: nil)
        } catch {
            rendering.store(false, ordering: .releasing)
            return CompositionReport(framesWritten: 0, layers: [], error: error)
        }
        finishing.withLock { $0 = false }
        // `sink` is `sending`: the caller gave it up; only the render thread touches it from here.
        let combined: any FrameSink =
            if let sound, !(sink is any AudioCarryingFrameSink) { FrameAndSoundSink(frames: sink, sound: sound) } else { sink }
        let owner = SoleOwner(handingOver: combined)
        let interrupt = InterruptFlag()
        let canvas = self.canvas
        // Cancelled, the render answers after a patience even when its sink's `write` does not
        // return (what was written so far, as cancelled); it lets go of its outputs, and the
        // compositor of the render, only when it truly ends.
        return await RunAnswer<CompositionReport>.value(
            "playhead.compose", onCancel: { interrupt.raise() },
            soFar: { [current] in
                CompositionReport(framesWritten: current.withLock { $0.frames }, layers: [], error: .cancelled(file: nil))
            }
        ) {
            let report = self.renderBlocking(length, canvas: canvas, sink: owner.value, interrupt: interrupt, pacing: realtime)
            // A stop ends one render: the next one runs until it is stopped again.
            self.stopRequested.withLock { $0 = false }
            claim.release()
            self.rendering.store(false, ordering: .releasing)
            return report
        }
    }

    /// Ends a render after the frame being drawn: the sink is finished (its sound up to that
    /// frame's end), as when the last frame of a counted render is written. A stop that comes
    /// before the render starts (a signal at a channel's start) ends it at its first frame.
    public func stop() {
        stopRequested.withLock { $0 = true }
    }

    private let stopRequested = Locked(false)
    /// The running render has left its frame loop: it finishes its outputs (a stop reached it).
    private let finishing = Locked(false)

    /// Whether the running render has drawn its last frame and is finishing its outputs (a
    /// ``stop()`` reached it, or its length did): cancelling it now would abort a finish on
    /// its way.
    package var isFinishing: Bool { finishing.withLock { $0 } }
    /// A render is running.
    private let rendering = Atomic(false)

    /// How long a channel's render waits at its start for its first items to open (and for the
    /// sound layer's first item, whose sound sets the channel's sound format), in seconds.
    static let startPatience: TimeInterval = 2

    /// Pictures in circulation between the render thread and the output thread: one being
    /// drawn, one being written, one waiting.
    private static let pictureCount = 3

    /// The render thread: draws each output frame into a free picture and hands it to the output
    /// thread, which writes it while the next one is drawn.
    private func renderBlocking(
        _ length: CompositionLength, canvas: CompositionCanvas, sink: any FrameSink, interrupt: InterruptFlag,
        pacing: (any PlaybackClock)?
    ) -> CompositionReport {
        var report = CompositionReport(framesWritten: 0, layers: [], error: nil)
        var layers: [LayerReader] = []
        var gone: [LayerReader] = []
        let format: PictureFormat = sink.pixelFormat == .rgb24 ? .rgb24 : .yuv420p
        let outputFormat: OutputPixelFormat = sink.pixelFormat == .rgb24 ? .rgb24 : .yuv420p
        var output: CompositionOutput?
        var seenGeneration = -1
        var mixer: SoundMixer?
        var rendered = 0
        let loopBudget = LoopCacheBudget(limit: loopCacheBytes)
        // Items opened ahead on workers; a channel's render never waits for one.
        let preparer = ItemPreparer(waits: pacing == nil, soundPlays: sink is any AudioCarryingFrameSink)
        defer { preparer.close() }
        do throws(PlayheadError) {
            try canvas.check()
            if case .frames(let frames) = length, frames < 0 {
                throw PlayheadError(code: .invalidArgument, message: "a negative frame count (\(frames))")
            }
            var pictures: [OwnedFrame] = []
            for _ in 0..<Self.pictureCount { pictures.append(try OwnedFrame(size: canvas.size, format: format)) }
            // The sound, when the sink writes one: of the given format, or that of the first
            // sound layer there from the start (none: no sound).
            if sink is any AudioCarryingFrameSink {
                let first = state.withLock { $0.layers.first { $0.layer.providesAudio } }
                if let format = soundFormat ?? first.map({ Self.soundFormat(of: $0.layer, preparer: preparer, interrupt: interrupt) }) {
                    mixer = SoundMixer(format: format, interrupt: interrupt, preparer: preparer, loudness: loudness)
                }
            }
            let progress = current
            let started = CompositionOutput(
                sink: SoleOwner(handingOver: sink), pictures: pictures, canvas: canvas, pixelFormat: outputFormat, pacing: pacing,
                audio: mixer?.format, interrupt: interrupt,
                onLate: { lateness in
                    let halfFrame = canvas.time(ofFrame: 1).seconds / 2
                    progress.withLock {
                        $0.lateness.record(lateness)
                        if lateness > halfFrame { $0.lateFrames += 1 }
                    }
                })
            output = started
            /// The mixed sound up to `time` into `slot`: every layer's passes so far (a removed
            /// layer's closed where it was removed).
            func addSound(upTo time: MediaTime, slot: Int, until deadline: FrameDeadline? = nil) throws(PlayheadError) {
                guard let mixer else { return }
                try mixer.mix(upTo: time, layers: layers + gone, into: &started.sounds[slot].samples, until: deadline)
                report.audioFailure = mixer.failure
                report.soundlessSources = mixer.soundless
                report.soundMissed = MediaTime(value: mixer.missed, timescale: Int32(mixer.format.sampleRate))
            }
            /// Passes no longer needed: a second behind the sound.
            func forgetPasses(before time: MediaTime) {
                let soundTime =
                    mixer.map { MediaTime(value: $0.position, timescale: Int32($0.format.sampleRate)) - MediaTime(value: 1, timescale: 1) } ?? time
                for layer in layers { layer.forgetPasses(endedBy: min(time, soundTime)) }
                gone.removeAll { $0.isRetired && !(mixer?.needs($0) ?? false) }
            }
            var stopped = false
            /// Since when the compositor's latest version has waited for its schedules' lengths.
            var versionWaits: Date?
            var n = 0
            while length.goesOn(after: n) {
                if interrupt.isRaised { throw PlayheadError.cancelled() }
                let time = canvas.time(ofFrame: n)
                /// The compositor's version, when this render has not taken it yet.
                func nextVersion() -> (
                    generation: Int, layers: [(id: CompositionLayer.ID, layer: CompositionLayer)], updates: [CompositionLayer.ID: CompositionLayer]
                )? {
                    state.withLock { s in
                        guard s.generation != seenGeneration else { return nil }
                        // Asked only when a version is new (not on every frame).
                        let running = Set(layers.map(\.id))
                        // A channel takes a version whole once the lengths its scheduled layers
                        // join by are measured (on workers), or `startPatience` after it came
                        // (those layers then play from their first items): until then it draws the
                        // version before, and the render thread never waits for a source.
                        if !preparer.waits, !schedulesKnown(s.layers, updates: s.updates, running: running) {
                            let since = versionWaits ?? Date()
                            versionWaits = since
                            if Date().timeIntervalSince(since) < Self.startPatience { return nil }
                        }
                        versionWaits = nil
                        defer { s.updates = [:] }
                        return (s.generation, s.layers, s.updates)
                    }
                }
                var pending = nextVersion()
                if n == 0, !preparer.waits {
                    // A channel starts with its first version: it waits for the lengths its
                    // scheduled layers join by as for its first items, `startPatience` at most.
                    let deadline = Date().addingTimeInterval(Self.startPatience)
                    while pending == nil, Date() < deadline, !interrupt.isRaised, state.withLock({ $0.generation }) != seenGeneration {
                        usleep(10_000)
                        pending = nextVersion()
                    }
                }
                if let pending {
                    seenGeneration = pending.generation
                    sync(
                        &layers, with: pending.layers, updates: pending.updates, gone: &gone, at: time, canvas: canvas, format: format,
                        interrupt: interrupt, loopBudget: loopBudget, preparer: preparer)
                }
                if n == 0, !preparer.waits {
                    // A channel starts when its first items are open, or after `startPatience`
                    // (an item opening later joins where its pass is by then).
                    let deadline = Date().addingTimeInterval(Self.startPatience)
                    for layer in layers {
                        if let asset = layer.currentAsset { preparer.waitUntilReady(asset, until: deadline, interrupt: interrupt) }
                    }
                }
                // Nil: the output thread stopped (its sink failed).
                guard let slot = started.free.receive() else {
                    stopped = true
                    break
                }
                let picture = pictures[slot]
                // An encoder may still hold the picture sent last from this slot (it was handed
                // over, not copied: `VideoFrame.sharable`): the slot then draws into new buffers.
                try picture.renewIfShared()
                picture.fill(with: canvas.background)
                // In a realtime render a layer waits for its picture until the frame is due.
                let deadline = started.deadline(ofFrame: n)
                for layer in layers { try layer.draw(at: time, into: picture, deadline: deadline) }
                if length == .untilLayersEnd, layers.allSatisfy({ $0.hasEnded || $0.hasFailedForGood }),
                    state.withLock({ $0.generation }) == seenGeneration
                {
                    // Every layer's content ended before this frame: the output ends with the one before.
                    started.free.send(slot)
                    break
                }
                // The sound up to this picture's time (the layers' passes are known up to it).
                started.sounds[slot].hasPicture = true
                try addSound(upTo: time, slot: slot, until: deadline)
                if n % 64 == 63 { forgetPasses(before: time) }
                started.ready.send(slot)
                n += 1
                rendered = n
                current.withLock { $0.note(frame: n, time: time, layers: layers, loopCacheBytes: loopBudget.used) }
                if stopRequested.withLock({ $0 }) { break }
            }
            finishing.withLock { $0 = true }
            if !stopped, mixer != nil, n > 0, let slot = started.free.receive() {
                // The sound of the last picture's span, once the layers' timelines have reached its end.
                let end = canvas.time(ofFrame: n)
                for layer in layers { try layer.reach(end) }
                started.sounds[slot].hasPicture = false
                // In real time, no longer than the frame after the last would wait.
                try addSound(upTo: end, slot: slot, until: started.deadline(ofFrame: n))
                started.ready.send(slot)
            }
            // What each layer was playing when the render ended is recorded too.
            for layer in layers { layer.endPass(at: canvas.time(ofFrame: n)) }
            let outcome = started.finish(abort: false)
            report.framesWritten = outcome.written
            report.error = outcome.error
            if pacing != nil { (report.lateFrames, report.lateness) = (outcome.late, outcome.lateness) }
        } catch {
            let outcome = output?.finish(abort: true)
            if output == nil { sink.abort() }
            report.framesWritten = outcome?.written ?? 0
            report.error = error
            if pacing != nil { (report.lateFrames, report.lateness) = (outcome?.late ?? 0, outcome?.lateness) }
            for layer in layers { layer.endPass(at: canvas.time(ofFrame: rendered)) }
        }
        if let error = report.error { logger.debug("composition stopped", metadata: ["error": "\(error)"]) }
        report.layers = (gone + layers).map {
            LayerReport(
                id: $0.id, framesShown: $0.framesShown, loopsCompleted: $0.loopsCompleted, failure: $0.failure,
                itemFailures: $0.itemFailures.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                damagedPackets: $0.damagedPackets, firstDamage: $0.firstDamage, framesFromLoopCache: $0.framesFromLoopCache)
        }
        .sorted { $0.id.value < $1.id.value }
        return report
    }

    /// The sound's format: that of the sound layer's first item (48 kHz stereo when it has no
    /// audio, or cannot be opened now — its failure then shows when it plays).
    private static func soundFormat(of layer: CompositionLayer, preparer: ItemPreparer, interrupt: InterruptFlag) -> AudioStreamInfo {
        var info = AudioStreamInfo(source: "composition", sampleRate: 48_000, channelCount: 2)
        guard let asset = layer.assets.first else { return info }
        preparer.prepare(asset, copies: preparer.copies(for: layer))
        guard let demuxer = try? preparer.take(asset, interrupt: interrupt, patience: .seconds(startPatience)) else { return info }
        defer { preparer.giveBack(demuxer, of: asset) }
        if let audio = demuxer.audio, audio.sampleRate > 0, audio.channelCount > 0 {
            info.sampleRate = audio.sampleRate
            info.channelCount = audio.channelCount
        }
        return info
    }

    /// Whether every layer of a version that joins a schedule when taken — added, or updated — has
    /// its items' lengths measured (or their measuring failed: it then plays from its first item);
    /// their measuring is started when it was not.
    private func schedulesKnown(
        _ layers: [(id: CompositionLayer.ID, layer: CompositionLayer)], updates: [CompositionLayer.ID: CompositionLayer],
        running: Set<CompositionLayer.ID>
    ) -> Bool {
        layers.allSatisfy { id, layer in
            guard layer.scheduledStart != nil, !running.contains(id) || updates[id] != nil else { return true }
            if let range = layer.timeRange, range.duration.isNumeric, range.duration > .zero { return true }
            return layer.assets.allSatisfy { itemLengths.measured($0) != nil }
        }
    }

    /// Brings the render's readers in line with the compositor's layers: new ones start at `time`,
    /// removed ones end there (kept aside for the report and their sound's last span), moved
    /// ones are redrawn at their new place, updated ones take the new version at their next item
    /// boundary.
    private func sync(
        _ readers: inout [LayerReader], with layers: [(id: CompositionLayer.ID, layer: CompositionLayer)],
        updates: [CompositionLayer.ID: CompositionLayer], gone: inout [LayerReader], at time: MediaTime,
        canvas: CompositionCanvas, format: PictureFormat, interrupt: InterruptFlag, loopBudget: LoopCacheBudget,
        preparer: ItemPreparer
    ) {
        let wanted = Dictionary(uniqueKeysWithValues: layers.map { ($0.id, $0.layer) })
        for reader in readers where wanted[reader.id] == nil {
            reader.endPass(at: time)
            reader.retire()
            gone.append(reader)
        }
        readers.removeAll { wanted[$0.id] == nil }
        for reader in readers {
            if let update = updates[reader.id] {
                if let loudness, update.providesAudio { for asset in update.assets { _ = loudness.loudness(of: asset) } }
                // A scheduled version's items' lengths are needed when it is taken: measured ahead.
                if update.scheduledStart != nil { itemLengths.prefetch(update.assets) }
                reader.update(to: update, at: time)
            } else if let layer = wanted[reader.id], layer.rect != reader.intended.rect || layer.zIndex != reader.intended.zIndex {
                reader.move(rect: layer.rect, zIndex: layer.zIndex)
            }
        }
        let known = Set(readers.map(\.id))
        let handler = recordHandler
        for (id, layer) in layers where !known.contains(id) {
            // Items of a layer that gives sound are measured ahead of their first pass.
            if let loudness, layer.providesAudio { for asset in layer.assets { _ = loudness.loudness(of: asset) } }
            let reader = LayerReader(
                id: id, layer: layer, canvasSize: canvas.size, outputFormat: format, interrupt: interrupt, strict: strict,
                start: time, failurePolicy: failurePolicy, soundExtents: soundExtents, itemLengths: itemLengths, loopBudget: loopBudget,
                preparer: preparer, retryFailedItemsAfter: preparer.waits ? nil : failedItemRetry)
            if let handler { reader.onRecord = { handler($0) } }
            readers.append(reader)
        }
        // Stable: equal z-indexes keep the order they were added in.
        readers.sort { ($0.layer.zIndex, $0.id.value) < ($1.layer.zIndex, $1.id.value) }
    }
}

/// What a composition did: frames written, each layer's account, and why it stopped early.
public struct CompositionReport: Sendable {
    public var framesWritten: Int
    public var layers: [LayerReport]
    /// Set when rendering stopped before the last frame (cancelled, or the sink failed).
    public var error: PlayheadError?
    /// Realtime only: frames written more than half a frame after they were due.
    public var lateFrames = 0
    /// Realtime only: how late each frame was written, in seconds (0 when on time).
    public var lateness: LatenessHistogram?
    /// The first failure of a layer's sound, if there was one: the pass that failed is silent
    /// from there (the item's failure), the passes after it play.
    public var audioFailure: PlayheadError?
    /// Realtime only: how much of the sound was silence because it had not been decoded when
    /// its frame was due (a source that stalled), summed over the layers that give sound; the
    /// sound after it stays in its place. A pass whose sound failed is silent from there, and that
    /// silence is not counted here (``audioFailure`` says why).
    public var soundMissed: MediaTime = .zero
    /// The sound layer's items that played without sound, having none.
    public var soundlessSources: [String] = []
}

/// One layer's account of a composition.
public struct LayerReport: Sendable {
    public var id: CompositionLayer.ID
    /// Output frames in which it drew a picture.
    public var framesShown: Int
    /// Times its playlist went back to the start.
    public var loopsCompleted: Int
    /// Why it stopped showing its content (its source failed, or every item of its playlist did),
    /// if it did.
    public var failure: PlayheadError?
    /// Items of its playlist that failed and were passed over, by position, with why.
    public var itemFailures: [(item: Int, error: PlayheadError)] = []
    /// Damaged packets decoded past in its items, and the first (see ``Compositor/strict``).
    public var damagedPackets = 0
    public var firstDamage: PlayheadError?
    /// Frames it drew from its items' recorded pictures, without decoding them again
    /// (``Compositor/loopCacheBytes``).
    public var framesFromLoopCache = 0
}

/// How long a composition's output is (``Compositor/render(_:into:sound:realtime:)``).
public enum CompositionLength: Sendable, Hashable {
    /// Output frames `0 ..< n`.
    case frames(Int)
    /// Until every layer's content has ended — each played, with its loops, to its end (or
    /// failed) — as a composition lasts as long as its longest track: the frames that start before
    /// that end. A layer that loops forever never ends: then until ``Compositor/stop()``.
    case untilLayersEnd
    /// Until ``Compositor/stop()`` or cancellation.
    case untilStopped

    /// Whether frame `n` may be rendered (by the count; the layers' end is told as they draw).
    func goesOn(after n: Int) -> Bool {
        if case .frames(let count) = self { return n < count }
        return true
    }
}
