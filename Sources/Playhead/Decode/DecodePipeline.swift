import CFFmpeg
import Dispatch
import Foundation
import Logging
import Synchronization

/// One run of a ``DecodeSession``. Its `run` executes on the session thread, which opens the file,
/// then decodes and converts while a demux thread reads packets and an output thread feeds the sink.
///
/// Ownership: the `FormatContext` belongs to the demux thread once it starts; the decoder, the
/// converter and the decoded frame to the session thread; the sink to the output thread. Packets
/// and canvases move between them by slot number (see ``SlotChannel`` and ``SlotStorage``).
final class DecodePipeline: Sendable {
    private let session: DecodeSession
    private let logger: Logger
    private var source: String { session.source }
    private var configuration: DecodeConfiguration { session.configuration }

    /// What the three threads report back; written under the mutex, read after they finish.
    private struct Outcome {
        var readError: PlayheadError?
        var sinkError: PlayheadError?
        var delivered = 0
        var firstPTS: MediaTime?
        var lastPTS: MediaTime?
        var audio: AudioOutcome?
    }

    /// What the audio thread reports.
    struct AudioOutcome {
        var info: AudioStreamInfo?
        var delivered = 0
        var sinkError: PlayheadError?
        var decodeFailure: PlayheadError?
    }
    private let outcome = Locked(Outcome())
    /// Set to stop the demux and output threads early without it counting as a cancellation
    /// (frame limit reached, sink failed).
    private let stopRequested = Atomic<Bool>(false)
    /// Where the video stopped early (frame limit, end time), for the audio thread to end there too.
    private let videoCutoff = Locked<MediaTime?>(nil)

    init(session: DecodeSession, logger: Logger) {
        self.session = session
        self.logger = logger
    }

    func run(sink: sending any FrameSink, audio audioSink: (any AudioSink)?) -> DecodeResult {
        var result = DecodeResult(status: .completed, source: source, framesDecoded: 0, framesDelivered: 0,
                                  outputSize: nil, firstPresentationTime: nil, lastPresentationTime: nil, decodeErrorCount: 0)
        do throws(PlayheadError) {
            try decode(sink: SoleOwner(sink), audioSink: audioSink, result: &result)
        } catch {
            result.status = session.interrupt.isRaised ? .cancelled : .failed(error)
        }
        // Audio of a session that did not complete is not passed off as complete either.
        if result.status != .completed { audioSink?.abort() }
        if case .failed(let error) = result.status {
            logger.debug("decode failed", metadata: ["file": "\(source)", "error": "\(error)"])
        }
        return result
    }

