internal import CFFmpeg

/// Decodes one audio stream's packets, resamples them to interleaved signed 16-bit in the chosen
/// format, trims them to the session's time window sample for sample, and hands them to an
/// ``AudioSink``. Used by one thread: the audio thread of a ``DecodeSession``, or the thread of an
/// ``AudioSession``. Nothing is allocated per packet: one frame, one resampler buffer. Damaged
/// packets are decoded past and counted (``StreamDecoder``'s one rule).
package final class AudioStage {
    let source: String
    /// The output format; set by `begin()`.
    package private(set) var info: AudioStreamInfo?
    package let decoder: StreamDecoder
    private var resampler: Resampler?
    private let requestedFormat: AudioFormat
    private var timelineStart: MediaTime
    private var start: MediaTime?
    private var end: MediaTime?
    private let timeBase: AVRational
    private let frame: OwnedFrame
    private let sink: any AudioSink
    /// The session's window in output samples: samples before `firstSample` are dropped, and
    /// delivery stops at `endSample`.
    private var firstSample: Int64?
    private var endSample: Int64?
    /// Where the next resampled sample sits, in output samples on the source's timeline.
    private var nextSample: Int64?

    package private(set) var framesDelivered = 0
    /// The container allows its timestamps to jump; passed on to the sink.
    package var timestampsMayJump = false
    /// The segment being decoded and the session's control, passed on with every buffer.
    package var segment: (number: Int, control: any SegmentWatch)?
    /// Told where the first buffer since the last restart begins, before it is delivered.
    package var onFirstBuffer: ((MediaTime) -> Void)?
    /// Where the first buffer delivered since the last restart began.
    private(set) var firstDeliveredTime: MediaTime?
    /// Set once `endSample` is reached: the rest of the stream is not wanted.
    package private(set) var reachedEnd = false

    /// `start` (exact starts only) and `end` bound what is delivered; `timelineStart` is passed on
    /// to the sink. Opens the decoder; the format is settled by `begin()`.
    init(
        stream: UnsafeMutablePointer<AVStream>, format: AudioFormat, start: MediaTime?, end: MediaTime?, timelineStart: MediaTime,
        sink: any AudioSink, source: String
    ) throws(PlayheadError) {
        frame = try OwnedFrame()
        self.source = source
        self.sink = sink
        self.requestedFormat = format
        self.start = start
        self.end = end
        self.timelineStart = timelineStart
        timeBase = stream.pointee.time_base
        decoder = try StreamDecoder(stream: stream, threads: 1, source: source)
    }

    /// A stage for stream `index` of `demuxer` (the other arguments as in the designated initializer).
    /// - Throws: `state.invalidState` when the demuxer has no such stream; the decoder's failure to open.
    package convenience init(
        demuxer: Demuxer, stream index: Int32, format: AudioFormat, start: MediaTime?, end: MediaTime?, timelineStart: MediaTime,
        sink: any AudioSink
    ) throws(PlayheadError) {
        guard let stream = demuxer.context.stream(at: Int(index)) else {
            throw PlayheadError(code: .invalidState, message: "no audio stream \(index)", file: demuxer.source)
        }
        try self.init(stream: stream, format: format, start: start, end: end, timelineStart: timelineStart, sink: sink, source: demuxer.source)
    }

    private static func samples(_ time: MediaTime, rate: Int64) -> Int64 {
        Int64((time.seconds * Double(rate)).rounded())
    }

    /// Settles the output format (a sink that negotiates — a player's — chooses it, and may wait
    /// for it: this runs on the thread that decodes audio, never holding up the video), sets up
    /// the resampler, and tells the sink what follows.
    package func begin() throws(PlayheadError) {
        var format = requestedFormat
        if let negotiating = sink as? any AudioFormatNegotiating {
            let context = decoder.context.pointee
            format = try negotiating.outputFormat(
                for: AudioStreamInfo(
                    source: source, sampleRate: Int(context.sample_rate),
                    channelCount: Int(max(1, context.ch_layout.nb_channels))))
        }
        let resampler = try Resampler(from: decoder.context, sampleRate: format.sampleRate, channelCount: format.channelCount, source: source)
        self.resampler = resampler
        placeWindow()
        var info = AudioStreamInfo(
            source: source, sampleRate: resampler.sampleRate, channelCount: resampler.channelCount, timelineStart: timelineStart)
        info.timestampsMayJump = timestampsMayJump
        self.info = info
        try sink.begin(info)
    }

    private func placeWindow() {
        guard let resampler else { return }
        let rate = Int64(resampler.sampleRate)
        firstSample = start.flatMap { $0.isNumeric && $0 > .zero ? Self.samples($0, rate: rate) : nil }
        endSample = end.flatMap { $0.isNumeric ? Self.samples($0, rate: rate) : nil }
    }

    /// Starts over after a seek: the decoder is opened afresh (so a pass that starts over decodes
    /// exactly as the first did: a codec's priming dropped the same way, nothing carried over from
    /// before), what the resampler holds is dropped, and delivery follows the new window.
    package func restart(start: MediaTime?, end: MediaTime?, timelineStart: MediaTime) throws(PlayheadError) {
        try decoder.reset()
        resampler?.reset()
        self.start = start
        self.end = end
        self.timelineStart = timelineStart
        nextSample = nil
        reachedEnd = false
        framesDelivered = 0
        firstDeliveredTime = nil
        placeWindow()
        info?.timelineStart = timelineStart
    }

    /// Ends the audio at `time` at the latest (where the video stopped).
    package func cut(at time: MediaTime) {
        guard let resampler, time.isNumeric else { return }
        let sample = Self.samples(time, rate: Int64(resampler.sampleRate))
        endSample = min(endSample ?? sample, sample)
        if let next = nextSample, next >= sample { reachedEnd = true }
    }

    /// Reads the next packet of `demuxer` by the read rule and decodes it, delivering what it yields.
    /// - Parameters:
    ///   - demuxer: the stage's source, its stream selected.
    ///   - packet: scratch space for the packet (left blank).
    /// - Returns: nil after a packet; at the end of the data, how it ended.
    /// - Throws: what the sink throws.
    package func feedNext(from demuxer: Demuxer, using packet: OwnedPacket) throws(PlayheadError) -> DataEnd? {
        switch demuxer.read(into: packet.pointer) {
        case .packet:
            defer { av_packet_unref(packet.pointer) }
            try feed(packet.pointer)
            return nil
        case .end(let end):
            return end
        }
    }

    /// Decodes one packet and delivers what it yields. Sink errors are thrown; damage is counted.
    /// - Parameter packet: a packet of the stage's stream (its data stays the caller's).
    package func feed(_ packet: OwnedPacket) throws(PlayheadError) { try feed(packet.pointer) }

    /// Decodes one packet and delivers what it yields. Sink errors are thrown; damage is counted.
    func feed(_ packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        guard !reachedEnd else { return }
        _ = try decoder.decode(packet, into: frame) { frame throws(PlayheadError) in
            try self.take(frame)
            return true
        }
    }

    /// Drains the decoder and the resampler at the end of the stream.
    package func finish() throws(PlayheadError) {
        guard !reachedEnd, let resampler else { return }
        _ = try decoder.decode(nil, into: frame) { frame throws(PlayheadError) in
            try self.take(frame)
            return true
        }
        if !reachedEnd { try deliver(try resampler.convert(nil), timestamp: nil) }
    }

    private func take(_ frame: OwnedFrame) throws(PlayheadError) {
        defer { av_frame_unref(frame.pointer) }
        guard !reachedEnd, let resampler else { return }
        let timestamp = frame.pointer.pointee.best_effort_timestamp
        let count = try resampler.convert(frame.pointer)
        try deliver(count, timestamp: timestamp)
    }

    /// Delivers `count` resampled samples per channel. The first frame's timestamp places the
    /// stream; after that, samples follow one another without gaps or overlaps, unless a frame's
    /// timestamp jumps by more than a frame (packets lost to damage, a gap in the file): the times
    /// follow the timestamps again, so a player keeps the audio with its video.
    private func deliver(_ count: Int, timestamp: Int64?) throws(PlayheadError) {
        guard let resampler else { return }
        let rate = Int64(resampler.sampleRate)
        let stamped = timestamp.flatMap {
            $0 == FFmpegConstants.noPTS ? nil : Self.samples(MediaTime(ffmpegTimestamp: $0, timeBase: timeBase), rate: rate)
        }
        if let expected = nextSample {
            if let stamped, abs(stamped - expected) > max(Int64(count), rate / 50) { nextSample = stamped }
        } else {
            nextSample = stamped ?? firstSample ?? 0
        }
        guard count > 0, let start = nextSample else { return }
        nextSample = start + Int64(count)
        var skip = 0, keep = count
        if let firstSample, start < firstSample { skip = Int(min(Int64(count), firstSample - start)) }
        if let endSample, start + Int64(count) >= endSample {
            keep = Int(max(0, endSample - start))
            reachedEnd = true
        }
        guard keep > skip else { return }
        let channels = resampler.channelCount
        let time = MediaTime(value: start + Int64(skip), timescale: Int32(rate))
        let buffer = AudioBuffer(
            samples: UnsafeBufferPointer(start: resampler.buffer + skip * channels, count: (keep - skip) * channels),
            frameCount: keep - skip, channelCount: channels, sampleRate: resampler.sampleRate, presentationTime: time,
            segment: segment?.number ?? 0, control: segment?.control)
        if firstDeliveredTime == nil {
            firstDeliveredTime = time
            // Before the sink may hold it (a paused player): a seek lands when its audio is ready.
            onFirstBuffer?(time)
        }
        // A segment superseded meanwhile (a seek, a start retried from the data's start) delivers nothing more.
        if let segment, segment.control.isSuperseded(segment.number) { return }
        try sink.write(buffer)
        framesDelivered += keep - skip
    }
}
