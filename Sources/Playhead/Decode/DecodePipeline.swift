import Dispatch
import Foundation
import Logging
import PlayheadMedia
import Synchronization

/// One run of a ``DecodeSession``, on worker threads: the demux thread opens the source (or takes
/// the demuxer its asset holds), sets everything up, starts the video, output and audio stages,
/// and then demuxes; when the session stops, it waits for the others and gives the demuxer back.
///
/// Ownership: the ``Demuxer`` belongs to the demux thread; the video decoder, the stepper and the
/// converter to the video thread; the frame sink to the output thread; the audio stage (and
/// through it the audio sink) to the audio thread. Packets and canvases move between them by slot
/// number (see ``SlotChannel``); every slot carries its segment's number, and what a newer segment
/// superseded is dropped wherever it is met.
final class DecodePipeline: Sendable {
    let session: DecodeSession
    let control: SessionControl
    let tally = Locked(SegmentTally())
    /// Where the video stopped early (frame limit, end time), for the audio to end there too.
    let videoCutoff = Locked<(segment: Int, time: MediaTime)?>(nil)
    private let logger: Logger
    /// A run of its range once (``DecodeSession/run(into:audio:audioCompletion:)``): its
    /// timeline begins at its start time, where its sound is cut exactly, so a file made of it
    /// begins there (a player's timeline is its own).
    private let once: Bool
    var source: String { session.source }
    var configuration: DecodeConfiguration { session.configuration }
    var interrupt: InterruptFlag { session.interrupt }

    /// Audio packets the demuxer may read ahead: several seconds of typical audio, so that files
    /// whose audio runs ahead of their video in file order still keep the video decoder fed.
    static let audioPacketCapacity = 256

    init(session: DecodeSession, control: SessionControl, logger: Logger, once: Bool) {
        self.session = session
        self.once = once
        self.control = control
        self.logger = logger
    }

    /// Everything the stages are made with, worked out on the demux thread before they start.
    struct Setup {
        var demuxer: Demuxer
        var video: VideoStageSetup?
        var audio: (route: PacketRoute, stage: AudioStage)?
        var timelineStart: MediaTime
        var info: FrameStreamInfo?
        /// The demux thread's packet.
        var scratch: OwnedPacket
    }

    // MARK: The demux thread

    /// Runs the session on the calling worker thread (the demux thread) until it stops.
    /// - Parameter finishingAudio: whether the audio sink is finished when the session completes
    ///   (and aborted when it does not); else it is its owner's to finish.
    func run(sink: SoleOwner<any FrameSink>, audio audioSink: (any AudioSink)?, finishingAudio: Bool) -> DecodeResult {
        let setup: Setup
        do {
            setup = try setUp(sinkFormat: sink.value.pixelFormat, audioSink: audioSink)
        } catch {
            sink.value.abort()
            audioSink?.abort()
            var result = DecodeResult(source: source)
            result.status = interrupt.isRaised ? .cancelled : .failed(error)
            control.failed(report: result)
            return result
        }
        var channels: [SlotChannel] = []
        if let video = setup.video { channels += video.route.channels + video.canvases.channels }
        if let audio = setup.audio { channels += audio.route.channels }
        var segmentRoutes: SegmentRoutes = []
        if setup.video != nil { segmentRoutes.insert(.video) }
        if setup.audio != nil { segmentRoutes.insert(.audio) }
        control.setRoutes(segmentRoutes)
        session.register(channels)
        let done = DispatchGroup()
        if let video = setup.video {
            // The video setup (decoder, converter) belongs to the video thread from here on.
            let videoOwner = SoleOwner(handingOver: video)
            let canvases = video.canvases
            done.enter()
            WorkerPool.shared.run("playhead.video") { [self] in
                VideoStage(pipeline: self, setup: videoOwner.value).run()
                done.leave()
            }
            done.enter()
            let info = setup.info
            WorkerPool.shared.run("playhead.output") { [self] in
                OutputStage(pipeline: self, canvases: canvases).run(sink: sink.value, info: info)
                done.leave()
            }
        } else {
            // Audio alone: the frame sink gets no frames, and is finished or aborted with the session.
            done.enter()
            WorkerPool.shared.run("playhead.output") { [self] in
                OutputStage.finishEmpty(sink.value, pipeline: self)
                done.leave()
            }
        }
        if let audio = setup.audio, let audioSink {
            // The audio stage (decoder, resampler) belongs to the audio thread from here on.
            let stageOwner = SoleOwner(handingOver: audio.stage)
            let route = audio.route
            let hasVideo = setup.video != nil
            done.enter()
            WorkerPool.shared.run("playhead.audio") { [self] in
                AudioThread(pipeline: self, route: route, stage: stageOwner.value, sink: audioSink, hasVideo: hasVideo).run()
                done.leave()
            }
        }
        demux(setup)
        done.wait()
        let demuxer = setup.demuxer
        if let asset = session.asset { asset.giveBack(demuxer) }
        var result = tally.withLock { $0.result(source: source, cancelled: session.isCancelled, strict: configuration.strict) }
        // Only a picture stopped short (not one that reached its end) ends the sound kept.
        let videoEnd = setup.video == nil ? nil : tally.withLock { $0.videoEnded ? nil : $0.videoEnd }
        // Finished or given up; a session stopped short keeps no sound past its last frame (the
        // sound is decoded ahead of the picture).
        if finishingAudio, let audioSink { result.status = SinkCompletion.close(audioSink, after: result.status, soundEnd: videoEnd?.seconds) }
        if case .failed(let error) = result.status {
            logger.debug("decode failed", metadata: ["file": "\(SourceRedaction.redacted(source))", "error": "\(error)"])
        }
        return result
    }