    private func decode(sink sinkOwner: SoleOwner<any FrameSink>, audioSink: (any AudioSink)?, result: inout DecodeResult) throws(PlayheadError) {
        var sinkHandedOff = false
        defer { if !sinkHandedOff { sinkOwner.value.abort() } }
        if session.interrupt.isRaised { throw .cancelled(file: source) }

        if !source.contains("://") { try MediaProbe.checkLocalFile(source) }
        let format = try FormatContext.open(source, interrupt: session.interrupt)
        try format.findStreamInfo()
        let streamIndex = av_find_best_stream(format.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        let audioIndex = audioSink == nil ? -1 : av_find_best_stream(format.pointer, AVMEDIA_TYPE_AUDIO, -1, max(streamIndex, -1), nil, 0)
        guard streamIndex >= 0 || audioIndex >= 0 else {
            throw PlayheadError(code: .noVideoTrack, message: audioSink == nil ? "no video track to decode" : "no video or audio track to decode", file: source)
        }
        for i in 0..<format.streamCount where i != Int(streamIndex) && i != Int(audioIndex) {
            format.stream(at: i).pointee.discard = AVDISCARD_ALL
        }
        let timelineStart = Self.timelineStart(format, streams: [streamIndex, audioIndex], configuration: configuration)
        guard streamIndex >= 0, let audioSink else {
            if streamIndex >= 0 {
                return try decodeVideo(format, streamIndex: streamIndex, audio: nil, timelineStart: timelineStart, sinkOwner: sinkOwner,
                                       sinkHandedOff: &sinkHandedOff, result: &result)
            }
            // Audio alone: the frame sink gets no frames and is finished (or aborted) with the session.
            try decodeAudioOnly(format, audioIndex: audioIndex, audioSink: audioSink!, timelineStart: timelineStart, result: &result)
            sinkHandedOff = true
            if result.status == .completed { try sinkOwner.value.finish() } else { sinkOwner.value.abort() }
            return
        }
        let audio = audioIndex >= 0 ? (index: audioIndex, sink: audioSink) : nil
        try decodeVideo(format, streamIndex: streamIndex, audio: audio, timelineStart: timelineStart, sinkOwner: sinkOwner,
                        sinkHandedOff: &sinkHandedOff, result: &result)
    }

    /// Where the session's timeline begins: the start time asked for, or the earliest start of the
    /// streams decoded. Video and audio positions are both counted from it, which keeps them in
    /// sync in a player.
    private static func timelineStart(_ format: FormatContext, streams: [Int32], configuration: DecodeConfiguration) -> MediaTime {
        if let start = configuration.startTime, start.isNumeric, start > .zero { return start }
        let starts = streams.filter { $0 >= 0 }.compactMap { index -> MediaTime? in
            let stream = format.stream(at: Int(index)).pointee
            return stream.start_time == FFmpegConstants.noPTS ? nil : MediaTime(ffmpegTimestamp: stream.start_time, timeBase: stream.time_base)
        }
        if let earliest = starts.min() { return earliest }
        let start = format.pointer.pointee.start_time
        return start == FFmpegConstants.noPTS ? .zero : MediaTime(ffmpegTimestamp: start, timeBase: FFmpegConstants.timeBaseQ)
    }

    private func decodeVideo(_ format: FormatContext, streamIndex: Int32, audio: (index: Int32, sink: any AudioSink)?, timelineStart: MediaTime,
                             sinkOwner: SoleOwner<any FrameSink>, sinkHandedOff: inout Bool, result: inout DecodeResult) throws(PlayheadError) {
        let stream = format.stream(at: Int(streamIndex))
        let timeBase = stream.pointee.time_base
        let decoder = try StreamDecoder(stream: stream, threads: configuration.decoderThreads, source: source)
        let dropBefore = try seek(format, streamIndex: streamIndex, timeBase: timeBase)

        // Geometry, fixed for the session.
        let parameters = stream.pointee.codecpar.pointee
        let stored = PixelSize(width: Int(parameters.width), height: Int(parameters.height))
        guard !stored.isEmpty else {
            throw PlayheadError(code: .decodeFailed, message: "the video track has no picture size", file: source)
        }
        var par = PixelAspectRatio.square
        var orientation = VideoOrientation.identity
        if configuration.appliesPreferredTrackTransform {
            let sar = av_guess_sample_aspect_ratio(format.pointer, stream, nil)
            if sar.num > 0, sar.den > 0 { par = PixelAspectRatio(horizontal: Int(sar.num), vertical: Int(sar.den)) }
            orientation = FormatContext.orientation(of: stream)
        }
        let sinkFormat = sinkOwner.value.pixelFormat
        let outputFormat = sinkFormat.ffmpeg ?? AVPixelFormat(rawValue: parameters.format)
        let alignment = Self.alignment(of: outputFormat)
        var canvas = configuration.outputSize ?? stored.presentationSize(pixelAspectRatio: par, orientation: orientation)
        canvas = PixelSize(width: (canvas.width + alignment - 1) / alignment * alignment,
                           height: (canvas.height + alignment - 1) / alignment * alignment)
        guard canvas.width <= 16384, canvas.height <= 16384, !canvas.isEmpty else {
            throw PlayheadError(code: .invalidArgument, message: "output size \(canvas) is out of range", file: source)
        }
        let layout = configuration.gravity.layout(stored: stored, pixelAspectRatio: par, orientation: orientation, canvas: canvas, alignment: alignment)
        let passthrough = sinkFormat == .native && canvas == stored && !layout.hasBars
            && layout.sourceCrop == PixelRect(size: stored) && orientation == .identity
        result.outputSize = canvas

        // Where the track says it ends, to tell a complete decode from a file that stops early.
        let declaredEnd: MediaTime? = stream.pointee.duration > 0
            ? MediaTime(ffmpegTimestamp: stream.pointee.duration, timeBase: timeBase)
                + (stream.pointee.start_time == FFmpegConstants.noPTS ? .zero : MediaTime(ffmpegTimestamp: stream.pointee.start_time, timeBase: timeBase))
            : nil
        let rate = stream.pointee.avg_frame_rate.isValidPositive ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameDuration = rate.isValidPositive ? MediaTime(value: Int64(rate.den), timescale: rate.num) : MediaTime.invalid
        let info = FrameStreamInfo(source: source, size: canvas, pixelFormat: sinkFormat,
                                   frameRate: rate.isValidPositive ? rate.doubleValue : nil, layout: layout, timescale: timeBase.den,
                                   timelineStart: timelineStart)
        // The audio stage, when there is audio: it ends where the video will (end time or frame limit).
        var audioEnd = configuration.endTime
        if let limit = configuration.frameLimit, frameDuration.isNumeric {
            let limitEnd = timelineStart + frameDuration * Int64(limit)
            audioEnd = audioEnd.map { min($0, limitEnd) } ?? limitEnd
        }
        let audioStage = try audio.map { (audio) throws(PlayheadError) in
            try AudioStage(stream: format.stream(at: Int(audio.index)), format: configuration.audioFormat,
                           start: dropBefore.map { _ in timelineStart }, end: audioEnd, timelineStart: timelineStart,
                           sink: audio.sink, source: source)
        }

        // The pools and the channels between the threads.
        let packetCount = configuration.packetQueueCapacity, canvasCount = configuration.frameQueueCapacity
        let packets = SlotStorage((0..<packetCount).map { _ in OwnedPacket() })
        var canvasList: [CanvasSlot] = []
        for _ in 0..<canvasCount {
            canvasList.append(CanvasSlot(frame: passthrough ? OwnedFrame() : try OwnedFrame(size: canvas, format: outputFormat)))
        }
        let canvases = SlotStorage(canvasList)
        let freePackets = SlotChannel(capacity: packetCount, filledWith: 0..<packetCount)
        let readyPackets = SlotChannel(capacity: packetCount)
        let freeCanvases = SlotChannel(capacity: canvasCount, filledWith: 0..<canvasCount)
        let readyCanvases = SlotChannel(capacity: canvasCount)
        let audioRoute = audio.map { PacketRoute(stream: $0.index, capacity: Self.audioPacketCapacity) }
        let channels = [freePackets, readyPackets, freeCanvases, readyCanvases] + (audioRoute?.channels ?? [])
        session.register(channels)
        let stopEverything: @Sendable () -> Void = { [self] in
            self.stopRequested.store(true, ordering: .releasing)
            for channel in channels { channel.cancel() }
        }
        let videoRoute = PacketRoute(stream: streamIndex, packets: packets, free: freePackets, ready: readyPackets)

        // Demux thread: owns the format context from here on.
        let demuxDone = DispatchSemaphore(value: 0)
        // The decoder copied what it needed from the stream; from here this thread never touches
        // `format` again, so the demux thread is its only user.
        let formatOwner = SoleOwner(handingOver: format)
        let routes = [videoRoute] + (audioRoute.map { [$0] } ?? [])
        startThread("playhead.demux") { [self] in
            demux(formatOwner.value, routes: routes)
            demuxDone.signal()
        }

        // Audio thread: owns the audio stage (decoder, resampler) and, through it, the audio sink.
        let audioDone = DispatchSemaphore(value: 0)
        if let audioStage, let audioRoute {
            let stageOwner = SoleOwner(handingOver: audioStage)
            startThread("playhead.audio") { [self] in
                decodeAudio(stageOwner.value, route: audioRoute, stop: stopEverything)
                audioDone.signal()
            }
        } else {
            audioDone.signal()
        }

        // Output thread: owns the sink from here on.
        let outputDone = DispatchSemaphore(value: 0)
        sinkHandedOff = true
        startThread("playhead.output") { [self] in
            output(sinkOwner.value, info: info, canvases: canvases, free: freeCanvases, ready: readyCanvases, stop: stopEverything)
            outputDone.signal()
        }

        // This thread: decode and convert.
        let converter = FrameConverter(layout: layout, outputFormat: outputFormat, source: source)
        var state = DecodeLoopState(frameDuration: frameDuration, limit: configuration.frameLimit)
        state.dropBefore = dropBefore
        let decoded = OwnedFrame()
        let deliver = { (state: inout DecodeLoopState) -> Bool in
            self.deliver(decoded, state: &state, timeBase: timeBase, passthrough: passthrough, converter: converter,
                         canvases: canvases, free: freeCanvases, ready: readyCanvases)
        }
        var running = true
        while running, let slot = readyPackets.receive() {
            let packet = packets[slot].pointer
            running = feed(decoder, packet: packet, decoded: decoded, state: &state, deliver: deliver)
            av_packet_unref(packet)
            freePackets.send(slot)
        }
        if running, !session.interrupt.isRaised, !stopRequested.load(ordering: .acquiring) {
            _ = feed(decoder, packet: nil, decoded: decoded, state: &state, deliver: deliver)
        }
        if state.conversionError != nil {
            // The session fails: nothing more is read or written, for the audio either.
            stopEverything()
        } else if state.limitReached {
            // The audio ends where the video did (already so when the frame rate was known).
            if state.lastPTS.isNumeric { videoCutoff.withLock { $0 = state.lastPTS + (state.lastDuration.isNumeric ? state.lastDuration : .zero) } }
            stopReadingVideo(freePackets: freePackets, readyPackets: readyPackets)
        }
        readyCanvases.close()
        demuxDone.wait()
        outputDone.wait()
        audioDone.wait()

        let reported = outcome.withLock { $0 }
        result.framesDecoded = state.decoded
        result.framesDelivered = reported.delivered
        result.firstPresentationTime = reported.firstPTS
        result.lastPresentationTime = reported.lastPTS
        result.decodeErrorCount = state.decodeErrors
        result.audio = reported.audio?.info
        result.audioFramesDelivered = reported.audio?.delivered ?? 0
        if let error = reported.sinkError ?? reported.audio?.sinkError {
            result.status = .failed(error)
        } else if session.interrupt.isRaised {
            result.status = .cancelled
        } else if let error = state.conversionError ?? reported.readError {
            result.status = .failed(error)
        } else if let error = state.firstDecodeError {
            var summary = error
            summary.message = "\(state.decodeErrors) packet(s) could not be decoded; first: \(error.message)"
            result.status = .failed(summary)
        } else if !state.limitReached, let error = endedEarly(state, declaredEnd: declaredEnd) {
            result.status = .failed(error)
        } else if let error = reported.audio?.decodeFailure {
            result.status = .failed(error)
        }
    }

    /// A decode that ran to the end of the data without error can still be incomplete: no frame at
    /// all, or frames stopping well before where the track says it ends (a cut file whose index
    /// is intact). Either is reported rather than passed off as complete.
    private func endedEarly(_ state: DecodeLoopState, declaredEnd: MediaTime?) -> PlayheadError? {
        guard configuration.endTime == nil, configuration.frameLimit.map({ state.nextIndex < $0 }) ?? true else { return nil }
        if state.decoded == 0 {
            return PlayheadError(code: .decodeFailed, message: "no frame could be decoded", file: source)
        }
        guard let declaredEnd, declaredEnd.isNumeric, state.lastPTS.isNumeric else { return nil }
        let step = state.lastDuration.isNumeric ? state.lastDuration : (state.frameDuration.isNumeric ? state.frameDuration : .zero)
        let reached = state.lastPTS + step
        // More than a frame and a half short of the declared end.
        if declaredEnd.seconds - reached.seconds > 1.5 * max(step.seconds, 0.001) {
            return PlayheadError(code: .readFailed,
                                 message: "the media data ends early, at \(Self.format(reached)) s of the \(Self.format(declaredEnd)) s the file declares: it is truncated",
                                 file: source)
        }
        return nil
    }

    private static func format(_ time: MediaTime) -> String { String(format: "%.2f", time.seconds) }

    /// Seeks for `configuration.startTime`. Returns the time before which decoded frames are dropped
    /// (frame-exact starts), or nil.
    private func seek(_ format: FormatContext, streamIndex: Int32, timeBase: AVRational) throws(PlayheadError) -> MediaTime? {
        guard let target = configuration.startTime, target.isNumeric, target > .zero else { return nil }
        let before = configuration.startToleranceBefore, after = configuration.startToleranceAfter
        let exact = !(before > .zero) && !(after > .zero)
        let ts = target.ffmpegTimestamp(in: timeBase)
        if !exact {
            // The keyframe nearest to the target inside the window, chosen by the demuxer from its index.
            let low = before.isNumeric ? (target - before).ffmpegTimestamp(in: timeBase) : Int64.min
            let high = after.isNumeric ? (target + after).ffmpegTimestamp(in: timeBase) : Int64.max
            if avformat_seek_file(format.pointer, streamIndex, low, ts, high, 0) >= 0 { return nil }
        }
        // Frame-exact (or no keyframe in the window): the keyframe at or before the target, then
        // decode forward and drop what ends before it.
        let result = avformat_seek_file(format.pointer, streamIndex, Int64.min, ts, ts, 0)
        guard result >= 0 else {
            throw FFmpegError.error(.seekFailed, "could not seek to \(target.seconds) s", function: "avformat_seek_file", result: result, file: source)
        }
        return target
    }

    /// The video needs no more packets (frame limit, end time, or a failed conversion). The demuxer
    /// goes on only for the audio, if any, up to its own end.
    private func stopReadingVideo(freePackets: SlotChannel, readyPackets: SlotChannel) {
        freePackets.cancel()
        readyPackets.cancel()
    }

    // MARK: The session thread's decoding

    struct DecodeLoopState {
        var decoded = 0
        var nextIndex = 0
        var decodeErrors = 0
        var firstDecodeError: PlayheadError?
        var conversionError: PlayheadError?
        var limitReached = false
        var lastPTS = MediaTime.invalid
        var lastDuration = MediaTime.invalid
        /// Frames that end at or before this time are decoded but not delivered (frame-exact start).
        var dropBefore: MediaTime?
        let frameDuration: MediaTime
        let limit: Int?

        init(frameDuration: MediaTime, limit: Int?) {
            self.frameDuration = frameDuration
            self.limit = limit
        }

        mutating func record(_ error: PlayheadError) {
            decodeErrors += 1
            if firstDecodeError == nil { firstDecodeError = error }
        }
    }

    /// Sends one packet (nil drains) and delivers every frame it yields. False to stop decoding.
    private func feed(_ decoder: StreamDecoder, packet: UnsafeMutablePointer<AVPacket>?, decoded: OwnedFrame,
                      state: inout DecodeLoopState, deliver: (inout DecodeLoopState) -> Bool) -> Bool {
        while true {
            var accepted = true
            do throws(PlayheadError) {
                accepted = try decoder.send(packet)
            } catch {
                state.record(error)
            }
            while true {
                let got: Bool
                do throws(PlayheadError) {
                    got = try decoder.receive(into: decoded)
                } catch {
                    state.record(error)
                    break
                }
                guard got else { break }
                if !deliver(&state) { return false }
            }
            if accepted { return true }
        }
    }

    private func deliver(_ decoded: OwnedFrame, state: inout DecodeLoopState, timeBase: AVRational, passthrough: Bool,
                         converter: FrameConverter, canvases: SlotStorage<CanvasSlot>, free: SlotChannel, ready: SlotChannel) -> Bool {
        defer { av_frame_unref(decoded.pointer) }
        state.decoded += 1
        let frame = decoded.pointer.pointee
        var pts = MediaTime(ffmpegTimestamp: frame.best_effort_timestamp, timeBase: timeBase)
        if !pts.isNumeric {
            pts = state.lastPTS.isNumeric && state.lastDuration.isNumeric ? state.lastPTS + state.lastDuration : .zero
        }
        var duration = frame.pkt_duration > 0 ? MediaTime(ffmpegTimestamp: frame.pkt_duration, timeBase: timeBase) : state.frameDuration
        if !duration.isNumeric { duration = .invalid }
        state.lastPTS = pts
        state.lastDuration = duration
        if let end = configuration.endTime, pts >= end {
            state.limitReached = true
            return false
        }
        if let target = state.dropBefore {
            let end = duration.isNumeric ? pts + duration : pts
            if end <= target, pts < target { return true }
            state.dropBefore = nil
        }

        guard let slot = free.receive() else { return false }
        let canvas = canvases[slot]
        if passthrough {
            av_frame_unref(canvas.frame.pointer)
            av_frame_move_ref(canvas.frame.pointer, decoded.pointer)
        } else {
            do throws(PlayheadError) {
                try converter.convert(decoded, into: canvas.frame)
            } catch {
                state.conversionError = error
                free.send(slot)
                return false
            }
        }
        canvas.presentationTime = pts
        canvas.duration = duration
        canvas.index = state.nextIndex
        state.nextIndex += 1
        ready.send(slot)
        if let limit = state.limit, state.nextIndex >= limit {
            state.limitReached = true
            return false
        }
        return true
    }

    // MARK: The demux thread

    /// Audio packets the demuxer may read ahead: several seconds of typical audio, so that files
    /// whose audio runs ahead of their video in file order still keep the video decoder fed.
    static let audioPacketCapacity = 256

    /// Reads packets and hands each to its stream's route; packets of other streams are dropped. A
    /// route whose free channel is cancelled wants no more (its stage ended); once none wants any,
    /// reading stops.
    private func demux(_ format: FormatContext, routes: [PacketRoute]) {
        var reader = TolerantReader(format: format, source: source)
        defer {
            if let error = reader.firstError { outcome.withLock { $0.readError = $0.readError ?? error } }
            for route in routes { route.ready.close() }
        }
        var open = routes.map { _ in true }
        let scratch = OwnedPacket()
        while !stopRequested.load(ordering: .acquiring), open.contains(true), reader.next(into: scratch.pointer, interrupt: session.interrupt) {
            defer { av_packet_unref(scratch.pointer) }
            guard let r = routes.firstIndex(where: { $0.stream == scratch.pointer.pointee.stream_index }), open[r] else { continue }
            let route = routes[r]
            guard let slot = route.free.receive() else {
                open[r] = false
                continue
            }
            av_packet_move_ref(route.packets[slot].pointer, scratch.pointer)
            route.ready.send(slot)
        }
    }

    // MARK: The audio thread

    private func decodeAudio(_ stage: AudioStage, route: PacketRoute, stop: @Sendable () -> Void) {
        var report = AudioOutcome()
        do throws(PlayheadError) {
            try stage.begin()
            report.info = stage.info
            while !stage.reachedEnd, !stopRequested.load(ordering: .acquiring), let slot = route.ready.receive() {
                let packet = route.packets[slot].pointer
                defer {
                    av_packet_unref(packet)
                    route.free.send(slot)
                }
                if let cutoff = videoCutoff.withLock({ $0 }) { stage.cut(at: cutoff) }
                try stage.feed(packet)
            }
            // Reached its end: the demuxer need read no more audio.
            route.free.cancel()
            if !session.interrupt.isRaised, !stopRequested.load(ordering: .acquiring) { try stage.finish() }
        } catch {
            report.sinkError = error
            stop()
        }
        report.delivered = stage.framesDelivered
        report.decodeFailure = stage.decodeFailure
        outcome.withLock { $0.audio = report }
    }

    /// Decodes a file that has audio and no video: the demuxer and the audio stage on this thread.
    private func decodeAudioOnly(_ format: FormatContext, audioIndex: Int32, audioSink: any AudioSink, timelineStart: MediaTime,
                                 result: inout DecodeResult) throws(PlayheadError) {
        let stream = format.stream(at: Int(audioIndex))
        let exactStart = try seek(format, streamIndex: audioIndex, timeBase: stream.pointee.time_base)
        let stage = try AudioStage(stream: stream, format: configuration.audioFormat, start: exactStart.map { _ in timelineStart },
                                   end: configuration.endTime, timelineStart: timelineStart, sink: audioSink, source: source)
        try stage.begin()
        result.audio = stage.info
        let packet = OwnedPacket()
        var reader = TolerantReader(format: format, source: source)
        while !stage.reachedEnd, reader.next(into: packet.pointer, interrupt: session.interrupt) {
            defer { av_packet_unref(packet.pointer) }
            if packet.pointer.pointee.stream_index == audioIndex { try stage.feed(packet.pointer) }
            result.audioFramesDelivered = stage.framesDelivered
        }
        if session.interrupt.isRaised { throw .cancelled(file: source) }
        try stage.finish()
        result.audioFramesDelivered = stage.framesDelivered
        result.decodeErrorCount = stage.decodeErrors
        if let error = reader.firstError ?? stage.decodeFailure {
            result.status = .failed(error)
        } else if stage.framesDelivered == 0 {
            result.status = .failed(PlayheadError(code: .decodeFailed, message: "no audio could be decoded", file: source))
        }
    }

    // MARK: The output thread

    private func output(_ sink: any FrameSink, info: FrameStreamInfo, canvases: SlotStorage<CanvasSlot>,
                        free: SlotChannel, ready: SlotChannel, stop: @Sendable () -> Void) {
        var delivered = 0
        var first: MediaTime?
        var last: MediaTime?
        var sinkError: PlayheadError?
        var formatName: String?
        do throws(PlayheadError) {
            try sink.begin(info)
            while let slot = ready.receive() {
                let canvas = canvases[slot]
                let frame = canvas.frame
                if formatName == nil { formatName = FrameConverter.name(frame.format) }
                let view = VideoFrame(presentationTime: canvas.presentationTime, duration: canvas.duration, index: canvas.index,
                                      source: info.source, size: frame.size, pixelFormat: info.pixelFormat,
                                      pixelFormatName: formatName!, frame: frame.pointer)
                try sink.write(view)
                delivered += 1
                if first == nil { first = canvas.presentationTime }
                last = canvas.presentationTime
                free.send(slot)
            }
        } catch {
            sinkError = error
            stop()
        }
        // Stopped by another stage's failure (the audio sink, a conversion): not complete either.
        let cancelled = session.interrupt.isRaised || stopRequested.load(ordering: .acquiring)
        if sinkError == nil, !cancelled {
            do throws(PlayheadError) { try sink.finish() } catch { sinkError = error }
        }
        if sinkError != nil || cancelled { sink.abort() }
        outcome.withLock {
            $0.delivered = delivered
            $0.firstPTS = first
            $0.lastPTS = last
            $0.sinkError = sinkError
        }
    }

    // MARK: Helpers

    private func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// 2 for formats with chroma at half resolution, so bars and content fall on the chroma grid.
    static func alignment(of format: AVPixelFormat) -> Int {
        guard let d = av_pix_fmt_desc_get(format) else { return 1 }
        return 1 << Int(max(d.pointee.log2_chroma_w, d.pointee.log2_chroma_h))
    }
}
