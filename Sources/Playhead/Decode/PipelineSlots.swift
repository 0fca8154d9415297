import CFFmpeg

/// A converted frame waiting for the sink, with its timing.
final class CanvasSlot {
    let frame: OwnedFrame
    var presentationTime = MediaTime.invalid
    var duration = MediaTime.invalid
    var index = 0

    init(frame: OwnedFrame) { self.frame = frame }
}

/// The preallocated packets or canvases of one pipeline, reached by slot number.
///
/// `@unchecked Sendable` is safe here because no slot is ever touched by two threads at once: a
/// thread may touch slot `i` only while it owns number `i`, which it gets from a ``SlotChannel``
/// receive and gives up with a send. The channel's mutex orders each hand-over, so every write a
/// thread made to the slot happens before the next owner's reads. The array itself is immutable.
final class SlotStorage<Slot>: @unchecked Sendable {
    private let slots: [Slot]

    init(_ slots: [Slot]) { self.slots = slots }

    subscript(index: Int) -> Slot { slots[index] }
    var count: Int { slots.count }
}

/// Moves a value that is not `Sendable` to the one thread that will use it.
///
/// `@unchecked Sendable` is safe because it is only made from a `sending` value (the caller kept no
/// usable reference) and is opened by exactly one thread, after which nothing else touches it.
struct SoleOwner<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: sending Value) { self.value = value }

    /// For a value the compiler cannot prove disconnected (it shares a region with objects that
    /// only copied data from it). The caller promises, at the call site, never to touch it again.
    init(handingOver value: Value) { self.value = value }
}

/// One stream's packets on their way from the demux thread to the thread decoding them: a pool
/// of packets and the two channels that move their slot numbers (free → ready → free).
struct PacketRoute: Sendable {
    let stream: Int32
    let packets: SlotStorage<OwnedPacket>
    let free: SlotChannel
    let ready: SlotChannel

    init(stream: Int32, packets: SlotStorage<OwnedPacket>, free: SlotChannel, ready: SlotChannel) {
        self.stream = stream
        self.packets = packets
        self.free = free
        self.ready = ready
    }

    /// A route with its own pool of `capacity` packets.
    init(stream: Int32, capacity: Int) {
        self.init(stream: stream, packets: SlotStorage((0..<capacity).map { _ in OwnedPacket() }),
                  free: SlotChannel(capacity: capacity, filledWith: 0..<capacity), ready: SlotChannel(capacity: capacity))
    }

    var channels: [SlotChannel] { [free, ready] }
}

/// Reads a file's packets past damaged samples, as the ffmpeg tools do: a failed read is noted
/// (the first error is kept) and skipped; reading gives up after 32 failures in a row, or when
/// the failures come at the end of the data. Used by the one thread that owns the format context.
struct TolerantReader {
    let format: FormatContext
    let source: String
    private(set) var firstError: PlayheadError?
    private var consecutiveErrors = 0
    static let maximumConsecutiveErrors = 32

    init(format: FormatContext, source: String) {
        self.format = format
        self.source = source
    }

    /// Reads the next packet into `packet`: true when there is one; false at the end of the data,
    /// when interrupted, or when giving up.
    mutating func next(into packet: UnsafeMutablePointer<AVPacket>, interrupt: InterruptFlag) -> Bool {
        while !interrupt.isRaised {
            let result = av_read_frame(format.pointer, packet)
            if result >= 0 {
                consecutiveErrors = 0
                return true
            }
            if result == FFmpegError.eof || result == FFmpegError.exit || interrupt.isRaised { return false }
            firstError = firstError ?? FFmpegError.error(.readFailed, "part of the file could not be read: it is damaged or truncated",
                                                         function: "av_read_frame", result: result, file: source)
            consecutiveErrors += 1
            if consecutiveErrors >= Self.maximumConsecutiveErrors || format.pointer.pointee.pb?.pointee.eof_reached != 0 { return false }
        }
        return false
    }
}
