import Foundation
import PlayheadMedia
import Synchronization

/// Decodes a file's best audio track alone, resamples it to interleaved signed 16-bit (the
/// source's rate and channel layout unless told otherwise), and hands the buffers to an
/// ``AudioSink``, on a worker thread, with the same reader rules as every session (damage decoded
/// past and counted; the end decided from the container's evidence). ``DecodeSession`` decodes
/// audio beside video from one demuxer; this is for audio on its own. The sink is finished when
/// the run completes, unless the run is told to leave it open (several sessions — queued items,
/// loops — feeding one sink, sample for sample: ``SinkCompletion/leaveOpen``).
public final class AudioSession: Sendable {
    public let source: String
    /// Convert to this format; nil fields keep the source's.
    public let format: AudioFormat
    /// Any damage makes the result `failed` (see ``DecodeConfiguration/strict``).
    public let strict: Bool
    let interrupt = InterruptFlag()
    /// Set by the first `run`: a session runs once.
    private let started = Atomic<Bool>(false)
    /// The run so far (its format; the samples delivered, counted apart without a lock on each
    /// packet), for a cancelled run answered without it.
    private let soFar = Locked(Result(status: .cancelled, frames: 0, sampleRate: 0, channelCount: 0))
    private let framesSoFar = Atomic<Int>(0)
    /// The caller's wait while the run goes on: a cancel answers it after ``RunAnswer/patience``
    /// even when the sink's `write` does not return.
    private let waiting = Locked<RunAnswer<Result>?>(nil)

    /// The asset whose demuxer the session takes (and gives back), when made for one.
    let asset: Asset?

    /// A session that opens `source` itself when it runs.
    /// - Parameters:
    ///   - source: a path, or a URL that FFmpeg's protocols read.
    ///   - format: the format to convert to; nil fields keep the source's.
    ///   - strict: whether any damage makes the result `failed`.
    public init(source: String, format: AudioFormat = AudioFormat(), strict: Bool = false) {
        self.source = source
        self.format = format
        self.strict = strict
        self.asset = nil
    }

    /// A session for an asset — a byte source's, or one already probed (its demuxer is taken,
    /// not opened again).
    /// - Parameters:
    ///   - asset: the asset to decode.
    ///   - format: the format to convert to; nil fields keep the source's.
    ///   - strict: whether any damage makes the result `failed`.
    public init(asset: Asset, format: AudioFormat = AudioFormat(), strict: Bool = false) {
        self.source = asset.source
        self.format = format
        self.strict = strict
        self.asset = asset
    }

    /// How a run went.
    public struct Result: Sendable, Hashable {
        public var status: DecodeResult.Status
        /// Samples per channel delivered.
        public var frames: Int
        public var sampleRate: Int
        public var channelCount: Int
        /// Damaged packets decoded past.
        public var damagedPackets = 0
    }

    /// Decodes to the end. Cancelling the task cancels the session. A session runs once: a second
    /// call returns `failed` with `state.invalidState` at once and leaves its sink alone; so does
    /// a run given a sink that another session, render or player is writing (``FrameSink``).
    /// - Parameters:
    ///   - sink: where the buffers go: begun and written; then finished when the run completes
    ///     (a sink that cannot finish fails the run) and aborted when it fails or is cancelled.
    ///   - completion: ``SinkCompletion/leaveOpen`` to leave finishing the sink to its owner
    ///     (more runs feed it); it is still aborted when the run is cancelled.
    /// - Returns: how the run went: its status (completed, failed with the ``PlayheadError``, or cancelled), the
    ///   samples per channel delivered, their format and the damage met.
    public func run(into sink: some AudioSink, completion: SinkCompletion = .finish) async -> Result {
        // A sink another run is writing is refused before anything touches it.
        let claim: OutputClaim
        do throws(PlayheadError) {
            claim = try OutputClaims.claim([sink], for: OutputWriter("this audio session"), file: source)
        } catch {
            return Result(status: .failed(error), frames: 0, sampleRate: 0, channelCount: 0)
        }
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            claim.release()
            // As a decode session: a second run is refused. The sink is the caller's (it may be
            // the one the first run fed): it is left as it is.
            let refused = PlayheadError(
                code: .invalidState, message: "this session has run already: a session runs once (make a new one)", file: source)
            return Result(status: .failed(refused), frames: 0, sampleRate: 0, channelCount: 0)
        }
        let owner = SoleOwner(handingOver: sink as any AudioSink)
        let answer = RunAnswer<Result> { [self] in
            var result = soFar.withLock { $0 }
            result.frames = framesSoFar.load(ordering: .relaxed)
            return result
        }
        waiting.withLock { $0 = answer }
        return await withTaskCancellationHandler {
            await answer.wait {
                WorkerPool.shared.run("playhead.audio") { [self] in
                    let result = decode(owner.value)
                    // Told once: finished or given up; left open when its owner finishes it,
                    // unless the run was cancelled.
                    let done: Result
                    if completion == .finish {
                        var closed = result
                        closed.status = SinkCompletion.close(owner.value, after: result.status)
                        done = closed
                    } else {
                        if result.status == .cancelled { owner.value.abort() }
                        done = result
                    }
                    waiting.withLock { $0 = nil }
                    // The sink is free before the caller hears of the end (it may use it next).
                    claim.release()
                    answer.answer(done)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops the run promptly: ``run(into:completion:)`` returns a `cancelled` result — after a
    /// second's patience when the sink's `write` does not return (the sink stays claimed until it
    /// does).
    public func cancel() {
        interrupt.raise()
        waiting.withLock { $0 }?.abandon()
    }

    private func decode(_ sink: any AudioSink) -> Result {
        var result = Result(status: .completed, frames: 0, sampleRate: 0, channelCount: 0)
        var tally = SegmentTally()
        do throws(PlayheadError) {
            let demuxer: Demuxer
            if let asset { demuxer = try asset.openDemuxer(interrupt: interrupt) } else { demuxer = try Demuxer.open(source, interrupt: interrupt) }
            defer { asset?.giveBack(demuxer) }
            if let failure = demuxer.audioChoiceFailure { throw failure }
            guard let audio = demuxer.audio else {
                throw PlayheadError(
                    code: .noStreams, message: demuxer.soundTurnedOff ? "the selection turned the sound off (none)" : "no audio track", file: source)
            }
            demuxer.select([audio.index])
            let stage = try AudioStage(
                demuxer: demuxer, stream: audio.index, format: format, start: nil, end: nil, timelineStart: .zero, sink: sink)
            try stage.begin()
            result.sampleRate = stage.info?.sampleRate ?? 0
            result.channelCount = stage.info?.channelCount ?? 0
            soFar.withLock { [result] in
                $0.sampleRate = result.sampleRate
                $0.channelCount = result.channelCount
            }
            let packet = try OwnedPacket()
            while !stage.reachedEnd {
                if let end = try stage.feedNext(from: demuxer, using: packet) {
                    tally.dataEnd = end
                    break
                }
                framesSoFar.store(stage.framesDelivered, ordering: .relaxed)
            }
            // A cancelled run's sink is given up once, by the run (see `run`).
            if tally.dataEnd != .cancelled { try stage.finish() }
            tally.audioFrames = stage.framesDelivered
            tally.demuxDamage = demuxer.damage
            tally.audioDamage = stage.decoder.damage
            result.frames = stage.framesDelivered
            result.damagedPackets = tally.damage.count
            result.status = tally.result(source: source, cancelled: interrupt.isRaised, strict: strict).status
        } catch {
            result.status = interrupt.isRaised ? .cancelled : .failed(error)
        }
        return result
    }
}
