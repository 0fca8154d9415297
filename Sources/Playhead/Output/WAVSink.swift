import CFFmpeg
import Foundation

/// Writes interleaved 16-bit audio into a WAV file through libavformat's `wav` muxer, under a
/// temporary name renamed into place by `finish`. Streams that follow (queued items, loops) are
/// appended sample for sample; they must share the first stream's rate and channel count.
public final class WAVSink: AudioSink {
    public let path: String
    private struct State {
        var muxer: UnsafeMutablePointer<AVFormatContext>?
        var stream: UnsafeMutablePointer<AVStream>?
        var format: (rate: Int, channels: Int)?
        var framesWritten = 0
        let packet = OwnedPacket()
    }
    private let state = Locked(State())

    public init(path: String) {
        self.path = path
    }

    deinit { state.withLock { Self.close(&$0, path: path, removing: true) } }

    /// Samples per channel written so far.
    public var framesWritten: Int { state.withLock { $0.framesWritten } }

    public func begin(_ info: AudioStreamInfo) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            if let format = s.format {
                guard format == (info.sampleRate, info.channelCount) else {
                    throw PlayheadError(code: .invalidArgument, message: "a WAV file holds one format (\(format.rate) Hz, \(format.channels) channels); this stream is \(info.sampleRate) Hz, \(info.channelCount) channels", file: path)
                }
                return
            }
            let temporary = AtomicFile.temporaryPath(for: path)
            var context: UnsafeMutablePointer<AVFormatContext>?
            var result = avformat_alloc_output_context2(&context, nil, "wav", temporary)
            guard result >= 0, let context else {
                throw FFmpegError.error(.outputOpenFailed, "could not set up the WAV muxer", function: "avformat_alloc_output_context2", result: result, file: path)
            }
            s.muxer = context
            guard let stream = avformat_new_stream(context, nil) else {
                throw PlayheadError(code: .outputOpenFailed, message: "could not add a stream", file: path)
            }
            s.stream = stream
            let parameters = stream.pointee.codecpar!
            parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            parameters.pointee.codec_id = AV_CODEC_ID_PCM_S16LE
            parameters.pointee.sample_rate = Int32(info.sampleRate)
            parameters.pointee.format = AV_SAMPLE_FMT_S16.rawValue
            av_channel_layout_default(&parameters.pointee.ch_layout, Int32(info.channelCount))
            parameters.pointee.bits_per_coded_sample = 16
            parameters.pointee.block_align = Int32(2 * info.channelCount)
            parameters.pointee.bit_rate = Int64(16 * info.channelCount * info.sampleRate)
            stream.pointee.time_base = AVRational(num: 1, den: Int32(info.sampleRate))
            result = avio_open(&context.pointee.pb, temporary, AVIO_FLAG_WRITE)
            guard result >= 0 else {
                throw FFmpegError.error(.outputOpenFailed, "could not create \(temporary)", function: "avio_open", result: result, file: path)
            }
            result = avformat_write_header(context, nil)
            guard result >= 0 else {
                throw FFmpegError.error(.writeFailed, "could not write the WAV header", function: "avformat_write_header", result: result, file: path)
            }
            s.format = (info.sampleRate, info.channelCount)
        }
    }

    public func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard let muxer = s.muxer, let stream = s.stream, buffer.frameCount > 0 else { return }
            // The muxer copies the bytes out during the call: the packet only borrows them.
            let p = s.packet.pointer
            p.pointee.data = UnsafeMutableRawPointer(mutating: buffer.samples.baseAddress!).assumingMemoryBound(to: UInt8.self)
            p.pointee.size = Int32(buffer.samples.count * 2)
            p.pointee.pts = Int64(s.framesWritten)
            p.pointee.dts = Int64(s.framesWritten)
            p.pointee.duration = Int64(buffer.frameCount)
            p.pointee.stream_index = stream.pointee.index
            let result = av_write_frame(muxer, p)
            p.pointee.data = nil
            p.pointee.size = 0
            guard result >= 0 else {
                throw FFmpegError.error(.writeFailed, "could not write audio", function: "av_write_frame", result: result, file: path)
            }
            s.framesWritten += buffer.frameCount
        }
    }

    public func finish() throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard let muxer = s.muxer else { return }
            let result = av_write_trailer(muxer)
            let flushed = muxer.pointee.pb != nil ? avio_closep(&muxer.pointee.pb) : 0
            Self.close(&s, path: path, removing: false)
            guard result >= 0, flushed >= 0 else {
                unlink(AtomicFile.temporaryPath(for: path))
                throw FFmpegError.error(.writeFailed, "could not complete the file", function: "av_write_trailer", result: min(result, flushed), file: path)
            }
            try AtomicFile.commit(AtomicFile.temporaryPath(for: path), to: path)
        }
    }

    public func abort() { state.withLock { Self.close(&$0, path: path, removing: true) } }

    private static func close(_ s: inout State, path: String, removing: Bool) {
        guard let context = s.muxer else { return }
        if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
        s.muxer = nil
        s.stream = nil
        if removing { unlink(AtomicFile.temporaryPath(for: path)) }
    }
}