    private func setUp(sinkFormat: OutputPixelFormat, audioSink: (any AudioSink)?) throws(PlayheadError) -> Setup {
        if interrupt.isRaised { throw .cancelled(file: source) }
        let demuxer: Demuxer
        if let asset = session.asset {
            demuxer = try asset.openDemuxer(interrupt: interrupt)
        } else {
            demuxer = try Demuxer.open(source, interrupt: interrupt)
        }
        let videoFacts = demuxer.video
        let audioFacts = audioSink == nil ? nil : demuxer.audio
        // The sound asked for is not in the file: the run fails rather than play without it.
        if audioSink != nil, let failure = demuxer.audioChoiceFailure {
            session.asset?.giveBack(demuxer)
            throw failure
        }
        guard videoFacts != nil || audioFacts != nil else {
            session.asset?.giveBack(demuxer)
            throw demuxer.missingVideo(what: audioSink == nil ? "no video track to decode" : "no video or audio track to decode")
        }
        demuxer.select(Set([videoFacts?.index, audioFacts?.index].compactMap { $0 }))
        let timelineStart = rangeStart ?? Self.timelineStart(demuxer, streams: [videoFacts?.startTime, audioFacts?.startTime])
        var setup = Setup(demuxer: demuxer, timelineStart: timelineStart, scratch: try OwnedPacket())
        if let videoFacts {
            let video = try VideoStageSetup.make(demuxer: demuxer, facts: videoFacts, sinkFormat: sinkFormat, configuration: configuration)
            setup.video = video
            setup.info = FrameStreamInfo(
                source: source, size: video.canvasSize, pixelFormat: sinkFormat,
                frameRate: videoFacts.frameRate.map(\.doubleValue), layout: video.layout, timescale: videoFacts.timeBase.den,
                timelineStart: timelineStart, timestampsMayJump: demuxer.timestampsMayJump)
            if let duration = videoFacts.duration, duration.isNumeric, duration > .zero {
                setup.info?.pictureEnd = (videoFacts.startTime ?? .zero) + duration
            }
            tally.withLock { $0.outputSize = video.canvasSize }
        }
        if let audioFacts, let audioSink {
            let stage = try AudioStage(
                demuxer: demuxer, stream: audioFacts.index, format: configuration.audioFormat, start: nil, end: nil,
                timelineStart: timelineStart, sink: audioSink)
            stage.timestampsMayJump = demuxer.timestampsMayJump
            setup.audio = (try PacketRoute(stream: audioFacts.index, capacity: Self.audioPacketCapacity), stage)
        }
        return setup
    }

