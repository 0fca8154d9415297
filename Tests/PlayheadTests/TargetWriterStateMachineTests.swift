import Testing

@testable import PlayheadMedia

/// A channel target's writer, decided alone: every phase and transition, the bounded queue's
/// resumption at keyframes, reconnection with back-off, a recording given up for good, the end.
@Suite struct TargetWriterStateMachineTests {
    typealias Machine = TargetWriterStateMachine

    /// A network target that has opened at a keyframe.
    static func connected(_ recovery: Machine.Recovery = .reconnects) -> Machine {
        var machine = Machine(name: "t", recovery: recovery)
        #expect(machine.step(video: true, keyframe: true, now: 0) == .open)
        machine.opened(now: 0)
        return machine
    }

    @Test func aTargetOpensAtTheFirstKeyframeAndDropsWhatComesBefore() {
        var machine = Machine(name: "t", recovery: .reconnects)
        #expect(machine.phase == .closed(retryAt: nil, backoff: 1))
        #expect(machine.status.state == .connecting)
        #expect(machine.step(video: false, keyframe: false, now: 0) == .drop)
        #expect(machine.step(video: true, keyframe: false, now: 0) == .drop)
        #expect(machine.status.framesDropped == 1, "a picture dropped counts, a sound packet does not")
        #expect(machine.step(video: true, keyframe: true, now: 0) == .open)
        machine.opened(now: 0)
        #expect(machine.phase == .open(backoff: 1, provenAt: nil))
        #expect(machine.status.state == .connected && machine.status.connects == 1)
        #expect(machine.step(video: false, keyframe: false, now: 0) == .write)
        machine.wrote(video: true, now: 0)
        machine.wrote(video: false, now: 0)
        #expect(machine.status.framesWritten == 1)
    }

    @Test func aNetworkTargetThatDropsRetriesWithBackoffDoublingToThirtySeconds() {
        var machine = Self.connected()
        machine.writeFailed("reset", now: 100, stopping: false)
        #expect(machine.phase == .closed(retryAt: 101, backoff: 2))
        #expect(machine.status.state == .reconnecting && machine.status.drops == 1 && machine.status.lastError == "reset")
        // Before its retry time even a keyframe is dropped.
        #expect(machine.step(video: true, keyframe: true, now: 100.5) == .drop)
        #expect(machine.step(video: true, keyframe: true, now: 101) == .open)
        var now = 101.0
        var waits: [Double] = []
        for _ in 0..<7 {
            machine.openFailed("refused", now: now, stopping: false)
            guard case .closed(let retryAt?, _) = machine.phase else {
                Issue.record("not waiting to retry: \(machine.phase)")
                return
            }
            waits.append(retryAt - now)
            now = retryAt
            #expect(machine.step(video: true, keyframe: true, now: now) == .open)
        }
        #expect(waits == [2, 4, 8, 16, 30, 30, 30])
        machine.opened(now: now)
        #expect(machine.phase == .open(backoff: 30, provenAt: now + 2), "reopened after a failure: on probation, its back-off kept")
        #expect(machine.status.connects == 2 && machine.status.lastError == "refused" && machine.status.state == .reconnecting)
        machine.wrote(video: true, now: now + 1.9)
        #expect(machine.downSince != nil, "not yet proven")
        machine.wrote(video: false, now: now + 2)
        #expect(machine.phase == .open(backoff: 1, provenAt: nil), "a connection that holds starts the back-off over")
        #expect(machine.downSince == nil && machine.status.lastError == nil && machine.status.state == .connected)
    }

    @Test func aRecordingThatFailsIsGivenUpAndDropsEverythingAfter() {
        var machine = Self.connected(.givesUp)
        machine.writeFailed("disk full", now: 5, stopping: false)
        #expect(machine.phase == .failed && machine.status.state == .failed && machine.status.drops == 1)
        #expect(machine.step(video: true, keyframe: true, now: 1000) == .drop, "never reopened")
        #expect(machine.admit(video: true, keyframe: true, queued: 0, limit: 10) == false, "nothing is queued for it any more")
        machine.dropped(pictures: 3)
        #expect(machine.status.framesDropped == 5)
        #expect(machine.end(stopping: false) == .abandon)
        #expect(machine.status.state == .failed, "its end does not say finished")
    }

    @Test func aRecordingThatDoesNotOpenIsGivenUp() {
        var machine = Machine(name: "t", recovery: .givesUp)
        #expect(machine.step(video: true, keyframe: true, now: 0) == .open)
        machine.openFailed("exists", now: 0, stopping: false)
        #expect(machine.phase == .failed && machine.status.state == .failed && machine.status.lastError == "exists")
    }

