import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A seek that lands after the frame asked for is retried from the start of the data — one
/// decision, made by the reader's rule for images and for sessions alike. An MPEG-TS with
/// periodic intra refresh (as broadcasters send it) flags its recovery points as keyframes, but
/// a decoder shows nothing from one until the picture has recovered, seconds later.
@Suite struct LateLandingTests {
    @Test func sessionsAndImagesStartOnTheFrameAskedForAfterALateLanding() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/intra-refresh.ts"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=12",
                "-c:v", "libx264", "-preset", "veryfast", "-x264-params", "intra-refresh=1:keyint=50",
                "-bf", "0", "-pix_fmt", "yuv420p", path,
            ])
        let frames = try await Reference.frameTimes(path)
        let reference = try await Reference.allFrames(path)
        try #require(frames.count == reference.count && frames.count > 100)
        // Times just after recovery points flagged as keyframes (every 2 s), more than 5 s in (where a
        // source without an index is sought rather than decoded forward), and between.
        let start = frames[0]
        let times = [6.5, 6.9, 8.2, 10.6, 9.3].map { start + MediaTime(seconds: $0, preferredTimescale: 90_000) }
        for t in times {
            let k = ExactTimeTests.displayed(at: t, frames)
            let sink = InMemorySink(pixelFormat: .rgb24)
            let result = await DecodeSession(source: path, configuration: DecodeConfiguration(frameLimit: 2, startTime: t)).run(into: sink)
            #expect(result.status == .completed, "\(t.seconds): \(result.status)")
            #expect(
                sink.frames.first?.presentationTime == frames[k],
                "session from \(t.seconds) s starts at \(sink.frames.first?.presentationTime.seconds ?? -1), not \(frames[k].seconds)")
            #expect(sink.frames.first?.bytes == reference[k], "session from \(t.seconds) s: pixels")
            let (image, actual) = try await AssetImageGenerator(asset: Asset(path: path)).image(at: t)
            #expect(actual == frames[k] && image.pixels == reference[k], "image at \(t.seconds) s: \(actual.seconds), not \(frames[k].seconds)")
        }
    }
}