    /// The start time of a run of its range once, when it has one.
    private var rangeStart: MediaTime? {
        guard once, let start = configuration.startTime, start.isNumeric else { return nil }
        return start
    }

    /// Where a session's timeline begins when it plays from the beginning: the earliest start of
    /// the streams decoded (or the container's). Video and audio positions are both counted from
    /// it, which keeps them in sync in a player.
    private static func timelineStart(_ demuxer: Demuxer, streams: [MediaTime?]) -> MediaTime {
        if let earliest = streams.compactMap({ $0 }).filter(\.isNumeric).min() { return earliest }
        return demuxer.containerStart
    }

    /// Reads packets for each segment in turn and hands each to its stream's route, with the
    /// segment's start and end markers around them. A newer segment (a seek) is taken up between
    /// two packets; between segments, and once every stage has what it needs, it waits.
    private func demux(_ setup: Setup) {
        let demuxer = setup.demuxer
        var routes: [(route: PacketRoute, kind: SegmentRoutes)] = []
        if let video = setup.video { routes.append((video.route, .video)) }
        if let audio = setup.audio { routes.append((audio.route, .audio)) }
        let scratch = setup.scratch
        var current = -1
        var reading = false
        var overflow = PacketOverflow()
        defer { reportDemux(demuxer) }
        while !control.isStopped {
            if !reading || control.latestSegment != current {
                // Packets read ahead belong to the segment left behind.
                overflow.removeAll()
                let next = control.latestSegment != current ? control.segment : control.waitForSegment(after: current)
                guard let segment = next, !control.isStopped else { return }
                current = segment.number
                tally.withLock { $0.begin(segment.number) }
                let start: SegmentStart
                do {
                    start = try position(demuxer, setup: setup, for: segment)
                } catch {
                    tally.withLock { $0.dataEnd = .failed(error) }
                    for (route, _) in routes { guard send(.start(failedStart(segment, setup)), segment: current, on: route) else { return } }
                    for (route, _) in routes { guard send(.end(.failed(error)), segment: current, on: route) else { return } }
                    reading = false
                    continue
                }
                for (route, _) in routes { guard send(.start(start), segment: current, on: route) else { return } }
                reading = true
            }
            let done = tally.withLock { $0.segment == current ? $0.routesDone : [] }
            for (route, kind) in routes where done.contains(kind) { overflow.removeAll(route.stream) }
            if routes.allSatisfy({ done.contains($0.kind) }) {
                // Every stage has what it needs: read no further until the next segment.
                reading = false
                continue
            }
            // Packets read ahead go to their routes as room comes.
            for (route, _) in routes { _ = hand(&overflow, to: route, segment: current, waiting: false) }
            switch demuxer.read(into: scratch) {
            case .packet:
                let index = scratch.streamIndex
                guard let (route, kind) = routes.first(where: { $0.route.stream == index }), !done.contains(kind) else {
                    scratch.unref()
                    continue
                }
                guard let slot = room(for: scratch, on: route, kind, routes: routes, done: done, overflow: &overflow, segment: current) else {
                    if control.isStopped { return }
                    continue
                }
                if control.isSuperseded(current) {
                    // A seek came while waiting for room: this packet is of the old segment.
                    route.free.send(slot)
                    scratch.unref()
                    continue
                }
                place(scratch, in: slot, of: route, segment: current)
            case .end(let reason):
                tally.withLock {
                    if $0.segment == current { $0.dataEnd = reason }
                }
                reportDemux(demuxer)
                // A route with packets read ahead gets them before its end; the others (a decoder
                // holding its last frames until the end) are told at once.
                let ordered = routes.filter { overflow.isEmpty($0.route.stream) } + routes.filter { !overflow.isEmpty($0.route.stream) }
                for (route, kind) in ordered where !done.contains(kind) {
                    guard hand(&overflow, to: route, segment: current, waiting: true) else { return }
                    guard send(.end(reason), segment: current, on: route) else { return }
                }
                reading = false
            }
        }
    }

