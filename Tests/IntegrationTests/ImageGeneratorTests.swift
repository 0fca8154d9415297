import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct ImageGeneratorTests {
    func results(_ generator: AssetImageGenerator, _ times: [MediaTime]) async -> [AssetImageGenerator.Result] {
        var all: [AssetImageGenerator.Result] = []
        for await result in generator.images(for: times) { all.append(result) }
        return all
    }

    @Test(arguments: [1, 2])
    func exactImagesAreTheFramesShowingThen(decoders: Int) async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let reference = await SeekTests.allFrames(path)
        var generator = AssetImageGenerator(asset: Asset(path: path))
        generator.maximumSize = PixelSize(width: 160, height: 90)
        generator.decoderCount = decoders
        // Unsorted on purpose; answers come back in ascending order.
        let frames = [37, 5, 26, 0, 49, 12, 13, 24, 25]
        let all = await results(generator, frames.map { MediaTime(value: Int64($0), timescale: 25) })
        #expect(all.map(\.requestedTime) == frames.sorted().map { MediaTime(value: Int64($0), timescale: 25) })
        for (result, k) in zip(all, frames.sorted()) {
            #expect(result.error == nil)
            #expect(result.actualTime == MediaTime(value: Int64(k), timescale: 25))
            #expect(result.image?.pixels == reference[k].bytes, "image at frame \(k) differs")
        }
    }

    @Test func betweenFramesGivesTheFrameShowing() async throws {
        let generator = AssetImageGenerator(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let (_, actual) = try await generator.image(at: MediaTime(value: 1010, timescale: 1000))
        #expect(actual == MediaTime(value: 25, timescale: 25), "1.01 s shows the frame at 1.00 s")
    }

    @Test(arguments: [1, 13, 30])
    func exactImagesMatchFFmpegSeeking(tenths: Int) async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let time = MediaTime(value: Int64(tenths), timescale: 10)
        var generator = AssetImageGenerator(asset: Asset(path: path))
        generator.decoderCount = 1
        guard tenths < 20 else {
            // Past the 2 s clip: an error for this image alone.
            await #expect(throws: PlayheadError.self) { try await generator.image(at: time) }
            return
        }
        let (image, _) = try await generator.image(at: time)
        let reference = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-ss", String(time.seconds), "-i", path,
                "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
            ])
        #expect(Reference.psnr(image.pixels, reference) >= 40)
    }

    @Test func tolerantImagesLandOnKeyframesInsideTheWindow() async throws {
        var generator = AssetImageGenerator(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        generator.requestedTimeToleranceBefore = MediaTime(value: 1, timescale: 2)
        generator.requestedTimeToleranceAfter = MediaTime(value: 1, timescale: 2)
        generator.maximumSize = PixelSize(width: 160, height: 90)
        let requested = [MediaTime(value: 1, timescale: 10), MediaTime(value: 13, timescale: 10), MediaTime(value: 8, timescale: 10)]
        let all = await results(generator, requested)
        let reference = await SeekTests.allFrames(try Fixtures.clip("h264-aac.mp4"))
        // The clip's keyframes (packets flagged key in its index): frames 0 and 25.
        let syncFrames = [0, 25]
        for result in all {
            let actual = try #require(result.actualTime)
            let window = (result.requestedTime - MediaTime(value: 1, timescale: 2))...(result.requestedTime + MediaTime(value: 1, timescale: 2))
            #expect(window.contains(actual), "\(actual.seconds) s is outside the tolerance of \(result.requestedTime.seconds) s")
            let frame = Int((actual.seconds * 25).rounded())
            #expect(syncFrames.contains(frame), "frame \(frame) is not a keyframe")
            // Nearest: no other keyframe inside the window is closer.
            let distance = abs(actual.seconds - result.requestedTime.seconds)
            #expect(
                syncFrames.allSatisfy { k in
                    let t = Double(k) / 25
                    return !(window.contains(MediaTime(value: Int64(k), timescale: 25))) || abs(t - result.requestedTime.seconds) >= distance - 1e-9
                })
            #expect(result.image?.pixels == reference[frame].bytes)
        }
        #expect(all.map(\.actualTime) == [.zero, MediaTime(value: 1, timescale: 1), MediaTime(value: 1, timescale: 1)])
    }

    @Test func timesOutsideTheClipFailAlone() async throws {
        let generator = AssetImageGenerator(asset: Asset(path: try Fixtures.clip("video-only.mp4")))
        let all = await results(
            generator, [MediaTime(value: -1, timescale: 1), MediaTime(value: 1, timescale: 1), MediaTime(value: 5, timescale: 1)])
        #expect(all.count == 3)
        #expect(all[0].error?.code == .invalidArgument)
        #expect(all[1].image != nil && all[1].error == nil)
        #expect(all[2].error?.code == .invalidArgument)
        #expect(all[2].error?.file?.hasSuffix("video-only.mp4") == true)
    }

    @Test func imagesHaveTheDisplayedProportions() async throws {
        func size(_ clip: String, _ maximum: PixelSize?) async throws -> PixelSize {
            var generator = AssetImageGenerator(asset: Asset(path: try Fixtures.clip(clip)))
            generator.maximumSize = maximum
            return try await generator.image(at: .zero).image.size
        }
        #expect(try await size("rotated-90.mp4", nil) == PixelSize(width: 180, height: 320))
        #expect(try await size("rotated-90.mp4", PixelSize(width: 160, height: 90)) == PixelSize(width: 51, height: 90))
        #expect(try await size("anamorphic.mp4", PixelSize(width: 160, height: 90)) == PixelSize(width: 160, height: 90))
        #expect(try await size("4x3.mp4", PixelSize(width: 160, height: 90)) == PixelSize(width: 120, height: 90))
    }

    @Test func cancellingTheRequestingTaskCancels() async throws {
        let generator = AssetImageGenerator(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let task = Task { try await generator.image(at: MediaTime(value: 1, timescale: 1)) }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a cancelled request must not deliver an image")
        } catch let error as PlayheadError {
            #expect(error.code == .cancelled)
        }
    }

    @Test func badFileFailsEveryImage() async throws {
        let generator = AssetImageGenerator(asset: Asset(path: try Fixtures.clip("bad-random.mp4")))
        let all = await results(generator, [.zero, MediaTime(value: 1, timescale: 1)])
        #expect(all.count == 2)
        #expect(all.allSatisfy { $0.error?.code == .unrecognizedFormat && $0.image == nil })
    }
}
