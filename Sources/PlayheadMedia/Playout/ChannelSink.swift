internal import CFFmpeg

/// A composition's live output: its pictures and mixed sound encoded once (H.264 and AAC, see
/// `ChannelEncoder`) and written to several targets at once — HLS, RTMP, SRT, UDP, recordings,
/// standard output (``ChannelTarget``) — each on a thread of its own that reconnects with back-off
/// when its peer drops, while the channel's timeline keeps its place.
///
/// Every call comes from the composition's output thread (``FrameSink``'s order), which hands
/// each picture and its sound to the channel's encoder thread (`ChannelEncodeQueue`: a frame
/// that is slow to encode delays none that follows); ``status`` may be read from any thread.
public final class ChannelSink: AudioCarryingFrameSink, Sendable {
    public let pixelFormat: OutputPixelFormat = .yuv420p
    public let targets: [ChannelTarget]
    private let rate: FrameRate
    private let settings: ChannelEncoder.Settings
    private let openTimeout: Double
    private let writeTimeout: Double
    /// The encoders and writers, made in `begin`; the encoder thread's while it runs, then
    /// `finish`'s.
    private let state = Locked<State>(State())

    private struct State {
        var encoder: ChannelEncoderBox?
        var queue: ChannelEncodeQueue?
        var writers: [TargetWriter] = []
        var sound: AudioStreamInfo?
        var framesEncoded = 0
        var samplesEncoded: Int64 = 0
        var finished = false
    }

    /// A sink writing to `targets` at the canvas's `rate`: x264 with `preset` and `crf`, a
    /// keyframe (and an HLS segment) every `segmentSeconds`; a target that does not open or take
    /// a write within `timeout` seconds is reconnected.
    /// - Parameters:
    ///   - targets: where the stream goes; at least one (``begin(_:)`` fails without).
    ///   - rate: the canvas's frame rate.
    ///   - preset: x264's preset (one of ``X264Settings/presets``; another fails ``begin(_:)``).
    ///   - crf: x264's constant rate factor (0 … 51; lower is better and larger).
    ///   - segmentSeconds: seconds between keyframes, and the length of an HLS segment.
    ///   - maxBitRate: the picture's peak rate in kbit/s; nil: chosen from the canvas (0.1 bit per pixel and
    ///     frame, at least 300 kbit/s).
    ///   - timeout: seconds a target may take to open or to take a write before it is reconnected.
    public init(
        targets: [ChannelTarget], rate: FrameRate, preset: String = "veryfast", crf: Int = 23, segmentSeconds: Double = 2,
        maxBitRate: Int? = nil, timeout: Double = 5
    ) {
        self.targets = targets
        self.rate = rate
        settings = ChannelEncoder.Settings(preset: preset, crf: crf, keyframeSeconds: segmentSeconds, maxBitRate: maxBitRate)
        openTimeout = timeout
        writeTimeout = timeout
    }

    /// How long a target may be down (connecting, or reconnecting after a drop) before the channel
    /// counts it as unhealthy: three times its open timeout, at least 10 s — and at least three
    /// keyframe intervals and 2 s, since a target reopens only at a keyframe and, after a drop,
    /// counts as up once it has held for a segment and a half.
    public var downGrace: Double { max(10, 3 * openTimeout, 3 * settings.keyframeSeconds + 2) }

    /// Each target's state and counts.
    public var status: [ChannelTargetStatus] { state.withLock { $0.writers.map(\.status) } }

    /// How far the sound written leads the picture written, in seconds (0 by construction: frame
    /// *n* at *n / rate*, sample *m* at *m / sampleRate*; the rest is the rounding of a frame's
    /// span to whole samples).
    public var soundPictureOffset: Double {
        state.withLock { s in
            guard let sound = s.sound, s.framesEncoded > 0 else { return 0 }
            return Double(s.samplesEncoded) / Double(sound.sampleRate) - Double(s.framesEncoded - 1) / rate.value
        }
    }

    /// Tells the sink a sound follows (call before ``begin(_:)``): it is encoded as AAC at its rate and channel count.
    /// - Parameter info: the sound's format.
    /// - Throws: never: the format is only noted; an encoder that cannot take it fails ``begin(_:)``.
    public func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {
        state.withLock { $0.sound = info }
    }

