import Testing

@testable import Playhead

/// Whose turn it is to write a player's outputs, alone: a gate opens at once unless a cancelled
/// session that presented may still be writing; then it waits for every such session to end.
@Suite struct OutputTurnsTests {
    typealias Turns = OutputTurns<Int, String>

    @Test func aGateOpensAtOnceWhenNothingDrains() {
        var turns = Turns()
        turns.started(1)
        let next = turns.open("next")
        #expect(next && !turns.isDraining && turns.waiting.isEmpty)
        // A session cancelled before its item presented wrote nothing: nothing drains.
        turns.cancelled(1, presenting: false)
        let other = turns.open("other")
        #expect(!turns.isDraining && other)
        // A session that is not running (ended already, or never started) does not drain.
        turns.cancelled(7, presenting: true)
        #expect(!turns.isDraining)
    }

    @Test func aGateWaitsForEverySessionThatMayStillWrite() {
        var turns = Turns()
        turns.started(1)
        turns.started(2)
        turns.cancelled(1, presenting: true)
        turns.cancelled(2, presenting: true)
        #expect(turns.isDraining)
        let (a, b) = (turns.open("a"), turns.open("b"))
        #expect(!a && !b, "both wait")
        let afterOne = turns.ended(1)
        #expect(afterOne.isEmpty, "session 2 may still be writing")
        let afterBoth = turns.ended(2)
        #expect(afterBoth == ["a", "b"], "in the order they asked")
        #expect(!turns.isDraining && turns.waiting.isEmpty && turns.live.isEmpty)
        let c = turns.open("c")
        #expect(c)
    }

    @Test func aRunningSessionThatEndsOpensNothingItDidNotHold() {
        var turns = Turns()
        turns.started(1)
        turns.started(2)
        turns.cancelled(1, presenting: true)
        let a = turns.open("a")
        #expect(!a)
        // Session 2 (not cancelled) ends: session 1 still drains, the gate still waits.
        let afterTwo = turns.ended(2)
        #expect(afterTwo.isEmpty && turns.waiting == ["a"])
        let afterOne = turns.ended(1)
        #expect(afterOne == ["a"])
    }
}
