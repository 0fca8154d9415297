import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The histogram's percentiles against the exact ones of the same values, on random lateness
/// spread over five orders of magnitude.
@Suite struct LatenessHistogramTests {
    @Test(arguments: [1, 7, 100, 10_000])
    func percentilesStayWithinFivePercentOfTheExactOnes(count: Int) throws {
        var generator = SystemRandomNumberGenerator()
        var histogram = LatenessHistogram()
        var values: [Double] = []
        for _ in 0..<count {
            // Log-uniform from 0.1 ms to 10 s, with some on-time (negative) frames.
            let value = Bool.random(using: &generator) && count > 1 ? -0.001 : pow(10, Double.random(in: -4...1, using: &generator))
            values.append(value)
            histogram.record(value)
        }
        values.sort()
        #expect(histogram.count == count)
        #expect(histogram.maximum == values.last)
        #expect(histogram.minimum == values.first)
        #expect(abs((histogram.mean ?? .nan) - values.reduce(0, +) / Double(count)) < 1e-9)
        for fraction in [0.5, 0.9, 0.95, 0.99, 1.0] {
            let rank = max(1, Int((Double(count) * fraction).rounded(.up)))
            let exact = values[rank - 1]
            let estimate = try #require(histogram.percentile(fraction), "p\(fraction * 100) of \(count) values")
            if exact < LatenessHistogram.floor {
                #expect(estimate < LatenessHistogram.floor, "p\(fraction * 100) of on-time frames")
            } else {
                #expect(
                    estimate >= exact * 0.999 && estimate <= exact * LatenessHistogram.growth * 1.001,
                    "p\(fraction * 100): \(estimate) for \(exact)")
            }
        }
    }

    @Test func aMillionValuesAndNonFiniteOnes() {
        var histogram = LatenessHistogram()
        histogram.record(0.01)
        for i in 0..<1_000_000 { histogram.record(Double(i % 1000) * 1e-3) }
        #expect(histogram.count == 1_000_001)
        #expect(histogram.maximum == 0.999)
        let median = histogram.percentile(0.5) ?? 0
        #expect(median >= 0.499 && median <= 0.499 * LatenessHistogram.growth * 1.001)
        histogram.record(.nan)
        histogram.record(.infinity)
        #expect(histogram.count == 1_000_001, "non-finite values are ignored")
        #expect(LatenessHistogram().percentile(0.5) == nil)
    }
}
