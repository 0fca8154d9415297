import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct MediaTimeTests {
    @Test func equalFractionsAreEqualAndHashAlike() {
        let half = MediaTime(value: 1, timescale: 2)
        let twoQuarters = MediaTime(value: 2, timescale: 4)
        #expect(half == twoQuarters)
        #expect(Set([half, twoQuarters]).count == 1)
        #expect(MediaTime(value: -3, timescale: 9) == MediaTime(value: -1, timescale: 3))
    }

    @Test func comparisonIsExactAcrossTimescales() {
        // 1/3 vs 333333/1000000: a float comparison would be fine here, the exact one must be too.
        #expect(MediaTime(value: 333_333, timescale: 1_000_000) < MediaTime(value: 1, timescale: 3))
        // Values large enough that value × timescale overflows 64 bits.
        let a = MediaTime(value: Int64.max / 2, timescale: 90_000)
        let b = MediaTime(value: Int64.max / 2 - 1, timescale: 90_000)
        #expect(b < a)
        let c = MediaTime(value: Int64.max / 3, timescale: 1_000_000_007)
        let d = MediaTime(value: Int64.max / 3 + 1, timescale: 1_000_000_007)
        #expect(c < d && !(d < c))
    }

    @Test func additionIsExactWithoutFloatDrift() {
        var sum = MediaTime.zero
        for _ in 0..<30 { sum += MediaTime(value: 1, timescale: 30) }
        #expect(sum == MediaTime(value: 1, timescale: 1))
        #expect(!sum.hasBeenRounded)

        // 108,000 NTSC frame durations (1001/30000 s each) sum to exactly 3603.6 s.
        var ntsc = MediaTime.zero
        for _ in 0..<108_000 { ntsc += MediaTime(value: 1001, timescale: 30000) }
        #expect(ntsc == MediaTime(value: 36036, timescale: 10))
        #expect(!ntsc.hasBeenRounded)

        let sixth = MediaTime(value: 1, timescale: 3) + MediaTime(value: 1, timescale: 6)
        #expect(sixth == MediaTime(value: 1, timescale: 2))
        #expect(sixth.timescale == 6)
        #expect(MediaTime(value: 1, timescale: 2) - MediaTime(value: 1, timescale: 3) == MediaTime(value: 1, timescale: 6))
    }

    @Test func additionRoundsOnlyWhenTheCommonTimescaleDoesNotFit() {
        let a = MediaTime(value: 1, timescale: 1_000_003)
        let b = MediaTime(value: 1, timescale: 999_983)
        let sum = a + b
        #expect(sum.hasBeenRounded)
        #expect(abs(sum.seconds - (a.seconds + b.seconds)) < 1e-6)
    }

    @Test func specialValuesPropagate() {
        let one = MediaTime(value: 1, timescale: 1)
        #expect(!(MediaTime.invalid + one).isValid)
        #expect((MediaTime.indefinite + one).isIndefinite)
        #expect((MediaTime.positiveInfinity + one).isPositiveInfinity)
        #expect((MediaTime.negativeInfinity - one).isNegativeInfinity)
        #expect(!(MediaTime.positiveInfinity + .negativeInfinity).isValid)
        #expect(!(MediaTime.positiveInfinity - .positiveInfinity).isValid)
        #expect((-MediaTime.positiveInfinity).isNegativeInfinity)
        #expect(MediaTime(value: 1, timescale: 0) == .invalid)
        #expect(MediaTime.invalid.seconds.isNaN && MediaTime.indefinite.seconds.isNaN)
    }

    @Test func specialValuesOrder() {
        let ordered: [MediaTime] = [
            .negativeInfinity, MediaTime(value: -5, timescale: 1), .zero,
            MediaTime(value: 7, timescale: 2), .positiveInfinity, .indefinite, .invalid,
        ]
        #expect(ordered.shuffled().sorted() == ordered)
    }

    @Test func overflowBecomesInfinity() {
        let big = MediaTime(value: Int64.max - 1, timescale: 1)
        #expect((big + big).isPositiveInfinity)
        #expect((big * 3).isPositiveInfinity)
        #expect((big * -3).isNegativeInfinity)
    }

    @Test func secondsConversion() {
        let t = MediaTime(seconds: 1.5, preferredTimescale: 600)
        #expect(t.value == 900 && t.timescale == 600 && !t.hasBeenRounded)
        let third = MediaTime(seconds: 1.0 / 3.0, preferredTimescale: 1000)
        #expect(third.value == 333 && third.hasBeenRounded)
        #expect(MediaTime(seconds: .nan) == .invalid)
        #expect(MediaTime(seconds: .infinity).isPositiveInfinity)
        #expect(MediaTime(seconds: -2.5, preferredTimescale: 2) == MediaTime(value: -5, timescale: 2))
    }

    @Test func convertingTimescales() {
        let t = MediaTime(value: 1001, timescale: 30000)
        let exact = t.converted(toTimescale: 60000)
        #expect(exact.value == 2002 && !exact.hasBeenRounded)
        let rounded = t.converted(toTimescale: 1000)
        #expect(rounded.value == 33 && rounded.hasBeenRounded)
        // Half away from zero.
        #expect(MediaTime(value: 1, timescale: 2).converted(toTimescale: 1).value == 1)
        #expect(MediaTime(value: -1, timescale: 2).converted(toTimescale: 1).value == -1)
    }

    @Test func timeRangeContainsItsStartButNotItsEnd() {
        let range = TimeRange(start: MediaTime(value: 1, timescale: 1), duration: MediaTime(value: 2, timescale: 1))
        #expect(range.end == MediaTime(value: 3, timescale: 1))
        #expect(range.contains(MediaTime(value: 1, timescale: 1)))
        #expect(range.contains(MediaTime(value: 2999, timescale: 1000)))
        #expect(!range.contains(MediaTime(value: 3, timescale: 1)))
        #expect(!range.contains(MediaTime(value: 999, timescale: 1000)))
    }

    /// The largest decimal times read exactly; larger ones (which once overflowed and trapped on
    /// `--at 9999999999.999999999`) are nil.
    @Test func hugeDecimalTimesAreRefusedNotTrapped() {
        #expect(MediaTime(decimal: "9000000000.999999999") == MediaTime(value: 9_000_000_000_999_999_999, timescale: 1_000_000_000))
        #expect(MediaTime(decimal: "-9000000000.5") == MediaTime(value: -18_000_000_001, timescale: 2))
        #expect(MediaTime(decimal: "9999999999.999999999") == nil)
        #expect(MediaTime(decimal: "9000000001") == nil)
        #expect(MediaTime(decimal: "9999999999.9999999999") == nil)
    }
}
