import PlayheadMedia

/// A filler playing in place of a failed item for its slot, on the render thread: its frame at
/// each time (looping when the filler is shorter than the slot and its duration is known), or
/// nothing (the background) without a filler or when the filler itself cannot be read — a filler
/// never stops the channel. In a realtime render its picture is decoded as an item's is
/// (``LayerDecodeRequest``): waited for until the frame is due, the last one held meanwhile.
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
    /// The filler's frame at the last time shown (nil: nothing): a reference of its own, as the
    /// reader's frames are reused by a later decode (on a worker, while this one is drawn).
    private(set) var frame: OwnedFrame?
    /// The frame `frame` refers to when there is one, kept for the next reference.
    private var kept: OwnedFrame?
    /// The opened filler's picture facts (the converter is made from them, never from the reader
    /// while a decode is out).
    private var facts: (picture: VideoStreamFacts, source: String)?
    /// A decode out since an earlier frame (realtime): the reader is its worker's until it ends.
    private var inFlight: LayerDecodeRequest?
    var converter: FrameConverter?

    init(asset: Asset?, start: MediaTime, length: MediaTime, interrupt: InterruptFlag, preparer: ItemPreparer) {
        self.preparer = preparer
        self.asset = asset
        self.start = start
        self.length = length
        self.interrupt = interrupt
    }

    deinit {
        guard let reader, let asset else { return }
        let preparer = preparer
        if let inFlight {
            inFlight.abandon { preparer.giveBack(reader.demuxer, of: asset) }
        } else {
            preparer.giveBack(reader.demuxer, of: asset)
        }
    }

    /// Decodes the filler's frame for layer time `time`.
    /// - Parameter deadline: in a realtime render, when the frame is due: a frame not decoded by
    ///   then leaves the last one shown (its decode goes on; a later frame shows its picture once
    ///   it has ended). Nil: waits for it.
    func show(at time: MediaTime, deadline: FrameDeadline? = nil) {
        guard let asset, !broken else {
            frame = nil
            return
        }
        do throws(PlayheadError) {
            if reader == nil {
                // Opened ahead; in a channel, the background shows until it is.
                guard let demuxer = try preparer.take(asset, interrupt: interrupt) else { return }
                do throws(PlayheadError) {
                    let opened = try MediaReader(demuxer: demuxer, threads: 0)
                    reader = opened
                    facts = (opened.facts, opened.source)
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
            if let flight = inFlight {
                // Never waited for again: its picture, once decoded, is shown; the next frame asks anew.
                guard flight.isFinished else { return }
                inFlight = nil
                try keep(try flight.answer())
                return
            }
            let target = itemStart + offset
            if let deadline {
                let request = LayerDecodeRequest(reader: reader, target: target)
                request.start()
                guard request.wait(until: deadline) else {
                    inFlight = request
                    return
                }
                try keep(try request.answer())
            } else {
                try keep(try LayerDecodeRequest.decode(reader, to: target).frame)
            }
        } catch {
            // The filler itself cannot be read: the background shows for the rest of the slot.
            broken = true
            frame = nil
        }
    }

    /// Shows `held`'s frame (nil: nothing) through a reference of its own.
    private func keep(_ held: LayerDecodeRequest.Held?) throws(PlayheadError) {
        guard let held else {
            frame = nil
            return
        }
        let own: OwnedFrame
        if let kept { own = kept } else { own = try OwnedFrame() }
        try own.reference(held.frame)
        kept = own
        frame = own
    }

    /// The converter into the layer's rectangle (made once, for the filler's pictures).
    func converter(layer: CompositionLayer, canvasSize: PixelSize, outputFormat: PictureFormat) throws(PlayheadError) -> FrameConverter {
        if let converter { return converter }
        guard let facts else { throw PlayheadError(code: .invalidState, message: "no filler open", file: asset?.source) }
        let made = LayerReader.converter(facts: facts.picture, source: facts.source, layer: layer, canvasSize: canvasSize, outputFormat: outputFormat)
        converter = made
        return made
    }
}
