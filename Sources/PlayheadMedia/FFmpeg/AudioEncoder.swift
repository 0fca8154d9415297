internal import CFFmpeg

/// Owns an audio encoder (FFmpeg's AAC) fed with interleaved signed 16-bit samples:
/// libswresample converts them to the encoder's sample format, libavutil's audio FIFO cuts them
/// into frames of the encoder's size, each stamped with its first sample's number. Used on the
/// sink's thread only.
package final class AudioEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private var converter: OpaquePointer?
    private let fifo: OpaquePointer
    private let frame: OwnedFrame
    private let packet: OwnedPacket
    private let target: String
    private let channels: Int
    private let frameSize: Int32
    /// The number of the next sample to encode.
    private var nextPTS: Int64 = 0

    package init(sampleRate: Int, channelCount: Int, target: String) throws(PlayheadError) {
        frame = try OwnedFrame()
        packet = try OwnedPacket()
        FFmpegLogging.installCallback()
        self.target = target
        channels = channelCount
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC), let context = avcodec_alloc_context3(codec) else {
            throw PlayheadError(code: .encodeFailed, message: "no AAC encoder in this FFmpeg", file: target)
        }
        self.context = context
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        context.pointee.bit_rate = Int64(max(1, channelCount)) * 64_000
        context.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        // In the MP4's header, not in-band.
        context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        var result = avcodec_open2(context, codec, nil)
        guard result >= 0 else {
            var p: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&p)
            throw FFmpegError.error(.encodeFailed, "could not open the AAC encoder", function: "avcodec_open2", result: result, file: target)
        }
        frameSize = context.pointee.frame_size > 0 ? context.pointee.frame_size : 1024
        var swr: OpaquePointer?
        result = swr_alloc_set_opts2(
            &swr, &context.pointee.ch_layout, AV_SAMPLE_FMT_FLTP, Int32(sampleRate),
            &context.pointee.ch_layout, AV_SAMPLE_FMT_S16, Int32(sampleRate), 0, nil)
        if result >= 0 { result = swr_init(swr) }
        guard result >= 0, let swr, let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, Int32(channelCount), frameSize) else {
            swr_free(&swr)
            var p: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&p)
            throw FFmpegError.error(.encodeFailed, "could not set up the audio conversion", function: "swr_init", result: result, file: target)
        }
        converter = swr
        self.fifo = fifo
    }

    deinit {
        swr_free(&converter)
        av_audio_fifo_free(fifo)
        var p: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&p)
    }

    /// Takes `frames` samples per channel (interleaved) and encodes every whole frame they
    /// complete, handing each packet to `body` (valid only during the call).
    func encode(
        _ samples: UnsafeBufferPointer<Int16>, frames: Int, _ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) {
        guard frames > 0, let base = samples.baseAddress else { return }
        // Converted straight into the FIFO's planes, grown to hold them.
        let grown = av_audio_fifo_realloc(fifo, av_audio_fifo_size(fifo) + Int32(frames))
        let staging = try planes(for: Int32(frames))
        defer { av_frame_unref(staging.pointer) }
        var input: UnsafePointer<UInt8>? = UnsafeRawPointer(base).assumingMemoryBound(to: UInt8.self)
        let converted = staging.pointer.pointee.extended_data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: channels) { output in
            swr_convert(converter, output, Int32(frames), &input, Int32(frames))
        }
        guard grown >= 0, converted >= 0 else {
            throw FFmpegError.error(
                .encodeFailed, "could not convert the sound", function: "swr_convert", result: min(grown, converted), file: target)
        }
        let queued = staging.pointer.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: channels) { data in
            av_audio_fifo_write(fifo, data, converted)
        }
        guard queued >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not queue the sound", function: "av_audio_fifo_write", result: queued, file: target)
        }
        while av_audio_fifo_size(fifo) >= frameSize { try encodeQueued(frameSize, body) }
    }

    /// Encodes what is queued (a last, shorter frame) and drains the encoder.
    func finish(_ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void) throws(PlayheadError) {
        let left = av_audio_fifo_size(fifo)
        if left > 0 { try encodeQueued(left, body) }
        try send(nil, body)
    }

    private func planes(for count: Int32) throws(PlayheadError) -> OwnedFrame {
        let staging = try OwnedFrame()
        try allocate(staging.pointer, samples: count)
        return staging
    }

    /// Gives `frame` buffers for `count` samples in the encoder's format.
    private func allocate(_ frame: UnsafeMutablePointer<AVFrame>, samples count: Int32) throws(PlayheadError) {
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.nb_samples = count
        frame.pointee.sample_rate = context.pointee.sample_rate
        var result = av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout)
        if result >= 0 { result = av_frame_get_buffer(frame, 0) }
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not allocate sound frames", function: "av_frame_get_buffer", result: result, file: target)
        }
    }

    private func encodeQueued(_ count: Int32, _ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void) throws(PlayheadError) {
        av_frame_unref(frame.pointer)
        try allocate(frame.pointer, samples: count)
        let read = frame.pointer.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: channels) { data in
            av_audio_fifo_read(fifo, data, count)
        }
        guard read == count else {
            throw FFmpegError.error(.encodeFailed, "could not take queued sound", function: "av_audio_fifo_read", result: read, file: target)
        }
        frame.pointer.pointee.pts = nextPTS
        nextPTS += Int64(count)
        try send(frame.pointer, body)
    }

    private func send(
        _ frame: UnsafeMutablePointer<AVFrame>?, _ body: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) {
        try EncoderLoop.send(frame, to: context, through: packet, what: "the sound", target: target, body)
    }
}
