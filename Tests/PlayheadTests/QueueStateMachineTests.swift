import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct QueueStateMachineTests {
    typealias Machine = QueueStateMachine<String>
    let failure = PlayheadError(code: .unrecognizedFormat, message: "not media", file: "b")

    func queue(_ ids: [String], action: ActionAtItemEnd = .advance) -> Machine {
        var machine = Machine(actionAtItemEnd: action)
        for id in ids { _ = machine.insert(id, after: nil) }
        return machine
    }

    @Test func playStartsTheCurrentItemAndPrerollsTheNext() {
        var machine = queue(["a", "b", "c"])
        #expect(machine.timeControlStatus == .paused)
        #expect(machine.play() == [.setRate(1), .start("a", presenting: true), .start("b", presenting: false)])
        #expect(machine.timeControlStatus == .waitingToPlay)
        machine.currentPresented("a")
        #expect(machine.timeControlStatus == .playing)
    }

    /// Pause, seek, play: the player waits until frames flow again, then plays (it stayed
    /// waiting for ever, frames playing, when only an item's first frame counted).
    @Test func framesFlowingAgainAfterAPauseMakeThePlayerPlay() {
        var machine = queue(["a"])
        _ = machine.play()
        machine.currentPresented("a")
        _ = machine.pause()
        #expect(machine.timeControlStatus == .paused)
        // A frame in flight when it paused does not count for the next play.
        machine.currentPresented("a")
        #expect(machine.currentSought().isEmpty, "paused: nothing starts")
        _ = machine.play()
        #expect(machine.timeControlStatus == .waitingToPlay)
        machine.currentPresented("a")
        #expect(machine.timeControlStatus == .playing)
        machine.currentPresented("b")
        #expect(machine.timeControlStatus == .playing, "another item's frame changes nothing")
    }

    @Test func endAdvancesToThePrerolledItemWithoutRestartingIt() {
        var machine = queue(["a", "b", "c"])
        _ = machine.play()
        #expect(machine.itemEnded("a") == [.reportEnd("a"), .currentChanged(from: "a", to: "b"), .present("b"), .start("c", presenting: false)])
        #expect(machine.itemEnded("b") == [.reportEnd("b"), .currentChanged(from: "b", to: "c"), .present("c")])
        #expect(machine.itemEnded("c") == [.reportEnd("c"), .currentChanged(from: "c", to: nil)])
        #expect(machine.items.isEmpty)
        #expect(machine.timeControlStatus == .waitingToPlay)
    }

    @Test func aFailedItemIsReportedAndSkipped() {
        var machine = queue(["a", "b", "c"])
        _ = machine.play()
        // The pre-rolled item fails while a plays: reported, dropped, and c pre-rolls instead.
        #expect(machine.itemFailed("b", failure) == [.reportFailure("b", failure), .start("c", presenting: false)])
        #expect(machine.items == ["a", "c"])
        // The current item fails: reported, and the queue goes on.
        #expect(machine.itemFailed("a", failure) == [.reportFailure("a", failure), .currentChanged(from: "a", to: "c"), .present("c")])
    }

    @Test func pauseAtEndStaysOnTheItem() {
        var machine = queue(["a", "b"], action: .pause)
        _ = machine.play()
        #expect(machine.itemEnded("a") == [.holdAtEnd, .reportEnd("a"), .setRate(0)])
        #expect(machine.current == "a")
        #expect(machine.timeControlStatus == .paused)
    }

    @Test func noneAtEndDoesNothingMore() {
        var machine = queue(["a", "b"], action: .none)
        _ = machine.play()
        #expect(machine.itemEnded("b").isEmpty, "a pre-rolled item's end holds nothing (the current one plays on)")
        #expect(machine.itemEnded("a") == [.holdAtEnd, .reportEnd("a")])
        #expect(machine.current == "a")
        #expect(machine.rate == 1)
    }

    @Test func editsStopWhatNoLongerPlays() {
        var machine = queue(["a", "b", "c"])
        _ = machine.play()
        #expect(machine.remove("b") == [.stop("b"), .start("c", presenting: false)])
        #expect(machine.advanceToNextItem() == [.stop("a"), .currentChanged(from: "a", to: "c"), .present("c")])
        #expect(machine.insert("d", after: "c") == [.start("d", presenting: false)])
        #expect(machine.removeAll() == [.stop("c"), .stop("d"), .currentChanged(from: "c", to: nil)])
        #expect(machine.items.isEmpty)
    }

    @Test func insertAfterPlacesTheItem() {
        var machine = queue(["a", "c"])
        #expect(machine.insert("b", after: "a") == [])
        #expect(machine.items == ["a", "b", "c"])
        #expect(machine.insert("a", after: nil) == [], "an item already queued is not queued twice")
    }

    @Test func nothingStartsWhilePaused() {
        var machine = Machine(actionAtItemEnd: .advance)
        #expect(machine.insert("a", after: nil) == [.currentChanged(from: nil, to: "a")])
        #expect(machine.setRate(0) == [])
        #expect(machine.setRate(2) == [.setRate(2), .start("a", presenting: true)])
        #expect(machine.pause() == [.setRate(0)])
        #expect(machine.play() == [.setRate(1)])
    }

    @Test func playAtTheEndOfAnItemThatStayedWaitsForASeek() {
        var machine = queue(["a"], action: .pause)
        _ = machine.play()
        #expect(machine.itemEnded("a") == [.holdAtEnd, .reportEnd("a"), .setRate(0)])
        #expect(machine.play().isEmpty, "nothing to play at the end")
        #expect(machine.rate == 0 && machine.timeControlStatus == .paused)
        #expect(machine.currentSought().isEmpty, "paused: nothing starts")
        #expect(machine.play() == [.setRate(1), .start("a", presenting: true)], "a seek gives it something to play")
        // A new current item clears the end.
        var other = queue(["a", "b"], action: .pause)
        _ = other.play()
        _ = other.itemEnded("a")
        _ = other.advanceToNextItem()
        #expect(other.play() == [.setRate(1), .present("b")], "the next item, pre-rolled, plays")
    }

    /// An item queued behind one that ended and stayed current changes nothing: the current item
    /// still waits for a seek (the player stays idle; it waited for ever before).
    @Test func anItemQueuedBehindAnEndedOneLeavesItEnded() {
        var machine = queue(["a"], action: .none)
        _ = machine.play()
        _ = machine.itemEnded("a")
        #expect(machine.currentEnded)
        // Nothing starts: not a again from its start, not b behind it (before, a's whole item
        // was started again, and the machine waited for its frames).
        #expect(machine.insert("b", after: nil) == [])
        #expect(machine.currentEnded && machine.current == "a", "still at a's end")
        // A seek gives a something to play again: it presents (its parked run), b is pre-rolled.
        var sought = machine
        #expect(sought.currentSought() == [.start("a", presenting: true), .start("b", presenting: false)])
        #expect(machine.advanceToNextItem() == [.currentChanged(from: "a", to: "b"), .start("b", presenting: true)])
    }
}
