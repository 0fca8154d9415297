internal import CFFmpeg

/// The one whole-stream audio decode: a demuxer's audio stream from its first packet to its last
/// through the reader's read rule and one single-threaded decoder, each decoded frame handed to
/// the caller and let go. What measures a whole item's sound (its loudness, where it starts and
/// ends) goes through here, so encryption, damage, cut data and cancellation are treated alike.
package enum WholeStreamAudio {
    /// What a decoded frame says about its place and length.
    package struct FrameSpan: Sendable, Hashable {
        /// Samples per channel.
        package var sampleCount: Int
        /// Samples per second.
        package var sampleRate: Int
        /// Where the frame starts on the stream's timeline (its best-effort timestamp, else its
        /// pts); nil when it has none.
        package var start: MediaTime?
    }

    /// Decodes the audio stream of `demuxer` from its start to its end.
    /// - Parameters:
    ///   - demuxer: the source; its audio stream is selected alone and rewound. Its owner's
    ///     interrupt ends the decode.
    ///   - frame: called with every decoded frame, in order.
    /// - Returns: the stream's facts, or nil when the source has no audio stream (nothing is read).
    /// - Throws: `decode.encrypted` for a protected stream; the data's failure (cut short,
    ///   unreadable) as the read rule judges it; `cancelled` when interrupted; the decoder's
    ///   failure to open; what `frame` throws.
    package static func decode(
        _ demuxer: Demuxer, _ frame: (FrameSpan) throws(PlayheadError) -> Void
    ) throws(PlayheadError) -> AudioStreamFacts? {
        try decodeFrames(demuxer) { (decoded, timeBase) throws(PlayheadError) in
            let f = decoded.pointer.pointee
            guard f.nb_samples > 0, f.sample_rate > 0 else { return }
            let pts = f.best_effort_timestamp != FFmpegConstants.noPTS ? f.best_effort_timestamp : f.pts
            let start = pts == FFmpegConstants.noPTS ? nil : MediaTime(ffmpegTimestamp: pts, timeBase: timeBase)
            try frame(FrameSpan(sampleCount: Int(f.nb_samples), sampleRate: Int(f.sample_rate), start: start?.isNumeric == true ? start : nil))
        }
    }

    /// As ``decode(_:_:)``, for FFmpeg work inside this module (a filter graph fed every frame):
    /// `frame` gets the decoded frame (its content is let go after the call), its stream's time
    /// base, and nil once after the last, to drain. Returns the decoder's context through `opened`
    /// before the first frame.
    static func decodeFrames(
        _ demuxer: Demuxer, opened: (StreamDecoder, AVRational) throws(PlayheadError) -> Void = { _, _ in },
        _ frame: (OwnedFrame, AVRational) throws(PlayheadError) -> Void, drained: () throws(PlayheadError) -> Void = {}
    ) throws(PlayheadError) -> AudioStreamFacts? {
        guard let audio = demuxer.audio, let stream = demuxer.context.stream(at: Int(audio.index)) else { return nil }
        if let scheme = demuxer.encryption[audio.index] { throw Encryption.refusal(scheme: scheme, stream: audio.index, file: demuxer.source) }
        // Chosen first, so that the rewind checks this stream's start.
        demuxer.select([audio.index])
        try demuxer.rewind()
        let decoder = try StreamDecoder(stream: stream, threads: 1, source: demuxer.source)
        let timeBase = stream.pointee.time_base
        try opened(decoder, timeBase)
        let packet = try OwnedPacket()
        let decoded = try OwnedFrame()
        let take: (OwnedFrame) throws(PlayheadError) -> Bool = { (got) throws(PlayheadError) -> Bool in
            defer { av_frame_unref(got.pointer) }
            try frame(got, timeBase)
            return true
        }
        reading: while true {
            switch demuxer.read(into: packet.pointer) {
            case .packet:
                defer { av_packet_unref(packet.pointer) }
                _ = try decoder.decode(packet.pointer, into: decoded, take)
            case .end(let end):
                if case .cancelled = end { throw .cancelled(file: demuxer.source) }
                if let failure = end.failure { throw failure }
                break reading
            }
        }
        _ = try decoder.decode(nil, into: decoded, take)
        try drained()
        return audio
    }
}
