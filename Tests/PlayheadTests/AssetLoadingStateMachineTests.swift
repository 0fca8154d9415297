import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct AssetLoadingStateMachineTests {
    let description = AssetDescription(
        formatName: "test", formatLongName: nil, duration: MediaTime(value: 2, timescale: 1),
        startTime: .zero, bitRate: nil, tracks: [], metadata: [:])
    let failure = PlayheadError(code: .unrecognizedFormat, message: "not media", file: "x.mp4")

    @Test func firstLoadStartsOneProbeAndLaterCallersShareIt() {
        var machine = AssetLoadingStateMachine()
        #expect(machine.status(of: .tracks) == .notYetLoaded)
        #expect(machine.load([.tracks], waiter: 1) == .startProbe(generation: 1))
        #expect(machine.load([.duration], waiter: 2) == .wait)
        #expect(machine.status(of: .tracks) == .loading)
        #expect(machine.status(of: .duration) == .loading)
        #expect(machine.status(of: .isPlayable) == .notYetLoaded)

        let resume = machine.probeFinished(generation: 1, result: .success(description))
        #expect(resume.waiters == [1, 2])
        #expect(resume.result == .success(description))
        #expect(!resume.interruptProbe)
        #expect(machine.status(of: .tracks) == .loaded)
        #expect(machine.status(of: .duration) == .loaded)
        #expect(machine.status(of: .isPlayable) == .notYetLoaded)
    }

    @Test func loadedKeysAnswerAtOnceWithoutAnotherProbe() {
        var machine = AssetLoadingStateMachine()
        _ = machine.load([.tracks], waiter: 1)
        _ = machine.probeFinished(generation: 1, result: .success(description))
        #expect(machine.load([.tracks, .isPlayable], waiter: 2) == .succeed(description))
        #expect(machine.status(of: .isPlayable) == .loaded)
    }

    @Test func failureIsKeptForEveryKey() {
        var machine = AssetLoadingStateMachine()
        _ = machine.load([.tracks], waiter: 1)
        let resume = machine.probeFinished(generation: 1, result: .failure(failure))
        #expect(resume.waiters == [1])
        #expect(machine.status(of: .tracks) == .failed(failure))
        #expect(machine.load([.duration], waiter: 2) == .fail(failure))
        #expect(machine.status(of: .duration) == .failed(failure))
    }

    @Test func cancelLoadingInterruptsAndAnswersEveryWaiter() {
        var machine = AssetLoadingStateMachine()
        _ = machine.load([.tracks], waiter: 1)
        _ = machine.load([.duration], waiter: 2)
        let resume = machine.cancelAll(file: "x.mp4")
        #expect(resume.interruptProbe)
        #expect(resume.waiters == [1, 2])
        #expect((try? resume.result.get()) == nil)
        if case .failure(let error) = resume.result { #expect(error.code == .cancelled) }
        #expect(machine.status(of: .tracks) == .cancelled)
        #expect(machine.waiterCount == 0)

        // The cancelled probe's late answer is ignored; a new load starts a new probe.
        #expect(machine.probeFinished(generation: 1, result: .success(description)).waiters.isEmpty)
        #expect(machine.status(of: .tracks) == .cancelled)
        #expect(machine.load([.tracks], waiter: 3) == .startProbe(generation: 2))
        #expect(machine.probeFinished(generation: 2, result: .success(description)).waiters == [3])
        #expect(machine.status(of: .tracks) == .loaded)
    }

    @Test func cancellingWhenNothingRunsDoesNothing() {
        var machine = AssetLoadingStateMachine()
        #expect(machine.cancelAll(file: nil) == .none)
        _ = machine.load([.tracks], waiter: 1)
        _ = machine.probeFinished(generation: 1, result: .success(description))
        #expect(machine.cancelAll(file: nil) == .none)
        #expect(machine.status(of: .tracks) == .loaded)
    }

    @Test func oneWaiterLeavingKeepsTheProbeForTheOthers() {
        var machine = AssetLoadingStateMachine()
        _ = machine.load([.tracks], waiter: 1)
        _ = machine.load([.tracks], waiter: 2)
        let first = machine.waiterCancelled(1, file: nil)
        #expect(first.waiters == [1])
        #expect(!first.interruptProbe)
        #expect(machine.status(of: .tracks) == .loading)

        let last = machine.waiterCancelled(2, file: nil)
        #expect(last.waiters == [2])
        #expect(last.interruptProbe)
        #expect(machine.status(of: .tracks) == .cancelled)
        #expect(machine.waiterCancelled(2, file: nil) == .none)
    }
}
