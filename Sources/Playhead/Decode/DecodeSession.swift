import Foundation
import Logging
import PlayheadMedia
import Synchronization

/// Decodes a source's best video track into a ``FrameSink``, and its best audio track into an
/// ``AudioSink`` when one is given, from one demuxer, on worker threads: demuxing on one;
/// decoding (with FFmpeg's frame threads) and scaling into the canvas on another; the frame sink
/// on a third; audio decoding and resampling on a fourth. Bounded pools of packets and canvases
/// between them give back-pressure; nothing is allocated per frame once running. A file with
/// audio and no video plays its audio alone (the frame sink gets no frames).
///
/// Damaged data is decoded past and counted (``DecodeResult/damagedPackets``); a file that stops
/// short of what its container promises fails as truncated, with the evidence. The frame sink is
/// finished by the session when it completes and aborted otherwise; the audio sink is left to its
/// owner (several sessions — queued items, loops — may feed one audio sink, sample for sample).
///
/// ```swift
/// let session = DecodeSession(source: "clip.mp4", configuration: .init(outputSize: .init(width: 640, height: 360)))
/// let result = await session.run(into: ImageSequenceSink(directory: "out", format: .png))
/// ```
public final class DecodeSession: Sendable {
    public let source: String
    public let configuration: DecodeConfiguration
    /// The asset whose opened demuxer the session takes (and gives back), when made for one.
    let asset: Asset?
    let interrupt = InterruptFlag()
    let control: SessionControl
    private let logger: Logger
    private let channels = Locked<[SlotChannel]>([])
    private let cancelled = Atomic<Bool>(false)
    /// A session runs once: a second `run` (at the same time or after) is refused, never given
    /// part of the first one's frames.
    private let started = Atomic<Bool>(false)
    /// The caller's wait for a run once, while it runs: a cancel answers it after
    /// ``RunAnswer/patience`` even when a stage is still inside the caller's own sink.
    private let waiting = Locked<RunAnswer<DecodeResult>?>(nil)

    /// A session that opens `source` itself when it runs.
    /// - Parameters:
    ///   - source: a path, or a URL that FFmpeg's protocols read.
    ///   - configuration: the canvas, the span of frames wanted and the decoder's resources.
    ///   - logger: where the session logs; nil logs nothing.
    public convenience init(source: String, configuration: DecodeConfiguration = DecodeConfiguration(), logger: Logger? = nil) {
        self.init(source: source, asset: nil, configuration: configuration, logger: logger)
    }

    /// A session for an asset: it takes the demuxer the asset's probe left open (a pipe can be
    /// read only once), or an idle one, and gives it back when done.
    /// - Parameters:
    ///   - asset: the asset to decode.
    ///   - configuration: the canvas, the span of frames wanted and the decoder's resources.
    ///   - logger: where the session logs; nil logs nothing.
    public convenience init(asset: Asset, configuration: DecodeConfiguration = DecodeConfiguration(), logger: Logger? = nil) {
        self.init(source: asset.source, asset: asset, configuration: configuration, logger: logger)
    }

    private init(source: String, asset: Asset?, configuration: DecodeConfiguration, logger: Logger?) {
        self.source = source
        self.asset = asset
        self.configuration = configuration
        self.logger = logger ?? Logger(label: "playhead.decode", factory: { _ in SwiftLogNoOpLogHandler() })
        let start = configuration.startTime.flatMap {
            SeekRequest.resolving(time: $0, toleranceBefore: configuration.startToleranceBefore, toleranceAfter: configuration.startToleranceAfter)
        }
        control = SessionControl(
            mode: .once, routes: [],
            first: Segment(
                number: 0, start: start, end: configuration.endTime,
                frameLimit: configuration.frameLimit, presentationPosition: nil))
    }

    /// Decodes to the end (or the frame limit, or the end time) and returns how it went.
    /// Cancelling the calling task cancels the session. The sink is used on the session's own
    /// output thread. A session runs once: a second call returns `failed` with
    /// `state.invalidState` at once. A run given an output another session, render or player is
    /// writing is refused the same way: that output is left untouched, the others are aborted
    /// (an output takes one writer at a time; one after another is fine). Cancelled, a run answers
    /// after a second's patience even when the sink's `write` does not return: its outputs stay
    /// claimed until the stage inside it lets go, and are then aborted.
    /// - Parameters:
    ///   - sink: where the frames go: finished when the session completes, aborted otherwise.
    ///   - audio: where the best audio track's buffers go, when given: begun and written, then
    ///     finished when the session completes (also when the source has no sound: an
    ///     ``MP4Sink``'s ``MP4Sink/soundInput()`` then makes a file of picture alone) and aborted
    ///     otherwise. Nil: the audio is not decoded.
    ///   - audioCompletion: ``SinkCompletion/leaveOpen`` to leave finishing the audio sink to its
    ///     owner (more sessions feed it).
    /// - Returns: how the session ended (completed, failed with the ``PlayheadError``, or cancelled) and its counts;
    ///   an audio sink that cannot finish fails it.
    public func run(into sink: sending some FrameSink, audio: (any AudioSink)? = nil, audioCompletion: SinkCompletion = .finish) async -> DecodeResult
    {
        // Outputs another run is writing are refused before anything touches them (the session is
        // not spent: it may run again with outputs of its own).
        let claim: OutputClaim
        do throws(PlayheadError) {
            claim = try OutputClaims.claimOrGiveUp(frames: sink, sound: audio, for: OutputWriter("this session"), file: source)
        } catch {
            var refused = DecodeResult(source: source)
            refused.status = .failed(error)
            return refused
        }
        // The outputs stay claimed until the stages truly let go of them (after a cancelled run
        // answered, a stage may still be inside the sink).
        return await start(
            mode: .once, sink: SoleOwner(sink as any FrameSink), audio: audio, audioCompletion: audio == nil ? .leaveOpen : audioCompletion,
            onSegmentEnd: nil, whenStagesEnd: { claim.release() })
    }