    /// A free slot of `route` for `packet`, the packets read ahead for it handed over first. While
    /// the route is full it waits — and whenever the video still needs data and has none queued
    /// for its decoder, reads on instead: the packet joins the packets read ahead (bounded). Only
    /// for the video: its decoder holds its last frames until the data ends (reordering, frame
    /// threads), an audio decoder gives each packet's sound at once; and sound read ahead costs
    /// little memory where pictures would cost much.
    /// - Returns: the slot; nil when the packet was read ahead, or a seek superseded the segment or
    ///   the session is stopping (the packet let go).
    private func room(
        for packet: OwnedPacket, on route: PacketRoute, _ kind: SegmentRoutes, routes: [(route: PacketRoute, kind: SegmentRoutes)],
        done: SegmentRoutes, overflow: inout PacketOverflow, segment: Int
    ) -> Int? {
        // Room now, nothing read ahead before it: the common case, with nothing to work out.
        if overflow.isEmpty(route.stream), let slot = route.free.tryReceive() { return slot }
        let others = routes.filter { $0.kind == .video && $0.kind != kind && !done.contains($0.kind) }.map(\.route)
        guard !others.isEmpty else {
            // No picture to starve: wait for room as long as it takes, the packets read ahead first.
            guard hand(&overflow, to: route, segment: segment, waiting: true), !control.isSuperseded(segment), let slot = route.free.receive()
            else {
                packet.unref()
                return nil
            }
            return slot
        }
        var patience = DispatchTimeInterval.nanoseconds(0)
        while !control.isStopped, !control.isSuperseded(segment) {
            if let slot = route.free.tryReceive(within: patience) {
                guard let oldest = overflow.first(route.stream) else { return slot }
                place(oldest, in: slot, of: route, segment: segment)
                overflow.removeFirst(route.stream)
                patience = .nanoseconds(0)
                continue
            }
            if others.contains(where: { $0.ready.isEmpty }), overflow.append(packet, stream: route.stream) { return nil }
            // Looked often at first (the video may be running dry), less often the longer nothing
            // changes (a paused player).
            patience = Self.starvationCheck(after: patience)
        }
        packet.unref()
        return nil
    }

    /// How long a demux thread waiting for a full route waits, after waiting `last`, before it
    /// looks again whether the video ran dry: 10 ms, doubling to 80 ms.
    static func starvationCheck(after last: DispatchTimeInterval) -> DispatchTimeInterval {
        guard case .milliseconds(let ms) = last, ms >= 10 else { return .milliseconds(10) }
        return .milliseconds(min(ms * 2, 80))
    }

    /// Moves the packets read ahead for `route` into its slots, oldest first: as many as it has
    /// room for now, or (`waiting`) all of them, waiting for room. Packets of a segment a seek
    /// superseded are let go instead.
    /// - Returns: false when the session is stopping.
    private func hand(_ overflow: inout PacketOverflow, to route: PacketRoute, segment: Int, waiting: Bool) -> Bool {
        while let packet = overflow.first(route.stream) {
            guard let slot = waiting ? route.free.receive() : route.free.tryReceive() else { return !waiting }
            if control.isSuperseded(segment) {
                route.free.send(slot)
                overflow.removeAll()
                return true
            }
            place(packet, in: slot, of: route, segment: segment)
            overflow.removeFirst(route.stream)
        }
        return true
    }

    /// Moves `packet`'s data into `route`'s slot and sends it to the route's stage.
    private func place(_ packet: OwnedPacket, in slot: Int, of route: PacketRoute, segment: Int) {
        let holder = route.slots[slot]
        holder.packet.move(from: packet)
        holder.segment = segment
        holder.content = .packet
        route.ready.send(slot)
    }

