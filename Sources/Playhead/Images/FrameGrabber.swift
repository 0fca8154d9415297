import CFFmpeg

/// Pulls frames at chosen times, in ascending order, out of one file with one demuxer and one
/// single-threaded decoder (several of these on their own threads beat one frame-threaded decoder
/// for seek-heavy work). Used by one thread.
///
/// Exact times: seek only when the keyframe before the target lies past the decoding position,
/// otherwise decode forward; packets whose frames end before the target are decoded with
/// non-reference frames discarded. Tolerant times: the keyframe nearest the target inside the
/// window, chosen by the demuxer from its index, decoded alone.
final class FrameGrabber {
    private let format: FormatContext
    private let streamIndex: Int32
    private let stream: UnsafeMutablePointer<AVStream>
    private let decoder: StreamDecoder
    private let converter: FrameConverter
    private let canvas: OwnedFrame
    private let decoded = OwnedFrame()
    private let candidate = OwnedFrame()
    private let packet = OwnedPacket()
    private let timeBase: AVRational
    private let frameDuration: Int64
    private let source: String
    /// The pts of the last frame out of the decoder, when decoding can go on from there.
    private var position: Int64?
    private var hasCandidate = false
    private var drained = false
    private var packetPending = false

    init(source: String, maximumSize: PixelSize?, appliesPreferredTrackTransform: Bool, interrupt: InterruptFlag) throws(PlayheadError) {
        self.source = source
        if !source.contains("://") { try MediaProbe.checkLocalFile(source) }
        format = try FormatContext.open(source, interrupt: interrupt)
        try format.findStreamInfo()
        streamIndex = av_find_best_stream(format.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard streamIndex >= 0 else { throw PlayheadError(code: .noVideoTrack, message: "no video track to take images from", file: source) }
        for i in 0..<format.streamCount where i != Int(streamIndex) { format.stream(at: i).pointee.discard = AVDISCARD_ALL }
        stream = format.stream(at: Int(streamIndex))
        timeBase = stream.pointee.time_base
        decoder = try StreamDecoder(stream: stream, threads: 1, source: source)
        let parameters = stream.pointee.codecpar.pointee
        let stored = PixelSize(width: Int(parameters.width), height: Int(parameters.height))
        guard !stored.isEmpty else { throw PlayheadError(code: .decodeFailed, message: "the video track has no picture size", file: source) }
        var par = PixelAspectRatio.square, orientation = VideoOrientation.identity
        if appliesPreferredTrackTransform {
            let sar = av_guess_sample_aspect_ratio(format.pointer, stream, nil)
            if sar.num > 0, sar.den > 0 { par = PixelAspectRatio(horizontal: Int(sar.num), vertical: Int(sar.den)) }
            orientation = FormatContext.orientation(of: stream)
        }
        let shown = stored.presentationSize(pixelAspectRatio: par, orientation: orientation)
        let size = Self.fitted(shown, within: maximumSize)
        let layout = VideoGravity.resizeAspect.layout(stored: stored, pixelAspectRatio: par, orientation: orientation, canvas: size)
        converter = FrameConverter(layout: layout, outputFormat: AV_PIX_FMT_RGB24, source: source)
        canvas = try OwnedFrame(size: size, format: AV_PIX_FMT_RGB24)
        let rate = stream.pointee.avg_frame_rate.isValidPositive ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        frameDuration = rate.isValidPositive ? max(1, av_rescale_q(1, AVRational(num: rate.den, den: rate.num), timeBase)) : 1
    }

    /// The displayed size scaled down (never up) to fit inside `maximum`, proportions kept.
    static func fitted(_ shown: PixelSize, within maximum: PixelSize?) -> PixelSize {
        guard let maximum, !maximum.isEmpty, shown.width > maximum.width || shown.height > maximum.height else { return shown }
        let scale = min(Double(maximum.width) / Double(shown.width), Double(maximum.height) / Double(shown.height))
        return PixelSize(width: max(1, Int((Double(shown.width) * scale).rounded())), height: max(1, Int((Double(shown.height) * scale).rounded())))
    }

    /// The image showing at `time` (or the nearest keyframe inside the tolerances) and its time.
    func image(at time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime) throws(PlayheadError) -> (GeneratedImage, MediaTime) {
        let target = time.ffmpegTimestamp(in: timeBase)
        if toleranceBefore > .zero || toleranceAfter > .zero {
            let low = toleranceBefore.isNumeric ? target - toleranceBefore.ffmpegTimestamp(in: timeBase) : Int64.min
            let high = toleranceAfter.isNumeric ? target + toleranceAfter.ffmpegTimestamp(in: timeBase) : Int64.max
            if let keyframe = nearestKeyframe(to: target, low: low, high: high),
               avformat_seek_file(format.pointer, streamIndex, Int64.min, keyframe, keyframe, 0) >= 0 {
                return try keyframeImage()
            }
        }
        return try exactImage(at: target)
    }

    // MARK: Exact

    private func exactImage(at target: Int64) throws(PlayheadError) -> (GeneratedImage, MediaTime) {
        let keyIndex = av_index_search_timestamp(stream, target, AVSEEK_FLAG_BACKWARD)
        let keyframe = keyIndex >= 0 ? avformat_index_get_entry(stream, keyIndex)?.pointee.timestamp : nil
        let mustSeek: Bool
        if let position {
            mustSeek = position >= target || (keyframe.map { $0 > position } ?? false)
        } else {
            mustSeek = drained || hasCandidate || (keyframe.map { $0 > (stream.pointee.start_time == FFmpegConstants.noPTS ? 0 : stream.pointee.start_time) } ?? false)
        }
        if mustSeek { try seek(to: target) }

        while true {
            // Frames the decoder already holds come first.
            if try receive() {
                let pts = decoded.pointer.pointee.best_effort_timestamp
                let duration = decoded.pointer.pointee.pkt_duration > 0 ? decoded.pointer.pointee.pkt_duration : frameDuration
                position = pts
                if pts != FFmpegConstants.noPTS, pts + duration > target {
                    // This frame covers the target, or lies after it: then the one before it showed at the target.
                    let useCandidate = pts > target && hasCandidate
                    return try answer(from: useCandidate ? candidate : decoded)
                }
                av_frame_unref(candidate.pointer)
                av_frame_move_ref(candidate.pointer, decoded.pointer)
                hasCandidate = true
                continue
            }
            if drained {
                // The end: the last frame shows at any later time inside the clip.
                guard hasCandidate else { throw outOfRange(target) }
                return try answer(from: candidate)
            }
            try feed(discardingBefore: target)
        }
    }

    private func seek(to target: Int64) throws(PlayheadError) {
        let result = avformat_seek_file(format.pointer, streamIndex, Int64.min, target, target, 0)
        guard result >= 0 else {
            throw FFmpegError.error(.seekFailed, "could not seek", function: "avformat_seek_file", result: result, file: source)
        }
        avcodec_flush_buffers(decoder.context)
        position = nil
        hasCandidate = false
        drained = false
        packetPending = false
        av_packet_unref(packet.pointer)
        av_frame_unref(candidate.pointer)
    }

    /// Reads and sends the next packet of the stream; at the end, drains the decoder. When the
    /// decoder is full, the packet stays pending and the caller takes frames first.
    private func feed(discardingBefore target: Int64?) throws(PlayheadError) {
        if packetPending {
            if (try? decoder.send(packet.pointer)) != false {
                packetPending = false
                av_packet_unref(packet.pointer)
            }
            return
        }
        while true {
            let result = av_read_frame(format.pointer, packet.pointer)
            if result < 0 {
                if result != FFmpegError.eof, format.interrupt.isRaised { throw .cancelled(file: source) }
                _ = try? decoder.send(nil)
                drained = true
                return
            }
            guard packet.pointer.pointee.stream_index == streamIndex else {
                av_packet_unref(packet.pointer)
                continue
            }
            let pts = packet.pointer.pointee.pts, duration = max(packet.pointer.pointee.duration, frameDuration)
            // Frames that end before the target are needed only as references: discard the others.
            if let target, pts != FFmpegConstants.noPTS, pts + duration <= target {
                decoder.context.pointee.skip_frame = AVDISCARD_NONREF
            } else {
                decoder.context.pointee.skip_frame = AVDISCARD_DEFAULT
            }
            switch try? decoder.send(packet.pointer) {
            case false?:
                packetPending = true
            default:
                // Sent, or damaged (then skipped).
                av_packet_unref(packet.pointer)
            }
            return
        }
    }

    private func receive() throws(PlayheadError) -> Bool {
        do {
            return try decoder.receive(into: decoded)
        } catch {
            return false
        }
    }

    // MARK: Tolerant

    /// The presentation time of the keyframe nearest the target inside [low, high]: the demuxer is
    /// asked (from its index) for the keyframe at or before the target and for the one after it;
    /// reading each one's packet gives its time. Nothing is decoded.
    private func nearestKeyframe(to target: Int64, low: Int64, high: Int64) -> Int64? {
        position = nil
        var candidates: [Int64] = []
        if let before = keyframeTime(seekingTo: target, flags: AVSEEK_FLAG_BACKWARD) { candidates.append(before) }
        if let after = keyframeTime(seekingTo: target + 1, flags: 0) { candidates.append(after) }
        return candidates.filter { $0 >= low && $0 <= high }.min { abs($0 - target) < abs($1 - target) }
    }

    private func keyframeTime(seekingTo timestamp: Int64, flags: Int32) -> Int64? {
        guard av_seek_frame(format.pointer, streamIndex, timestamp, flags) >= 0 else { return nil }
        while av_read_frame(format.pointer, packet.pointer) >= 0 {
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            let pts = packet.pointer.pointee.pts
            return pts == FFmpegConstants.noPTS ? nil : pts
        }
        return nil
    }

    /// Decodes only the keyframe the demuxer was just positioned on.
    private func keyframeImage() throws(PlayheadError) -> (GeneratedImage, MediaTime) {
        avcodec_flush_buffers(decoder.context)
        packetPending = false
        av_packet_unref(packet.pointer)
        decoder.context.pointee.skip_frame = AVDISCARD_NONKEY
        defer {
            decoder.context.pointee.skip_frame = AVDISCARD_DEFAULT
            // The decoder was drained: the next request starts from a seek.
            avcodec_flush_buffers(decoder.context)
            position = nil
            drained = true
            hasCandidate = false
        }
        while true {
            let result = av_read_frame(format.pointer, packet.pointer)
            if result < 0 { break }
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            guard packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 else { continue }
            _ = try? decoder.send(packet.pointer)
            break
        }
        // Drain so the keyframe comes out now rather than after the decoder's reorder delay.
        _ = try? decoder.send(nil)
        guard try receive() else { throw PlayheadError(code: .decodeFailed, message: "the keyframe could not be decoded", file: source) }
        return try answer(from: decoded)
    }

    // MARK: Output

    private func answer(from frame: OwnedFrame) throws(PlayheadError) -> (GeneratedImage, MediaTime) {
        try converter.convert(frame, into: canvas)
        let time = MediaTime(ffmpegTimestamp: frame.pointer.pointee.best_effort_timestamp, timeBase: timeBase)
        return (GeneratedImage.from(canvas), time)
    }

    private func outOfRange(_ target: Int64) -> PlayheadError {
        PlayheadError(code: .invalidArgument, message: "no frame at \(MediaTime(ffmpegTimestamp: target, timeBase: timeBase).seconds) s: past the end", file: source)
    }
}
