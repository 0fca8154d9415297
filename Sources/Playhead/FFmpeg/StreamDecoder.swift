import CFFmpeg

/// Owns a decoder for one stream (video or audio) and runs the one send/receive loop every path
/// decodes with. Damage is decoded past and counted: a packet the decoder rejects, an error coming
/// out of it, a frame it marks corrupt. Used by one thread at a time.
final class StreamDecoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    let source: String
    let threads: Int
    private(set) var damage = DamageTally()
    /// Pictures larger than this many pixels are refused by the decoder (a small file cannot make
    /// it allocate gigabytes).
    static let defaultMaximumPixels: Int64 = 8192 * 8192

    /// Opens a decoder for `stream`. `threads` = 0 lets FFmpeg choose; frame threading is used for
    /// sequential decoding.
    init(stream: UnsafeMutablePointer<AVStream>, threads: Int, source: String, maximumPixels: Int64 = StreamDecoder.defaultMaximumPixels) throws(PlayheadError) {
        self.source = source
        self.threads = threads
        guard let parameters = stream.pointee.codecpar else {
            throw PlayheadError(code: .decoderOpenFailed, message: "the stream has no codec parameters", file: source)
        }
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
        context.pointee.max_pixels = maximumPixels
        let (area, overflow) = Int64(context.pointee.width).multipliedReportingOverflow(by: Int64(context.pointee.height))
        if overflow || area > maximumPixels {
            throw PlayheadError(code: .decoderOpenFailed,
                                message: "the picture is \(context.pointee.width)x\(context.pointee.height): larger than playhead decodes (at most \(maximumPixels) pixels)",
                                file: source)
        }
        result = avcodec_open2(context, codec, nil)
        guard result >= 0 else {
            throw FFmpegError.error(.decoderOpenFailed, "could not open the \(String(cString: codec.pointee.name)) decoder", function: "avcodec_open2", result: result, file: source)
        }
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&p)
    }

    /// Which frames the decoder may leave out (non-reference frames before an exact target,
    /// everything but keyframes for a keyframe image).
    var skip: AVDiscard {
        get { context.pointee.skip_frame }
        set { context.pointee.skip_frame = newValue }
    }

    /// Drops everything in flight (after a seek); decoding goes on from the next packet.
    func flush() { avcodec_flush_buffers(context) }

    /// Sends `packet` (nil drains the decoder) and calls `body` with every frame that comes out,
    /// in presentation order. `body` takes the frame's content (moves or unreferences it) and
    /// returns false to stop early. Returns false when `body` stopped.
    func decode(_ packet: UnsafeMutablePointer<AVPacket>?, into frame: OwnedFrame,
                _ body: (OwnedFrame) throws(PlayheadError) -> Bool) throws(PlayheadError) -> Bool {
        while true {
            let sent = avcodec_send_packet(context, packet)
            let mustTakeFramesFirst = sent == FFmpegError.eagain
            if sent < 0, !mustTakeFramesFirst, sent != FFmpegError.eof {
                damage.record(FFmpegError.error(.decodeFailed, "the decoder rejected a packet", function: "avcodec_send_packet", result: sent, file: source))
            }
            var errorsInARow = 0
            while true {
                let received = avcodec_receive_frame(context, frame.pointer)
                if received == FFmpegError.eagain || received == FFmpegError.eof { break }
                if received < 0 {
                    // A damaged frame: more may follow it (frame threads report errors as they
                    // come out, and a drain must take every frame), so keep taking them.
                    damage.record(FFmpegError.error(.decodeFailed, "decoding failed", function: "avcodec_receive_frame", result: received, file: source))
                    errorsInARow += 1
                    if errorsInARow >= 64 { break }
                    continue
                }
                errorsInARow = 0
                let f = frame.pointer.pointee
                if f.flags & AV_FRAME_FLAG_CORRUPT != 0 || f.decode_error_flags != 0 {
                    damage.record(PlayheadError(code: .decodeFailed, message: "the decoder marked a frame as damaged (concealed)", file: source))
                }
                guard try body(frame) else { return false }
            }
            if !mustTakeFramesFirst { return true }
        }
    }
}
