import PlayheadMedia

extension Asset {
    /// Every cue of one of the asset's subtitle tracks (text: SRT, ASS, WebVTT, mov_text…; a
    /// bitmap track's cues carry their times and ``SubtitleCue/pictureCount``), on the asset's
    /// timeline. Read on one of Playhead's worker threads; cancelling the task stops the read.
    /// - Parameter choice: the track: ``TrackChoice/default`` (the file's default subtitles, as
    ///   FFmpeg picks them), an index, or a language.
    /// - Returns: the track's index and its cues.
    /// - Throws: ``PlayheadError``: `demux.trackNotFound` naming what the file holds,
    ///   `decode.decoderNotFound` naming the codec, the source's failure (`io.truncated`, …),
    ///   `state.cancelled`.
    public nonisolated func subtitles(_ choice: TrackChoice = .default) async throws(PlayheadError) -> SubtitleTrack {
        let flag = InterruptFlag()
        return try await WorkerPool.shared.value("playhead.subtitles", onCancel: { flag.raise() }) { () throws(PlayheadError) in
            let demuxer = try self.openDemuxer(interrupt: flag)
            defer { self.giveBack(demuxer) }
            return try SubtitleTrackReader.cues(choice, demuxer: demuxer)
        }
    }

    /// Writes one of the asset's text subtitle tracks as a file — SubRip, WebVTT or ASS, by
    /// FFmpeg's own encoder and muxer, as `ffmpeg -i FILE -map 0:s:N out.srt` writes it — its times
    /// counted from the asset's start. The file is complete under its name, or not there at all.
    /// - Parameters:
    ///   - choice: the track (as ``subtitles(_:)``).
    ///   - format: srt, vtt or ass (``SubtitleFormat/json`` is the caller's to write from ``subtitles(_:)``).
    ///   - path: where the file goes (written under a temporary name until complete).
    ///   - replacing: whether a file already at `path` may be replaced (default: it is left alone,
    ///     with `output.outputExists`).
    /// - Returns: the track's index, the path and the number of cues.
    /// - Throws: ``PlayheadError``: as ``subtitles(_:)``; `output.encodeFailed` for a bitmap track
    ///   (it has no text); the write's failure (`output.diskFull`, `output.outputExists`, …).
    public nonisolated func writeSubtitles(
        _ choice: TrackChoice = .default, as format: SubtitleFormat, to path: String, replacing: Bool = false
    ) async throws(PlayheadError) -> SubtitleFile {
        let start = try await load(.startTime)
        let flag = InterruptFlag()
        return try await WorkerPool.shared.value("playhead.subtitles", onCancel: { flag.raise() }) { () throws(PlayheadError) in
            let demuxer = try self.openDemuxer(interrupt: flag)
            defer { self.giveBack(demuxer) }
            return try SubtitleTrackReader.write(
                choice, demuxer: demuxer, format: format, to: path, replacing: replacing, origin: start.isNumeric ? start : .zero)
        }
    }
}

extension Asset {
    /// The file's cover picture (an MP3's or an M4A's artwork: ``AssetProperty/coverArt``),
    /// decoded at its own size; nil when it has none. Decoded on one of Playhead's worker threads.
    /// - Returns: the picture, or nil.
    /// - Throws: ``PlayheadError``: the source's open failure; `decode.decoderNotFound` or
    ///   `decode.decodeFailed` when the picture cannot be decoded; `state.cancelled`.
    public nonisolated func coverArtImage() async throws(PlayheadError) -> GeneratedImage? {
        let flag = InterruptFlag()
        return try await WorkerPool.shared.value("playhead.cover", onCancel: { flag.raise() }) { () throws(PlayheadError) in
            let demuxer = try self.openDemuxer(interrupt: flag)
            defer { self.giveBack(demuxer) }
            return try CoverArtDecoder.image(of: demuxer)
        }
    }
}
