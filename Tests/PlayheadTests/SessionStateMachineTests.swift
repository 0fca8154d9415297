import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The session's pure rules for a start retried from the data's start (a seek that landed late).
@Suite struct SessionStateMachineTests {
    typealias Machine = SessionStateMachine<String, String>

    static func segment(_ number: Int) -> Segment {
        Segment(number: number, start: SeekRequest(time: MediaTime(value: 5, timescale: 1)), end: nil, frameLimit: nil, presentationPosition: nil)
    }

    @Test func aLateStartIsRetriedOnceAndItsSeekWaitsForTheRetry() {
        var machine = Machine(mode: .interactive, routes: [.video, .audio], first: Self.segment(0))
        _ = machine.seek(Self.segment(1), waiter: "seek")
        var retry = Self.segment(2)
        retry.fromTheStart = true
        let retried = machine.retryFromTheStart(1, as: retry)
        #expect(retried)
        #expect(machine.segment.number == 2 && machine.segment.fromTheStart && machine.segment.start == Self.segment(1).start)
        // The old segment's first frame resumes nothing; the retry's does.
        #expect(machine.firstFrame(of: 1, at: .zero).resume.isEmpty)
        let landed = machine.firstFrame(of: 2, at: MediaTime(value: 5, timescale: 1)).resume
        #expect(landed.map(\.0) == ["seek"] && landed.first?.1 == MediaTime(value: 5, timescale: 1))
        // A retry is not retried, nor is a segment that is no longer the latest.
        var again = Self.segment(3)
        again.fromTheStart = true
        let twice = machine.retryFromTheStart(2, as: again), old = machine.retryFromTheStart(1, as: again)
        #expect(!twice && !old)
    }

    @Test func aStoppedSessionOrAShownStartIsNotRetried() {
        var machine = Machine(mode: .interactive, routes: [.video], first: Self.segment(0))
        _ = machine.firstFrame(of: 0, at: .zero)
        let shown = machine.retryFromTheStart(0, as: Self.segment(1))
        #expect(!shown, "a segment that showed a frame already")
        var stopped = Machine(mode: .once, routes: [.video], first: Self.segment(0))
        _ = stopped.stop()
        let afterStop = stopped.retryFromTheStart(0, as: Self.segment(1))
        #expect(!afterStop)
    }

    @Test func anAbandonedSeekIsResumedOnceAndTheSegmentGoesOn() {
        var machine = Machine(mode: .interactive, routes: [.video], first: Self.segment(0))
        _ = machine.seek(Self.segment(1), waiter: "first")
        _ = machine.seek(Self.segment(2), waiter: "second")
        let abandoned = machine.abandonSeek(2).resume
        #expect(abandoned.map(\.0) == ["second"] && abandoned.first?.1 == nil)
        #expect(machine.abandonSeek(2).resume.isEmpty, "resumed once")
        #expect(machine.segment.number == 2, "the segment goes on")
        #expect(machine.firstFrame(of: 2, at: .zero).resume.isEmpty, "nobody waits any more")
        // Abandoning an old segment's wait touches nothing of the current one's.
        _ = machine.seek(Self.segment(3), waiter: "third")
        #expect(machine.abandonSeek(2).resume.isEmpty)
        #expect(machine.stop().resume.map(\.0) == ["third"])
    }

    @Test func aSeekRetriedFromTheStartIsAbandonedByItsOwnNumber() {
        var machine = Machine(mode: .interactive, routes: [.video], first: Self.segment(0))
        _ = machine.seek(Self.segment(1), waiter: "seek")
        var retry = Self.segment(2)
        retry.fromTheStart = true
        let retried = machine.retryFromTheStart(1, as: retry)
        #expect(retried)
        let abandoned = machine.abandonSeek(1).resume
        #expect(abandoned.map(\.0) == ["seek"] && abandoned.first?.1 == nil, "the cancelled seek's wait ends after its retry")
        #expect(machine.firstFrame(of: 2, at: .zero).resume.isEmpty)
    }
}