    /// Opens the encoders, starts the encoder thread, and makes a writer for every target (each connects on a
    /// thread of its own).
    /// - Parameter info: the frames' size (even width and height).
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for an odd frame size or a sink without targets;
    ///   `state.invalidState` when the sink has begun already (it takes one stream); `output.encodeFailed` when
    ///   x264 or the AAC encoder is missing or does not open.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        guard info.size.width % 2 == 0, info.size.height % 2 == 0 else {
            throw PlayheadError(code: .invalidArgument, message: "H.264 in 4:2:0 needs an even frame size, not \(info.size)", file: "channel")
        }
        guard !targets.isEmpty else { throw PlayheadError(code: .invalidArgument, message: "a channel needs at least one target", file: "channel") }
        let state = self.state
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard s.encoder == nil, !s.finished else {
                throw PlayheadError(code: .invalidState, message: "a channel sink takes one stream (make a new one for the next)", file: "channel")
            }
            try X264Settings.check(preset: settings.preset, crf: settings.crf, file: "channel")
            let encoder = try ChannelEncoder(size: info.size, rate: rate, sound: s.sound, settings: settings, target: "channel")
            let box = ChannelEncoderBox(encoder)
            let parameters = TargetWriter.Parameters(
                video: encoder.video.context, audio: encoder.audio?.context, videoTimeBase: encoder.videoTimeBase,
                audioTimeBase: encoder.audioTimeBase, segmentSeconds: settings.keyframeSeconds,
                openTimeout: openTimeout, writeTimeout: writeTimeout)
            let writers = targets.map { TargetWriter(target: $0, parameters: parameters) }
            s.queue = try ChannelEncodeQueue(size: info.size) { (slot) throws(PlayheadError) in
                // On the encoder thread: the one user of the encoders while it runs.
                try box.encoder.encode(
                    slot, video: { packet in for writer in writers { writer.send(packet, video: true) } },
                    audio: { packet in for writer in writers { writer.send(packet, video: false) } })
                state.withLock {
                    if slot.hasPicture { $0.framesEncoded += 1 }
                    $0.samplesEncoded += Int64(slot.sampleFrames)
                }
            }
            s.encoder = box
            s.writers = writers
        }
    }

    /// Hands a picture to the encoder thread: it is copied into a free slot, waiting for one while every slot
    /// waits for the encoder.
    /// - Parameter frame: the next picture, in 4:2:0.
    /// - Throws: ``PlayheadError`` with `state.invalidState` before ``begin(_:)`` or once the encoder thread has
    ///   stopped; the encoder thread's own failure (`output.encodeFailed`, …) once it failed.
    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        guard let queue = state.withLock({ $0.queue }) else {
            throw PlayheadError(code: .invalidState, message: "write before begin", file: "channel")
        }
        try queue.write(frame)
    }

    /// Adds samples after the picture written last; they are encoded with it.
    /// - Parameter buffer: the next samples, in the format given to ``prepareAudio(_:)``.
    /// - Throws: ``PlayheadError`` with `state.invalidState` before ``begin(_:)`` or once the encoder thread has
    ///   stopped; the encoder thread's own failure (`output.encodeFailed`, …) once it failed.
    public func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) {
        guard let queue = state.withLock({ $0.queue }) else {
            throw PlayheadError(code: .invalidState, message: "sound before begin", file: "channel")
        }
        try queue.writeAudio(buffer)
    }

    /// Drains the encoders, lets every target write what it has and complete (a stalled one is
    /// given up after its timeout).
    /// - Throws: ``PlayheadError`` when encoding failed (`output.encodeFailed`, …; the sink is then aborted), or
    ///   `output.writeFailed` when every target failed. A target that fails while others go on is no error here:
    ///   its state is in ``status``.
    public func finish() throws(PlayheadError) {
        let queue = state.withLock { s -> ChannelEncodeQueue? in s.finished ? nil : s.queue }
        do throws(PlayheadError) {
            // Everything written is encoded first (the encoder thread then stops).
            try queue?.finish()
        } catch {
            abort()
            throw error
        }
        let (writers, ends) = try state.withLock { (s: inout State) throws(PlayheadError) -> ([TargetWriter], ChannelEnds?) in
            guard !s.finished else { return ([], nil) }
            s.finished = true
            guard let encoder = s.encoder?.encoder else { return (s.writers, nil) }
            let writers = s.writers
            try encoder.finish(
                video: { packet in for writer in writers { writer.send(packet, video: true) } },
                audio: { packet in for writer in writers { writer.send(packet, video: false) } })
            // Frame n is stamped n, sample m is m: the channel ends at the counts given.
            let ends = ChannelEnds(
                video: Int64(s.framesEncoded), videoTimeBase: encoder.videoTimeBase, sound: encoder.audio == nil ? nil : s.samplesEncoded,
                soundTimeBase: encoder.audioTimeBase)
            return (writers, ends)
        }
        for writer in writers { writer.finish(timeout: writeTimeout + 5, ends: ends) }
        state.withLock { $0.encoder = nil }
        // The channel went nowhere: no output took it to its end.
        let outcomes = writers.map(\.status)
        if !outcomes.isEmpty, outcomes.allSatisfy({ $0.state == .failed }) {
            throw PlayheadError(
                code: .writeFailed,
                message: "every output failed: " + outcomes.map { "\($0.target): \($0.lastError ?? "failed")" }.joined(separator: "; "),
                file: "channel")
        }
    }

    /// Stops the encoder thread at once (the pictures waiting for it are dropped) and gives up every target.
    public func abort() {
        let (writers, queue) = state.withLock { s -> ([TargetWriter], ChannelEncodeQueue?) in
            guard !s.finished else { return ([], nil) }
            s.finished = true
            return (s.writers, s.queue)
        }
        queue?.abort()
        for writer in writers { writer.abort() }
        state.withLock { $0.encoder = nil }
    }
}

/// The encoders, held in the sink's state.
///
/// `@unchecked Sendable` is safe because the encoders have one user at a time: the encoder thread
/// (`ChannelEncodeQueue`) from `begin` until its queue is finished or aborted — both wait for
/// that thread to stop — and then `finish`, inside the sink's `Locked` state.
final class ChannelEncoderBox: @unchecked Sendable {
    let encoder: ChannelEncoder
    init(_ encoder: ChannelEncoder) { self.encoder = encoder }
}
