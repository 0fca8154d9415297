internal import CFFmpeg

/// Owns a decoder for one stream (video, audio or subtitles) and runs the one send/receive loop
/// every path decodes pictures and sound with (and the one subtitle decode call). Damage is
/// decoded past and counted: a packet the decoder rejects, an error coming out of it, a frame it
/// marks corrupt. Used by one thread at a time.
package final class StreamDecoder {
    /// The most threads a decoder uses (what FFmpeg recommends at most; more only costs memory).
    package static let maximumThreads = 16
    private(set) var context: UnsafeMutablePointer<AVCodecContext>
    let source: String
    let threads: Int
    package private(set) var damage = DamageTally()
    /// The stream's parameters, kept to open the decoder afresh (``reset()``).
    private let parameters: UnsafeMutablePointer<AVCodecParameters>
    private let timeBase: AVRational
    private let maximumPixels: Int64
    /// Pictures larger than this many pixels are refused by the decoder (a small file cannot make
    /// it allocate gigabytes).
    static let defaultMaximumPixels: Int64 = 8192 * 8192

    /// Opens a decoder for `stream`. `threads` = 0 lets FFmpeg choose; frame threading is used for
    /// sequential decoding.
    init(
        stream: UnsafeMutablePointer<AVStream>, threads: Int, source: String, maximumPixels: Int64 = StreamDecoder.defaultMaximumPixels
    ) throws(PlayheadError) {
        self.source = source
        self.threads = threads
        self.maximumPixels = maximumPixels
        guard let streamParameters = stream.pointee.codecpar else {
            throw PlayheadError(code: .decoderOpenFailed, message: "the stream has no codec parameters", file: source)
        }
        guard let parameters = avcodec_parameters_alloc() else {
            throw PlayheadError.outOfMemory("avcodec_parameters_alloc")
        }
        let copied = avcodec_parameters_copy(parameters, streamParameters)
        guard copied >= 0 else {
            var p: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&p)
            throw FFmpegError.error(
                .decoderOpenFailed, "could not copy the codec parameters", function: "avcodec_parameters_copy", result: copied, file: source)
        }
        self.parameters = parameters
        timeBase = stream.pointee.time_base
        do throws(PlayheadError) {
            context = try Self.openContext(parameters, timeBase: timeBase, threads: threads, maximumPixels: maximumPixels, source: source)
        } catch {
            var p: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&p)
            throw error
        }
    }

    /// A decoder for `parameters`, opened: the one place decoders are configured.
    private static func openContext(
        _ parameters: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational, threads: Int,
        maximumPixels: Int64, source: String
    ) throws(PlayheadError) -> UnsafeMutablePointer<AVCodecContext> {
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw PlayheadError(code: .decoderNotFound, message: "no decoder for codec \(codecName(parameters.pointee))", file: source)
        }
        guard let allocated = avcodec_alloc_context3(codec) else {
            throw PlayheadError.outOfMemory("avcodec_alloc_context3")
        }
        var owned: UnsafeMutablePointer<AVCodecContext>? = allocated
        let context = allocated
        var result = avcodec_parameters_to_context(context, parameters)
        guard result >= 0 else {
            avcodec_free_context(&owned)
            throw FFmpegError.error(
                .decoderOpenFailed, "could not configure the decoder", function: "avcodec_parameters_to_context", result: result, file: source)
        }
        context.pointee.pkt_timebase = timeBase
        context.pointee.thread_count = Int32(clamping: min(max(threads, 0), Self.maximumThreads))
        context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        context.pointee.max_pixels = maximumPixels
        let (area, overflow) = Int64(context.pointee.width).multipliedReportingOverflow(by: Int64(context.pointee.height))
        if overflow || area > maximumPixels {
            avcodec_free_context(&owned)
            throw PlayheadError(
                code: .decoderOpenFailed,
                message:
                    "the picture is \(parameters.pointee.width)x\(parameters.pointee.height): larger than playhead decodes (at most \(maximumPixels) pixels)",
                file: source)
        }
        result = avcodec_open2(context, codec, nil)
        guard result >= 0 else {
            avcodec_free_context(&owned)
            throw FFmpegError.error(
                .decoderOpenFailed, "could not open the \(String(cString: codec.pointee.name)) decoder", function: "avcodec_open2", result: result,
                file: source)
        }
        return context
    }

    /// The codec's name as FFmpeg knows it (`h264`, `vvc`, `iamf`), also for codecs it has no
    /// decoder for.
    /// A stream's codec as a person reads it: FFmpeg's short name, or — for a codec this build
    /// does not know (FFmpeg says `none`: VVC, IAMF in an older build) — the container's tag for it.
    /// - Parameter parameters: the stream's parameters.
    /// - Returns: `h264`, `aac`, … or `unknown (vvc1)`.
    static func codecName(_ parameters: AVCodecParameters) -> String {
        CodecName.shown(ffmpegName: String(cString: avcodec_get_name(parameters.codec_id)), tag: parameters.codec_tag)
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&p)
        var q: UnsafeMutablePointer<AVCodecParameters>? = parameters
        avcodec_parameters_free(&q)
    }

    /// Replaces the decoder with a freshly opened one: decoding then begins exactly as it did the
    /// first time (an audio codec's priming dropped by the decoder itself, no state carried over
    /// from what was decoded before), so every pass that starts over decodes the same way. Damage
    /// counted so far is kept.
    package func reset() throws(PlayheadError) {
        let fresh = try Self.openContext(parameters, timeBase: timeBase, threads: threads, maximumPixels: maximumPixels, source: source)
        fresh.pointee.skip_frame = context.pointee.skip_frame
        var old: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&old)
        context = fresh
    }

    /// Which frames the decoder may leave out (non-reference frames before an exact target,
    /// everything but keyframes for a keyframe image).
    var skip: AVDiscard {
        get { context.pointee.skip_frame }
        set { context.pointee.skip_frame = newValue }
    }

    /// Drops everything in flight (after a seek); decoding goes on from the next packet.
    func flush() { avcodec_flush_buffers(context) }

    /// Decodes one subtitle packet (an empty one drains a decoder that holds cues back) and calls
    /// `body` with the subtitle that comes out, if one does, freed after it returns. A packet the
    /// decoder rejects is damage, decoded past. (Subtitles have their own decode call in FFmpeg:
    /// `avcodec_decode_subtitle2`, one packet in, at most one subtitle out.)
    func decodeSubtitle(
        _ packet: UnsafeMutablePointer<AVPacket>, _ body: (UnsafeMutablePointer<AVSubtitle>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) {
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        let result = avcodec_decode_subtitle2(context, &subtitle, &got, packet)
        guard result >= 0 else {
            damage.record(
                FFmpegError.error(
                    .decodeFailed, "the decoder rejected a subtitle packet", function: "avcodec_decode_subtitle2", result: result, file: source))
            return
        }
        guard got != 0 else { return }
        defer { avsubtitle_free(&subtitle) }
        try withUnsafeMutablePointer(to: &subtitle) { (pointer) throws(PlayheadError) in try body(pointer) }
    }

    /// A text subtitle decoder's header: the ASS script header (styles) its cues refer to; nil for
    /// a bitmap decoder and for other streams.
    var subtitleHeader: [UInt8]? {
        guard let header = context.pointee.subtitle_header else { return nil }
        return Array(UnsafeBufferPointer(start: header, count: max(0, Int(context.pointee.subtitle_header_size))))
    }

    /// Sends `packet` (nil drains the decoder) and calls `body` with every frame that comes out,
    /// in presentation order. `body` takes the frame's content (moves or unreferences it) and
    /// returns false to stop early. Returns false when `body` stopped.
    func decode(
        _ packet: UnsafeMutablePointer<AVPacket>?, into frame: OwnedFrame,
        _ body: (OwnedFrame) throws(PlayheadError) -> Bool
    ) throws(PlayheadError) -> Bool {
        while true {
            let sent = avcodec_send_packet(context, packet)
            let mustTakeFramesFirst = sent == FFmpegError.eagain
            if sent < 0, !mustTakeFramesFirst, sent != FFmpegError.eof {
                damage.record(
                    FFmpegError.error(.decodeFailed, "the decoder rejected a packet", function: "avcodec_send_packet", result: sent, file: source))
            }
            var errorsInARow = 0
            while true {
                let received = avcodec_receive_frame(context, frame.pointer)
                if received == FFmpegError.eagain || received == FFmpegError.eof { break }
                if received < 0 {
                    // A damaged frame: more may follow it (frame threads report errors as they
                    // come out, and a drain must take every frame), so keep taking them.
                    damage.record(
                        FFmpegError.error(.decodeFailed, "decoding failed", function: "avcodec_receive_frame", result: received, file: source))
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
