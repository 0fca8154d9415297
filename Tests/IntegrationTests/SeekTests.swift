import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Starting a decode at a time: frame-exact, or at a keyframe inside a tolerance.
@Suite struct SeekTests {
    /// Every frame of the B-frame clip, decoded from the start, as the reference.
    static func allFrames(_ path: String) async -> [InMemorySink.Frame] {
        let sink = InMemorySink(pixelFormat: .rgb24)
        _ = await DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 160, height: 90))).run(into: sink)
        return sink.frames
    }

    @Test(arguments: [1, 13, 24, 25, 26, 37, 49])
    func exactSeekDeliversFrameKFirst(k: Int) async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let reference = await Self.allFrames(path)
        try #require(reference.count == 50)
        let target = MediaTime(value: Int64(k), timescale: 25)
        let sink = InMemorySink(pixelFormat: .rgb24, limit: 1)
        let configuration = DecodeConfiguration(outputSize: PixelSize(width: 160, height: 90), frameLimit: 1, startTime: target)
        let result = await DecodeSession(source: path, configuration: configuration).run(into: sink)
        #expect(result.status == .completed)
        let first = try #require(sink.frames.first)
        #expect(first.presentationTime == target)
        #expect(first.bytes == reference[k].bytes, "frame \(k) content differs")
    }

    @Test func exactSeekBetweenFramesGivesTheFrameShowingThen() async throws {
        // 0.5 s + 10 ms lies inside frame 12 (0.48 s … 0.52 s).
        let sink = InMemorySink(limit: 1)
        let configuration = DecodeConfiguration(
            outputSize: PixelSize(width: 16, height: 9), frameLimit: 1,
            startTime: MediaTime(value: 510, timescale: 1000))
        _ = await DecodeSession(source: try Fixtures.clip("h264-aac.mp4"), configuration: configuration).run(into: sink)
        #expect(sink.frames.first?.presentationTime == MediaTime(value: 12, timescale: 25))
    }

    @Test func tolerantSeekLandsOnAKeyframeInsideTheWindow() async throws {
        // Keyframes every 25 frames (1 s). 1.2 s with 0.5 s before allowed: the keyframe at 1.0 s.
        let sink = InMemorySink(limit: 1)
        let target = MediaTime(value: 12, timescale: 10)
        let configuration = DecodeConfiguration(
            outputSize: PixelSize(width: 16, height: 9), frameLimit: 1, startTime: target,
            startToleranceBefore: MediaTime(value: 1, timescale: 2), startToleranceAfter: MediaTime(value: 1, timescale: 2))
        let result = await DecodeSession(source: try Fixtures.clip("h264-aac.mp4"), configuration: configuration).run(into: sink)
        #expect(result.status == .completed)
        let landed = try #require(result.firstPresentationTime)
        #expect(landed == MediaTime(value: 1, timescale: 1))
        #expect(landed >= target - MediaTime(value: 1, timescale: 2) && landed <= target + MediaTime(value: 1, timescale: 2))
    }
}
