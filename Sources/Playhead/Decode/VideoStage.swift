import PlayheadMedia

/// The video half of a session, made on the demux thread and handed to the video thread: the
/// decoder and stepper, the fixed geometry, the converter, and the pools between the threads.
struct VideoStageSetup {
    let facts: VideoStreamFacts
    let stepper: VideoFrameStepper
    let converter: FrameConverter
    let layout: FrameLayout
    let canvasSize: PixelSize
    /// The decoded frames go to the sink as they are (no conversion needed).
    let passthrough: Bool
    let route: PacketRoute
    let canvases: CanvasPool

    static func make(
        demuxer: Demuxer, facts: VideoStreamFacts, sinkFormat: OutputPixelFormat,
        configuration: DecodeConfiguration
    ) throws(PlayheadError) -> VideoStageSetup {
        let source = demuxer.source
        let stepper = try VideoFrameStepper(demuxer: demuxer, facts: facts, threads: configuration.decoderThreads)
        let applies = configuration.appliesPreferredTrackTransform
        let par = applies ? facts.pixelAspectRatio : .square
        let orientation = applies ? facts.orientation : .identity
        let stored = facts.storedSize
        let outputFormat = PictureFormat(sinkFormat, native: PictureFormat(of: facts))
        let alignment = outputFormat.alignment
        // A canvas asked for is rounded up to the output's alignment and the picture placed in it
        // by the gravity; without one, the canvas is the picture, fitted once (its displayed size
        // rounded to the alignment, the picture filling it).
        let canvas: PixelSize
        let gravity: VideoGravity
        if let asked = configuration.outputSize {
            canvas = PixelSize(
                width: (asked.width + alignment - 1) / alignment * alignment, height: (asked.height + alignment - 1) / alignment * alignment)
            gravity = configuration.gravity
        } else {
            // Shown at its displayed size, within the largest canvas (a 65534x2 picture is
            // scaled down rather than refused: what a probe calls playable plays).
            canvas = stored.fittedCanvas(
                pixelAspectRatio: par, orientation: orientation, within: PixelSize(width: 16384, height: 16384), alignment: alignment)
            gravity = .resize
        }
        guard canvas.width <= 16384, canvas.height <= 16384, !canvas.isEmpty else {
            throw PlayheadError(code: .invalidArgument, message: "output size \(canvas) is out of range", file: source)
        }
        let layout = gravity.layout(stored: stored, pixelAspectRatio: par, orientation: orientation, canvas: canvas, alignment: alignment)
        let passthrough =
            sinkFormat == .native && canvas == stored && !layout.hasBars
            && layout.sourceCrop == PixelRect(size: stored) && orientation == .identity && configuration.subtitles == nil
        var frames: [CanvasSlot] = []
        for _ in 0..<configuration.frameQueueCapacity {
            frames.append(CanvasSlot(frame: passthrough ? try OwnedFrame() : try OwnedFrame(size: canvas, format: outputFormat)))
        }
        let converter = FrameConverter(layout: layout, format: outputFormat, source: source)
        if let subtitles = configuration.subtitles {
            converter.burner = try SubtitleBurner(subtitles, demuxer: demuxer, timeBase: facts.timeBase)
        }
        return VideoStageSetup(
            facts: facts, stepper: stepper, converter: converter,
            layout: layout, canvasSize: canvas, passthrough: passthrough,
            route: try PacketRoute(stream: facts.index, capacity: configuration.packetQueueCapacity),
            canvases: CanvasPool(frames))
    }
}

/// The canvases between the video thread and the output thread, and the channels moving them.
struct CanvasPool: Sendable {
    let slots: SlotStorage<CanvasSlot>
    let free: SlotChannel
    let ready: SlotChannel

    init(_ canvases: [CanvasSlot]) {
        slots = SlotStorage(canvases)
        free = SlotChannel(capacity: canvases.count, filledWith: 0..<canvases.count)
        ready = SlotChannel(capacity: canvases.count)
    }

    var channels: [SlotChannel] { [free, ready] }
}

/// The video thread: takes each segment's packets, decodes them through the stepper (the start
/// frame first, then every frame), converts each frame into a canvas and hands it to the output
/// thread, until the segment's end, its end time or its frame limit.
struct VideoStage {
    let pipeline: DecodePipeline
    let setup: VideoStageSetup

    private final class Progress {
        var segment = -1
        var active = false
        var start: SegmentStart?
        var index = 0
        var end: Int64?
        var limit: Int?
        var lastPTS = MediaTime.invalid
        var lastDuration = MediaTime.invalid
        var superseded = false
        var limitReached = false
    }

