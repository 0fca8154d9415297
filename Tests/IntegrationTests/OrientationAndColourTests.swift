import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The picture as ffmpeg shows it: all eight display-matrix orientations (bit for bit in YUV and
/// in RGB, with ffmpeg's autorotated size), and tagged colours converted with the stream's own
/// matrix and range (against ffmpeg's rgb24 of the same frame at the same size).
@Suite struct OrientationAndColourTests {
    static let orientations = ["r0", "r90", "r180", "r270", "r0m", "r90m", "r180m", "r270m"]

    @Test(arguments: orientations)
    func everyOrientationMatchesFFmpegsAutorotate(name: String) async throws {
        let path = try Fixtures.reader("orient-\(name).mp4")
        let shown = try await Reference.displayedSize(path)
        let yuv = try await Reference.allFrames(path, pixelFormat: "yuv420p")
        let rgb = try await Reference.allFrames(path)

        // Probe: the presentation size is ffmpeg's.
        let tracks = try await Asset(path: path).load(.tracks)
        #expect(tracks.first { $0.mediaType == .video }?.presentationSize == shown, "\(name): probe")

        // Frames in YUV (as a Y4M dump gets them), bit for bit.
        let sink = InMemorySink(pixelFormat: .yuv420p)
        let result = await DecodeSession(source: path).run(into: sink)
        #expect(result.status == .completed)
        #expect(result.outputSize == shown, "\(name): canvas \(String(describing: result.outputSize)), ffmpeg \(shown)")
        #expect(sink.frames.map(\.bytes) == yuv, "\(name): YUV frames differ from ffmpeg's autorotated ones")

        // Frames in RGB (PNG/PPM dumps), and images, bit for bit.
        let rgbSink = InMemorySink(pixelFormat: .rgb24)
        _ = await DecodeSession(source: path).run(into: rgbSink)
        #expect(rgbSink.frames.map(\.bytes) == rgb, "\(name): RGB frames differ")
        let (image, _) = try await AssetImageGenerator(asset: Asset(path: path)).image(at: .zero)
        #expect(image.size == shown)
        #expect(image.pixels == rgb[0], "\(name): image differs")
    }

    /// The orientation read from a matrix composes and inverts as a group, and its pixel mapping
    /// agrees with the composition.
    @Test func orientationsFormAGroup() {
        let size = PixelSize(width: 5, height: 3)
        for a in VideoOrientation.all {
            #expect(a.followed(by: a.inverse) == .identity, "\(a)")
            for b in VideoOrientation.all {
                let ab = a.followed(by: b)
                // Displayed through a then b: b's stored picture is a's displayed one.
                let middle = a.displayedSize(of: size)
                let shown = b.displayedSize(of: middle)
                for y in 0..<shown.height {
                    for x in 0..<shown.width {
                        let viaB = b.storedPoint(forDisplayed: (x, y), stored: middle)
                        let viaA = a.storedPoint(forDisplayed: viaB, stored: size)
                        let direct = ab.storedPoint(forDisplayed: (x, y), stored: size)
                        #expect(viaA == direct, "\(a) then \(b) at (\(x), \(y))")
                    }
                }
            }
        }
    }

    static let colourClips = ["bt709-limited.mp4", "bt709-full.mp4", "bt709-full-ffv1.mkv", "bt2020-10bit.mkv", "untagged-hd.mp4", "yuvj-bt709.mp4"]

    @Test(arguments: colourClips)
    func colourConversionHonoursTheStreamsTags(name: String) async throws {
        let path = try Fixtures.reader(name)
        // Native size, through a session (PNG/PPM dumps): every frame, not just the first.
        let reference = try await Reference.allFrames(path)
        let sink = InMemorySink(pixelFormat: .rgb24)
        _ = await DecodeSession(source: path).run(into: sink)
        try #require(sink.frames.count == reference.count)
        for (k, frame) in sink.frames.enumerated() {
            let native = Reference.psnr(frame.bytes, reference[k])
            #expect(native >= 45, "\(name): frame \(k) at \(native) dB at native size")
        }
        // Scaled to half size, through the image generator (thumbnails, sheets).
        let shown = try await Reference.displayedSize(path)
        let small = PixelSize(width: shown.width / 2, height: shown.height / 2)
        let scaled = try await Reference.allFrames(path, size: small)
        let frames = try await Reference.frameTimes(path)
        var generator = AssetImageGenerator(asset: Asset(path: path))
        generator.maximumSize = small
        for await result in generator.images(for: frames) {
            let image = try #require(result.image)
            let k = try #require(frames.firstIndex(of: result.requestedTime))
            try #require(image.size == small)
            let thumbnail = Reference.psnr(image.pixels, scaled[k])
            #expect(thumbnail >= 45, "\(name): image of frame \(k) at \(thumbnail) dB at \(small)")
        }
    }

    @Test func probeReportsTheColourTags() async throws {
        let tags: [String: ColorDescription] = [
            "bt709-limited.mp4": ColorDescription(matrix: "bt709", range: .limited, primaries: "bt709", transfer: "bt709"),
            "bt2020-10bit.mkv": ColorDescription(matrix: "bt2020nc", range: .limited, primaries: "bt2020", transfer: "smpte2084"),
            "untagged-hd.mp4": ColorDescription(),
        ]
        for (name, expected) in tags {
            let tracks = try await Asset(path: try Fixtures.reader(name)).load(.tracks)
            #expect(tracks.first { $0.mediaType == .video }?.video?.color == expected, "\(name)")
        }
    }
}
