import Dispatch
import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct SlotChannelTests {
    @Test func deliversInOrderThenNilOnceClosed() {
        let channel = SlotChannel(capacity: 4)
        channel.send(2)
        channel.send(0)
        channel.send(3)
        channel.close()
        #expect(channel.receive() == 2)
        #expect(channel.receive() == 0)
        #expect(channel.receive() == 3)
        #expect(channel.receive() == nil)
        #expect(channel.receive() == nil)
    }

    @Test func startsFullWhenAsked() {
        let channel = SlotChannel(capacity: 3, filledWith: 0..<3)
        #expect([channel.receive(), channel.receive(), channel.receive()] == [0, 1, 2])
    }

    @Test func cancelAnswersNilEvenWithSlotsQueued() {
        let channel = SlotChannel(capacity: 2, filledWith: 0..<2)
        channel.cancel()
        #expect(channel.receive() == nil)
        #expect(channel.receive() == nil)
        #expect(channel.receive() == nil)
    }
}

@Suite struct SlotChannelPatienceTests {
    @Test func tryReceiveAnswersAtOnceOrWithinItsPatience() async {
        let channel = SlotChannel(capacity: 2)
        #expect(channel.isEmpty && channel.tryReceive() == nil)
        channel.send(1)
        #expect(!channel.isEmpty && channel.tryReceive() == 1 && channel.isEmpty)
        // A slot sent while it waits is taken.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { channel.send(0) }
        #expect(channel.tryReceive(within: .seconds(10)) == 0)
        // Closed and drained: nil, and a later receive is not left waiting.
        channel.close()
        #expect(channel.tryReceive(within: .seconds(10)) == nil)
        #expect(channel.receive() == nil)
    }
}
