import PlayheadMedia

/// How a segment begins, as the demux thread worked it out after positioning the demuxer: what
/// the decoders select, and where the segment's media timeline starts.
struct SegmentStart: Sendable, Hashable {
    var segment: Segment
    /// The video decoder's start selection.
    var selection: StartSelection
    /// The media time placed at the segment's start on a player's timeline (video and audio are
    /// both placed from it, which keeps them together).
    var timelineStart: MediaTime
    /// Audio before this is dropped, to the sample (nil: from the beginning of the data).
    var audioStart: MediaTime?
    /// Audio from this on is not delivered: the segment's end time, or where its frame limit
    /// will stop the video (nil: to the end of the data).
    var audioEnd: MediaTime?
    /// The demuxer moved to a point other than the data's start: a start that lands after the
    /// frame asked for is retried from the start (as the image reader does).
    var mayRetryFromTheStart = false
}

/// What a slot carries: a packet, or a marker that orders a segment's start or end among them.
enum SlotContent: Sendable {
    case packet
    case start(SegmentStart)
    case end(DataEnd)
}

/// One slot of a stream's packet pool.
final class PacketSlot {
    let packet: OwnedPacket
    init() throws(PlayheadError) { packet = try OwnedPacket() }
    var segment = 0
    var content = SlotContent.packet
}

/// A converted frame (or a segment marker) waiting for the output thread.
final class CanvasSlot {
    enum Content {
        case frame
        case start(SegmentStart)
        /// The segment's video ended here.
        case end
    }

    let frame: OwnedFrame
    var content = Content.frame
    var segment = 0
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
/// of slots and the two channels that move their numbers (free → ready → free).
struct PacketRoute: Sendable {
    let stream: Int32
    let slots: SlotStorage<PacketSlot>
    let free: SlotChannel
    let ready: SlotChannel

    /// A route with its own pool of `capacity` slots.
    init(stream: Int32, capacity: Int) throws(PlayheadError) {
        self.stream = stream
        var made: [PacketSlot] = []
        for _ in 0..<capacity { made.append(try PacketSlot()) }
        slots = SlotStorage(made)
        free = SlotChannel(capacity: capacity, filledWith: 0..<capacity)
        ready = SlotChannel(capacity: capacity)
    }

    var channels: [SlotChannel] { [free, ready] }

    /// A decoding stage's loop: hands each slot that arrives to `body` (which returns false to
    /// leave), then frees its packet and gives the slot back. Slots of a segment a seek has
    /// superseded are given back unseen. Returns when the route is cancelled or `body` leaves.
    func consume<E: Error>(dropping superseded: SessionControl, _ body: (PacketSlot) throws(E) -> Bool) throws(E) {
        while let slot = ready.receive() {
            let holder = slots[slot]
            defer {
                holder.packet.unref()
                free.send(slot)
            }
            if superseded.isSuperseded(holder.segment) { continue }
            guard try body(holder) else { return }
        }
    }
}
