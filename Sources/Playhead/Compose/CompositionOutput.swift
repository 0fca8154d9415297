import Dispatch
import PlayheadMedia

/// The output thread of a composition: owns the sink (every call to it is made here, in order:
/// `begin`, `write` per frame, then `finish` or `abort`) and writes each picture the render
/// thread sends while the next one is drawn. Pictures travel by number through two
/// ``SlotChannel``s, so whoever holds a number owns that picture.
final class CompositionOutput: Sendable {
    let free: SlotChannel
    let ready: SlotChannel
    private let done = DispatchSemaphore(value: 0)
    private let result = Locked<(written: Int, error: PlayheadError?, late: Int, lateness: LatenessHistogram)>((0, nil, 0, LatenessHistogram()))
    private let abortRequested = Locked(false)
    /// With pacing: the clock and the time frame 0 was written at (nil until then).
    private let pacing: (any PlaybackClock)?
    private let origin = Locked<Duration?>(nil)
    private let canvas: CompositionCanvas

    /// With `pacing`, frame *n* is written no sooner than *n / rate* after the first; one written
    /// more than half a frame after that is late (counted, never dropped).
    /// The sound that goes with each picture (the samples up to its time; none without sound),
    /// travelling with the picture's number.
    let sounds: [SlotSound]

    /// Told how late each paced frame was written (seconds, 0 when on time), on the output thread.
    private let onLate: (@Sendable (Double) -> Void)?
    /// Raised when the render is cancelled: a frame a sink waits to hand on is then abandoned.
    private let interrupt: InterruptFlag?

    init(
        sink: SoleOwner<any FrameSink>, pictures: [OwnedFrame], canvas: CompositionCanvas, pixelFormat: OutputPixelFormat,
        pacing: (any PlaybackClock)?,
        audio: AudioStreamInfo?, interrupt: InterruptFlag? = nil, onLate: (@Sendable (Double) -> Void)? = nil
    ) {
        self.onLate = onLate
        self.interrupt = interrupt
        self.pacing = pacing
        self.canvas = canvas
        let sounds = pictures.map { _ in SlotSound() }
        self.sounds = sounds
        free = SlotChannel(capacity: pictures.count, filledWith: 0..<pictures.count)
        ready = SlotChannel(capacity: pictures.count)
        // Both threads hold the array, never the same picture at once: the render thread draws
        // picture k only between receiving k from `free` and sending it on `ready`, the output
        // thread reads it only between receiving k from `ready` and sending it back on `free`;
        // each hand-over goes through a channel's mutex, which orders the memory accesses.
        let shared = SoleOwner(handingOver: pictures)
        WorkerPool.shared.run("playhead.compose.output") { [self] in
            write(into: sink.value, pictures: shared.value, canvas: canvas, pixelFormat: pixelFormat, pacing: pacing, audio: audio)
            done.signal()
        }
    }

