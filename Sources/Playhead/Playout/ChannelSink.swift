import CFFmpeg

/// A composition's live output: its pictures and mixed sound encoded once (H.264 and AAC, see
/// ``ChannelEncoder``) and written to several targets at once — HLS, RTMP, SRT, UDP, recordings,
/// standard output (``ChannelTarget``) — each on a thread of its own that reconnects with back-off
/// when its peer drops, while the channel's timeline keeps its place.
///
/// Every call comes from the composition's output thread (``FrameSink``'s order);
/// ``status`` may be read from any thread.
public final class ChannelSink: AudioCarryingFrameSink, Sendable {
    public let pixelFormat: OutputPixelFormat = .yuv420p
    public let targets: [ChannelTarget]
    private let rate: FrameRate
    private let settings: ChannelEncoder.Settings
    private let openTimeout: Double
    private let writeTimeout: Double
    /// The encoders and writers, made in `begin`; the output thread's alone after that.
    private let state = Locked<State>(State())

    private struct State {
        var encoder: ChannelEncoderBox?
        var writers: [TargetWriter] = []
        var sound: AudioStreamInfo?
        var framesEncoded = 0
        var samplesEncoded: Int64 = 0
        var finished = false
    }

    /// A sink writing to `targets` at the canvas's `rate`: x264 with `preset` and `crf`, a
    /// keyframe (and an HLS segment) every `segmentSeconds`; a target that does not open or take
    /// a write within `timeout` seconds is reconnected.
    public init(targets: [ChannelTarget], rate: FrameRate, preset: String = "veryfast", crf: Int = 23, segmentSeconds: Double = 2,
                maxBitRate: Int? = nil, timeout: Double = 5) {
        self.targets = targets
        self.rate = rate
        settings = ChannelEncoder.Settings(preset: preset, crf: crf, keyframeSeconds: segmentSeconds, maxBitRate: maxBitRate)
        openTimeout = timeout
        writeTimeout = timeout
    }

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

    public func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {
        state.withLock { $0.sound = info }
    }

    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        guard info.size.width % 2 == 0, info.size.height % 2 == 0 else {
            throw PlayheadError(code: .invalidArgument, message: "H.264 in 4:2:0 needs an even frame size, not \(info.size)", file: "channel")
        }
        guard !targets.isEmpty else { throw PlayheadError(code: .invalidArgument, message: "a channel needs at least one target", file: "channel") }
        try state.withLock { (s: inout State) throws(PlayheadError) in
            let encoder = try ChannelEncoder(size: info.size, rate: rate, sound: s.sound, settings: settings, target: "channel")
            s.encoder = ChannelEncoderBox(encoder)
            let parameters = TargetWriter.Parameters(video: encoder.video.context, audio: encoder.audio?.context, videoTimeBase: encoder.videoTimeBase,
                                                     audioTimeBase: encoder.audioTimeBase, segmentSeconds: settings.keyframeSeconds,
                                                     openTimeout: openTimeout, writeTimeout: writeTimeout)
            s.writers = targets.map { TargetWriter(target: $0, parameters: parameters) }
        }
    }

    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard let encoder = s.encoder?.encoder else { throw PlayheadError(code: .invalidState, message: "write before begin", file: "channel") }
            let writers = s.writers
            try encoder.encode(frame) { packet in for writer in writers { writer.send(packet, video: true) } }
            s.framesEncoded += 1
        }
    }

    public func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard let encoder = s.encoder?.encoder else { throw PlayheadError(code: .invalidState, message: "sound before begin", file: "channel") }
            let writers = s.writers
            try encoder.encode(buffer) { packet in for writer in writers { writer.send(packet, video: false) } }
            s.samplesEncoded += Int64(buffer.frameCount)
        }
    }

    /// Drains the encoders, lets every target write what it has and complete (a stalled one is
    /// given up after its timeout).
    public func finish() throws(PlayheadError) {
        let writers = try state.withLock { (s: inout State) throws(PlayheadError) -> [TargetWriter] in
            guard !s.finished else { return [] }
            s.finished = true
            if let encoder = s.encoder?.encoder {
                let writers = s.writers
                try encoder.finish(video: { packet in for writer in writers { writer.send(packet, video: true) } },
                                   audio: { packet in for writer in writers { writer.send(packet, video: false) } })
            }
            return s.writers
        }
        for writer in writers { writer.finish(timeout: writeTimeout + 5) }
        state.withLock { $0.encoder = nil }
    }

    public func abort() {
        let writers = state.withLock { s -> [TargetWriter] in
            guard !s.finished else { return [] }
            s.finished = true
            return s.writers
        }
        for writer in writers { writer.abort() }
        state.withLock { $0.encoder = nil }
    }
}

/// The encoders, held in the sink's state.
///
/// `@unchecked Sendable` is safe because the box is only ever reached through the sink's `Locked`
/// state: every use of the encoder happens inside that lock, from the composition's output thread.
final class ChannelEncoderBox: @unchecked Sendable {
    let encoder: ChannelEncoder
    init(_ encoder: ChannelEncoder) { self.encoder = encoder }
}
