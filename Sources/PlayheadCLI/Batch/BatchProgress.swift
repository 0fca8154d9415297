import Foundation
import Glibc
import Playhead

/// Progress of a shard on standard error: on a terminal one line redrawn twice a second (done /
/// total, failures, rate, time left); otherwise a line every `interval` seconds, for logs.
final class BatchProgress: Sendable {
    private struct Counts {
        var done = 0
        var failed = 0
    }
    private let counts = Locked(Counts())
    private let total: Int?
    private let interval: Double
    private let shard: Shard
    private let start = ContinuousClock.now
    private let terminal = isatty(STDERR_FILENO) == 1

    init(total: Int?, interval: Double, shard: Shard) {
        self.total = total
        self.interval = interval
        self.shard = shard
    }

    func finished(failed: Bool) {
        counts.withLock {
            $0.done += 1
            if failed { $0.failed += 1 }
        }
    }

    /// Runs until cancelled.
    func report() async {
        let period = terminal ? 0.5 : interval
        guard period > 0 else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(period))
            if Task.isCancelled { break }
            if terminal { Console.errControlling("\r\u{1B}[K", line()) } else { Console.err(line() + "\n") }
        }
    }

    /// The last word, after the shard's record was written.
    func end(_ tally: BatchRun.Tally) {
        if terminal { Console.errControlling("\r\u{1B}[K", "") }
        Console.err(
            "shard \(shard): \(tally.done) done (\(tally.failed) failed), \(tally.skipped) already recorded, \(tally.repeated) repeated, "
                + "\(tally.notDone) not done, \(String(format: "%.1f", tally.elapsed)) s, \(tally.state)\n")
    }

    func line() -> String {
        let (done, failed) = counts.withLock { ($0.done, $0.failed) }
        let seconds = (ContinuousClock.now - start).inSeconds
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var text = "shard \(shard): \(done)"
        if let total { text += "/\(total)" }
        text += " done, \(failed) failed, \(String(format: "%.1f", rate))/s"
        if let total, rate > 0, done < total {
            text += ", about \(Self.clock(Double(total - done) / rate)) left"
        }
        return text
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(String(format: "%02d", s / 60 % 60))m" : s >= 60 ? "\(s / 60)m\(String(format: "%02d", s % 60))s" : "\(s)s"
    }
}
