internal import CFFmpeg
import Glibc
import Synchronization

/// What an output context's interrupt callback asks: the target is stopping, or the operation
/// under way (an open, a write) has passed its deadline — a server that stops reading must not
/// hold the channel's writer for ever.
final class OutputDeadline: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let deadline = Atomic<UInt64>(0)

    func stop() { stopping.store(true, ordering: .releasing) }
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// The next blocking operation gives up after `seconds` (0: no deadline).
    func arm(_ seconds: Double) {
        deadline.store(seconds > 0 ? DispatchTimeNanos.now() + UInt64(seconds * 1e9) : 0, ordering: .releasing)
    }

    var shouldInterrupt: Bool {
        if isStopping { return true }
        let due = deadline.load(ordering: .acquiring)
        return due != 0 && DispatchTimeNanos.now() >= due
    }

    /// The callback record; the caller keeps `self` alive while the context may call it.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<OutputDeadline>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt ? 1 : 0
            }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}

/// One open output of a channel: a muxer with the channel's two streams, its header written.
/// Recordings and standard output are written through a ``MuxedFile`` (a recording under a
/// temporary name, renamed when complete, kept as a partial file when given up); HLS and network
/// streams are opened by libavformat's own protocols (HLS writes many files: its segments, and a
/// playlist rewritten under a temporary name, see docs/decisions).
final class TargetConnection {
    let target: ChannelTarget
    let context: UnsafeMutablePointer<AVFormatContext>
    private let muxed: MuxedFile?
    private var ownsIO = false
    private var finished = false
    /// Per stream: the bitstream filter that repeats the picture's parameter sets before each
    /// keyframe (MPEG-TS readers join anywhere), when the target needs it.
    private var repeater: ExtradataRepeater?
    private let deadline: OutputDeadline
    let videoIndex: Int32
    let audioIndex: Int32?

