internal import CFFmpeg

/// The last step of an MP4 export: the fragmented file written while encoding (a killed run's
/// file plays up to its last fragment) is copied, packet for packet with the same timestamps,
/// into a plain MP4 whose sample tables carry edit lists — as ffmpeg's own `out.mp4` does.
///
/// A fragmented file's edit lists are not applied by demuxers to its fragments (FFmpeg shows the
/// AAC priming as sound from −21 ms, and a player that plays sound without gaps hears it 21 ms
/// late; a tool that starts every stream at 0 moves the picture by as much). In the plain file
/// the priming and the picture's reordering delay are hidden by the edit lists, so a gapless
/// decoder and a player that honours timestamps both find every frame and every sample where
/// the source had them.
enum MP4Rewrite {
    /// Copies every packet of the MP4 at `fragmented` into `target` (a plain `mp4` muxer, header
    /// not yet written). `ends` gives, per stream index, where it must end (in the stream's time
    /// base): the picture's last frame's end, the last sample given to the sound's encoder (the
    /// AAC padding after it is cut by the edit list, so the sound lasts as long as it was given).
    /// With `cut`, a stream's packets that begin at or after its end are left out, and a PCM
    /// packet that runs past it is shortened to it (a WAV kept to a stopped export's last frame).
    static func copy(from fragmented: String, into target: Muxer, ends: [Int32: Int64], cut: Bool = false) throws(PlayheadError) {
        // Read back by the one read rule (a demuxer of the file's picture and sound).
        let input = try Demuxer.open(fragmented, interrupt: InterruptFlag())
        var outputStreams: [Int32: Int32] = [:]
        for index in [input.video?.index, input.audio?.index].compactMap({ $0 }) {
            guard let stream = input.context.stream(at: Int(index)), let parameters = stream.pointee.codecpar else { continue }
            outputStreams[index] = try target.addStream(copying: parameters, timeBase: stream.pointee.time_base)
        }
        input.select(Set(outputStreams.keys))
        try target.writeHeader()
        let packet = try OwnedPacket()
        // Each stream's last packet waits for the next, so the last one can be given its duration.
        var pending: [Int32: OwnedPacket] = [:]
        /// Per stream, how far its first packet's presentation lies after its decoding (the
        /// reordering delay the edit list hides).
        var lead: [Int32: Int64] = [:]
        reading: while true {
            switch input.read(into: packet) {
            case .packet: break
            case .end(let end):
                if let failure = end.failure {
                    throw failure.with(code: .writeFailed, message: "could not read back the fragmented file: \(failure.message)")
                }
                break reading
            }
            let index = packet.pointer.pointee.stream_index
            guard let output = outputStreams[index], let stream = input.context.stream(at: Int(index)) else {
                packet.unref()
                continue
            }
            av_packet_rescale_ts(packet.pointer, stream.pointee.time_base, target.timeBase(of: output))
            let timeBase = target.timeBase(of: output)
            if cut, let end = ends[index], !keep(packet, before: av_rescale_q(end, stream.pointee.time_base, timeBase), stream, timeBase) {
                packet.unref()
                continue
            }
            if lead[index] == nil {
                let p = packet.pointer.pointee
                lead[index] = p.pts != FFmpegConstants.noPTS && p.dts != FFmpegConstants.noPTS ? max(0, p.pts - p.dts) : 0
            }
            if let previous = pending[index] {
                let p = previous.pointer.pointee
                if p.duration <= 0, p.dts != FFmpegConstants.noPTS, packet.pointer.pointee.dts != FFmpegConstants.noPTS {
                    previous.pointer.pointee.duration = packet.pointer.pointee.dts - p.dts
                }
                try target.write(previous.pointer, stream: output)
                av_packet_move_ref(previous.pointer, packet.pointer)
            } else {
                let held = try OwnedPacket()
                av_packet_move_ref(held.pointer, packet.pointer)
                pending[index] = held
            }
        }
        for (index, last) in pending.sorted(by: { $0.key < $1.key }) {
            guard let output = outputStreams[index], let stream = input.context.stream(at: Int(index)) else { continue }
            let p = last.pointer.pointee
            let decodeTime = p.dts != FFmpegConstants.noPTS ? p.dts : p.pts
            if let end = ends[index], decodeTime != FFmpegConstants.noPTS {
                // The track's media lasts from its first decoding time to the last packet's end,
                // and its edit list shows that much from the first presentation time: the last
                // packet in decoding order lasts to the stream's end less the reordering delay.
                let endInOutput = av_rescale_q(end, stream.pointee.time_base, target.timeBase(of: output))
                last.pointer.pointee.duration = max(1, endInOutput - decodeTime - (lead[index] ?? 0))
            }
            try target.write(last.pointer, stream: output)
        }
    }

    /// Whether `packet` (in the output's time base) begins before `end`; a PCM packet counted in
    /// samples that runs past it is shortened to it, whole sample frames.
    private static func keep(
        _ packet: OwnedPacket, before end: Int64, _ stream: UnsafeMutablePointer<AVStream>, _ timeBase: AVRational
    ) -> Bool {
        let p = packet.pointer.pointee
        let start = p.dts != FFmpegConstants.noPTS ? p.dts : p.pts
        guard start != FFmpegConstants.noPTS else { return true }
        guard start < end else { return false }
        guard let parameters = stream.pointee.codecpar, av_get_bits_per_sample(parameters.pointee.codec_id) > 0,
            parameters.pointee.block_align > 0, timeBase.num == 1, timeBase.den == parameters.pointee.sample_rate, p.duration > 0,
            start + p.duration > end
        else { return true }
        let frames = end - start
        packet.pointer.pointee.size = Int32(min(Int64(p.size), frames * Int64(parameters.pointee.block_align)))
        packet.pointer.pointee.duration = frames
        return true
    }
}
