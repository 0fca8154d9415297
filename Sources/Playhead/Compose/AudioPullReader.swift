import Foundation
import PlayheadMedia

/// Reads one item's sound from a time on, in the composition's format, as many samples as asked
/// each time. A worker thread decodes it ahead (``SoundDecode``: the one ``AudioStage`` —
/// resampled, trimmed to the sample, damage decoded past), at most a second past what was taken;
/// the render thread takes the samples in order, with silence where the audio starts late, jumps
/// ahead, or has ended.
///
/// A render that is not paced waits for every sample. A realtime render waits until its frame is
/// due: the samples that have not come by then are silence, and when they come they are dropped
/// (the sound stays in its place) — a source that stalls holds the worker until its stall
/// timeout, never the channel.
///
/// Not `Sendable`: owned by the compositor's render thread.
final class AudioPullReader {
    private let ahead: SoundAhead
    private let channels: Int
    /// The next sample to hand out, in output samples on the item's timeline.
    private var next: Int64
    /// Samples handed out as silence because they had not been decoded when their frame was due.
    private(set) var missed: Int64 = 0

    /// Reads `asset`'s sound from `start` over `demuxer` (opened by `preparer`; given back to it by
    /// the worker when done, or at once when this throws).
    /// - Throws: `noStreams` when the item has no audio, `encrypted` when its audio is encrypted
    ///   (decoded without the key, it is noise); what positioning and decoding meet comes from
    ///   ``read(_:into:until:)``.
    init(asset: Asset, demuxer: Demuxer, start: MediaTime, format: AudioStreamInfo, preparer: ItemPreparer) throws(PlayheadError) {
        guard let audio = demuxer.audio else {
            preparer.giveBack(demuxer, of: asset)
            // The layer gives its sound and the one asked for is not there: a failure, not silence.
            if let failure = demuxer.audioChoiceFailure { throw failure }
            throw PlayheadError(code: .noStreams, message: "no audio track", file: demuxer.source)
        }
        // Encrypted sound is refused as the read rule refuses it.
        if let scheme = demuxer.encryption[audio.index] {
            preparer.giveBack(demuxer, of: asset)
            throw Encryption.refusal(scheme: scheme, stream: audio.index, file: demuxer.source)
        }
        channels = format.channelCount
        next = Int64((start.seconds * Double(format.sampleRate)).rounded())
        ahead = SoundAhead(wanted: next, limit: Int64(format.sampleRate), channels: format.channelCount)
        SoundDecode(asset: asset, demuxer: demuxer, audio: audio, start: start, format: format, preparer: preparer).start(into: ahead)
    }

    /// The worker stops at its next packet and gives the demuxer back.
    deinit { ahead.close() }

    /// Appends `count` samples per channel (interleaved) to `out`.
    /// - Parameters:
    ///   - count: samples per channel.
    ///   - deadline: in a realtime render, when the frame is due: the samples not decoded by
    ///     then are silence (counted in ``missed``). Nil: waits for them.
    /// - Throws: what positioning or decoding met (the sound cut short is a failure, not an early
    ///   silence); `cancelled` when the render was.
    func read(_ count: Int, into out: inout [Int16], until deadline: FrameDeadline? = nil) throws(PlayheadError) {
        let end = next + Int64(count)
        let before = next
        try ahead.take(from: &next, to: end, into: &out, until: deadline)
        if next < end {
            // Not decoded in time: silence in its place.
            out.append(contentsOf: SampleBlocks.zeros(Int(end - next) * channels))
            missed += end - next
            next = end
        }
        assert(next - before == Int64(count))
    }
}

/// The decode of one item's sound on a worker thread, into a ``SoundAhead``: the demuxer
/// positioned by the one audio seek rule, then read packet by packet while the render is less
/// than the buffer's limit behind, until the sound ends, fails, or the render lets go; the
/// demuxer is then given back to the preparer.
///
/// `@unchecked Sendable` is safe because it is made on the render thread and handed whole to one
/// worker by ``start(into:)``: from then on only that worker touches the demuxer, the stage and
/// the packet (the render thread keeps no reference to them), and it alone gives the demuxer back.
final class SoundDecode: @unchecked Sendable {
    private let asset: Asset
    private let demuxer: Demuxer
    private let audio: AudioStreamFacts
    private let start: MediaTime
    private let format: AudioStreamInfo
    private let preparer: ItemPreparer

    init(asset: Asset, demuxer: Demuxer, audio: AudioStreamFacts, start: MediaTime, format: AudioStreamInfo, preparer: ItemPreparer) {
        self.asset = asset
        self.demuxer = demuxer
        self.audio = audio
        self.start = start
        self.format = format
        self.preparer = preparer
    }

    /// Decodes on a worker thread into `ahead`.
    func start(into ahead: SoundAhead) {
        WorkerPool.shared.run("playhead.sound-decode") { [self] in
            let ending = decode(into: ahead)
            // Given back first: the next pass of the same item may take it at once.
            preparer.giveBack(demuxer, of: asset)
            ahead.end(ending)
        }
    }