    func run() {
        let progress = Progress()
        setup.route.consume(dropping: pipeline.control) { holder in
            switch holder.content {
            case .start(let start):
                progress.segment = start.segment.number
                progress.start = start
                progress.active = true
                progress.index = 0
                progress.limit = start.segment.frameLimit
                // Frames from the end time on are not delivered: those whose tick is at or after it.
                progress.end = start.segment.end.map { $0.ticks(in: setup.facts.timeBase, rounding: .up) }
                progress.superseded = false
                progress.limitReached = false
                setup.stepper.restart(start.selection)
                setup.stepper.retriesLateStart = start.mayRetryFromTheStart
                guard forward(.start(start), segment: progress.segment) else { return false }
            case .packet:
                guard progress.active, holder.segment == progress.segment else { return true }
                if !feed(holder.packet, progress) { finishOrRetry(progress) }
            case .end:
                guard progress.active, holder.segment == progress.segment else { return true }
                _ = feed(nil, progress)
                finishOrRetry(progress)
            }
            return !pipeline.session.isStopping
        }
    }

    /// A start that landed late is retried from the start of the data (a new segment the demux
    /// thread takes up; this one is dropped); otherwise the segment is done.
    private func finishOrRetry(_ progress: Progress) {
        if setup.stepper.retriesLateStart, setup.stepper.startedLate {
            setup.stepper.retriesLateStart = false
            progress.active = false
            pipeline.control.retryFromTheStart(progress.segment)
            return
        }
        finish(progress)
    }

    /// Decodes a packet (nil: the end of the data). False when delivery stopped (limit, end time,
    /// a newer segment, a failure).
    private func feed(_ packet: OwnedPacket?, _ progress: Progress) -> Bool {
        do throws(PlayheadError) {
            return try setup.stepper.feed(packet) { frame, pts, duration throws(PlayheadError) in
                try deliver(frame, pts: pts, duration: duration, progress)
            }
        } catch {
            pipeline.fail { if $0.segment == progress.segment { $0.conversionError = error } }
            progress.active = false
            return false
        }
    }

    private func deliver(_ frame: OwnedFrame, pts: Int64, duration: Int64, _ progress: Progress) throws(PlayheadError) -> Bool {
        let tb = setup.facts.timeBase
        if let limit = progress.limit, progress.index >= limit {
            // A limit of zero frames delivers none.
            progress.limitReached = true
            return false
        }
        if let end = progress.end, pts >= end {
            progress.limitReached = true
            return false
        }
        let canvases = setup.canvases
        guard let slot = canvases.free.receive() else { return false }
        if pipeline.control.isSuperseded(progress.segment) {
            canvases.free.send(slot)
            progress.superseded = true
            return false
        }
        let canvas = canvases.slots[slot]
        if setup.passthrough {
            canvas.frame.move(from: frame)
        } else {
            do throws(PlayheadError) {
                try setup.converter.convert(frame, into: canvas.frame)
            } catch {
                canvases.free.send(slot)
                throw error
            }
        }
        let time = MediaTime(ticks: pts, timeBase: tb)
        let length = MediaTime(ticks: duration, timeBase: tb)
        canvas.content = .frame
        canvas.segment = progress.segment
        canvas.presentationTime = time
        canvas.duration = length
        canvas.index = progress.index
        progress.index += 1
        progress.lastPTS = time
        progress.lastDuration = length
        canvases.ready.send(slot)
        if let limit = progress.limit, progress.index >= limit {
            progress.limitReached = true
            return false
        }
        return true
    }

    /// The segment's video is over: report, let the audio end where the video did, and tell the
    /// output thread.
    private func finish(_ progress: Progress) {
        guard progress.active else { return }
        progress.active = false
        if progress.superseded { return }
        let segment = progress.segment
        let decoded = setup.stepper.framesDecoded
        let damage = setup.stepper.decoder.damage
        pipeline.tally.withLock {
            guard $0.segment == segment else { return }
            $0.framesDecoded = decoded
            $0.videoDamage = damage
            if progress.limitReached { $0.limitReached = true }
        }
        if progress.limitReached, progress.lastPTS.isNumeric {
            let end = progress.lastPTS + (progress.lastDuration.isNumeric ? progress.lastDuration : .zero)
            pipeline.videoCutoff.withLock { $0 = (segment, end) }
        }
        pipeline.routeDone(.video, of: segment)
        _ = forward(.end, segment: segment)
    }

    /// Puts a marker on the way to the output thread. False when the session is stopping.
    private func forward(_ content: CanvasSlot.Content, segment: Int) -> Bool {
        let canvases = setup.canvases
        guard let slot = canvases.free.receive() else { return false }
        let canvas = canvases.slots[slot]
        canvas.content = content
        canvas.segment = segment
        canvases.ready.send(slot)
        return true
    }
}
