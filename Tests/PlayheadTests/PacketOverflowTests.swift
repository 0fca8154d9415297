import Dispatch
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The demux thread's read-ahead: order per stream, its byte bound, and its accounting.
@Suite struct PacketOverflowTests {
    @Test func packetsComeBackInOrderPerStream() throws {
        var overflow = PacketOverflow()
        for (size, stream) in [(10, 1), (20, 1), (7, 0), (30, 1)] {
            let taken = overflow.append(try OwnedPacket(zeroedBytes: size), stream: Int32(stream))
            #expect(taken)
        }
        var sizes: [Int] = []
        while let packet = overflow.first(1) {
            sizes.append(packet.byteCount)
            overflow.removeFirst(1)
        }
        #expect(sizes == [10, 20, 30])
        #expect(overflow.first(0)?.byteCount == 7 && !overflow.isEmpty(0) && overflow.isEmpty(1))
        #expect(overflow.bytes == 7 + PacketOverflow.packetOverhead)
    }

    @Test func aPacketPastTheLimitIsRefusedAndLeftWithTheCaller() throws {
        let cost = 1000 + PacketOverflow.packetOverhead
        var overflow = PacketOverflow(limit: 2 * cost)
        let first = overflow.append(try OwnedPacket(zeroedBytes: 1000), stream: 0)
        let second = overflow.append(try OwnedPacket(zeroedBytes: 1000), stream: 1)
        let refused = try OwnedPacket(zeroedBytes: 1000)
        let third = overflow.append(refused, stream: 0)
        #expect(first && second && !third)
        #expect(refused.byteCount == 1000, "the caller keeps the packet it could not place")
        #expect(overflow.bytes == 2 * cost)
        // A taken packet's data moves out; what it cost is given back all the same.
        let slot = try OwnedPacket()
        slot.move(from: try #require(overflow.first(0)))
        overflow.removeFirst(0)
        #expect(slot.byteCount == 1000 && overflow.bytes == cost)
        let taken = overflow.append(refused, stream: 0)
        #expect(taken && refused.byteCount == 0)
        overflow.removeAll(1)
        #expect(overflow.bytes == cost && overflow.isEmpty(1))
        overflow.removeAll()
        #expect(overflow.bytes == 0 && overflow.isEmpty(0))
        // An absurd limit holds nothing.
        var none = PacketOverflow(limit: -5)
        let kept = none.append(try OwnedPacket(zeroedBytes: 0), stream: 0)
        #expect(!kept && none.isEmpty(0))
    }

    /// Thousands of packets taken one by one (the taken ones let go in bulk now and then): the
    /// order holds throughout, and so does the count of bytes.
    @Test func manyPacketsKeepTheirOrderAndTheirCount() throws {
        var overflow = PacketOverflow()
        var expected: [Int] = []
        var taken: [Int] = []
        func add(_ range: Range<Int>) throws {
            for i in range {
                let size = i % 97 + 1
                let added = overflow.append(try OwnedPacket(zeroedBytes: size), stream: 3)
                #expect(added)
                expected.append(size)
            }
        }
        func take(_ count: Int) {
            for _ in 0..<count {
                guard let packet = overflow.first(3) else { return }
                taken.append(packet.byteCount)
                overflow.removeFirst(3)
            }
        }
        try add(0..<3000)
        take(2000)
        try add(3000..<4500)
        take(10_000)
        #expect(taken == expected && overflow.isEmpty(3) && overflow.bytes == 0)
    }

    /// How often a demux thread waiting for room looks whether the video ran dry: at once, then
    /// after 10 ms, doubling up to 80 ms.
    @Test func theStarvationCheckBacksOff() {
        var patience = DispatchTimeInterval.nanoseconds(0)
        var seen: [DispatchTimeInterval] = []
        for _ in 0..<6 {
            patience = DecodePipeline.starvationCheck(after: patience)
            seen.append(patience)
        }
        #expect(seen == [.milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(80), .milliseconds(80), .milliseconds(80)])
    }
}
