import CFFmpeg

/// Writes all frames into one H.264 MP4 — libavcodec's libx264, libavformat's mp4 muxer —
/// safely (see ``SafeFile``): under a temporary name until `finish` puts it in place. Given a
/// sound (``prepareAudio(_:)`` before `begin`), it is encoded as AAC beside the picture.
///
/// The MP4 is fragmented (an empty `moov`, then a fragment at every keyframe, one a second), so a
/// file whose run was killed still plays up to its last complete fragment. Given up (`abort`),
/// what was written is kept as a valid, shorter file and ``isPartial`` says so.
public final class MP4Sink: AudioCarryingFrameSink {
    public let pixelFormat: OutputPixelFormat = .yuv420p
    public let path: String
    /// x264's preset (`ultrafast` … `veryslow`).
    public let preset: String
    /// x264's constant rate factor (0 … 51; lower is better and larger).
    public let crf: Int
    public private(set) var framesWritten = 0
    /// `true` when the file was given up part way and kept with what it had.
    public private(set) var isPartial = false
    private var muxer: MuxedFile?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var encoder: FrameEncoder?
    /// The encoder may keep a reference to what it is given: frames go through a copy it owns.
    private var staging: OwnedFrame?
    private var nextPTS: Int64 = 0
    private var audioInfo: AudioStreamInfo?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private var audioEncoder: AudioEncoder?
    /// Samples per channel of sound written.
    public private(set) var audioFramesWritten = 0

    /// Whether a file already at ``path`` may be replaced when this one is complete.
    public let replacing: Bool

