import PlayheadMedia

/// The composition's sound: every layer's sound (``LayerAudio``: its passes, each read from its
/// item where the layer gives sound, silence elsewhere) summed sample for sample at unity gain and
/// clipped to 16 bits.
///
/// Mixed here rather than in a libavfilter `amix` graph: the sum is exact and the same on every
/// run; layers come and go while rendering (a live edit adds one) without a filter graph to
/// rebuild; and `amix` divides by its count of inputs by default, so a layer's level would change
/// whenever another starts or stops. Render thread only.
final class SoundMixer {
    let format: AudioStreamInfo
    private let interrupt: InterruptFlag
    private let preparer: ItemPreparer
    private var audios: [CompositionLayer.ID: LayerAudio] = [:]
    /// The next output sample.
    private(set) var position: Int64 = 0
    private var scratch: [Int16] = []
    private var sum: [Int32] = []
    /// The first failure of a layer's sound (the pass that failed is silent from there).
    private(set) var failure: PlayheadError?
    /// Samples given as silence in a realtime render because they were not decoded when their
    /// frame was due, over every layer (a source that stalled).
    private(set) var missed: Int64 = 0

    private let loudness: LoudnessTable?

    init(format: AudioStreamInfo, interrupt: InterruptFlag, preparer: ItemPreparer, loudness: LoudnessTable? = nil) {
        self.format = format
        self.preparer = preparer
        self.interrupt = interrupt
        self.loudness = loudness
    }

    /// The sources, over every layer, that had no sound where they played.
    var soundless: [String] { audios.values.flatMap(\.soundless).sorted() }

    /// The output sample at canvas time `time`.
    func sample(at time: MediaTime) -> Int64 { Int64((time.seconds * Double(format.sampleRate)).rounded()) }

    /// Whether a removed layer's sound is still to be read (its last pass ends after the mix's position).
    func needs(_ layer: LayerReader) -> Bool {
        guard audios[layer.id] != nil, let last = layer.passes.last else { return false }
        return sample(at: last.layerStart + (last.length ?? .zero)) > position
    }

    /// Appends the mix from ``position`` up to canvas time `time` (interleaved) to `out`.
    /// - Parameter deadline: in a realtime render, when the frame is due: a layer's samples not
    ///   decoded by then are silence. Nil: waits for them.
    /// - Throws: `cancelled` when the render was.
    func mix(upTo time: MediaTime, layers: [LayerReader], into out: inout [Int16], until deadline: FrameDeadline? = nil) throws(PlayheadError) {
        let end = sample(at: time)
        guard end > position else { return }
        let count = Int(end - position) * format.channelCount
        var heard = 0
        // Kept at the largest block yet (29.97 fps alternates 1601 and 1602 samples a frame): only
        // the first `count` are zeroed and used.
        if sum.count < count {
            sum = [Int32](repeating: 0, count: count)
        } else {
            sum.withUnsafeMutableBufferPointer { $0[0..<count].update(repeating: 0) }
        }
        for layer in layers where audios[layer.id] != nil || layer.passes.contains(where: \.audible) {
            // A layer's sound starts where the mix is when it is first heard.
            let audio =
                audios[layer.id] ?? LayerAudio(format: format, interrupt: interrupt, preparer: preparer, position: position, loudness: loudness)
            audios[layer.id] = audio
            scratch.removeAll(keepingCapacity: true)
            let missedBefore = audio.missed
            try audio.samples(upTo: end, passes: layer.passes, into: &scratch, until: deadline)
            missed += audio.missed - missedBefore
            if failure == nil { failure = audio.failure }
            let n = min(count, scratch.count)
            scratch.withUnsafeBufferPointer { source in
                sum.withUnsafeMutableBufferPointer { total in
                    for i in 0..<n { total[i] &+= Int32(source[i]) }
                }
            }
            heard += 1
        }
        if heard > 0 {
            out.append(
                contentsOf: sum[0..<count].lazy.map { value in
                    Int16(truncatingIfNeeded: value < -32768 ? -32768 : (value > 32767 ? 32767 : value))
                })
        } else {
            out.append(contentsOf: SampleBlocks.zeros(count))
        }
        position = end
        // A removed layer whose last pass has been mixed is done with.
        if audios.count > layers.count || audios.keys.contains(where: { id in !layers.contains { $0.id == id } }) {
            let present = Set(layers.map(\.id))
            for id in audios.keys where !present.contains(id) { audios[id] = nil }
        }
    }
}

/// Blocks of silence to append from (a contiguous copy, not an element at a time).
enum SampleBlocks {
    private static let block = [Int16](repeating: 0, count: 1 << 16)

    /// `count` zero samples, as a slice of the shared block (no copy made for up to a block).
    static func zeros(_ count: Int) -> ArraySlice<Int16> {
        if count <= block.count { return block[0..<count] }
        return ArraySlice(repeating: 0, count: count)
    }
}
