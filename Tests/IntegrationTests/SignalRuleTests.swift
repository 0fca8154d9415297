import Glibc
import Testing

@testable import PlayheadCLI

/// What each signal means, alone: the first stops cleanly, the same one again within half a
/// second is one signal delivered twice (GNU `timeout`), any other second signal stops at once, a
/// third is left to the second; after the run was settled, a first signal changes nothing.
@Suite struct SignalRuleTests {
    static let start = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func oneSignalDeliveredTwiceIsOne() {
        var rule = SignalRule()
        let first = rule.receive(SIGTERM, at: Self.at(0))
        let again = rule.receive(SIGTERM, at: Self.at(200))
        let stillAgain = rule.receive(SIGTERM, at: Self.at(450))
        #expect(first == .stopCleanly && again == .duplicate && stillAgain == .duplicate)
        #expect(rule.received == SIGTERM)
    }

    @Test func aSecondSignalStopsAtOnceAndAThirdIsLeftToIt() {
        // The same signal later (a user's second Ctrl-C).
        var later = SignalRule()
        let (a, b, c) = (later.receive(SIGINT, at: Self.at(0)), later.receive(SIGINT, at: Self.at(600)), later.receive(SIGINT, at: Self.at(1300)))
        #expect(a == .stopCleanly && b == .stopAtOnce && c == .alreadyStopping, "\(a) \(b) \(c)")
        // Another signal at once (a supervisor's TERM, then the user's Ctrl-C).
        var other = SignalRule()
        let (d, e) = (other.receive(SIGTERM, at: Self.at(0)), other.receive(SIGINT, at: Self.at(1)))
        #expect(d == .stopCleanly && e == .stopAtOnce && other.received == SIGTERM, "\(d) \(e)")
    }

    @Test func afterTheRunWasSettledAFirstSignalChangesNothing() {
        var rule = SignalRule()
        #expect(rule.settle() == nil)
        let late = rule.receive(SIGTERM, at: Self.at(0))
        let twice = rule.receive(SIGTERM, at: Self.at(100))
        let second = rule.receive(SIGINT, at: Self.at(200))
        #expect(late == .tooLate && twice == .duplicate && second == .stopAtOnce, "\(late) \(twice) \(second)")
        #expect(rule.received == nil, "the exit status follows the settled outcome")
        // Settled after a signal: the signal stands, and a second still stops at once.
        var signalled = SignalRule()
        _ = signalled.receive(SIGINT, at: Self.at(0))
        #expect(signalled.settle() == SIGINT)
        let after = signalled.receive(SIGINT, at: Self.at(900))
        #expect(after == .stopAtOnce)
    }
}
