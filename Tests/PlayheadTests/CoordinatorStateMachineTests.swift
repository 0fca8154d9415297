import Testing
@testable import Playhead

@Suite struct CoordinatorStateMachineTests {
    @Test func atMostLimitRunAndTheRestWaitInOrder() {
        var machine = CoordinatorStateMachine<Int>(limit: 2)
        var started: [Int] = []
        for id in 1...5 {
            for case .start(let s) in machine.submit(id) { started.append(s) }
        }
        #expect(started == [1, 2])
        #expect(machine.waiting == [3, 4, 5])
        #expect(machine.finished(2) == [.start(3)])
        #expect(machine.finished(1) == [.start(4)])
        #expect(machine.running == [3, 4])
        #expect(machine.peak == 2)
        #expect(machine.finished(9) == [], "an unknown session changes nothing")
    }

    @Test func neverMoreThanTheLimitWhateverTheOrder() {
        var machine = CoordinatorStateMachine<Int>(limit: 4)
        var random = SystemRandomNumberGenerator()
        var next = 0
        for _ in 0..<2000 {
            if Bool.random(using: &random) || machine.running.isEmpty {
                next += 1
                _ = machine.submit(next)
            } else {
                _ = machine.finished(machine.running.randomElement(using: &random)!)
            }
            #expect(machine.running.count <= 4)
            #expect(machine.running.count == 4 || machine.waiting.isEmpty, "a free slot never stays free while someone waits")
        }
        #expect(machine.peak == 4)
    }

    @Test func cancellingWaitingOrRunning() {
        var machine = CoordinatorStateMachine<Int>(limit: 1)
        _ = machine.submit(1)
        _ = machine.submit(2)
        _ = machine.submit(3)
        #expect(machine.cancel(2) == [.dropWaiting(2)])
        #expect(machine.cancel(1) == [.stopRunning(1)])
        #expect(machine.finished(1) == [.start(3)])
        #expect(machine.cancelAll() == [.stopRunning(3)])
    }
}