    private func reportDemux(_ demuxer: Demuxer) {
        let damage = demuxer.damage
        tally.withLock { $0.demuxDamage = damage }
    }

    /// Puts a marker on a route. False when the session is stopping.
    private func send(_ content: SlotContent, segment: Int, on route: PacketRoute) -> Bool {
        guard let slot = route.free.receive() else { return false }
        let holder = route.slots[slot]
        holder.segment = segment
        holder.content = content
        route.ready.send(slot)
        return true
    }

    /// Positions the demuxer for a segment and says how it begins.
    private func position(_ demuxer: Demuxer, setup: Setup, for segment: Segment) throws(PlayheadError) -> SegmentStart {
        var start = try place(demuxer, setup: setup, for: segment)
        // The audio ends where the video will: the end time, or the frame limit's end — counted
        // from the first frame (a picture may start after the sound).
        var end = segment.end
        if let limit = segment.frameLimit, let video = setup.video?.facts, let frame = video.frameDuration {
            let firstFrame = start.audioStart ?? max(start.timelineStart, video.startTime ?? start.timelineStart)
            let limitEnd = firstFrame + frame * Int64(limit)
            end = end.map { min($0, limitEnd) } ?? limitEnd
        }
        start.audioEnd = end
        return start
    }

    private func place(_ demuxer: Demuxer, setup: Setup, for segment: Segment) throws(PlayheadError) -> SegmentStart {
        guard let request = segment.start, request.time.isNumeric else {
            try demuxer.rewind()
            return SegmentStart(segment: segment, selection: .everything, timelineStart: setup.timelineStart, audioStart: nil)
        }
        guard let video = setup.video else {
            // Audio alone: the one audio seek rule; the audio is trimmed to the time exactly.
            if let audio = demuxer.audio { try SeekRule.positionAudio(demuxer, facts: audio, at: request.time, scratch: setup.scratch) }
            return SegmentStart(segment: segment, selection: .everything, timelineStart: request.time, audioStart: request.time)
        }
        let tb = video.facts.timeBase
        if segment.fromTheStart {
            // A retry: from the start of the data, decoding forward to the frame asked for.
            try demuxer.rewind()
            let selection = SeekRule.selection(for: request, facts: video.facts)
            let audioStart = once ? request.time : selection.low == .min ? nil : MediaTime(ticks: selection.low, timeBase: tb)
            return SegmentStart(segment: segment, selection: selection, timelineStart: request.time, audioStart: audioStart)
        }
        let atStart = demuxer.isFresh
        let scratch = try OwnedPacket()
        let (selection, moved) = try SeekRule.position(
            demuxer, facts: video.facts, request: request,
            from: atStart ? .atTheStart : .unknown, scratch: scratch)
        // A player's sound starts with the frame displayed at the time; a run of a range once is
        // cut at the time itself (its picture's first frame, displayed from before it, is placed
        // at its start).
        let audioStart = once ? request.time : selection.low == .min ? nil : MediaTime(ticks: selection.low, timeBase: tb)
        var start = SegmentStart(segment: segment, selection: selection, timelineStart: request.time, audioStart: audioStart)
        start.mayRetryFromTheStart = demuxer.canSeek && (moved || !atStart)
        return start
    }

    private func failedStart(_ segment: Segment, _ setup: Setup) -> SegmentStart {
        SegmentStart(segment: segment, selection: .everything, timelineStart: segment.start?.time ?? setup.timelineStart, audioStart: nil)
    }

    // MARK: Reporting

    /// A stage failed for good (a sink, a conversion): the session is over.
    func fail(_ record: (inout SegmentTally) -> Void) {
        tally.withLock(record)
        control.failed(report: report())
    }

    /// The current segment's result so far.
    func report() -> DecodeResult {
        tally.withLock { $0.result(source: source, cancelled: session.isCancelled, strict: configuration.strict) }
    }

    /// A stage needs no more packets of `segment`.
    func routeDone(_ route: SegmentRoutes, of segment: Int) {
        tally.withLock {
            if $0.segment == segment { $0.routesDone.insert(route) }
        }
    }
}