    @Test func theQueueResumesAtAKeyframeAfterItOverflows() {
        var machine = Self.connected()
        // It starts at a keyframe.
        #expect(machine.admit(video: false, keyframe: false, queued: 0, limit: 3) == false)
        #expect(machine.admit(video: true, keyframe: true, queued: 0, limit: 3) == true)
        #expect(machine.admit(video: false, keyframe: false, queued: 1, limit: 3) == true)
        #expect(machine.admit(video: true, keyframe: false, queued: 2, limit: 3) == true)
        // Full: dropped, and everything after until a keyframe finds room.
        #expect(machine.admit(video: true, keyframe: true, queued: 3, limit: 3) == false)
        #expect(machine.admit(video: true, keyframe: false, queued: 0, limit: 3) == false)
        #expect(machine.admit(video: false, keyframe: false, queued: 0, limit: 3) == false)
        #expect(machine.admit(video: true, keyframe: true, queued: 0, limit: 3) == true)
        #expect(machine.status.framesDropped == 2)
    }

    @Test func aFailureMakesTheQueueResumeAtAKeyframe() {
        var machine = Self.connected()
        #expect(machine.admit(video: true, keyframe: true, queued: 0, limit: 10) == true)
        machine.writeFailed("reset", now: 0, stopping: false)
        #expect(machine.admit(video: true, keyframe: false, queued: 0, limit: 10) == false)
        #expect(machine.admit(video: true, keyframe: true, queued: 0, limit: 10) == true)
    }

    @Test func theEndCompletesAnOpenTargetAndAbandonsOneThatIsNot() {
        var open = Self.connected()
        #expect(open.end(stopping: false) == .complete)
        #expect(open.phase == .ended && open.status.state == .finished)
        #expect(open.step(video: true, keyframe: true, now: 0) == .drop)
        var stopped = Self.connected()
        #expect(stopped.end(stopping: true) == .abandon, "a stop writes no trailer")
        var closed = Machine(name: "t", recovery: .reconnects)
        #expect(closed.end(stopping: false) == .abandon)
        #expect(closed.status.state == .finished)
    }

    @Test func aTargetDownAtTheEndDoesNotSayFinished() {
        var machine = Self.connected()
        machine.writeFailed("reset", now: 0, stopping: false)
        #expect(machine.end(stopping: false) == .abandon)
        #expect(machine.status.state == .reconnecting && machine.status.lastError == "reset", "\(machine.status)")
        #expect(machine.downSince == nil, "an ended target is not down")
        var never = Machine(name: "t", recovery: .reconnects)
        #expect(never.step(video: true, keyframe: true, now: 0) == .open)
        never.openFailed("busy", now: 0, stopping: false)
        _ = never.end(stopping: false)
        #expect(never.status.state == .failed, "a target that never connected failed")
    }

    @Test func downTimeCountsFromTheStartAndFromEachDrop() {
        var machine = Machine(name: "t", recovery: .reconnects, now: 5)
        #expect(machine.downSince == 5)
        #expect(machine.step(video: true, keyframe: true, now: 6) == .open)
        machine.opened(now: 0)
        #expect(machine.downSince == nil)
        machine.writeFailed("reset", now: 9, stopping: false)
        #expect(machine.downSince == 9)
        #expect(machine.step(video: true, keyframe: true, now: 20) == .open)
        machine.openFailed("refused", now: 20, stopping: false)
        #expect(machine.downSince == 9, "down since the drop, not the last try")
    }

    /// A target that reopens and fails again before it has held (an HLS folder on a full disk
    /// opens, then fails at its first segment's end) stays down from its first drop, its
    /// back-off growing — before, each open made it up again, so `/health` never saw it down
    /// past its grace.
    @Test func aTargetThatKeepsFailingAfterEachOpenStaysDown() {
        var machine = Machine(name: "t", recovery: .reconnects, now: 0, provingSeconds: 2.5)
        #expect(machine.step(video: true, keyframe: true, now: 0) == .open)
        machine.opened(now: 0)
        machine.wrote(video: true, now: 0.5)
        machine.writeFailed("no space", now: 1, stopping: false)
        var now = 1.0
        var waits: [Double] = []
        for _ in 0..<6 {
            guard case .closed(let retryAt?, _) = machine.phase else {
                Issue.record("not waiting to retry: \(machine.phase)")
                return
            }
            waits.append(retryAt - now)
            now = retryAt
            #expect(machine.step(video: true, keyframe: true, now: now) == .open)
            machine.opened(now: now)
            machine.wrote(video: true, now: now + 1)
            #expect(machine.downSince == 1, "down since its first drop, however often it reopens")
            now += 2
            machine.writeFailed("no space", now: now, stopping: false)
        }
        #expect(waits == [1, 2, 4, 8, 16, 30])
        #expect(machine.status.connects == 7 && machine.status.drops == 7 && machine.status.lastError == "no space")
        // Room again: the next open holds past its probation and the target is up.
        #expect(machine.step(video: true, keyframe: true, now: now + 30) == .open)
        machine.opened(now: now + 30)
        machine.wrote(video: true, now: now + 32.5)
        #expect(machine.downSince == nil && machine.status.lastError == nil && machine.phase == .open(backoff: 1, provenAt: nil))
    }

