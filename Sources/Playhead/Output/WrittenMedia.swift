internal import CFFmpeg

/// What a media file that Playhead wrote holds on disk, read back with the demuxer (for
/// summaries that report the disk, not what was meant to be written).
package enum WrittenMedia {
    /// The video packets (one a frame) of the file at `path`, read without decoding; nil when it
    /// cannot be opened or has no video.
    package static func videoFrames(_ path: String) -> Int? {
        guard let demuxer = try? Demuxer.open(path, interrupt: InterruptFlag()), let video = demuxer.video else { return nil }
        demuxer.select([video.index])
        guard let packet = try? OwnedPacket() else { return nil }
        var count = 0
        while case .packet = demuxer.read(into: packet.pointer) {
            count += 1
            av_packet_unref(packet.pointer)
        }
        return count
    }

    /// The sound's samples per channel in the file at `path`, from its packets' durations; nil when it cannot be opened or has no sound.
    package static func audioFrames(_ path: String) -> Int? {
        guard let demuxer = try? Demuxer.open(path, interrupt: InterruptFlag()), let audio = demuxer.audio,
            let stream = demuxer.context.stream(at: Int(audio.index)), let parameters = stream.pointee.codecpar,
            parameters.pointee.sample_rate > 0
        else { return nil }
        demuxer.select([audio.index])
        guard let packet = try? OwnedPacket() else { return nil }
        let rate = AVRational(num: 1, den: parameters.pointee.sample_rate)
        var total: Int64 = 0
        while case .packet = demuxer.read(into: packet.pointer) {
            total += av_rescale_q(packet.pointer.pointee.duration, stream.pointee.time_base, rate)
            av_packet_unref(packet.pointer)
        }
        return Int(total)
    }
}
