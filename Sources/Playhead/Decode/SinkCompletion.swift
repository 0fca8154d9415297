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
