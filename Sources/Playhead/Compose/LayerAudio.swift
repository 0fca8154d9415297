import Foundation
import PlayheadMedia

/// One pass of a layer through one of its items, as its timeline played it: where on the layer's
/// timeline it began, from what time of the item, and how long it lasted (nil while it plays).
struct LayerPass: Sendable {
    /// The pass's number on its layer (0 for the first): passes already played may be forgotten.
    var number: Int
    var item: Int
    var layerStart: MediaTime
    /// The item's time at the pass's start (its time range's start, or its first frame).
    var sourceStart: MediaTime?
    var length: MediaTime?
    /// The asset whose sound plays in the pass (the item's, a filler's); nil: silence.
    var asset: Asset?
    /// The layer gave the composition's sound when the pass began.
    var audible = false
    /// A filler slot in place of a failed item.
    var filler = false
    /// When the pass began on the wall clock (for an as-run log).
    var wallClockStart: Date?
}

/// The audio of the one layer a composition takes its sound from, following that layer's own
/// timeline: each pass of the layer's video (loops, playlist items, time ranges) brings the
/// same span of its item's audio, cut where the pass ended, so a loop's seam is as exact in the
/// sound as in the picture; before its first sample, after its content ends, or where an item
/// has no audio, silence. Samples are asked for in order, by output sample numbers.
///
/// Not `Sendable`: owned by the compositor's render thread.
final class LayerAudio {
    let format: AudioStreamInfo
    private let interrupt: InterruptFlag
    private let preparer: ItemPreparer
    /// Where the composition's samples stand: the next sample asked for.
    private(set) var position: Int64
    private var reader: AudioPullReader?
    /// The number of the pass whose audio `reader` reads.
    private var readerPass: Int?
    /// The first failure (the audio then stays silent); reported with the layer.
    private(set) var failure: PlayheadError?
    /// The sources that have no sound (silent where they play).
    private(set) var soundless: Set<String> = []

    /// The sound of one layer, from output sample `position` on (a layer added while rendering
    /// starts where it is added).
    init(format: AudioStreamInfo, interrupt: InterruptFlag, preparer: ItemPreparer, position: Int64 = 0, loudness: LoudnessTable? = nil) {
        self.format = format
        self.preparer = preparer
        self.interrupt = interrupt
        self.position = position
        self.loudness = loudness
    }

    /// Each item brought to a loudness target (nil: as it is).
    private let loudness: LoudnessTable?
    /// The gain of the pass being read.
    private var gain: Float = 1

    /// The output sample at layer time `time` (rounded to the nearest).
    func sample(at time: MediaTime) -> Int64 { Int64((time.seconds * Double(format.sampleRate)).rounded()) }

    /// Appends the samples from ``position`` up to `end` (interleaved) to `out`, reading each
    /// pass of `passes` (the layer's timeline so far; the last may still be playing) over its span.
    func samples(upTo end: Int64, passes: [LayerPass], into out: inout [Int16]) throws(PlayheadError) {
        let channels = format.channelCount
        while position < end {
            // The pass playing at `position`: the last one begun at or before it.
            let index = passes.lastIndex { sample(at: $0.layerStart) <= position }
            guard let index else {
                try silence(until: min(end, passes.first.map { sample(at: $0.layerStart) } ?? end), into: &out, channels: channels)
                continue
            }
            let pass = passes[index]
            let passEnd = pass.length.map { sample(at: pass.layerStart + $0) }
            let until = min(end, passEnd ?? end, index + 1 < passes.count ? sample(at: passes[index + 1].layerStart) : end)
            guard until > position else {
                // A pass of no length, or ended before `position`: after it, silence up to the next.
                let next = index + 1 < passes.count ? sample(at: passes[index + 1].layerStart) : end
                try silence(until: max(position + 1, min(end, next)), into: &out, channels: channels)
                continue
            }
            if failure == nil, readerPass != pass.number { try open(pass) }
            let count = Int(until - position)
            if let reader {
                do throws(PlayheadError) {
                    let from = out.count
                    try reader.read(count, into: &out)
                    if gain != 1 { Self.scale(&out, from: from, by: gain) }
                } catch {
                    if error.code == .cancelled { throw error }
                    failure = error
                    self.reader = nil
                    out.append(contentsOf: SampleBlocks.zeros(count * channels))
                }
            } else {
                out.append(contentsOf: SampleBlocks.zeros(count * channels))
            }
            position = until
        }
    }

    /// Opens the reader of `pass`'s sound at ``position``. A pass of a layer that gives no sound,
    /// or of nothing (a filler slot without a filler), or that ended before its item opened, is
    /// silent. In a channel an item not opened yet is silent for now and tried again with the
    /// next samples, joining its pass where it is.
    private func open(_ pass: LayerPass) throws(PlayheadError) {
        reader = nil
        guard pass.audible, let asset = pass.asset else {
            readerPass = pass.number
            return
        }
        guard let sourceStart = pass.sourceStart else {
            // The picture has not opened the item yet; a pass that ended so is silent.
            if pass.length != nil { readerPass = pass.number }
            return
        }
        do throws(PlayheadError) {
            // Into the pass already (the first sample after a pass that began between two samples).
            let into = MediaTime(value: max(0, position - sample(at: pass.layerStart)), timescale: Int32(format.sampleRate))
            guard let demuxer = try preparer.take(asset, interrupt: interrupt) else { return }
            readerPass = pass.number
            reader = try AudioPullReader(asset: asset, demuxer: demuxer, start: sourceStart + into, format: format, preparer: preparer)
            gain = loudness?.gain(for: asset) ?? 1
        } catch {
            if error.code == .cancelled { throw error }
            readerPass = pass.number
            // An item without audio is silent; a filler's failure too; any other failure ends
            // the layer's sound.
            if error.code == .noStreams { soundless.insert(asset.source) } else if !pass.filler { failure = error }
            reader = nil
        }
    }

