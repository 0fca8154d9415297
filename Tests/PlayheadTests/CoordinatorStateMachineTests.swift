import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct CoordinatorStateMachineTests {
    @Test func atMostLimitRunAndTheRestWaitInOrder() {
        var machine = CoordinatorStateMachine<Int, String>(limit: 2)
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
        var machine = CoordinatorStateMachine<Int, String>(limit: 4)
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
        var machine = CoordinatorStateMachine<Int, String>(limit: 1)
        _ = machine.submit(1)
        _ = machine.submit(2)
        _ = machine.submit(3)
        #expect(machine.cancel(2) == [.dropWaiting(2)])
        #expect(machine.cancel(1) == [.stopRunning(1)])
        #expect(machine.finished(1) == [.start(3)])
        #expect(machine.cancelAll() == [.stopRunning(3)])
    }

    /// Slot requests hold their waiters in the machine: each is granted in turn, or refused when
    /// cancelled before its turn, and cancelAll refuses every waiting one at once.
    @Test func slotRequestsAreGrantedOrRefusedNeverForgotten() {
        var machine = CoordinatorStateMachine<Int, String>(limit: 1)
        #expect(machine.request(1, waiter: "a") == [.grant(1, "a")])
        #expect(machine.request(2, waiter: "b") == [])
        #expect(machine.request(3, waiter: "c") == [])
        _ = machine.submit(4)
        #expect(machine.cancel(2) == [.refuse(2, "b")])
        #expect(machine.cancel(1) == [], "a granted request runs its own body; cancel does not stop it")
        #expect(machine.cancelAll() == [.refuse(3, "c"), .dropWaiting(4)])
        #expect(machine.waiting.isEmpty)
        #expect(machine.finished(1) == [])
    }

    /// Whatever happens, every request's waiter is resumed exactly once.
    @Test func everyWaiterIsResumedExactlyOnce() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var machine = CoordinatorStateMachine<Int, String>(limit: 2)
            var resumed: [String: Int] = [:]
            func note(_ actions: [CoordinatorStateMachine<Int, String>.Action]) {
                for action in actions {
                    switch action {
                    case .grant(let id, let w), .refuse(let id, let w):
                        resumed[w, default: 0] += 1
                        if case .grant = action { granted.append(id) }
                    default: break
                    }
                }
            }
            var granted: [Int] = []
            var next = 0
            for _ in 0..<200 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    next += 1
                    note(machine.request(next, waiter: "w\(next)"))
                case 1:
                    if let id = granted.randomElement(using: &random) {
                        granted.removeAll { $0 == id }
                        note(machine.finished(id))
                    }
                case 2:
                    if next > 0 { note(machine.cancel(Int.random(in: 1...next, using: &random))) }
                default:
                    if Int.random(in: 0..<20, using: &random) == 0 { note(machine.cancelAll()) }
                }
            }
            note(machine.cancelAll())
            for id in granted { note(machine.finished(id)) }
            #expect(resumed.count == next, "every request resumed")
            #expect(resumed.values.allSatisfy { $0 == 1 }, "none twice")
        }
    }
}
