import PlayheadMedia

/// Packets the demux thread read past a stream's full route because another stream was waiting
/// for data: in a file whose picture ends long before its sound, the video decoder holds its last
/// frames until it is told the data ended, and the sound's route — drained at the pace of a
/// realtime player — would otherwise keep the demux thread from ever reaching that end in time
/// (the picture froze two frames early). A bounded read-ahead, as a player's packet queues are.
///
/// Owned by the demux thread alone. Packets keep their order per stream: while a stream has
/// packets here, its next ones queue behind them.
struct PacketOverflow {
    /// The bytes held at most (a read past it waits for the route, as before): about 17 minutes
    /// of 128 kbit/s sound.
    static let defaultLimit = 16 << 20
    /// What a packet costs beyond its media bytes (its struct and buffer reference).
    static let packetOverhead = 256

    let limit: Int
    /// Each stream's packets, oldest first from `head` (taken ones are left behind it until the
    /// queue empties, so that taking one never moves the rest).
    private var queues: [Int32: (packets: [(packet: OwnedPacket, cost: Int)], head: Int)] = [:]
    /// The bytes held, media and overhead.
    private(set) var bytes = 0

    init(limit: Int = Self.defaultLimit) { self.limit = max(0, limit) }

    /// Whether `stream` has no packet waiting here.
    func isEmpty(_ stream: Int32) -> Bool { queues[stream].map { $0.head >= $0.packets.count } ?? true }

    /// Takes `packet`'s data (leaving it blank) behind `stream`'s waiting packets.
    /// - Returns: false, taking nothing, when the packet would pass the byte limit or a packet
    ///   cannot be allocated (the caller waits for the route instead).
    mutating func append(_ packet: OwnedPacket, stream: Int32) -> Bool {
        let cost = packet.byteCount + Self.packetOverhead
        guard bytes + cost <= limit, let held = try? OwnedPacket() else { return false }
        held.move(from: packet)
        queues[stream, default: ([], 0)].packets.append((held, cost))
        bytes += cost
        return true
    }

    /// The oldest packet waiting for `stream`, without taking it.
    func first(_ stream: Int32) -> OwnedPacket? {
        guard let queue = queues[stream], queue.head < queue.packets.count else { return nil }
        return queue.packets[queue.head].packet
    }

    /// Forgets the oldest packet of `stream` (after its data was moved into a route's slot).
    mutating func removeFirst(_ stream: Int32) {
        guard var queue = queues[stream], queue.head < queue.packets.count else { return }
        bytes -= queue.packets[queue.head].cost
        queue.head += 1
        // Emptied: the taken ones go; otherwise they are let go once they are half the array.
        if queue.head == queue.packets.count {
            queues[stream] = nil
            return
        }
        if queue.head >= 1024, queue.head * 2 >= queue.packets.count {
            queue.packets.removeFirst(queue.head)
            queue.head = 0
        }
        queues[stream] = queue
    }

    /// Lets go of every packet of `stream` (its stage needs no more, or a seek superseded them).
    mutating func removeAll(_ stream: Int32) {
        guard let queue = queues[stream] else { return }
        for held in queue.packets[queue.head...] { bytes -= held.cost }
        queues[stream] = nil
    }

    /// Lets go of every packet held.
    mutating func removeAll() {
        queues = [:]
        bytes = 0
    }
}
