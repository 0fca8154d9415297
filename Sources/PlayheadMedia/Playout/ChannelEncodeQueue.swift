internal import CFFmpeg
import Dispatch

/// The channel's encoder thread and the few pictures that may wait for it. The composition's
/// output thread writes each picture when it is due (and the sound that follows it); encoding it
/// takes longer for some frames than others (a keyframe, a busy scene), so the picture is copied
/// into a slot of a small pool and the encoder thread takes it from there: a slow frame delays
/// nothing that follows as long as the encoder keeps up on average. Only when every slot waits
/// (the machine cannot encode the channel in real time) does a write block, and the frames then
/// written late are counted as such.
///
/// Slots move free → ready → free through two ``SlotChannel``s: the output thread fills a slot
/// between receiving its number from `free` and sending it on `ready`, the encoder thread reads
/// it between receiving it from `ready` and sending it back; each hand-over goes through a
/// channel's mutex, which orders the memory accesses.
package final class ChannelEncodeQueue: Sendable {
    /// A slot: a picture (absent for sound written before the first picture) and the samples
    /// that follow it.
    final class Slot: @unchecked Sendable {
        // @unchecked Sendable: touched only by the holder of its number, which passes between the
        // two threads through a SlotChannel (a mutex hand-over).
        let picture: OwnedFrame
        var hasPicture = false
        var samples: [Int16] = []
        var sampleFrames = 0

        init(picture: OwnedFrame) { self.picture = picture }
    }

    /// Pictures that may wait for the encoder (at 25 fps, 0.32 s).
    static let depth = 8

    private let slots: [Slot]
    private let free: SlotChannel
    private let ready: SlotChannel
    private let done = DispatchSemaphore(value: 0)
    /// The encoder thread's failure, once it failed (it then takes no more).
    private let failure = Locked<PlayheadError?>(nil)
    /// The slot the output thread fills now (its number), until the next picture: the output
    /// thread's alone.
    private let current = Locked<Int?>(nil)

    /// Starts the encoder thread: each slot's picture and sound go to `encode` in the order
    /// written. Pictures are `size` in 4:2:0.
    init(size: PixelSize, encode: @escaping @Sendable (Slot) throws(PlayheadError) -> Void) throws(PlayheadError) {
        var made: [Slot] = []
        for _ in 0..<Self.depth { made.append(Slot(picture: try OwnedFrame(size: size, format: AV_PIX_FMT_YUV420P))) }
        slots = made
        free = SlotChannel(capacity: Self.depth, filledWith: 0..<Self.depth)
        ready = SlotChannel(capacity: Self.depth)
        WorkerPool.shared.run("playhead.channel.encode") { [self] in
            while let number = ready.receive() {
                let slot = slots[number]
                do throws(PlayheadError) {
                    try encode(slot)
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                    // The output thread's next write finds no free slot and throws this.
                    free.cancel()
                    break
                }
                // A referenced picture goes back to its producer now, not when the slot is next filled.
                slot.picture.releaseShared()
                free.send(number)
            }
            done.signal()
        }
    }

    /// Puts `frame` in a free slot (waiting for one while every slot waits for the encoder): a
    /// reference to its buffers when its producer allows (``VideoFrame/sharable``, a
    /// composition's pictures), else a copy.
    package func write(_ frame: VideoFrame) throws(PlayheadError) {
        let number = try nextSlot()
        // The encoder may still hold the slot's last picture: a copy then goes in fresh buffers.
        try slots[number].picture.hold(frame, file: "channel")
        slots[number].hasPicture = true
    }

    /// Adds `buffer`'s samples after the picture written last.
    package func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) {
        let number: Int
        if let held = current.withLock({ $0 }) { number = held } else { number = try nextSlot(sendingCurrent: false) }
        let slot = slots[number]
        slot.samples.append(contentsOf: buffer.samples)
        slot.sampleFrames += buffer.frameCount
    }

    /// Sends what is written, waits until the encoder thread has taken everything, and throws its
    /// failure if it failed.
    package func finish() throws(PlayheadError) {
        if let number = current.withLock({ slot -> Int? in
            defer { slot = nil }
            return slot
        }) {
            ready.send(number)
        }
        ready.close()
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Stops the encoder thread at once (what waits is dropped).
    package func abort() {
        ready.cancel()
        free.cancel()
        done.wait()
    }

    /// Sends the slot being filled (if any) and takes a free one, emptied.
    private func nextSlot(sendingCurrent: Bool = true) throws(PlayheadError) -> Int {
        if sendingCurrent,
            let number = current.withLock({ slot -> Int? in
                defer { slot = nil }
                return slot
            })
        {
            ready.send(number)
        }
        guard let number = free.receive() else {
            throw failure.withLock { $0 } ?? PlayheadError(code: .invalidState, message: "the channel's encoder has stopped", file: "channel")
        }
        let slot = slots[number]
        slot.hasPicture = false
        slot.samples.removeAll(keepingCapacity: true)
        slot.sampleFrames = 0
        current.withLock { $0 = number }
        return number
    }
}
