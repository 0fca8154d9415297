import CFFmpeg

/// Writes all frames into one H.264 MP4 — libavcodec's libx264, libavformat's mp4 muxer —
/// safely (see ``SafeFile``): under a temporary name until `finish` puts it in place.
///
/// The MP4 is fragmented (an empty `moov`, then a fragment at every keyframe, one a second), so a
/// file whose run was killed still plays up to its last complete fragment. Given up (`abort`),
/// what was written is kept as a valid, shorter file and ``isPartial`` says so.
public final class MP4Sink: FrameSink {
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

    /// An MP4 at `path`, encoded with x264's `preset` and `crf`.
    public init(path: String, preset: String = "veryfast", crf: Int = 23) {
        self.path = path
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
        let muxer = try MuxedFile(path: path, format: "mp4")
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
        try muxer.write(packet)
    }

    public func finish() throws(PlayheadError) {
        guard let muxer, let encoder else { return }
        try encoder.encode(nil, write)
        self.muxer = nil
        self.encoder = nil
        stream = nil
        staging = nil
        try muxer.finish()
    }

    /// Keeps what was written as a valid, shorter file (``isPartial``), or nothing when nothing was.
    public func abort() {
        guard let muxer else { return }
        if let encoder { try? encoder.encode(nil, write) }
        self.muxer = nil
        encoder = nil
        stream = nil
        staging = nil
        isPartial = muxer.keepWhatWasWritten()
    }
}