    /// Multiplies the samples from `from` on by `gain`, clipped to 16 bits.
    static func scale(_ samples: inout [Int16], from: Int, by gain: Float) {
        samples.withUnsafeMutableBufferPointer { buffer in
            for i in from..<buffer.count {
                let value = Float(buffer[i]) * gain
                buffer[i] = Int16(value < -32768 ? -32768 : (value > 32767 ? 32767 : value))
            }
        }
    }

    private func silence(until end: Int64, into out: inout [Int16], channels: Int) throws(PlayheadError) {
        guard end > position else { return }
        out.append(contentsOf: SampleBlocks.zeros(Int(end - position) * channels))
        position = end
    }
}

/// Reads one item's audio from a time on, in the composition's format, as many samples as asked
/// each time: decoded by the one ``AudioStage`` (resampled, trimmed to the sample, damage decoded
/// past), with silence where the audio starts late, jumps ahead, or has ended.
final class AudioPullReader {
    private let asset: Asset
    private let demuxer: Demuxer
    private let preparer: ItemPreparer
    private let stage: AudioStage
    private let collector = SampleCollector()
    private let packet: OwnedPacket
    private let channels: Int
    /// The next sample to hand out, in output samples on the item's timeline.
    private var next: Int64
    private var ended = false

    /// Reads `asset`'s sound from `start` over `demuxer` (opened by `preparer`, given back to it
    /// when done, or when this throws).
    init(asset: Asset, demuxer: Demuxer, start: MediaTime, format: AudioStreamInfo, preparer: ItemPreparer) throws(PlayheadError) {
        do throws(PlayheadError) {
            guard let audio = demuxer.audio else {
                throw PlayheadError(code: .noStreams, message: "no audio track", file: demuxer.source)
            }
            // Encrypted sound is refused as the read rule refuses it (decoded without the key, it is noise).
            if let scheme = demuxer.encryption[audio.index] { throw Encryption.refusal(scheme: scheme, stream: audio.index, file: demuxer.source) }
            demuxer.select([audio.index])
            // The one audio seek rule: every pass starts as the first did (an exact rewind, or a
            // seek with the codec's pre-roll); the stage trims to `start`.
            try SeekRule.positionAudio(demuxer, facts: audio, at: start, scratch: try OwnedPacket())
            stage = try AudioStage(
                demuxer: demuxer, stream: audio.index, format: AudioFormat(sampleRate: format.sampleRate, channelCount: format.channelCount),
                start: start, end: nil, timelineStart: .zero, sink: collector)
            try stage.begin()
        } catch {
            preparer.giveBack(demuxer, of: asset)
            throw error
        }
        do throws(PlayheadError) {
            packet = try OwnedPacket()
        } catch {
            preparer.giveBack(demuxer, of: asset)
            throw error
        }
        self.asset = asset
        self.demuxer = demuxer
        self.preparer = preparer
        channels = format.channelCount
        next = Int64((start.seconds * Double(format.sampleRate)).rounded())
    }

    deinit { preparer.giveBack(demuxer, of: asset) }

    /// Appends `count` samples per channel (interleaved) to `out`.
    func read(_ count: Int, into out: inout [Int16]) throws(PlayheadError) {
        let end = next + Int64(count)
        while next < end {
            if let (start, samples) = collector.first {
                let length = Int64(samples.count / channels)
                if start + length <= next {
                    // Before what is wanted (an overlap after a jump back).
                    collector.removeFirst()
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
                if to == Int(length) { collector.removeFirst() } else { collector.dropFront(to, channels: channels) }
                continue
            }
            if ended {
                out.append(contentsOf: SampleBlocks.zeros(Int(end - next) * channels))
                next = end
                continue
            }
            switch try stage.feedNext(from: demuxer, using: packet) {
            case nil:
                continue
            case let reason?:
                if case .cancelled = reason { throw .cancelled(file: demuxer.source) }
                // The one rule: sound cut short is a failure (reported), not an early silence.
                if let failure = reason.failure { throw failure }
                try stage.finish()
                ended = true
            }
        }
    }
}

/// What an ``AudioStage`` delivers, kept in order for ``AudioPullReader`` (same thread).
final class SampleCollector: AudioSink, Sendable {
    // Locked only to be Sendable (AudioSink's requirement): one thread feeds and drains it.
    private let buffers = Locked<[(start: Int64, samples: [Int16])]>([])

    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}

    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        let start = buffer.presentationTime.value * Int64(buffer.sampleRate) / Int64(buffer.presentationTime.timescale)
        buffers.withLock { $0.append((start, Array(buffer.samples))) }
    }

    func finish() throws(PlayheadError) {}
    func abort() {}

    var first: (start: Int64, samples: [Int16])? { buffers.withLock { $0.first } }
    func removeFirst() { buffers.withLock { _ = $0.removeFirst() } }

    /// Drops the first `frames` samples per channel of the first buffer.
    func dropFront(_ frames: Int, channels: Int) {
        buffers.withLock { list in
            guard !list.isEmpty else { return }
            list[0].samples.removeFirst(min(list[0].samples.count, frames * channels))
            list[0].start += Int64(frames)
        }
    }
}
