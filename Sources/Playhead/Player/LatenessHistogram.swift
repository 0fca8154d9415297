import Foundation
import PlayheadMedia

/// Lateness values (seconds) kept in fixed space: a histogram of buckets 5 % wide from 0.1 ms to
/// about 12 s, with the exact count, total and largest value. Percentiles are within 5 % of the
/// exact ones; a player can run for months without its statistics growing.
public struct LatenessHistogram: Sendable, Hashable {
    /// Values recorded.
    public private(set) var count = 0
    /// Their sum.
    public private(set) var total = 0.0
    /// The largest (nil before the first).
    public private(set) var maximum: Double?
    /// The smallest (nil before the first).
    public private(set) var minimum: Double?
    private var buckets = [Int](repeating: 0, count: LatenessHistogram.bucketCount)

    /// Bucket 0 holds values under `floor` (on time, or early); bucket i > 0 holds values from
    /// `floor · growth^(i−1)` up to `floor · growth^i`; the last also everything larger.
    static let floor = 1e-4
    static let growth = 1.05
    static let bucketCount = 242

    /// An empty histogram.
    public init() {}

    /// Records one value (non-finite values are ignored).
    /// - Parameter value: a lateness in seconds; a value under 0.1 ms (early ones too) counts as on time.
    public mutating func record(_ value: Double) {
        guard value.isFinite else { return }
        count += 1
        total += value
        maximum = Swift.max(maximum ?? value, value)
        minimum = Swift.min(minimum ?? value, value)
        buckets[Self.bucket(for: value)] += 1
    }

    /// The mean value.
    public var mean: Double? { count > 0 ? total / Double(count) : nil }

    /// The value below which `fraction` of the values lie (0.99 for p99): the upper edge of the
    /// bucket holding it, never more than the largest value; 0 for on-time values.
    /// - Parameter fraction: the share of values, 0…1 (held to that range).
    /// - Returns: the lateness in seconds, within 5 % of the exact percentile; nil before the first value.
    public func percentile(_ fraction: Double) -> Double? {
        guard count > 0, let maximum else { return nil }
        let rank = Swift.max(1, Int((Double(count) * Swift.min(1, Swift.max(0, fraction))).rounded(.up)))
        var seen = 0
        for (i, n) in buckets.enumerated() {
            seen += n
            guard seen >= rank else { continue }
            if i == 0 { return Swift.min(Swift.max(0, minimum ?? 0), maximum) }
            return Swift.min(Self.upperEdge(of: i), maximum)
        }
        return maximum
    }

    static func bucket(for value: Double) -> Int {
        guard value >= floor else { return 0 }
        let i = Int(log(value / floor) / log(growth)) + 1
        return Swift.min(Swift.max(1, i), bucketCount - 1)
    }

    static func upperEdge(of bucket: Int) -> Double {
        floor * pow(growth, Double(bucket))
    }
}
