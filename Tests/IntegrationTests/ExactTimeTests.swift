import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The frame displayed at a time — the last frame whose presentation time is at or before it — on
/// clips with and without B-frames, at 25 and 30000/1001 fps, for random sets of times (unsorted,
/// duplicated, between frames, the first and last frame, the very end), compared pixel for pixel
/// with ffmpeg's decode of that frame, and with ffprobe's time for it.
@Suite struct ExactTimeTests {
    /// With and without B-frames at 25 and 30000/1001 fps; Matroska with B-pyramid (no decoding
    /// times on its first packets); MPEG-PS and MPEG-TS (no index: seeks search by timestamp; the
    /// TS starts at 1.4 s).
    static let clips = ["bframes-25.mp4", "nobframes-25.mp4", "bframes-ntsc.mp4", "nobframes-ntsc.mp4", "pyramid.mkv", "mpeg1.mpg", "sparse.ts"]

    /// `count` times across `[start, end]`: frame starts, points inside frames, duplicates, the ends.
    static func randomTimes(
        _ frames: [MediaTime], start: MediaTime = .zero, end: MediaTime, count: Int,
        using random: inout SeededGenerator
    ) -> [MediaTime] {
        var times: [MediaTime] = []
        let micro = { (t: MediaTime) -> Int64 in Int64((t.seconds * 1_000_000).rounded()) }
        while times.count < count {
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                times.append(frames.randomElement(using: &random)!)
            case 1:
                // Strictly inside a frame's span.
                let k = Int.random(in: 0..<frames.count, using: &random)
                let next = k + 1 < frames.count ? frames[k + 1] : end
                let low = micro(frames[k]) + 1, high = micro(next) - 1
                if low < high { times.append(MediaTime(value: Int64.random(in: low..<high, using: &random), timescale: 1_000_000)) }
            case 2:
                if let earlier = times.randomElement(using: &random) { times.append(earlier) }
            case 3:
                times.append([frames[0], frames[frames.count - 1], end].randomElement(using: &random)!)
            default:
                times.append(MediaTime(value: Int64.random(in: micro(start)...micro(end), using: &random), timescale: 1_000_000))
            }
        }
        return times.shuffled(using: &random)
    }

    /// Index of the frame displayed at `t`.
    static func displayed(at t: MediaTime, _ frames: [MediaTime]) -> Int {
        frames.lastIndex { $0 <= t } ?? 0
    }

    @Test(arguments: clips, [1, 2])
    func exactImagesAreTheFrameDisplayedAtRandomTimes(clip name: String, decoders: Int) async throws {
        let path = try Fixtures.reader(name)
        let frames = try await Reference.frameTimes(path)
        let reference = try await Reference.allFrames(path)
        try #require(frames.count == reference.count && frames.count > 10)
        let asset = Asset(path: path)
        let (start, duration) = try await asset.load(.startTime, .duration)
        var random = SeededGenerator()
        for round in 0..<3 {
            let times = Self.randomTimes(frames, start: start, end: start + duration, count: 40, using: &random)
            var generator = AssetImageGenerator(asset: asset)
            generator.decoderCount = decoders
            var results: [AssetImageGenerator.Result] = []
            for await result in generator.images(for: times) { results.append(result) }
            #expect(results.map(\.requestedTime) == times.sorted(), "seed \(random.seed) round \(round)")
            for result in results {
                let k = Self.displayed(at: result.requestedTime, frames)
                let what = "\(name) at \(result.requestedTime.seconds) s (seed \(random.seed), round \(round))"
                guard let image = result.image else {
                    Issue.record("\(what): no image: \(String(describing: result.error))")
                    continue
                }
                #expect(
                    result.actualTime == frames[k], "\(what): actual \(result.actualTime?.seconds ?? -1), want frame \(k) at \(frames[k].seconds)")
                #expect(image.pixels == reference[k], "\(what): pixels are not those of frame \(k)")
            }
        }
    }

    /// The same through a session's start: the first frame delivered is the frame displayed at
    /// the start time, and every frame after it follows.
    @Test(arguments: clips)
    func sessionsStartAtTheFrameDisplayedThen(clip name: String) async throws {
        let path = try Fixtures.reader(name)
        let frames = try await Reference.frameTimes(path)
        let reference = try await Reference.allFrames(path)
        var random = SeededGenerator()
        let (start, duration) = try await Asset(path: path).load(.startTime, .duration)
        for t in Self.randomTimes(frames, start: start, end: start + duration, count: 8, using: &random) {
            let k = Self.displayed(at: t, frames)
            let sink = InMemorySink(pixelFormat: .rgb24)
            let result = await DecodeSession(source: path, configuration: DecodeConfiguration(frameLimit: 3, startTime: t)).run(into: sink)
            let what = "\(name) from \(t.seconds) s (seed \(random.seed))"
            #expect(result.status == .completed, "\(what): \(result.status)")
            let expected = Array(k..<min(k + 3, frames.count))
            #expect(sink.frames.map(\.presentationTime) == expected.map { frames[$0] }, "\(what)")
            #expect(sink.frames.map(\.bytes) == expected.map { reference[$0] }, "\(what): pixels")
        }
    }

    /// A one-frame clip shows its frame at every time inside it, and nothing after its end.
    @Test func aOneFrameClipShowsItsFrameThroughout() async throws {
        let path = try Fixtures.reader("one-frame.mp4")
        let reference = try await Reference.allFrames(path)
        try #require(reference.count == 1)
        let generator = AssetImageGenerator(asset: Asset(path: path))
        for hundredths in [0, 1, 2, 3, 4] {
            let (image, actual) = try await generator.image(at: MediaTime(value: Int64(hundredths), timescale: 100))
            #expect(actual == .zero, "at \(hundredths) hundredths")
            #expect(image.pixels == reference[0])
        }
        await #expect(throws: PlayheadError.self) { try await generator.image(at: MediaTime(value: 5, timescale: 100)) }
    }

    /// With a tolerance, the image comes from inside the window: the nearest keyframe there when
    /// there is one; otherwise the frame displayed at the time if it starts inside the window, or
    /// a frame that does — never a keyframe outside. On MP4 (an index) and MPEG-TS (none).
    @Test(arguments: ["sparse-keyframes.mp4", "sparse.ts"])
    func tolerantRequestsLandInsideTheirWindow(clip name: String) async throws {
        let path = try Fixtures.reader(name)
        let frames = try await Reference.frameTimes(path)
        let reference = try await Reference.allFrames(path)
        let keyframes = try Fixtures.readerKeyframes(name)
        try #require(keyframes.count >= 2 && keyframes.allSatisfy { frames.contains($0) })
        let (start, duration) = try await Asset(path: path).load(.startTime, .duration)
        var random = SeededGenerator()
        var requests: [(MediaTime, MediaTime)] = [(start + MediaTime(value: 1, timescale: 1), MediaTime(value: 1, timescale: 2))]
        for _ in 0..<24 {
            let t = start + MediaTime(value: Int64.random(in: 0...Int64(duration.seconds * 1000) - 100, using: &random), timescale: 1000)
            let tolerance = MediaTime(value: Int64.random(in: 1...3000, using: &random), timescale: 1000)
            requests.append((t, tolerance))
        }
        for (t, tolerance) in requests {
            var generator = AssetImageGenerator(asset: Asset(path: path))
            generator.requestedTimeToleranceBefore = tolerance
            generator.requestedTimeToleranceAfter = tolerance
            let what = "\(name) at \(t.seconds) ± \(tolerance.seconds) s (seed \(random.seed))"
            let (image, actual) = try await generator.image(at: t)
            let window = (t - tolerance)...(t + tolerance)
            let startsInside = frames.contains { window.contains($0) }
            if startsInside {
                #expect(window.contains(actual), "\(what): landed at \(actual.seconds) s")
            } else {
                #expect(actual == frames[ExactTimeTests.displayed(at: t, frames)], "\(what): no frame starts inside, so the one displayed")
            }
            let inside = keyframes.filter { window.contains($0) }
            if let nearest = inside.min(by: { abs(($0 - t).seconds) < abs(($1 - t).seconds) }) {
                #expect(actual == nearest, "\(what): the nearest keyframe inside is \(nearest.seconds) s, got \(actual.seconds) s")
            }
            let k = try #require(frames.firstIndex(of: actual))
            #expect(image.pixels == reference[k], "\(what): pixels of frame \(k)")
        }
    }
}
