import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The HTTP range policy alone: bounded ranges that grow while reading straight on and start
/// small after a seek, waits that double, a bounded number of requests for a server that keeps
/// failing, and an end told by answers that stop early.
@Suite struct RangePlanTests {
    typealias Request = RangePlan.Request

    /// Reading straight on doubles each range up to the largest; a seek starts small again; the
    /// last range stops at the file's end and nothing is asked past it.
    @Test func rangesGrowWhileReadingOnAndStartSmallAfterASeek() throws {
        var plan = RangePlan(longestWait: .seconds(4))
        let firstRequest = plan.request(at: 0)
        let first = try #require(firstRequest)
        #expect(first == Request(start: 0, end: RangePlan.smallest))
        plan.learned(size: 100 << 20)
        var position = first.end ?? 0
        var lengths: [Int64] = []
        for _ in 0..<10 {
            let nextRequest = plan.request(at: position)
            let next = try #require(nextRequest)
            #expect(next.start == position)
            lengths.append((next.end ?? 0) - next.start)
            position = next.end ?? 0
        }
        let expected: [Int64] = [128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 8 << 20, 8 << 20, 8 << 20]
        #expect(lengths == expected)
        let afterSeek = plan.request(at: 50 << 20)
        #expect(afterSeek == Request(start: 50 << 20, end: (50 << 20) + RangePlan.smallest))
        let nearEnd = plan.request(at: (100 << 20) - 1000)
        #expect(nearEnd?.end == 100 << 20, "the last range stops at the file's end")
        let pastTheEnd = plan.request(at: 100 << 20)
        #expect(pastTheEnd == nil)
    }

    /// A server that answers ranges with the whole file is read from the start from then on.
    @Test func aServerThatIgnoresRangesIsReadFromTheStart() throws {
        var plan = RangePlan(longestWait: .seconds(4))
        _ = plan.request(at: 0)
        plan.rangesIgnored()
        let fromTheStart = plan.request(at: 1 << 20)
        #expect(fromTheStart == Request(start: 0, end: nil))
    }

    /// A dropped connection is tried again at once; failures in a row at one place wait twice as
    /// long each time (never past the longest wait) and are given up after a few; bytes that
    /// arrive well past the failure forgive it.
    @Test func failuresBackOffAndAreBounded() {
        var plan = RangePlan(longestWait: .milliseconds(300))
        let outcome1 = plan.failed(at: 1000, closedEarly: false)
        #expect(outcome1 == .retry(after: .zero))
        let outcome2 = plan.failed(at: 1000, closedEarly: false)
        #expect(outcome2 == .retry(after: .milliseconds(100)))
        let outcome3 = plan.failed(at: 1000, closedEarly: false)
        #expect(outcome3 == .retry(after: .milliseconds(200)))
        let outcome4 = plan.failed(at: 1000, closedEarly: false)
        #expect(outcome4 == .giveUp(.keepsFailing(failures: RangePlan.attemptsAtOnePlace)))

        var forgiving = RangePlan(longestWait: .seconds(4))
        let outcome5 = forgiving.failed(at: 1000, closedEarly: false)
        #expect(outcome5 == .retry(after: .zero))
        forgiving.delivered(upTo: 1000 + RangePlan.smallest / 2)
        let outcome6 = forgiving.failed(at: 1000 + RangePlan.smallest / 2, closedEarly: false)
        #expect(outcome6 == .retry(after: .milliseconds(100)), "not yet forgiven")
        forgiving.delivered(upTo: 1000 + 2 * RangePlan.smallest)
        let outcome7 = forgiving.failed(at: 1000 + 2 * RangePlan.smallest, closedEarly: false)
        #expect(outcome7 == .retry(after: .zero), "forgiven after progress")

        var capped = RangePlan(longestWait: .milliseconds(150))
        var waits: [Duration] = []
        for step in 0..<3 {
            if case .retry(let wait) = capped.failed(at: Int64(step) * 10, closedEarly: false) { waits.append(wait) }
        }
        #expect(waits == [.zero, .milliseconds(100), .milliseconds(150)], "the wait never passes the longest")
    }

    /// Without progress, failures anywhere count towards one budget: a server that fails every
    /// request gets a bounded number of them.
    @Test func aServerThatKeepsFailingGetsABoundedNumberOfRequests() {
        var plan = RangePlan(longestWait: .zero)
        var requests = 0
        var position: Int64 = 0
        while case .retry = plan.failed(at: position, closedEarly: false) {
            requests += 1
            position += 1
            #expect(requests < 100, "unbounded")
            if requests >= 100 { break }
        }
        #expect(requests == RangePlan.failureBudget - 1)
    }

    /// An answer that brought a good part and stopped (a server that caps its answers) is asked
    /// for the rest at once, however often; one that stopped with next to nothing is a failure.
    @Test func shortAnswersThatMadeProgressAreNoFailure() {
        var plan = RangePlan(longestWait: .seconds(4))
        for step in 0..<50 {
            let decision = plan.endedShort(at: Int64(step) * 16384, delivered: 16384)
            #expect(decision == .retry(after: .zero))
        }
        #expect(plan.failures == 0)
        let first = plan.endedShort(at: 900_000, delivered: 10)
        let second = plan.endedShort(at: 900_000, delivered: 0)
        #expect(first == .retry(after: .zero))
        #expect(second == .giveUp(.endsEarly(at: 900_000, announced: nil)))
    }

    /// Answers cut short twice at one byte (the server announced more): the file ends there, and
    /// nothing at or past it is asked for again; before it, reads go on.
    @Test func answersThatStopAtOneByteEndTheFileThere() throws {
        var plan = RangePlan(longestWait: .seconds(4))
        _ = plan.request(at: 0)
        plan.learned(size: 10_000_000)
        let outcome8 = plan.failed(at: 887_537, closedEarly: true)
        #expect(outcome8 == .retry(after: .zero))
        let outcome9 = plan.failed(at: 887_537, closedEarly: true)
        #expect(outcome9 == .giveUp(.endsEarly(at: 887_537, announced: 10_000_000)))
        #expect(plan.knownEnd == 887_537)
        let atTheEnd = plan.request(at: 887_537), pastIt = plan.request(at: 900_000), beforeIt = plan.request(at: 500_000)
        #expect(atTheEnd == nil && pastIt == nil)
        #expect(beforeIt != nil)
    }
}