    private func write(
        into sink: any FrameSink, pictures: [OwnedFrame], canvas: CompositionCanvas, pixelFormat: OutputPixelFormat,
        pacing clock: (any PlaybackClock)?, audio: AudioStreamInfo?
    ) {
        var written = 0
        var samplesWritten: Int64 = 0
        var origin: Duration?
        let halfFrame = canvas.time(ofFrame: 1).seconds / 2
        let soundSink = audio == nil ? nil : sink as? any AudioCarryingFrameSink
        do throws(PlayheadError) {
            if let audio, let soundSink { try soundSink.prepareAudio(audio) }
            let whole = PixelRect(size: canvas.size)
            try sink.begin(
                FrameStreamInfo(
                    source: "composition", size: canvas.size, pixelFormat: pixelFormat, frameRate: canvas.frameRate.value,
                    layout: FrameLayout(canvas: canvas.size, content: whole, sourceCrop: whole, displayedCrop: whole, orientation: .identity),
                    timescale: Int32(canvas.frameRate.numerator)))
            while let slot = ready.receive() {
                let sound = sounds[slot]
                guard sound.hasPicture else {
                    // The sound after the last picture.
                    if let audio, let soundSink { try Self.write(sound, of: audio, at: &samplesWritten, into: soundSink) }
                    sound.samples.removeAll(keepingCapacity: true)
                    free.send(slot)
                    continue
                }
                var frame = VideoFrame(
                    presentationTime: canvas.time(ofFrame: written), duration: canvas.time(ofFrame: 1), index: written,
                    source: "composition", size: canvas.size, pixelFormat: pixelFormat, pixelFormatName: pixelFormat.rawValue,
                    picture: pictures[slot], interrupt: interrupt)
                // The render thread draws into a picture only once no consumer references it
                // (`Compositor.render` renews it otherwise): an encoder may keep it uncopied.
                frame.sharable = true
                if let clock {
                    let start = origin ?? clock.now()
                    if origin == nil { self.origin.withLock { $0 = start } }
                    origin = start
                    let due = Self.clockTime(canvas.time(ofFrame: written).seconds, after: start)
                    let now = clock.now()
                    if now < due { clock.sleep(for: due - now) }
                    let lateness = (clock.now() - due).seconds
                    result.withLock {
                        $0.lateness.record(max(0, lateness))
                        if lateness > halfFrame { $0.late += 1 }
                    }
                    onLate?(max(0, lateness))
                }
                try sink.write(frame)
                if let audio, let soundSink { try Self.write(sound, of: audio, at: &samplesWritten, into: soundSink) }
                // Emptied before the number goes back: then the render thread fills it again.
                sound.samples.removeAll(keepingCapacity: true)
                written += 1
                result.withLock { $0.written = written }
                free.send(slot)
            }
            if abortRequested.withLock({ $0 }) {
                sink.abort()
            } else {
                try sink.finish()
            }
        } catch {
            sink.abort()
            result.withLock { $0.error = error }
            // The render thread stops at its next picture.
            free.cancel()
        }
    }

    private static func write(
        _ sound: SlotSound, of audio: AudioStreamInfo, at position: inout Int64, into sink: any AudioCarryingFrameSink
    ) throws(PlayheadError) {
        let frames = sound.samples.count / max(1, audio.channelCount)
        guard frames > 0 else { return }
        try sound.samples.withUnsafeBufferPointer { (samples) throws(PlayheadError) in
            try sink.writeAudio(
                AudioBuffer(
                    samples: samples, frameCount: frames, channelCount: audio.channelCount, sampleRate: audio.sampleRate,
                    presentationTime: MediaTime(value: position, timescale: Int32(audio.sampleRate))))
        }
        position += Int64(frames)
    }

    /// How long the layers of frame `n` may wait for their pictures on the pacing clock: until a
    /// quarter of a frame before its time (counted from when the first frame was written — or,
    /// until it is, from when it was sent; a frame written more than half a frame after its time
    /// is late): nil without pacing, and for the first frame (the start waits for its first
    /// pictures).
    func deadline(ofFrame n: Int) -> FrameDeadline? {
        guard let pacing, n > 0 else { return nil }
        let start = origin.withLock { origin -> Duration in
            if let origin { return origin }
            // Sent just now (the render draws frame 1 after sending frame 0): about when it is written.
            let sent = pacing.now()
            origin = sent
            return sent
        }
        // A quarter of a frame before its time: what the frame still needs (converting, sound,
        // the hand-over) fits before it would be late.
        let seconds = canvas.time(ofFrame: n).seconds - canvas.time(ofFrame: 1).seconds / 4
        guard seconds.isFinite, seconds < 9e9 else { return nil }
        return FrameDeadline(clock: pacing, due: Self.clockTime(seconds, after: start))
    }

    /// The clock time `seconds` after `start`, to the nanosecond.
    private static func clockTime(_ seconds: Double, after start: Duration) -> Duration {
        start + .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// No more pictures: waits for the output thread to write what was sent and to finish the
    /// sink (or abort it). Returns the frames written and the sink's error, if any.
    func finish(abort: Bool) -> (written: Int, error: PlayheadError?, late: Int, lateness: LatenessHistogram) {
        abortRequested.withLock { $0 = abort }
        ready.close()
        done.wait()
        return result.withLock { $0 }
    }
}

/// The samples that travel with one picture number: filled by the render thread while it holds
/// the number, read by the output thread while it does (the channels' mutex orders the two).
final class SlotSound: @unchecked Sendable {
    // @unchecked Sendable: like the pictures, touched only by the holder of its slot number,
    // which passes between the two threads through a SlotChannel (a mutex hand-over).
    var samples: [Int16] = []
    /// False for the last slot sent, which carries only the sound after the last picture.
    var hasPicture = true
}
