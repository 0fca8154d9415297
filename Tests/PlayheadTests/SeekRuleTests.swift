import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The one seek rule's pure parts: what a caller's arguments mean as a request, and when seeking
/// beats decoding forward.
@Suite struct SeekRuleTests {
    let limit: Int64 = 5 * 90_000  // five seconds in a 90 kHz time base

    /// Infinite times are the ends, invalid ones no request; tolerances that are not numbers or
    /// are negative count as zero, and none grows past what converts.
    @Test func aCallersArgumentsAsARequest() throws {
        let exact = try #require(SeekRequest.resolving(time: MediaTime(seconds: 3), toleranceBefore: .zero, toleranceAfter: .zero))
        #expect(exact.isExact && exact.time == MediaTime(seconds: 3))
        #expect(SeekRequest.resolving(time: .positiveInfinity, toleranceBefore: .zero, toleranceAfter: .zero)?.time == SeekRequest.pastAnyEnd)
        #expect(SeekRequest.resolving(time: .negativeInfinity, toleranceBefore: .zero, toleranceAfter: .zero)?.time == -SeekRequest.pastAnyEnd)
        #expect(SeekRequest.resolving(time: .invalid, toleranceBefore: .zero, toleranceAfter: .zero) == nil)
        #expect(SeekRequest.resolving(time: .indefinite, toleranceBefore: .zero, toleranceAfter: .zero) == nil)
        let huge = MediaTime(value: Int64(1) << 40, timescale: 1)
        #expect(SeekRequest.resolving(time: huge, toleranceBefore: .zero, toleranceAfter: .zero)?.time == SeekRequest.pastAnyEnd, "held to the end")
        let odd = try #require(
            SeekRequest.resolving(time: .zero, toleranceBefore: MediaTime(seconds: -1), toleranceAfter: .invalid))
        #expect(odd.isExact, "negative and invalid tolerances are zero")
        let wide = try #require(SeekRequest.resolving(time: .zero, toleranceBefore: .positiveInfinity, toleranceAfter: huge * 4))
        #expect(wide.toleranceBefore == SeekRequest.pastAnyEnd * 2 && wide.toleranceAfter == SeekRequest.pastAnyEnd * 2)
        #expect(!wide.isExact)
    }

    /// A source that cannot seek is always decoded forward.
    @Test func aSourceThatCannotSeekNeverSeeks() {
        let far = DecodePosition(atStart: false, oldestHeld: 0, newestHeld: 0, lastPacketDTS: 0)
        #expect(
            !SeekRule.shouldSeek(
                to: 1_000_000_000, from: far, indexedKeyframe: 900_000_000, hasIndex: true, canSeek: false, streamStart: 0, forwardLimit: limit))
    }

    /// From the start: with an index, only when a keyframe later than the stream's start lies at
    /// or before the target; without one, only past the forward limit.
    @Test func fromTheStart() {
        let start = DecodePosition(atStart: true)
        #expect(
            !SeekRule.shouldSeek(to: 450_000, from: start, indexedKeyframe: 0, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            SeekRule.shouldSeek(
                to: 450_000, from: start, indexedKeyframe: 180_000, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            !SeekRule.shouldSeek(to: 450_000, from: start, indexedKeyframe: nil, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            !SeekRule.shouldSeek(to: limit, from: start, indexedKeyframe: nil, hasIndex: false, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            SeekRule.shouldSeek(to: limit + 1, from: start, indexedKeyframe: nil, hasIndex: false, canSeek: true, streamStart: 0, forwardLimit: limit)
        )
        // The limit counts from the stream's own start.
        #expect(
            !SeekRule.shouldSeek(
                to: 1_000 + limit, from: start, indexedKeyframe: nil, hasIndex: false, canSeek: true, streamStart: 1_000, forwardLimit: limit))
    }

    /// Going back before the oldest frame held, or with nothing held, seeks.
    @Test func backwardsOrUnknownSeeks() {
        let held = DecodePosition(atStart: false, oldestHeld: 90_000, newestHeld: 93_600, lastPacketDTS: 97_200)
        #expect(SeekRule.shouldSeek(to: 89_999, from: held, indexedKeyframe: 0, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            SeekRule.shouldSeek(to: 200_000, from: .unknown, indexedKeyframe: 0, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
    }

    /// Forward with an index: seek only when a keyframe lies after the last packet sent (decoding
    /// forward would pass it); without an index, only past the forward limit from the newest frame.
    @Test func forwardDecodesUntilAKeyframeIsCloser() {
        let held = DecodePosition(atStart: false, oldestHeld: 90_000, newestHeld: 93_600, lastPacketDTS: 97_200)
        #expect(
            !SeekRule.shouldSeek(to: 180_000, from: held, indexedKeyframe: 90_000, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit)
        )
        #expect(
            !SeekRule.shouldSeek(
                to: 180_000, from: held, indexedKeyframe: 97_200, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit),
            "a keyframe at the last packet sent is already being decoded")
        #expect(
            SeekRule.shouldSeek(to: 180_000, from: held, indexedKeyframe: 97_201, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
        let noPacket = DecodePosition(atStart: false, oldestHeld: 90_000, newestHeld: 93_600, lastPacketDTS: nil)
        #expect(
            SeekRule.shouldSeek(to: 180_000, from: noPacket, indexedKeyframe: 0, hasIndex: true, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            !SeekRule.shouldSeek(
                to: 93_600 + limit, from: held, indexedKeyframe: nil, hasIndex: false, canSeek: true, streamStart: 0, forwardLimit: limit))
        #expect(
            SeekRule.shouldSeek(
                to: 93_600 + limit + 1, from: held, indexedKeyframe: nil, hasIndex: false, canSeek: true, streamStart: 0, forwardLimit: limit))
    }
}
