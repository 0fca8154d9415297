import Testing

@testable import PlayheadMedia

/// A frame's time reaches the MP4 encoder's units from its rational time, exactly: frame *n* of a
/// 30000/1001 canvas is *n* × 1001 units of 1/30000 s at any hour of a day-long file.
@Suite struct MP4TimeUnitsTests {
    @Test(arguments: [0, 1, 29, 30_000, 2_589_411, 86_400 * 30])
    func aCanvasFrameIsExactlyItsUnits(frame n: Int64) {
        let time = MediaTime(value: n * 1001, timescale: 30000)
        #expect(MP4Writer.units(time, placedAt: nil, from: .zero, perSecond: 30000) == n * 1001)
        // From a timeline that starts later, on another timescale: still exact.
        let start = MediaTime(value: 7, timescale: 5)
        let shifted = MediaTime(value: n * 1001 * 5 + 7 * 30000, timescale: 150_000)
        #expect(MP4Writer.units(shifted, placedAt: nil, from: start, perSecond: 30000) == n * 1001)
    }

    @Test func timesThatAreNotUnitsAreRoundedAndNonNumbersAreNil() {
        // A Matroska millisecond: 33 ms on a 1/30000 grid is 990 units.
        #expect(MP4Writer.units(MediaTime(value: 33, timescale: 1000), placedAt: nil, from: .zero, perSecond: 30000) == 990)
        #expect(MP4Writer.units(MediaTime(value: 1, timescale: 3), placedAt: nil, from: .zero, perSecond: 2) == 1)
        #expect(MP4Writer.units(.invalid, placedAt: nil, from: .zero, perSecond: 30000) == nil)
        #expect(MP4Writer.units(.positiveInfinity, placedAt: nil, from: .zero, perSecond: 30000) == nil)
        #expect(MP4Writer.units(MediaTime(value: .max, timescale: 1), placedAt: nil, from: .zero, perSecond: 30000) == nil)
        // A player's placing, in seconds.
        #expect(MP4Writer.units(.invalid, placedAt: 1.5, from: .zero, perSecond: 30000) == 45000)
        #expect(MP4Writer.units(.zero, placedAt: .nan, from: .zero, perSecond: 30000) == nil)
        #expect(MP4Writer.units(.zero, placedAt: 1e300, from: .zero, perSecond: 30000) == nil)
    }

    @Test func theNearestPointOfTheGrid() {
        #expect(MP4Writer.nearestMultiple(of: 1001, to: 0) == 0)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: 1000) == 1001)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: 500) == 0)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: 501) == 1001)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: -500) == 0)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: -501) == -1001)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: 3 * 1001 + 15) == 3 * 1001)
        #expect(MP4Writer.nearestMultiple(of: 1001, to: -3 * 1001 - 15) == -3 * 1001)
    }

    @Test func aFrameWithoutATimeFollowsTheOneBefore() {
        #expect(MP4Writer.timestamp(of: 5000, after: -1, frame: 1001) == 0)
        #expect(MP4Writer.timestamp(of: nil, after: 2002, frame: 1001) == 3003)
        #expect(MP4Writer.timestamp(of: 1000, after: 2002, frame: 1001) == 2003)
        #expect(MP4Writer.timestamp(of: 9009, after: 2002, frame: 1001) == 9009)
    }
}
