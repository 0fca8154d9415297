/// Which bytes of an HTTP file to ask for next, and what to do when a request fails: the policy
/// of ``HTTPRangeReader``, pure (no FFmpeg, no clock), so that every case is tested alone.
///
/// Every request is bounded (`Range: bytes=A-B`), so that a request given up — a seek, an image
/// far into the file — costs at most what is left of its range, never what the network had in
/// flight of the rest of the file. A request right after a seek asks for a small range; each one
/// that follows the last in order asks for twice as much, up to ``largest`` (as the media caches
/// of browsers do), so that reading straight through takes few requests.
///
/// A failed request (the connection refused, dropped, or closed before the bytes its answer
/// promised) is tried again after a wait that doubles each time, and given up after
/// ``attemptsAtOnePlace`` failures in a row at one position, or ``failureBudget`` in all: a
/// server that keeps failing gets a bounded number of requests, never a storm. An answer that
/// brought a good part of what was asked (``shortAnswer``) and stopped is no failure: a server
/// that caps its answers is asked for the rest at once. A server that closes each answer at the
/// same byte — or refuses a range there — although it announced more has ended its file there:
/// the bytes past it are known not to come, so asking for them again fails at once; one that
/// never told a size has simply reached the end of its data.
///
/// A server that answers a range with the whole file (it ignores `Range`) is read from the start
/// with the bytes before the position skipped.
struct RangePlan: Sendable, Equatable {
    /// The first range after a seek, and the largest one.
    static let smallest: Int64 = 64 << 10
    static let largest: Int64 = 8 << 20
    /// Failures in a row at one position before giving up, and failed requests in all.
    static let attemptsAtOnePlace = 4
    static let failureBudget = 24
    /// The first wait after a failure: doubled for each one in a row after it.
    static let firstWait: Duration = .milliseconds(100)
    /// An answer that stopped early after bringing at least this much made progress: not a failure.
    static let shortAnswer: Int64 = 4 << 10

    /// A request to make: its first byte and the byte after its last (nil: to the end).
    struct Request: Sendable, Equatable {
        var start: Int64
        var end: Int64?
    }

    /// What to do after a failed request.
    enum AfterFailure: Sendable, Equatable {
        /// Ask again from the same position after `wait`.
        case retry(after: Duration)
        /// Stop: the source has failed for good, for the reason given.
        case giveUp(Reason)
    }

    enum Reason: Sendable, Equatable {
        /// Answers ended at `at` each time although `announced` bytes were promised.
        case endsEarly(at: Int64, announced: Int64?)
        /// Requests kept failing (`failures` in a row at one place, or in all).
        case keepsFailing(failures: Int)
    }

    /// The file's size, once an answer told it.
    private(set) var size: Int64?
    /// The server answered a range with the whole file.
    private(set) var ignoresRanges = false
    /// Where the bytes stop for good (an answer closed there, again and again, although it
    /// announced more): nothing at or past it is asked for again.
    private(set) var knownEnd: Int64?
    /// Waits the longest back-off may reach (the asset's reconnect limit).
    let longestWait: Duration

    private var lastRequest: Request?
    private var nextLength = smallest
    private var failuresHere = 0
    private var failurePosition: Int64 = -1
    private(set) var failures = 0

    init(longestWait: Duration) {
        self.longestWait = longestWait
    }

    /// The request that reads on from `position`: the continuation of the last one (twice as
    /// long) or, after a seek, a small one. Nil when nothing can come from there (at or past the
    /// file's end, or where its bytes are known to stop).
    mutating func request(at position: Int64) -> Request? {
        if let size, position >= size { return nil }
        if let knownEnd, position >= knownEnd { return nil }
        if ignoresRanges {
            lastRequest = Request(start: 0, end: nil)
            return lastRequest
        }
        let continues = lastRequest?.end == position
        nextLength = continues ? min(nextLength * 2, Self.largest) : Self.smallest
        var end = position + nextLength
        if let size { end = min(end, size) }
        lastRequest = Request(start: position, end: end)
        return lastRequest
    }

    /// An answer told the file's size.
    mutating func learned(size: Int64) {
        guard size > 0 else { return }
        self.size = size
    }

    /// A range was answered with the whole file: from now on every request starts at 0.
    mutating func rangesIgnored() {
        ignoresRanges = true
    }

    /// Bytes arrived up to `position`: once they reach well past the last failure (a small
    /// range's worth), the failures before are forgiven.
    mutating func delivered(upTo position: Int64) {
        if failures > 0, position >= failurePosition + Self.smallest {
            failures = 0
            failuresHere = 0
        }
    }

    /// The answer being read stopped at `position` before the end of its range, after bringing
    /// `delivered` bytes: asked again at once when that was a good part (a server that caps its
    /// answers), else a failure like any other (``failed(at:closedEarly:)``, closed early).
    mutating func endedShort(at position: Int64, delivered: Int64) -> AfterFailure {
        if delivered >= Self.shortAnswer { return .retry(after: .zero) }
        return failed(at: position, closedEarly: true)
    }

    /// The request reading at `position` failed; `closedEarly`: nothing more is there (the
    /// answer ended before the bytes it promised, or the server refused the range), rather than
    /// an error on the way.
    mutating func failed(at position: Int64, closedEarly: Bool) -> AfterFailure {
        failures += 1
        if position == failurePosition {
            failuresHere += 1
        } else {
            failurePosition = position
            failuresHere = 1
        }
        // An answer cut short twice at one byte: that is where the server's file ends.
        if closedEarly, failuresHere >= 2 {
            knownEnd = position
            return .giveUp(.endsEarly(at: position, announced: size))
        }
        if failuresHere >= Self.attemptsAtOnePlace || failures >= Self.failureBudget {
            return .giveUp(.keepsFailing(failures: failures))
        }
        // The first failure after progress is tried again at once (a connection dropped in
        // passing); each one after it waits twice as long as the one before, up to the longest.
        guard failures > 1 else { return .retry(after: .zero) }
        var wait = Self.firstWait
        for _ in 0..<min(failures - 2, 16) { wait = wait * 2 }
        return .retry(after: min(wait, longestWait))
    }
}