    /// Runs until stopped, reporting the end of every segment (the start, then each seek): the
    /// session of a player's item, which seeks in place.
    func play(
        into sink: SoleOwner<any FrameSink>, audio: (any AudioSink)?, onSegmentEnd: @escaping @Sendable (DecodeResult) -> Void
    ) async -> DecodeResult {
        // A player's audio sink outlives its items: the player finishes it.
        await start(mode: .interactive, sink: sink, audio: audio, audioCompletion: .leaveOpen, onSegmentEnd: onSegmentEnd, whenStagesEnd: {})
    }

    /// Runs the pipeline. A run once that is cancelled answers within ``RunAnswer/patience`` even
    /// when a stage cannot stop (it is inside the caller's sink); a player's item session waits
    /// for its stages (its player opens the next item's output only once they let go).
    /// - Parameter whenStagesEnd: called once, when no stage touches the outputs any more.
    private func start(
        mode: SessionControl.Machine.Mode, sink: SoleOwner<any FrameSink>, audio: (any AudioSink)?, audioCompletion: SinkCompletion,
        onSegmentEnd: (@Sendable (DecodeResult) -> Void)?, whenStagesEnd: @escaping @Sendable () -> Void
    ) async -> DecodeResult {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            defer { whenStagesEnd() }
            var refused = DecodeResult(source: source)
            refused.status = .failed(
                PlayheadError(code: .invalidState, message: "this session has run already: a session runs once (make a new one)", file: source))
            // The sink it was given is told, as for any run that did not complete (a stream's
            // consumer gets its end rather than waiting for ever).
            sink.value.abort()
            return refused
        }
        if let problem = configuration.refusal(source: source) {
            defer { whenStagesEnd() }
            var refused = DecodeResult(source: source)
            refused.status = .failed(problem)
            sink.value.abort()
            return refused
        }
        // The handlers hold what they need, not the session (the control is the session's own).
        let interrupt = self.interrupt, channels = self.channels
        control.configure(
            mode: mode,
            onStop: {
                interrupt.raise()
                for channel in channels.withLock({ $0 }) { channel.cancel() }
            }, onSegmentEnd: onSegmentEnd)
        let pipeline = DecodePipeline(session: self, control: control, logger: logger, once: mode == .once)
        let answer = RunAnswer<DecodeResult> {
            var result = pipeline.report()
            if result.status == .completed { result.status = .cancelled }
            return result
        }
        if mode == .once { waiting.withLock { $0 = answer } }
        return await withTaskCancellationHandler {
            await answer.wait {
                WorkerPool.shared.run("playhead.demux") { [self] in
                    let result = pipeline.run(sink: sink, audio: audio, finishingAudio: audioCompletion == .finish)
                    waiting.withLock { $0 = nil }
                    // Let go of the outputs before answering: the caller may use them next.
                    whenStagesEnd()
                    answer.answer(result)
                }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// Moves the session to `request` in place (the demuxer seeks, the decoders are flushed;
    /// nothing is reopened) and returns the time of the first frame shown from there — nil when a
    /// newer seek superseded it, the segment ended without a frame, or the session stopped.
    /// `presentationPosition` places the new segment on a player's timeline.
    func seek(to request: SeekRequest, end: MediaTime?, presentationPosition: Double?) async -> MediaTime? {
        await control.seek(request, end: end, frameLimit: nil, presentationPosition: presentationPosition)
    }

    /// Stops every thread of the session promptly; `run` returns a `cancelled` result.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
        interrupt.raise()
        control.stop()
        for channel in channels.withLock({ $0 }) { channel.cancel() }
        waiting.withLock { $0 }?.abandon()
    }

    /// Ends a session its owner is done with (a player's item that ended): not a cancellation.
    func stop() {
        control.stop()
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    var isStopping: Bool { control.isStopped }

    /// The pipeline registers its channels so that stopping can wake every waiting thread.
    func register(_ list: [SlotChannel]) {
        channels.withLock { $0.append(contentsOf: list) }
        if control.isStopped { for channel in list { channel.cancel() } }
    }
}
