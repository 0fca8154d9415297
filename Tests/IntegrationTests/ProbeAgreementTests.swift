import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// `Asset` must describe every sample clip the way ffprobe does.
@Suite struct ProbeAgreementTests {
    @Test(arguments: Fixtures.goodClips)
    func agreesWithFFprobe(clip: String) async throws {
        let path = try Fixtures.clip(clip)
        let expected = try Fixtures.ffprobe(clip)
        let asset = Asset(path: path)
        let (tracks, duration, format, playable) = try await asset.load(.tracks, .duration, .formatName, .isPlayable)

        #expect(playable)
        #expect(format == expected.format.format_name)
        let expectedDuration = try #require(expected.format.duration.flatMap(Double.init))
        #expect(
            abs(duration.seconds - expectedDuration) <= max(0.05, expectedDuration * 0.01),
            "duration \(duration.seconds) vs ffprobe \(expectedDuration)")

        #expect(tracks.count == expected.streams.count)
        for (track, stream) in zip(tracks, expected.streams) {
            #expect(track.index == stream.index)
            #expect(track.mediaType.rawValue == stream.codec_type)
            #expect(track.codecName == stream.codec_name)
            #expect(track.isPlayable)
            switch track.mediaType {
            case .video:
                let video = try #require(track.video)
                #expect(video.naturalSize == PixelSize(width: try #require(stream.width), height: try #require(stream.height)))
                let (h, v) = stream.pixelAspect
                #expect(video.pixelAspectRatio == PixelAspectRatio(horizontal: h, vertical: v))
                #expect(video.orientation == VideoOrientation(rotation: -stream.counterClockwiseRotation))
                let fps = try #require(video.nominalFrameRate)
                let expectedFPS = try #require(stream.frameRate)
                #expect(abs(fps - expectedFPS) < 0.001)
            case .audio:
                let audio = try #require(track.audio)
                #expect(audio.sampleRate == Int(try #require(stream.sample_rate)))
                #expect(audio.channelCount == stream.channels)
            default:
                break
            }
        }
    }

    @Test func displayedProportions() async throws {
        func presented(_ clip: String) async throws -> PixelSize? {
            let tracks: [AssetTrack] = try await Asset(path: try Fixtures.clip(clip)).load(.tracks)
            return tracks.first(where: { $0.mediaType == .video })?.presentationSize
        }
        #expect(try await presented("anamorphic.mp4") == PixelSize(width: 320, height: 180))
        #expect(try await presented("rotated-90.mp4") == PixelSize(width: 180, height: 320))
        #expect(try await presented("portrait.mp4") == PixelSize(width: 180, height: 320))
        #expect(try await presented("4x3.mp4") == PixelSize(width: 320, height: 240))
        #expect(try await presented("odd-size.mp4") == PixelSize(width: 321, height: 181))
    }

    @Test func audioOnlyFilesHaveNoVideoTrack() async throws {
        for clip in ["audio-only.m4a", "audio-only.mp3"] {
            let tracks = try await Asset(path: try Fixtures.clip(clip)).load(.tracks)
            #expect(tracks.map(\.mediaType) == [.audio])
        }
    }
}