    /// An MP4 at `path`, encoded with x264's `preset` and `crf`. With `replacing` false, a file
    /// already at `path` is never replaced: the finished file takes the name atomically, or the
    /// sink fails with `output.exists` and the file is left alone.
    public init(path: String, preset: String = "veryfast", crf: Int = 23, replacing: Bool = true) {
        self.path = path
        self.replacing = replacing
        self.preset = preset
        self.crf = crf
    }

    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        guard muxer == nil else {
            throw PlayheadError(code: .invalidState, message: "an MP4 sink takes one stream", file: path)
        }
        guard (0...51).contains(crf), ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"].contains(preset) else {
            throw PlayheadError(code: .invalidArgument, message: "x264 takes a preset from ultrafast to placebo and a crf of 0 … 51", file: path)
        }
        guard info.size.width % 2 == 0, info.size.height % 2 == 0 else {
            throw PlayheadError(code: .invalidArgument, message: "H.264 in 4:2:0 needs an even frame size, not \(info.size)", file: path)
        }
        let tick = info.frameRate.map { Y4MSink.rational(forRate: $0) } ?? AVRational(num: 1, den: 25)
        let perSecond = max(1, Int32((Double(tick.den) / Double(tick.num)).rounded()))
        let muxer = try MuxedFile(path: path, format: "mp4", replacing: replacing)
        let encoder = try FrameEncoder(named: "libx264", size: info.size, format: AV_PIX_FMT_YUV420P, timeBase: tick, target: path,
                                       options: ["preset": preset, "crf": String(crf)], threads: 0, globalHeader: true, groupOfPictures: perSecond)
        guard let stream = avformat_new_stream(muxer.context, nil), let parameters = stream.pointee.codecpar else {
            throw PlayheadError(code: .outputOpenFailed, message: "could not add a stream", file: path)
        }
        let copied = avcodec_parameters_from_context(parameters, encoder.context)
        guard copied >= 0 else {
            throw FFmpegError.error(.outputOpenFailed, "could not describe the stream", function: "avcodec_parameters_from_context", result: copied, file: path)
        }
        stream.pointee.time_base = tick
        if let audioInfo {
            let sound = try AudioEncoder(sampleRate: audioInfo.sampleRate, channelCount: audioInfo.channelCount, target: path)
            guard let added = avformat_new_stream(muxer.context, nil), let parameters = added.pointee.codecpar else {
                throw PlayheadError(code: .outputOpenFailed, message: "could not add the sound stream", file: path)
            }
            let described = avcodec_parameters_from_context(parameters, sound.context)
            guard described >= 0 else {
                throw FFmpegError.error(.outputOpenFailed, "could not describe the sound stream", function: "avcodec_parameters_from_context", result: described, file: path)
            }
            added.pointee.time_base = sound.context.pointee.time_base
            audioStream = added
            audioEncoder = sound
        }
        try muxer.writeHeader(options: ["movflags": "frag_keyframe+empty_moov+default_base_moof"])
        staging = try OwnedFrame(size: info.size, format: AV_PIX_FMT_YUV420P)
        self.muxer = muxer
        self.stream = stream
        self.encoder = encoder
    }

    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        guard let encoder, let staging else { throw PlayheadError(code: .invalidState, message: "write before begin", file: path) }
        let writable = av_frame_make_writable(staging.pointer)
        let copied = writable >= 0 ? av_frame_copy(staging.pointer, frame.frame) : writable
        guard copied >= 0 else { throw FFmpegError.error(.encodeFailed, "could not copy the frame", function: "av_frame_copy", result: copied, file: path) }
        staging.pointer.pointee.pts = nextPTS
        nextPTS += 1
        try encoder.encode(staging.pointer, write)
        framesWritten += 1
    }

    private func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        guard let encoder, let muxer, let stream else { return }
        packet.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(packet, encoder.context.pointee.time_base, stream.pointee.time_base)
        // With sound, the muxer interleaves the two streams by time.
        if audioStream != nil { try muxer.writeInterleaved(packet) } else { try muxer.write(packet) }
    }

    private func writeSound(_ packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        guard let audioEncoder, let muxer, let audioStream else { return }
        packet.pointee.stream_index = audioStream.pointee.index
        av_packet_rescale_ts(packet, audioEncoder.context.pointee.time_base, audioStream.pointee.time_base)
        try muxer.writeInterleaved(packet)
    }

    /// Tells the sink a sound follows (call before `begin`): AAC at its rate and channel count.
    public func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {
        guard muxer == nil else { throw PlayheadError(code: .invalidState, message: "the sound must be described before the first frame", file: path) }
        guard (8000...192_000).contains(info.sampleRate), (1...8).contains(info.channelCount) else {
            throw PlayheadError(code: .invalidArgument, message: "AAC takes 8 … 192 kHz and 1 … 8 channels, not \(info.sampleRate) Hz × \(info.channelCount)", file: path)
        }
        audioInfo = info
    }

    /// Takes the next samples of the sound (interleaved signed 16-bit, in the prepared format).
    public func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) {
        guard let audioEncoder, let audioInfo else { throw PlayheadError(code: .invalidState, message: "sound without prepareAudio and begin", file: path) }
        guard buffer.channelCount == audioInfo.channelCount, buffer.sampleRate == audioInfo.sampleRate else {
            throw PlayheadError(code: .invalidArgument, message: "the sound changed format mid-stream", file: path)
        }
        try audioEncoder.encode(buffer.samples, frames: buffer.frameCount, writeSound)
        audioFramesWritten += buffer.frameCount
    }

    /// Drains both encoders (what they still hold goes into the file).
    private func drain() throws(PlayheadError) {
        if let encoder { try encoder.encode(nil, write) }
        if let audioEncoder { try audioEncoder.finish(writeSound) }
    }

    private func release() {
        muxer = nil
        encoder = nil
        stream = nil
        staging = nil
        audioEncoder = nil
        audioStream = nil
    }

    public func finish() throws(PlayheadError) {
        guard let muxer, encoder != nil else { return }
        try drain()
        release()
        try muxer.finish()
    }

    /// Keeps what was written as a valid, shorter file (``isPartial``), or nothing when nothing was.
    public func abort() {
        guard let muxer else { return }
        try? drain()
        release()
        isPartial = muxer.keepWhatWasWritten()
    }
}
