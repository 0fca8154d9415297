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
    private var audios: [CompositionLayer.ID: LayerAudio] = [:]
    /// The next output sample.
    private(set) var position: Int64 = 0
    private var scratch: [Int16] = []
    private var sum: [Int32] = []
    /// The first layer whose sound failed (it is silent from then on).
    private(set) var failure: PlayheadError?

    init(format: AudioStreamInfo, interrupt: InterruptFlag) {
        self.format = format
        self.interrupt = interrupt
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
    func mix(upTo time: MediaTime, layers: [LayerReader], into out: inout [Int16]) throws(PlayheadError) {
        let end = sample(at: time)
        guard end > position else { return }
        let count = Int(end - position) * format.channelCount
        sum.removeAll(keepingCapacity: true)
        sum.append(contentsOf: repeatElement(0, count: count))
        for layer in layers where layer.passes.contains(where: \.audible) || audios[layer.id] != nil {
            // A layer's sound starts where the mix is when it is first heard.
            let audio = audios[layer.id] ?? LayerAudio(format: format, interrupt: interrupt, position: position)
            audios[layer.id] = audio
            scratch.removeAll(keepingCapacity: true)
            try audio.samples(upTo: end, passes: layer.passes, into: &scratch)
            if failure == nil { failure = audio.failure }
            for i in 0..<min(count, scratch.count) { sum[i] += Int32(scratch[i]) }
        }
        out.reserveCapacity(out.count + count)
        for value in sum { out.append(Int16(clamping: value)) }
        position = end
        // A removed layer whose last pass has been mixed is done with.
        let present = Set(layers.map(\.id))
        for id in audios.keys where !present.contains(id) { audios[id] = nil }
    }
}
