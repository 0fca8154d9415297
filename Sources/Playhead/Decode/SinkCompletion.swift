import PlayheadMedia

/// What a session does with an audio sink when its run ends.
///
/// By default a run that completes finishes the sink (its file is written: a ``WAVSink`` put in
/// place, an ``MP4Sink``'s sound ended) and a run that fails or is cancelled gives it up. Several
/// runs that feed one sink one after another (items of a playlist, passes of a loop into one WAV)
/// leave it open, and its owner finishes it after the last.
public enum SinkCompletion: Sendable, Hashable {
    /// Finished when the run completes (a failure to finish fails the run), aborted when it fails
    /// or is cancelled.
    case finish
    /// Begun and written only: the sink's owner finishes it. A run that is cancelled, or cannot
    /// start, still gives it up.
    case leaveOpen
}

extension SinkCompletion {
    /// The one rule for an audio sink when a run ends (``finish``): finished after a run that
    /// completed — a sink that cannot finish fails the run — and given up otherwise, its sound
    /// kept no further than `soundEnd` when given (the end of the run's last frame).
    /// - Parameters:
    ///   - sink: the run's audio sink.
    ///   - status: how the run went.
    ///   - soundEnd: where a run stopped short keeps its sound to, in seconds on the buffers'
    ///     timeline (``SoundEndCutting``); nil: what was written.
    /// - Returns: the run's status, failed when the sink could not finish.
    static func close(_ sink: any AudioSink, after status: DecodeResult.Status, soundEnd: Double? = nil) -> DecodeResult.Status {
        guard status == .completed else {
            if let soundEnd { (sink as? any SoundEndCutting)?.keepSound(until: soundEnd) }
            sink.abort()
            return status
        }
        do throws(PlayheadError) {
            try sink.finish()
            return status
        } catch {
            sink.abort()
            return .failed(error)
        }
    }
}