    /// A target still on probation at the end is down: stopped, it stays `reconnecting` with its
    /// last error; completed whole, its completion proves it (`finished`, the error cleared).
    @Test func aTargetOnProbationAtTheEndIsDownUntilItsCompletionProvesIt() {
        for stopping in [true, false] {
            var machine = Self.connected()
            machine.writeFailed("no space", now: 1, stopping: false)
            #expect(machine.step(video: true, keyframe: true, now: 2) == .open)
            machine.opened(now: 2)
            #expect(machine.end(stopping: stopping) == (stopping ? .abandon : .complete))
            #expect(machine.status.state == .reconnecting && machine.status.lastError == "no space", "\(machine.status)")
            if !stopping {
                machine.completed(at: "live.m3u8", asked: "live.m3u8")
                #expect(machine.status.state == .finished && machine.status.lastError == nil, "\(machine.status)")
            }
        }
    }

    @Test func aStopCountsNoFailure() {
        var machine = Self.connected()
        machine.writeFailed("interrupted", now: 0, stopping: true)
        #expect(machine.status.drops == 0 && machine.status.lastError == nil && machine.status.state == .connected)
        var opening = Machine(name: "t", recovery: .givesUp)
        opening.openFailed("interrupted", now: 0, stopping: true)
        #expect(opening.phase != .failed && opening.status.framesDropped == 0)
    }

    @Test func aCompletionThatFailsOrLandsBesideItsNameSaysSo() {
        var machine = Self.connected(.givesUp)
        #expect(machine.end(stopping: false) == .complete)
        machine.completed(at: "rec.ts", asked: "rec.ts")
        #expect(machine.status.lastError == nil && machine.status.state == .finished)
        machine.completed(at: "rec-2.ts", asked: "rec.ts")
        #expect(machine.status.lastError?.contains("rec-2.ts") == true)
        machine.completionFailed("disk full")
        #expect(machine.status.state == .failed && machine.status.lastError == "disk full")
    }

    /// A seeded walk of random events: the counts only grow, a given-up target never opens again,
    /// and back-off stays within 1 … 30 s.
    @Test func aRandomWalkKeepsItsPromises() {
        var generator = SeededGenerator(seed: 0x7A26)
        for _ in 0..<200 {
            var machine = Machine(name: "t", recovery: Bool.random(using: &generator) ? .reconnects : .givesUp)
            var now = 0.0
            var gaveUp = false
            var last = machine.status
            for _ in 0..<200 {
                now += Double.random(in: 0...3, using: &generator)
                let video = Bool.random(using: &generator), key = video && Int.random(in: 0..<5, using: &generator) == 0
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: _ = machine.admit(video: video, keyframe: key, queued: Int.random(in: 0...12, using: &generator), limit: 10)
                case 1:
                    let step = machine.step(video: video, keyframe: key, now: now)
                    if gaveUp { #expect(step == .drop) }
                    if step == .open {
                        if Bool.random(using: &generator) { machine.opened(now: now) } else { machine.openFailed("x", now: now, stopping: false) }
                    }
                case 2: machine.writeFailed("x", now: now, stopping: false)
                default: machine.wrote(video: video, now: now)
                }
                if machine.phase == .failed { gaveUp = true }
                switch machine.phase {
                case .closed(_, let backoff), .open(let backoff, _): #expect((1...30).contains(backoff))
                default: break
                }
                let status = machine.status
                #expect(status.framesDropped >= last.framesDropped && status.framesWritten >= last.framesWritten)
                #expect(status.connects >= last.connects && status.drops >= last.drops)
                last = status
            }
        }
    }
}

/// A SplitMix64 generator: the same walk on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
