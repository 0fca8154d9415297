import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A caller waiting for a run gets the run's answer when it ends, or the answer so far once the
/// run was abandoned and did not end within the patience — once either way; a run that answers
/// within the patience cancels its wait, which then neither answers nor asks for the answer so far.
@Suite struct RunAnswerTests {
    @Test func aRunThatEndsWithinThePatienceIsAnsweredByItselfAndEndsTheWait() async throws {
        let asked = Locked(0)
        let answer = RunAnswer<Int> {
            asked.withLock { $0 += 1 }
            return -1
        }
        let got = await answer.wait {
            answer.abandon()
            answer.answer(7)
        }
        #expect(got == 7)
        // The patience would have ended by now: its wait was cancelled, nothing asked.
        try await Task.sleep(for: RunAnswer<Int>.patience + .milliseconds(300))
        #expect(asked.withLock { $0 } == 0, "the answer so far was asked after the run answered")
    }

    @Test func aRunThatDoesNotEndIsAnsweredWithWhatItHasSoFarAfterThePatience() async throws {
        let answer = RunAnswer<Int> { -1 }
        let start = ContinuousClock.now
        let got = await answer.wait { answer.abandon() }
        #expect(got == -1)
        #expect(ContinuousClock.now - start >= RunAnswer<Int>.patience)
        // The run's own answer, later, is dropped.
        answer.answer(7)
    }
}
