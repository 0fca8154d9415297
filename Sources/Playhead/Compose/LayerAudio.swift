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
    /// The first failure of a pass's sound, reported with the layer: that pass is silent from
    /// where it failed; the next passes play (as the picture passes a failed item over).
    private(set) var failure: PlayheadError?
    /// Samples given as silence in a realtime render because they were not decoded when their
    /// frame was due (a source that stalled).
    private(set) var missed: Int64 = 0
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
    /// - Parameter deadline: in a realtime render, when the frame is due: a pass's samples not
    ///   decoded by then are silence. Nil: waits for them.
    /// - Throws: `cancelled` when the render was (a pass's failure is kept in ``failure``).
    func samples(upTo end: Int64, passes: [LayerPass], into out: inout [Int16], until deadline: FrameDeadline? = nil) throws(PlayheadError) {
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
            if readerPass != pass.number { try open(pass) }
            let count = Int(until - position)
            if let reader {
                let (from, missedBefore) = (out.count, reader.missed)
                do throws(PlayheadError) {
                    try reader.read(count, into: &out, until: deadline)
                } catch {
                    if error.code == .cancelled { throw error }
                    // This pass is silent from where it failed (a filler's failure is not reported:
                    // as when it cannot be opened); the next one opens its own reader.
                    if !pass.filler { failure = failure ?? error }
                    self.reader = nil
                    out.append(contentsOf: SampleBlocks.zeros(from + count * channels - out.count))
                }
                if gain != 1 { Self.scale(&out, from: from, by: gain) }
                missed += reader.missed - missedBefore
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
            // An item without audio is silent; a filler's failure too; any other failure is
            // reported, the pass silent.
            if error.code == .noStreams { soundless.insert(asset.source) } else if !pass.filler { failure = failure ?? error }
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
