import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A layer's timeline over its playlist: passes start exactly where the previous one ended, the
/// loop policy decides when the content ends, and what was counted is what was played.
@Suite struct LayerTimelineTests {
    let second = MediaTime(value: 1, timescale: 1)

    @Test func aPlaylistPlaysInOrderThenEnds() {
        var timeline = LayerTimeline(itemCount: 2, loop: .once)
        #expect(timeline.item == 0 && timeline.offset(at: second) == second)
        let began = timeline.passEnded(length: MediaTime(value: 3, timescale: 2))
        #expect(began)
        #expect(timeline.item == 1 && timeline.offset(at: second * 2) == MediaTime(value: 1, timescale: 2))
        let another = timeline.passEnded(length: second)
        #expect(!another)
        #expect(timeline.hasEnded && timeline.loopsCompleted == 0)
        let afterEnd = timeline.passEnded(length: second)
        #expect(!afterEnd, "an ended timeline stays ended")
    }

    @Test(arguments: [1, 2, 5])
    func aCountedLoopPlaysThatManyTimes(count: Int) {
        var timeline = LayerTimeline(itemCount: 3, loop: .times(count))
        var passes = 0
        while !timeline.hasEnded {
            passes += 1
            timeline.passEnded(length: MediaTime(value: 1001, timescale: 24000))
        }
        #expect(passes == 3 * count && timeline.loopsCompleted == count - 1)
        #expect(timeline.passStart == MediaTime(value: Int64(1001 * 3 * count), timescale: 24000), "no time lost or added at a seam")
    }

    @Test func foreverNeverEndsAndCountsWraps() {
        var timeline = LayerTimeline(itemCount: 1, loop: .forever)
        for _ in 0..<1000 {
            let began = timeline.passEnded(length: second)
            #expect(began)
        }
        #expect(!timeline.hasEnded && timeline.loopsCompleted == 1000 && timeline.item == 0)
        timeline.end()
        #expect(timeline.hasEnded)
        #expect(LayerTimeline(itemCount: 0, loop: .forever).hasEnded, "nothing to play has ended")
    }

    @Test(arguments: [
        ("30", 30, 1), ("29.97", 30000, 1001), ("23.976", 24000, 1001), ("24000/1001", 24000, 1001), ("12.5", 25, 2), ("59.94", 60000, 1001),
    ])
    func frameRatesParse(text: String, numerator: Int, denominator: Int) {
        let rate = FrameRate(parsing: text)
        #expect(rate?.numerator == numerator && rate?.denominator == denominator, "\(text) → \(String(describing: rate))")
    }

    /// The frames of a length are those at least half of which lie within it (the first always),
    /// counted in whole numbers (frame n's middle is within h/100 s when (2n + 1) × D × 100 ≤
    /// 2 × h × N), for decimal lengths that binary doubles cannot hold exactly.
    @Test(arguments: [(30, 1), (30000, 1001), (24000, 1001), (25, 1), (1, 2), (60000, 1001), (1000, 1), (7, 3)])
    func framesOfALengthAreThoseHalfWithinIt(numerator: Int, denominator: Int) throws {
        let rate = try #require(FrameRate(numerator: numerator, denominator: denominator))
        for hundredths in [1, 2, 4, 10, 50, 99, 100, 101, 150, 200, 230, 250, 333, 450, 1000, 8_640_000] {
            let (twice, frame) = (2 * hundredths * numerator, 100 * denominator)
            let expected = max(1, twice < frame ? 0 : (twice - frame) / (2 * frame) + 1)
            #expect(rate.frames(in: Double(hundredths) / 100) == expected, "\(hundredths) hundredths at \(rate)")
        }
        for absurd in [0, -1, Double.nan, -Double.infinity] { #expect(rate.frames(in: absurd) == 0) }
        #expect(rate.frames(in: .infinity) == 0 && rate.frames(in: 1e300) == Int.max / 2)
    }

    @Test func absurdFrameRatesAndColoursAreRefused() {
        for text in ["0", "-1", "nan", "inf", "1e9", "1/0", "x", ""] { #expect(FrameRate(parsing: text) == nil, "\(text)") }
        #expect(RGBColor(parsing: "#102030") == RGBColor(red: 0x10, green: 0x20, blue: 0x30))
        for text in ["#1020", "#GG0000", "purple-ish", ""] { #expect(RGBColor(parsing: text) == nil, "\(text)") }
        let canvas = CompositionCanvas(size: PixelSize(width: 2, height: 2), frameRate: FrameRate(numerator: 30000, denominator: 1001)!)
        #expect(canvas.time(ofFrame: 30000) == MediaTime(value: 1001, timescale: 1))
    }
}
