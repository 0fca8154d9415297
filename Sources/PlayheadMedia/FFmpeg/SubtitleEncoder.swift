internal import CFFmpeg

/// Owns a text subtitle encoder (FFmpeg's `subrip`, `webvtt` or `ass`), set up as `ffmpeg -c:s`
/// sets it up: times in microseconds, the decoder's ASS header (its styles) handed on. Used by
/// one thread.
final class SubtitleEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private let target: String
    /// What `avcodec_encode_subtitle` writes into (FFmpeg's own tool allows a cue 1 MiB).
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)

    /// Opens the encoder for `format` (not ``SubtitleFormat/json``).
    /// - Parameters:
    ///   - format: srt, vtt or ass.
    ///   - header: the decoder's ASS header (``StreamDecoder/subtitleHeader``); the ASS encoder needs one.
    ///   - target: what errors name.
    /// - Throws: `output.encodeFailed` when the encoder is missing or refuses to open.
    init(_ format: SubtitleFormat, header: [UInt8]?, target: String) throws(PlayheadError) {
        self.target = target
        let name: String
        switch format {
        case .srt: name = "subrip"
        case .vtt: name = "webvtt"
        case .ass: name = "ass"
        case .json: throw PlayheadError(code: .invalidArgument, message: "JSON is not a subtitle codec", file: target)
        }
        guard let codec = avcodec_find_encoder_by_name(name), let context = avcodec_alloc_context3(codec) else {
            throw PlayheadError(code: .encodeFailed, message: "no \(name) encoder in this FFmpeg", file: target)
        }
        self.context = context
        context.pointee.time_base = AVRational(num: 1, den: Int32(AV_TIME_BASE))
        // Handed on as ffmpeg hands it on, even when empty: the text encoders need one.
        if let header, let copy = av_mallocz(header.count + 1)?.assumingMemoryBound(to: UInt8.self) {
            header.withUnsafeBufferPointer { bytes in
                if let base = bytes.baseAddress { copy.update(from: base, count: header.count) }
            }
            context.pointee.subtitle_header = copy
            context.pointee.subtitle_header_size = Int32(header.count)
        }
        let result = avcodec_open2(context, codec, nil)
        // (The context is freed by `deinit`, which runs for a failed init too: every property is set.)
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not open the \(name) encoder", function: "avcodec_open2", result: result, file: target)
        }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&owned)
    }

    /// Encodes `subtitle` (its times made relative to its start, as the muxer wants them) into
    /// `packet`: its data, its time and duration in microseconds.
    /// - Parameters:
    ///   - subtitle: a decoded text subtitle whose `pts` is its start (microseconds) and whose
    ///     `end_display_time` is its length (milliseconds).
    ///   - packet: filled with the encoded cue.
    /// - Throws: `output.encodeFailed` (a bitmap subtitle cannot be written as text).
    func encode(_ subtitle: UnsafeMutablePointer<AVSubtitle>, into packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        let size = buffer.withUnsafeMutableBufferPointer { bytes in
            avcodec_encode_subtitle(context, bytes.baseAddress, Int32(bytes.count), subtitle)
        }
        // An empty cue (an ASS event with no text) encodes to nothing, and is written so, as ffmpeg writes it.
        guard size >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not encode a cue as text", function: "avcodec_encode_subtitle", result: size, file: target)
        }
        let made = av_new_packet(packet, size)
        guard made >= 0 else { throw PlayheadError.outOfMemory("av_new_packet") }
        if size > 0, let data = packet.pointee.data {
            buffer.withUnsafeBufferPointer { bytes in
                if let base = bytes.baseAddress { data.update(from: base, count: Int(size)) }
            }
        }
        packet.pointee.pts = subtitle.pointee.pts
        packet.pointee.dts = subtitle.pointee.pts
        packet.pointee.duration = Int64(subtitle.pointee.end_display_time) * 1000
    }
}
