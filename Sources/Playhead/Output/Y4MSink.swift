import CFFmpeg
import Foundation

/// Writes all frames into one YUV4MPEG2 file through libavformat's `yuv4mpegpipe` muxer. The file
/// is written under a temporary name and renamed into place by `finish`.
public final class Y4MSink: FrameSink {
    public let pixelFormat: OutputPixelFormat = .yuv420p
    public let path: String
    public private(set) var framesWritten = 0
    private var muxer: UnsafeMutablePointer<AVFormatContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var encoder: FrameEncoder?
    private var nextPTS: Int64 = 0

    public init(path: String) {
        self.path = path
    }

    deinit { close(removing: true) }

    private var size: PixelSize?

    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        if let size, size != info.size {
            throw PlayheadError(code: .invalidArgument, message: "a Y4M file holds one frame size (\(size)); this stream is \(info.size): give an output size", file: path)
        }
        guard muxer == nil else { return }
        size = info.size
        let temporary = AtomicFile.temporaryPath(for: path)
        var context: UnsafeMutablePointer<AVFormatContext>?
        var result = avformat_alloc_output_context2(&context, nil, "yuv4mpegpipe", temporary)
        guard result >= 0, let context else {
            throw FFmpegError.error(.outputOpenFailed, "could not set up the Y4M muxer", function: "avformat_alloc_output_context2", result: result, file: path)
        }
        muxer = context
        guard let stream = avformat_new_stream(context, nil) else {
            throw PlayheadError(code: .outputOpenFailed, message: "could not add a stream", file: path)
        }
        self.stream = stream
        // Y4M records the frame rate from the stream's time base: one tick per frame.
        let tick = info.frameRate.map { Self.rational(forRate: $0) } ?? AVRational(num: 1, den: 25)
        stream.pointee.time_base = tick
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_WRAPPED_AVFRAME
        parameters.pointee.width = Int32(info.size.width)
        parameters.pointee.height = Int32(info.size.height)
        parameters.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        encoder = try FrameEncoder(codec: AV_CODEC_ID_WRAPPED_AVFRAME, size: info.size, format: AV_PIX_FMT_YUV420P, timeBase: tick, target: path)
        result = avio_open(&context.pointee.pb, temporary, AVIO_FLAG_WRITE)
        guard result >= 0 else {
            throw FFmpegError.error(.outputOpenFailed, "could not create \(temporary)", function: "avio_open", result: result, file: path)
        }
        result = avformat_write_header(context, nil)
        guard result >= 0 else {
            throw FFmpegError.error(.writeFailed, "could not write the Y4M header", function: "avformat_write_header", result: result, file: path)
        }
    }

    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        guard let encoder, let muxer, let stream else { throw PlayheadError(code: .invalidState, message: "write before begin", file: path) }
        frame.frame.pointee.pts = nextPTS
        nextPTS += 1
        try encoder.encode(frame.frame) { packet throws(PlayheadError) in
            packet.pointee.stream_index = stream.pointee.index
            av_packet_rescale_ts(packet, encoder.context.pointee.time_base, stream.pointee.time_base)
            let result = av_write_frame(muxer, packet)
            guard result >= 0 else {
                throw FFmpegError.error(.writeFailed, "could not write a frame", function: "av_write_frame", result: result, file: path)
            }
        }
        framesWritten += 1
    }

    public func finish() throws(PlayheadError) {
        guard let muxer else { return }
        let result = av_write_trailer(muxer)
        let flushed = muxer.pointee.pb != nil ? avio_closep(&muxer.pointee.pb) : 0
        close(removing: false)
        guard result >= 0, flushed >= 0 else {
            unlink(AtomicFile.temporaryPath(for: path))
            throw FFmpegError.error(.writeFailed, "could not complete the file", function: "av_write_trailer", result: min(result, flushed), file: path)
        }
        try AtomicFile.commit(AtomicFile.temporaryPath(for: path), to: path)
    }

    public func abort() {
        close(removing: true)
    }

    private func close(removing: Bool) {
        guard let context = muxer else { return }
        if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
        muxer = nil
        stream = nil
        encoder = nil
        if removing { unlink(AtomicFile.temporaryPath(for: path)) }
    }

    static func rational(forRate rate: Double) -> AVRational {
        let r = av_d2q(1 / rate, 1_000_000)
        return r.num > 0 && r.den > 0 ? r : AVRational(num: 1, den: 25)
    }
}
