internal import CFFmpeg

/// Owns an encoder context that turns canvas frames into packets (PNG, PPM images, or wrapped
/// frames for the Y4M muxer). Used on the sink's thread only.
package final class FrameEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private let packet: OwnedPacket
    private let target: String

    convenience init(codec id: AVCodecID, size: PixelSize, format: AVPixelFormat, timeBase: AVRational, target: String) throws(PlayheadError) {
        guard let codec = avcodec_find_encoder(id) else {
            throw PlayheadError(code: .encodeFailed, message: "no \(String(cString: avcodec_get_name(id))) encoder in this FFmpeg", file: target)
        }
        try self.init(codec: codec, size: size, format: format, timeBase: timeBase, target: target)
    }

    /// An encoder found by FFmpeg's name for it (`libx264`).
    convenience init(
        named name: String, size: PixelSize, format: AVPixelFormat, timeBase: AVRational, target: String,
        options: [String: String], threads: Int32, globalHeader: Bool, groupOfPictures: Int32, frameRate: AVRational? = nil
    ) throws(PlayheadError) {
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw PlayheadError(code: .encodeFailed, message: "no \(name) encoder in this FFmpeg", file: target)
        }
        try self.init(
            codec: codec, size: size, format: format, timeBase: timeBase, target: target, options: options, threads: threads,
            globalHeader: globalHeader, groupOfPictures: groupOfPictures, frameRate: frameRate)
    }

    init(
        codec: UnsafePointer<AVCodec>, size: PixelSize, format: AVPixelFormat, timeBase: AVRational, target: String,
        options: [String: String] = [:], threads: Int32 = 1, globalHeader: Bool = false, groupOfPictures: Int32 = 0,
        frameRate: AVRational? = nil
    ) throws(PlayheadError) {
        packet = try OwnedPacket()
        // An encoder may be the first FFmpeg user of the process: its chatter (x264's banner)
        // goes through the same log callback as everything else, never straight to stderr.
        FFmpegLogging.installCallback()
        self.target = target
        guard let context = avcodec_alloc_context3(codec) else {
            throw PlayheadError(code: .encodeFailed, message: "could not allocate an encoder", file: target)
        }
        self.context = context
        context.pointee.width = Int32(size.width)
        context.pointee.height = Int32(size.height)
        context.pointee.pix_fmt = format
        context.pointee.time_base = timeBase
        // The nominal rate, for a time base finer than a frame (x264's rate control reads it).
        if let frameRate { context.pointee.framerate = frameRate }
        context.pointee.thread_count = threads
        if groupOfPictures > 0 { context.pointee.gop_size = groupOfPictures }
        // A container with its own header (MP4) takes the codec's parameters there, not in-band.
        if globalHeader { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        let result = avcodec_open2(context, codec, &dictionary)
        guard result >= 0 else {
            throw FFmpegError.error(
                .encodeFailed, "could not open the \(String(cString: codec.pointee.name)) encoder", function: "avcodec_open2", result: result,
                file: target)
        }
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&p)
    }

    /// Encodes one frame (nil: drains the encoder) and hands each packet to `body` (valid only
    /// during the call).
    func encode(_ frame: UnsafeMutablePointer<AVFrame>?, _ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void) throws(PlayheadError)
    {
        try EncoderLoop.send(frame, to: context, through: packet, what: "the picture", target: target, body)
    }
}

/// The one send/receive loop of an encoder (pictures and sound alike): a frame in (nil drains
/// it), every packet that comes out handed to the caller, then let go.
enum EncoderLoop {
    /// Sends `frame` (nil: the end) to the encoder `context` and hands each packet to `body`.
    /// - Parameters:
    ///   - frame: the frame, or nil to drain.
    ///   - context: an open encoder.
    ///   - packet: where each packet is received (left blank).
    ///   - what: what is encoded, for errors.
    ///   - target: what errors name.
    ///   - body: called with each packet, valid only during the call.
    /// - Throws: `output.encodeFailed` when the encoder refuses the frame or fails; what `body` throws.
    static func send(
        _ frame: UnsafeMutablePointer<AVFrame>?, to context: UnsafeMutablePointer<AVCodecContext>, through packet: OwnedPacket, what: String,
        target: String, _ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) {
        var result = avcodec_send_frame(context, frame)
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "the encoder rejected \(what)", function: "avcodec_send_frame", result: result, file: target)
        }
        while true {
            result = avcodec_receive_packet(context, packet.pointer)
            if result == FFmpegError.eagain || result == FFmpegError.eof { return }
            guard result >= 0 else {
                throw FFmpegError.error(.encodeFailed, "encoding \(what) failed", function: "avcodec_receive_packet", result: result, file: target)
            }
            defer { av_packet_unref(packet.pointer) }
            try body(packet.pointer)
        }
    }
}
