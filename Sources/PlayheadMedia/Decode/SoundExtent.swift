/// Where an item's decoded sound starts and ends on its own timeline, by evidence: its audio
/// decoded to the end (the decoder trims what the stream says to skip — an encoder's delay, a
/// gapless header's padding), the first frame's time and the last frame's end — or the end the
/// container gives, when that is earlier (an edit list trimming the encoder's padding). A declared
/// duration is a hint (a raw AAC stream's is guessed from its first packets' bit rate; an MP3's
/// and an Opus stream's count their padding): a sound-only layer item lasts what it plays.
package struct SoundExtent: Sendable, Hashable {
    package var start: MediaTime
    package var end: MediaTime

    /// The sound `demuxer` reads, if it has no picture, decoded once (``WholeStreamAudio``;
    /// blocking; the demuxer owner's interrupt stops it).
    /// - Parameter demuxer: the item's source.
    /// - Returns: the extent; nil when the item has a picture, no sound, or none that decodes.
    /// - Throws: a failure of the data (cut short, unreadable), `decode.encrypted`, `cancelled`.
    package static func measure(_ demuxer: Demuxer) throws(PlayheadError) -> SoundExtent? {
        // Only an item of sound alone: a picture's frames set its passes.
        guard demuxer.video == nil else { return nil }
        var tally = Tally()
        guard let audio = try WholeStreamAudio.decode(demuxer, { tally.add($0) }),
            var extent = tally.extent(startingAt: audio.startTime ?? .zero)
        else { return nil }
        // A container that says where the sound ends short of the decoder's last sample (an MP4's
        // edit list cutting AAC's end padding) is heeded; one that says more is not believed.
        if let declared = audio.duration, declared.isNumeric, declared > .zero {
            let end = (audio.startTime ?? extent.start) + declared
            if end > extent.start, end < extent.end { extent.end = end }
        }
        return extent
    }

    /// The decoded frames' span, frame by frame.
    struct Tally {
        private var first: MediaTime?
        private var end: MediaTime?
        /// Samples decoded, for frames without times.
        private var samples: Int64 = 0
        private var sampleRate: Int32 = 0

        mutating func add(_ frame: WholeStreamAudio.FrameSpan) {
            guard frame.sampleCount > 0, frame.sampleRate > 0 else { return }
            sampleRate = Int32(clamping: frame.sampleRate)
            let length = MediaTime(value: Int64(frame.sampleCount), timescale: sampleRate)
            if let time = frame.start {
                first = first.map { min($0, time) } ?? time
                end = end.map { max($0, time + length) } ?? time + length
            } else if let last = end {
                end = last + length
            }
            samples += Int64(frame.sampleCount)
        }

        /// The span, or nil when nothing was decoded; frames without times count from `start`.
        func extent(startingAt start: MediaTime) -> SoundExtent? {
            guard samples > 0, sampleRate > 0 else { return nil }
            if let first, let end { return SoundExtent(start: first, end: end) }
            return SoundExtent(start: start, end: start + MediaTime(value: samples, timescale: sampleRate))
        }
    }
}
