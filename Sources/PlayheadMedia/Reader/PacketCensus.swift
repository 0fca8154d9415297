internal import CFFmpeg

/// What a media file holds, counted from its packets with the read rule (nothing decoded): how a
/// run reports what reached the disk rather than what it meant to write.
package enum PacketCensus {
    /// The video packets (one a frame) of the file at `path`.
    /// - Parameter path: the file.
    /// - Returns: the count; nil when it cannot be opened or has no video.
    package static func videoPackets(_ path: String) -> Int? {
        guard let demuxer = try? Demuxer.open(path, interrupt: InterruptFlag()), let video = demuxer.video else { return nil }
        demuxer.select([video.index])
        guard let packet = try? OwnedPacket() else { return nil }
        var count = 0
        while case .packet = demuxer.read(into: packet) {
            count += 1
            packet.unref()
        }
        return count
    }

    /// The sound's samples per channel in the file at `path`, from its packets' durations (those
    /// its edit list hides, the encoder's priming, left out).
    /// - Parameter path: the file.
    /// - Returns: the count; nil when it cannot be opened or has no sound.
    package static func audioSamples(_ path: String) -> Int? {
        guard let demuxer = try? Demuxer.open(path, interrupt: InterruptFlag()), let audio = demuxer.audio,
            let stream = demuxer.context.stream(at: Int(audio.index)), let parameters = stream.pointee.codecpar,
            parameters.pointee.sample_rate > 0
        else { return nil }
        demuxer.select([audio.index])
        guard let packet = try? OwnedPacket() else { return nil }
        let rate = AVRational(num: 1, den: parameters.pointee.sample_rate)
        var total: Int64 = 0
        while case .packet = demuxer.read(into: packet) {
            // A packet the container's edit list hides (the encoder's priming) is not played.
            if packet.pointer.pointee.flags & AV_PKT_FLAG_DISCARD == 0 {
                total += av_rescale_q(packet.pointer.pointee.duration, stream.pointee.time_base, rate)
            }
            packet.unref()
        }
        return Int(total)
    }
}
