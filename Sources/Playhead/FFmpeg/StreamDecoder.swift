import CFFmpeg

/// Owns a decoder context for one stream (video or audio). Used by one thread at a time.
final class StreamDecoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    let source: String

    /// Opens a decoder for `stream`. `threads` = 0 lets FFmpeg choose; frame threading is used for
    /// sequential decoding.
    init(stream: UnsafeMutablePointer<AVStream>, threads: Int, source: String) throws(PlayheadError) {
        self.source = source
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw PlayheadError(code: .decoderNotFound, message: "no decoder for codec \(name)", file: source)
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PlayheadError(code: .decoderOpenFailed, message: "could not allocate a decoder", file: source)
        }
        self.context = context
        var result = avcodec_parameters_to_context(context, parameters)
        guard result >= 0 else {
            throw FFmpegError.error(.decoderOpenFailed, "could not configure the decoder", function: "avcodec_parameters_to_context", result: result, file: source)
        }
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = Int32(threads)
        context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        result = avcodec_open2(context, codec, nil)
        guard result >= 0 else {
            throw FFmpegError.error(.decoderOpenFailed, "could not open the \(String(cString: codec.pointee.name)) decoder", function: "avcodec_open2", result: result, file: source)
        }
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&p)
    }

    /// Sends a packet (nil to drain). Returns false when the decoder wants frames taken first.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws(PlayheadError) -> Bool {
        let result = avcodec_send_packet(context, packet)
        if result == FFmpegError.eagain { return false }
        if result < 0, result != FFmpegError.eof {
            throw FFmpegError.error(.decodeFailed, "the decoder rejected a packet", function: "avcodec_send_packet", result: result, file: source)
        }
        return true
    }

    /// Takes the next decoded frame into `frame`; false when the decoder needs more input or is drained.
    func receive(into frame: OwnedFrame) throws(PlayheadError) -> Bool {
        let result = avcodec_receive_frame(context, frame.pointer)
        if result == FFmpegError.eagain || result == FFmpegError.eof { return false }
        if result < 0 {
            throw FFmpegError.error(.decodeFailed, "decoding failed", function: "avcodec_receive_frame", result: result, file: source)
        }
        return true
    }
}
