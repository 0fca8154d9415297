import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Bad input gets a typed error naming the file and the stage, quickly, and nothing crashes.
@Suite struct BadInputTests {
    static let expectations: [(String, PlayheadError.Code)] = [
        ("bad-empty.mp4", .emptyFile),
        ("bad-truncated.mp4", .openFailed),
        ("bad-random.mp4", .unrecognizedFormat),
        ("bad-text.mp4", .unrecognizedFormat),
    ]

    @Test(arguments: expectations.map(\.0))
    func badFileFailsClearlyAndQuickly(name: String) async throws {
        let path = try Fixtures.clip(name)
        let expectedCode = try #require(Self.expectations.first { $0.0 == name }?.1)
        let asset = Asset(path: path)
        let start = ContinuousClock.now
        let error = try await loadError(asset)
        let elapsed = ContinuousClock.now - start
        #expect(error.code == expectedCode)
        #expect(error.code.family == .demux)
        #expect(error.file == path)
        #expect(!error.message.isEmpty)
        // A no-hang bound: the suite runs many decodes in parallel on two cores, so wall time here
        // includes waiting for a core. The one-second figure is measured alone by benchmarks/probe.sh.
        #expect(elapsed < Bound.seconds(20), "took \(elapsed)")
        if case .failed(let kept) = await asset.status(of: .tracks) {
            #expect(kept == error)
        } else {
            Issue.record("tracks should be failed")
        }
    }

    /// A codec this build does not know (the picture's sample entry renamed `zzz1`, or `vvc1` —
    /// H.266, which this FFmpeg cannot decode): the track and the decoder's error name the
    /// container's tag — what ffprobe shows as `codec_tag_string` — not FFmpeg's `none`.
    @Test(arguments: ["zzz1", "vvc1"]) func anUnknownCodecIsNamedByItsTag(tag: String) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.renaming(["avc1": tag], writing: folder.appendingPathComponent("unknown-codec.mp4").path)
        let probe = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", path]),
            as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(probe == tag, "ffprobe: \(probe)")
        let tracks = try await Asset(path: path).load(.tracks)
        let video = try #require(tracks.first { $0.mediaType == .video })
        #expect(video.codecName == "unknown (\(probe))" && !video.isPlayable, "\(video.codecName)")
        let result = await DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9)))
            .run(into: NullSink(pixelFormat: .rgb24))
        guard case .failed(let error) = result.status else {
            Issue.record("\(result.status)")
            return
        }
        #expect(error.code == .decoderNotFound && error.message.contains(tag) && !error.message.contains("none"), "\(error)")
        // The probe says what of it plays: its sound only (play fails on the picture).
        let table = try await CLI.run(["probe", path])
        #expect(table.status == 0 && table.stdout.contains("playable (sound only"), "\(table.stdout)")
        let whole = try await CLI.run(["probe", try Fixtures.clip("h264-aac.mp4")])
        #expect(whole.stdout.contains("playable\n"), "\(whole.stdout)")
    }

    /// A sound codec this build does not know (the sound's sample entry renamed `iamf` and its
    /// decoder configuration `iacb`, as an immersive-audio file has them, which this FFmpeg cannot
    /// read): the track and the audio session's error
    /// name the container's tag, as ffprobe's `codec_tag_string` does, not `none`.
    @Test func anUnknownSoundCodecIsNamedByItsTag() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.renaming(["mp4a": "iamf", "esds": "iacb"], writing: folder.appendingPathComponent("unknown-sound.mp4").path)
        let probe = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", path]),
            as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(probe == "iamf", "ffprobe: \(probe)")
        let tracks = try await Asset(path: path).load(.tracks)
        let sound = try #require(tracks.first { $0.mediaType == .audio })
        #expect(sound.codecName == "unknown (iamf)" && !sound.isPlayable, "\(sound.codecName)")
        let result = await AudioSession(source: path).run(into: NullAudioSink())
        guard case .failed(let error) = result.status else {
            Issue.record("\(result.status)")
            return
        }
        #expect(error.code == .decoderNotFound && error.message.contains("iamf") && !error.message.contains("none"), "\(error)")
    }

    /// A copy of the sample `h264-aac.mp4` at `path` whose boxes named as the keys of `names`
    /// (four characters each) are renamed as their values.
    static func renaming(_ names: KeyValuePairs<String, String>, writing path: String) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: Fixtures.sampleMedia.appendingPathComponent("h264-aac.mp4")))
        for (tag, renamed) in names {
            let from = Array(tag.utf8), to = Array(renamed.utf8)
            var count = 0
            for index in 0..<(bytes.count - 4) where Array(bytes[index..<(index + 4)]) == from {
                bytes.replaceSubrange(index..<(index + 4), with: to)
                count += 1
            }
            try #require(count > 0, "no \(tag) in the sample")
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func missingPathAndDirectory() async throws {
        let missing = Fixtures.sampleMedia.appendingPathComponent("no-such-clip.mp4").path
        let missingError = try await loadError(Asset(path: missing))
        #expect(missingError.code == .fileNotFound)
        #expect(missingError.code.family == .io)
        #expect(missingError.file == missing)

        let directory = Fixtures.sampleMedia.path
        let directoryError = try await loadError(Asset(path: directory))
        #expect(directoryError.code == .notARegularFile)
        #expect(directoryError.file == directory)
    }

    @Test func failureIsKeptAndNotRetried() async throws {
        let asset = Asset(path: try Fixtures.clip("bad-text.mp4"))
        let first = try await loadError(asset)
        let second = try await loadError(asset)
        #expect(first == second)
    }

    private func loadError(_ asset: Asset) async throws -> PlayheadError {
        do {
            _ = try await asset.load(.tracks)
        } catch {
            return error
        }
        Issue.record("loading \(asset.source) should have failed")
        throw PlayheadError(code: .invalidState, message: "no error")
    }
}
