import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct LooperStateMachineTests {
    @Test func countedLoopsKeepOneCopyAheadAndStopAtTheCount() {
        var machine = LooperStateMachine(loopCount: 3)
        #expect(machine.start() == [.enqueueCopy, .enqueueCopy])
        #expect(machine.iterationEnded() == [.enqueueCopy])
        #expect(machine.iterationEnded() == [])
        #expect(!machine.isFinished)
        #expect(machine.iterationEnded() == [.finished])
        #expect(machine.completed == 3)
        #expect(machine.isFinished)
        #expect(machine.iterationEnded() == [])
    }

    @Test func oneLoopQueuesOneCopy() {
        var machine = LooperStateMachine(loopCount: 1)
        #expect(machine.start() == [.enqueueCopy])
        #expect(machine.iterationEnded() == [.finished])
    }

    @Test func zeroLoopsIsDoneAtOnce() {
        var machine = LooperStateMachine(loopCount: 0)
        #expect(machine.start() == [.finished])
    }

    @Test func foreverLoopsUntilDisabledThenDrains() {
        var machine = LooperStateMachine(loopCount: nil)
        #expect(machine.start() == [.enqueueCopy, .enqueueCopy])
        for _ in 0..<100 { #expect(machine.iterationEnded() == [.enqueueCopy]) }
        #expect(machine.disable() == [.removePendingCopy])
        #expect(machine.iterationEnded() == [.finished])
        #expect(machine.completed == 101)
    }

    @Test func aFailedIterationEndsLooping() {
        var machine = LooperStateMachine(loopCount: nil)
        _ = machine.start()
        #expect(machine.iterationFailed() == [.removePendingCopy, .finished])
        #expect(machine.isFinished)
        #expect(machine.disable() == [])
    }
}
