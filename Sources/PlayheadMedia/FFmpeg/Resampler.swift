internal import CFFmpeg

/// Owns a libswresample context converting decoded audio to interleaved signed 16-bit samples at a
/// chosen rate and channel layout, into a buffer reused from one call to the next.
package final class Resampler {
    private var context: OpaquePointer?
    package private(set) var buffer: UnsafeMutablePointer<Int16>
    private var capacity: Int
    package let channelCount: Int
    package let sampleRate: Int
    private let source: String

    /// `sampleRate` and `channelCount` nil keep the decoder's.
    init(from decoder: UnsafeMutablePointer<AVCodecContext>, sampleRate: Int?, channelCount: Int?, source: String) throws(PlayheadError) {
        self.source = source
        var input = decoder.pointee.ch_layout
        if input.nb_channels <= 0 || input.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&input, max(1, input.nb_channels))
        }
        var output = AVChannelLayout()
        if let channelCount, channelCount != Int(input.nb_channels) {
            av_channel_layout_default(&output, Int32(channelCount))
        } else {
            av_channel_layout_copy(&output, &input)
        }
        defer { av_channel_layout_uninit(&output) }
        self.channelCount = Int(output.nb_channels)
        self.sampleRate = sampleRate ?? Int(decoder.pointee.sample_rate)
        var swr: OpaquePointer?
        var result = swr_alloc_set_opts2(
            &swr, &output, AV_SAMPLE_FMT_S16, Int32(self.sampleRate),
            &input, decoder.pointee.sample_fmt, decoder.pointee.sample_rate, 0, nil)
        if result >= 0 { result = swr_init(swr) }
        guard result >= 0, let swr else {
            throw FFmpegError.error(.conversionFailed, "could not set up audio resampling", function: "swr_init", result: result, file: source)
        }
        context = swr
        capacity = 8192
        buffer = .allocate(capacity: capacity * max(1, self.channelCount))
    }

    deinit {
        swr_free(&context)
        buffer.deallocate()
    }

    /// Drops what the resampler holds (after a seek).
    package func reset() {
        _ = swr_init(context)
    }

    /// Converts `frame` (nil flushes what the resampler holds). Returns the samples per channel now
    /// in `buffer`.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>?) throws(PlayheadError) -> Int {
        let inputSamples = Int(frame?.pointee.nb_samples ?? 0)
        let needed = Int(swr_get_out_samples(context, Int32(inputSamples))) + 32
        if needed > capacity {
            buffer.deallocate()
            capacity = needed
            buffer = .allocate(capacity: capacity * max(1, channelCount))
        }
        var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self)
        let converted: Int32
        if let frame {
            converted = frame.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                swr_convert(context, &output, Int32(capacity), data, frame.pointee.nb_samples)
            }
        } else {
            converted = swr_convert(context, &output, Int32(capacity), nil, 0)
        }
        guard converted >= 0 else {
            throw FFmpegError.error(.conversionFailed, "audio resampling failed", function: "swr_convert", result: converted, file: source)
        }
        return Int(converted)
    }
}
