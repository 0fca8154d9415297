import PlayheadMedia

/// A filler playing in place of a failed item for its slot, on the render thread: its frame at
/// each time (looping when the filler is shorter than the slot and its duration is known), or
/// nothing (the background) without a filler or when the filler itself cannot be read — a filler
/// never stops the channel.
final class FillerSlot {
    let asset: Asset?
    /// Where the slot begins on the layer's timeline, and how long it lasts.
    let start: MediaTime
    let length: MediaTime
    private let interrupt: InterruptFlag
    private let preparer: ItemPreparer
    private var reader: MediaReader?
    private var itemStart: MediaTime = .zero
    private var duration: MediaTime?
    private var broken = false
    /// The filler's frame at the last time shown (nil: nothing).
    private(set) var frame: OwnedFrame?
    var converter: FrameConverter?

    init(asset: Asset?, start: MediaTime, length: MediaTime, interrupt: InterruptFlag, preparer: ItemPreparer) {
        self.preparer = preparer
        self.asset = asset
        self.start = start
        self.length = length
        self.interrupt = interrupt
    }

    deinit {
        if let reader, let asset { preparer.giveBack(reader.demuxer, of: asset) }
    }

    /// Decodes the filler's frame for layer time `time`.
    func show(at time: MediaTime) {
        frame = nil
        guard let asset, !broken else { return }
        do throws(PlayheadError) {
            if reader == nil {
                // Opened ahead; in a channel, the background shows until it is.
                guard let demuxer = try preparer.take(asset, interrupt: interrupt) else { return }
                do throws(PlayheadError) {
                    let opened = try MediaReader(demuxer: demuxer, threads: 0)
                    reader = opened
                    itemStart = opened.facts.startTime ?? .zero
                    duration = opened.facts.duration
                } catch {
                    preparer.giveBack(demuxer, of: asset)
                    throw error
                }
            }
            guard let reader else { return }
            var offset = time - start
            if let duration, duration.isNumeric, duration > .zero, offset >= duration {
                let seconds = offset.seconds.truncatingRemainder(dividingBy: duration.seconds)
                offset = MediaTime(seconds: seconds, preferredTimescale: 90_000)
            }
            try reader.seek(to: SeekRequest(time: itemStart + offset))
            frame = try reader.selectedFrame()?.frame
        } catch {
            // The filler itself cannot be read: the background shows for the rest of the slot.
            broken = true
            frame = nil
        }
    }

    /// The converter into the layer's rectangle (made once, for the filler's pictures).
    func converter(layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat) throws(PlayheadError) -> FrameConverter {
        if let converter { return converter }
        guard let reader else { throw PlayheadError(code: .invalidState, message: "no filler open", file: asset?.source) }
        let made = LayerReader.converter(for: reader, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat)
        converter = made
        return made
    }
}
