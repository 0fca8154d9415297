import CFFmpeg

/// Owns an encoder context that turns canvas frames into packets (PNG, PPM images, or wrapped
/// frames for the Y4M muxer). Used on the sink's thread only.
final class FrameEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private let packet = OwnedPacket()
    private let target: String

    init(codec id: AVCodecID, size: PixelSize, format: AVPixelFormat, timeBase: AVRational, target: String) throws(PlayheadError) {
        self.target = target
        guard let codec = avcodec_find_encoder(id) else {
            throw PlayheadError(code: .encodeFailed, message: "no \(String(cString: avcodec_get_name(id))) encoder in this FFmpeg", file: target)
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PlayheadError(code: .encodeFailed, message: "could not allocate an encoder", file: target)
        }
        self.context = context
        context.pointee.width = Int32(size.width)
        context.pointee.height = Int32(size.height)
        context.pointee.pix_fmt = format
        context.pointee.time_base = timeBase
        context.pointee.thread_count = 1
        let result = avcodec_open2(context, codec, nil)
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not open the \(String(cString: codec.pointee.name)) encoder", function: "avcodec_open2", result: result, file: target)
        }
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&p)
    }

    /// Encodes one frame and hands the packet to `body` (valid only during the call).
    func encode(_ frame: UnsafeMutablePointer<AVFrame>, _ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void) throws(PlayheadError) {
        var result = avcodec_send_frame(context, frame)
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "the encoder rejected a frame", function: "avcodec_send_frame", result: result, file: target)
        }
        while true {
            result = avcodec_receive_packet(context, packet.pointer)
            if result == FFmpegError.eagain || result == FFmpegError.eof { return }
            guard result >= 0 else {
                throw FFmpegError.error(.encodeFailed, "encoding failed", function: "avcodec_receive_packet", result: result, file: target)
            }
            defer { av_packet_unref(packet.pointer) }
            try body(packet.pointer)
        }
    }
}