    /// Opens `target` with streams like `video` and `audio` (encoder contexts) and writes its header.
    init(
        target: ChannelTarget, video: UnsafeMutablePointer<AVCodecContext>, audio: UnsafeMutablePointer<AVCodecContext>?,
        segmentSeconds: Double, deadline: OutputDeadline, openTimeout: Double
    ) throws(PlayheadError) {
        self.target = target
        self.deadline = deadline
        let name = target.description
        switch target.kind {
        case .transportStreamFile, .mp4File:
            let file = try MuxedFile(path: target.location, format: target.formatName, replacing: false)
            muxed = file
            context = file.context
        case .standardOutput:
            let stream = try MuxedFile(descriptor: STDOUT_FILENO, name: "standard output", format: "mpegts")
            muxed = stream
            context = stream.context
        case .hls, .rtmp, .srt, .udp:
            var allocated: UnsafeMutablePointer<AVFormatContext>?
            let result = avformat_alloc_output_context2(&allocated, nil, target.formatName, target.location)
            guard result >= 0, let allocated else {
                throw FFmpegError.error(
                    .outputOpenFailed, "could not set up the \(target.formatName) muxer", function: "avformat_alloc_output_context2",
                    result: result, file: name)
            }
            muxed = nil
            context = allocated
            context.pointee.interrupt_callback = deadline.callback
        }
        let made = context
        var indexes: (Int32, Int32?) = (0, nil)
        do throws(PlayheadError) {
            let videoStream = try Self.addStream(to: made, from: video, name: name)
            var audioStream: Int32?
            if let audio { audioStream = try Self.addStream(to: made, from: audio, name: name) }
            indexes = (videoStream, audioStream)
        } catch {
            if muxed == nil { avformat_free_context(made) }
            throw error
        }
        videoIndex = indexes.0
        audioIndex = indexes.1
        do throws(PlayheadError) {
            if target.needsInBandParameters, let stream = context.pointee.streams[Int(videoIndex)] {
                repeater = try ExtradataRepeater(parameters: stream.pointee.codecpar, timeBase: video.pointee.time_base, name: name)
            }
            try open(segmentSeconds: segmentSeconds, openTimeout: openTimeout)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private static func addStream(
        to context: UnsafeMutablePointer<AVFormatContext>, from codec: UnsafeMutablePointer<AVCodecContext>,
        name: String
    ) throws(PlayheadError) -> Int32 {
        guard let stream = avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar else {
            throw PlayheadError(code: .outputOpenFailed, message: "could not add a stream", file: name)
        }
        let result = avcodec_parameters_from_context(parameters, codec)
        guard result >= 0 else {
            throw FFmpegError.error(
                .outputOpenFailed, "could not describe the stream", function: "avcodec_parameters_from_context", result: result, file: name)
        }
        stream.pointee.time_base = codec.pointee.time_base
        return stream.pointee.index
    }

    private func open(segmentSeconds: Double, openTimeout: Double) throws(PlayheadError) {
        let name = target.description
        var options: [String: String] = [:]
        switch target.kind {
        case .hls:
            options = [
                "hls_time": String(segmentSeconds), "hls_list_size": "6",
                "hls_flags": "delete_segments+program_date_time+temp_file+independent_segments",
            ]
        case .mp4File:
            options = ["movflags": "frag_keyframe+empty_moov+default_base_moof"]
        case .rtmp, .srt, .udp:
            deadline.arm(openTimeout)
            defer { deadline.arm(0) }
            var io: UnsafeMutablePointer<AVIOContext>?
            var callback = deadline.callback
            var protocolOptions: OpaquePointer?
            // Microseconds a read or write may block before it fails (TCP based protocols).
            av_dict_set(&protocolOptions, "rw_timeout", String(Int(openTimeout * 1_000_000)), 0)
            defer { av_dict_free(&protocolOptions) }
            let result = avio_open2(&io, target.location, AVIO_FLAG_WRITE, &callback, &protocolOptions)
            guard result >= 0, let io else {
                throw FFmpegError.error(.outputOpenFailed, "could not connect", function: "avio_open2", result: result, file: name)
            }
            context.pointee.pb = io
            ownsIO = true
            if target.kind == .rtmp { options = ["flvflags": "no_duration_filesize"] }
        case .transportStreamFile, .standardOutput:
            break
        }
        deadline.arm(openTimeout)
        defer { deadline.arm(0) }
        if let muxed {
            try muxed.writeHeader(options: options)
            return
        }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        let result = avformat_write_header(context, &dictionary)
        guard result >= 0 else {
            throw FFmpegError.error(.outputOpenFailed, "could not write the header", function: "avformat_write_header", result: result, file: name)
        }
    }

    /// Writes one packet (taken: left blank), its timestamps in `timeBase`; a write that blocks
    /// longer than `timeout` seconds fails.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, video: Bool, timeBase: AVRational, timeout: Double) throws(PlayheadError) {
        guard let index = video ? videoIndex : audioIndex, let stream = context.pointee.streams[Int(index)] else { return }
        if video, let repeater { try repeater.filter(packet) }
        packet.pointee.stream_index = index
        av_packet_rescale_ts(packet, timeBase, stream.pointee.time_base)
        deadline.arm(timeout)
        defer { deadline.arm(0) }
        if let muxed {
            try muxed.writeInterleaved(packet)
            return
        }
        let result = av_interleaved_write_frame(context, packet)
        guard result >= 0 else {
            throw FFmpegError.error(.writeFailed, "could not write", function: "av_interleaved_write_frame", result: result, file: target.description)
        }
    }

    /// Completes the output: the trailer (a recording is renamed into place).
    func finish(timeout: Double) throws(PlayheadError) {
        guard !finished else { return }
        finished = true
        deadline.arm(timeout)
        defer { deadline.arm(0) }
        if let muxed {
            try muxed.finish()
            return
        }
        let result = av_write_trailer(context)
        close()
        guard result >= 0 else {
            throw FFmpegError.error(.writeFailed, "could not complete", function: "av_write_trailer", result: result, file: target.description)
        }
    }

    /// Gives up: a recording keeps what it has as a partial file; a stream is closed.
    func abandon() {
        guard !finished else { return }
        finished = true
        if let muxed {
            muxed.keepWhatWasWritten()
            return
        }
        close()
    }

    private func close() {
        guard muxed == nil else { return }
        if ownsIO {
            avio_closep(&context.pointee.pb)
            ownsIO = false
        }
        if !finishedContext {
            finishedContext = true
            avformat_free_context(context)
        }
    }

    private var finishedContext = false
}

/// Repeats the picture's parameter sets (SPS/PPS, from the encoder's global header) before every
/// keyframe: libavcodec's `dump_extra` bitstream filter.
final class ExtradataRepeater {
    private let context: UnsafeMutablePointer<AVBSFContext>
    private let name: String

    init(parameters: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational, name: String) throws(PlayheadError) {
        self.name = name
        var allocated: UnsafeMutablePointer<AVBSFContext>?
        guard let filter = av_bsf_get_by_name("dump_extra"), av_bsf_alloc(filter, &allocated) >= 0, let allocated else {
            throw PlayheadError(code: .outputOpenFailed, message: "no dump_extra bitstream filter in this FFmpeg", file: name)
        }
        context = allocated
        avcodec_parameters_copy(allocated.pointee.par_in, parameters)
        allocated.pointee.time_base_in = timeBase
        av_opt_set(allocated.pointee.priv_data, "freq", "keyframe", 0)
        let result = av_bsf_init(allocated)
        guard result >= 0 else {
            var p: UnsafeMutablePointer<AVBSFContext>? = allocated
            av_bsf_free(&p)
            throw FFmpegError.error(.outputOpenFailed, "could not set up dump_extra", function: "av_bsf_init", result: result, file: name)
        }
    }

    deinit {
        var p: UnsafeMutablePointer<AVBSFContext>? = context
        av_bsf_free(&p)
    }

    /// Filters `packet` in place (one packet in, one out).
    func filter(_ packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        var result = av_bsf_send_packet(context, packet)
        if result >= 0 { result = av_bsf_receive_packet(context, packet) }
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "dump_extra failed", function: "av_bsf_receive_packet", result: result, file: name)
        }
    }
}
