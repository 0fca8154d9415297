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

/// One open output of a channel: a ``Muxer`` with the channel's two streams, its header written —
/// what a target adds to the muxer is its deadlines (an open, a write that takes too long fails)
/// and, for a stream that players join anywhere, the parameter sets repeated before each keyframe.
/// Recordings are files like any other (a temporary name, renamed when complete — a recording
/// whose name was taken meanwhile takes a free name beside it; given up, its valid part is kept,
/// and an MP4 is made plain with edit lists); HLS and network streams are opened by libavformat's
/// own protocols (HLS writes many files: its segments, and a playlist rewritten under a temporary
/// name, see docs/decisions).
/// Where a channel's picture and sound end: frames and samples given to the encoders, each in its
/// packets' time base.
struct ChannelEnds {
    var video: Int64
    var videoTimeBase: AVRational
    var sound: Int64?
    var soundTimeBase: AVRational
}

final class TargetConnection {
    let target: ChannelTarget
    private let muxer: Muxer
    private var finished = false
    /// The bitstream filter that repeats the picture's parameter sets before each keyframe
    /// (MPEG-TS readers join anywhere), when the target needs it.
    private var repeater: ExtradataRepeater?
    private let deadline: OutputDeadline
    let videoIndex: Int32
    let audioIndex: Int32?
    /// Where each stream's packets written end, in the stream's time base (a recording's plain
    /// MP4 ends its tracks there).
    private var ends: [Int32: Int64] = [:]
    /// An RTMP stream's timestamps start at 0 (servers expect it): the first packet's time (a
    /// picture's: a target opens at a keyframe) and its time base, taken off every packet.
    private var origin: (ticks: Int64, timeBase: AVRational)?

    /// Opens `target` with streams like `video` and `audio` (encoder contexts) and writes its header.
    init(
        target: ChannelTarget, video: UnsafeMutablePointer<AVCodecContext>, audio: UnsafeMutablePointer<AVCodecContext>?,
        segmentSeconds: Double, deadline: OutputDeadline, openTimeout: Double, hls: HLSFolder? = nil
    ) throws(PlayheadError) {
        self.target = target
        self.deadline = deadline
        deadline.arm(openTimeout)
        defer { deadline.arm(0) }
        try hls?.checkNames()
        let muxer = try Muxer(target.container, to: target.destination(deadline: deadline, openTimeout: openTimeout, hls: hls))
        self.muxer = muxer
        videoIndex = try muxer.addStream(from: video)
        audioIndex = try audio.map { (audio) throws(PlayheadError) in try muxer.addStream(from: audio) }
        if target.needsInBandParameters, let stream = muxer.context.pointee.streams[Int(videoIndex)] {
            repeater = try ExtradataRepeater(parameters: stream.pointee.codecpar, timeBase: video.pointee.time_base, name: target.description)
        }
        try muxer.writeHeader(options: target.headerOptions(segmentSeconds: segmentSeconds, hls: hls))
    }

    /// Writes one packet (taken: left blank), its timestamps in `timeBase`; a write that blocks
    /// longer than `timeout` seconds fails.
    /// - Returns: false when the packet was not written: a stream the output does not have, or on
    ///   RTMP a packet decoded before the first picture (its time would be negative).
    /// - Throws: what the muxer or the parameter-set filter threw; `output.timedOut` past `timeout`.
    @discardableResult
    func write(_ packet: UnsafeMutablePointer<AVPacket>, video: Bool, timeBase: AVRational, timeout: Double) throws(PlayheadError) -> Bool {
        guard let index = video ? videoIndex : audioIndex else { return false }
        if target.kind == .rtmp {
            if origin == nil, packet.pointee.pts != FFmpegConstants.noPTS { origin = (packet.pointee.pts, timeBase) }
            let offset = origin.map { av_rescale_q($0.ticks, $0.timeBase, timeBase) } ?? 0
            // (The encoder stamps every packet; a time it left unset is not moved, never wrapped.)
            if packet.pointee.pts != FFmpegConstants.noPTS { packet.pointee.pts = packet.pointee.pts &- offset }
            if packet.pointee.dts != FFmpegConstants.noPTS { packet.pointee.dts = packet.pointee.dts &- offset }
            if packet.pointee.dts < 0 { return false }
        }
        if video, let repeater { try repeater.filter(packet) }
        let tb = muxer.timeBase(of: index)
        let end = av_rescale_q(packet.pointee.pts + max(0, packet.pointee.duration), timeBase, tb)
        ends[index] = max(ends[index] ?? end, end)
        deadline.arm(timeout)
        defer { deadline.arm(0) }
        try muxer.write(packet, stream: index, from: timeBase)
        return true
    }

    /// Completes the output: the trailer (a recording takes its name).
    /// - Parameters:
    ///   - timeout: seconds the completion may block on a stalled peer.
    ///   - ends: where the channel's picture and sound end (the last frame's end, the last sample
    ///     given to the encoder), in the time bases of the packets: a recording's plain MP4 ends
    ///     its tracks there, cutting the AAC padding.
    /// - Returns: where a recording ended up (its name, or a free one beside it).
    @discardableResult
    func finish(timeout: Double, ends given: ChannelEnds? = nil) throws(PlayheadError) -> String {
        guard !finished else { return muxer.path }
        finished = true
        if let given {
            ends[videoIndex] = av_rescale_q(given.video, given.videoTimeBase, muxer.timeBase(of: videoIndex))
            if let audioIndex, let sound = given.sound {
                ends[audioIndex] = av_rescale_q(sound, given.soundTimeBase, muxer.timeBase(of: audioIndex))
            }
        }
        deadline.arm(timeout)
        defer { deadline.arm(0) }
        return try muxer.finish(ends: ends)
    }

    /// Where the output goes (a file's path, an HLS playlist's absolute path, a stream's name).
    var path: String { muxer.path }

    /// Gives up: a recording keeps what it has as a partial file; a stream is closed.
    func abandon() {
        guard !finished else { return }
        finished = true
        muxer.keepWhatWasWritten()
    }
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
