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