    /// Positions the demuxer and decodes until the sound ends or fails, or the render lets go.
    /// - Returns: how it ended (nil: the render let go).
    private func decode(into ahead: SoundAhead) -> SoundAhead.Ending? {
        do throws(PlayheadError) {
            demuxer.select([audio.index])
            let packet = try OwnedPacket()
            // The one audio seek rule: every pass starts as the first did (an exact rewind, or a
            // seek with the codec's pre-roll); the stage trims to `start`.
            try SeekRule.positionAudio(demuxer, facts: audio, at: start, scratch: packet)
            let stage = try AudioStage(
                demuxer: demuxer, stream: audio.index, format: AudioFormat(sampleRate: format.sampleRate, channelCount: format.channelCount),
                start: start, end: nil, timelineStart: .zero, sink: ahead)
            try stage.begin()
            while ahead.waitForRoom() {
                guard let reason = try stage.feedNext(from: demuxer, using: packet) else { continue }
                if case .cancelled = reason { throw .cancelled(file: demuxer.source) }
                // The one rule: sound cut short is a failure (reported), not an early silence.
                if let failure = reason.failure { throw failure }
                try stage.finish()
                return .ended
            }
            return nil
        } catch {
            return .failed(error)
        }
    }
}

/// What a sound's worker has decoded and the render thread has not taken yet, in order: the
/// ``AudioStage``'s sink on the worker's side, the samples' source on the render's.
///
/// `@unchecked Sendable` is safe because every stored `var` is read and written only while
/// `condition` is locked.
final class SoundAhead: AudioSink, @unchecked Sendable {
    /// How a sound's decode ended.
    enum Ending {
        case ended
        case failed(PlayheadError)
    }

    private let condition = NSCondition()
    private let channels: Int
    /// How far (in samples) the worker may decode past what the render wants.
    private let limit: Int64
    private var buffers: [(start: Int64, samples: [Int16])] = []
    /// Where the last buffer decoded ends (the worker's position).
    private var decodedEnd: Int64
    /// The render's next sample.
    private var wanted: Int64
    private var ending: Ending?
    private var closed = false

    init(wanted: Int64, limit: Int64, channels: Int) {
        self.wanted = wanted
        decodedEnd = wanted
        self.limit = max(1, limit)
        self.channels = max(1, channels)
    }

    // MARK: The worker's side

    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}

    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        let start = buffer.presentationTime.value * Int64(buffer.sampleRate) / Int64(buffer.presentationTime.timescale)
        let samples = Array(buffer.samples)
        locked {
            guard !closed else { return }
            buffers.append((start, samples))
            decodedEnd = max(decodedEnd, start + Int64(samples.count / channels))
            condition.broadcast()
        }
    }

    func finish() throws(PlayheadError) {}
    func abort() {}

    /// Waits while the worker is `limit` samples past what the render wants.
    /// - Returns: false once the render has let go (the worker stops).
    func waitForRoom() -> Bool {
        locked {
            while !closed, decodedEnd - wanted >= limit { condition.wait() }
            return !closed
        }
    }

    /// The decode ended (nil: the render let go first).
    func end(_ how: Ending?) {
        locked {
            ending = how ?? .ended
            condition.broadcast()
        }
    }

    // MARK: The render's side

    /// The render lets go: the worker stops at its next packet.
    func close() {
        locked {
            closed = true
            buffers = []
            condition.broadcast()
        }
    }

    /// Appends the samples from `next` up to `end` to `out` as they come — silence in a gap of the
    /// sound and after its end — moving `next` on; waits for them until `deadline` (nil: as long as
    /// they take), and leaves `next` short of `end` when it passed.
    /// - Throws: the decode's failure, once the samples before it are taken.
    func take(from next: inout Int64, to end: Int64, into out: inout [Int16], until deadline: FrameDeadline?) throws(PlayheadError) {
        condition.lock()
        defer {
            wanted = next
            condition.broadcast()
            condition.unlock()
        }
        while next < end {
            if let (start, samples) = buffers.first {
                let length = Int64(samples.count / channels)
                if start + length <= next {
                    // Before what is wanted (an overlap after a jump back, or what came too late).
                    buffers.removeFirst()
                    continue
                }
                if start > next {
                    // A gap in the audio: silence until it resumes.
                    let gap = min(start, end) - next
                    out.append(contentsOf: SampleBlocks.zeros(Int(gap) * channels))
                    next += gap
                    continue
                }
                let from = Int(next - start), to = Int(min(start + length, end) - start)
                out.append(contentsOf: samples[(from * channels)..<(to * channels)])
                next += Int64(to - from)
                if to == Int(length) {
                    buffers.removeFirst()
                } else {
                    buffers[0].samples.removeFirst(to * channels)
                    buffers[0].start += Int64(to)
                }
                continue
            }
            switch ending {
            case .ended?:
                out.append(contentsOf: SampleBlocks.zeros(Int(end - next) * channels))
                next = end
                continue
            case .failed(let error)?:
                throw error
            case nil:
                break
            }
            // The worker is asked for more (it may be waiting for room), then waited for.
            wanted = next
            condition.broadcast()
            guard let deadline else {
                condition.wait()
                continue
            }
            // Woken by a buffer, or when the deadline comes (on a clock other than the
            // machine's, looked at again at least every 50 ms).
            let left = deadline.due - deadline.clock.now()
            if left <= .zero { return }
            _ = condition.wait(until: Date().addingTimeInterval(min(Duration.milliseconds(50), left + .microseconds(100)).seconds))
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
