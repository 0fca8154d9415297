import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// How a file's data ends, decided from the container's evidence and never from a declared
/// duration; damage decoded past and counted; timestamp jumps followed.
@Suite struct DataEndTests {
    /// A complete fragmented MP4 whose durations say "unknown" (0xFFFFFFFF) plays every frame and
    /// sample and completes; its duration is reported unknown, not invented.
    @Test func aFragmentedMP4WithUnknownDurationsCompletes() async throws {
        let path = try Fixtures.reader("fragmented-unknown.mp4")
        let frames = try await Reference.frameTimes(path)
        let samples =
            try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a",
                    "-f", "s16le", "-",
                ]
            ).count / 2
        let audio = InMemoryAudioSink()
        let result = await DecodeSession(source: path).run(into: NullSink(), audio: audio)
        #expect(result.status == .completed, "\(result.status)")
        #expect(result.framesDelivered == frames.count)
        #expect(audio.samples.count == samples)
        #expect(result.damagedPackets == 0)
        let duration = try await Asset(path: path).load(.duration)
        #expect(!duration.isNumeric, "an unknown duration is unknown, not \(duration.seconds) s")
    }

    @Test(arguments: ["cut.mkv", "cut.webm"])
    func aMatroskaCutShortFailsAsTruncated(name: String) async throws {
        let result = await DecodeSession(source: try Fixtures.reader(name)).run(into: NullSink(), audio: NullAudioSink())
        guard case .failed(let error) = result.status else {
            Issue.record("\(name) must fail as truncated, got \(result.status) with \(result.framesDelivered) frames")
            return
        }
        #expect(error.code == .truncated, "\(error)")
        #expect(result.framesDelivered > 0, "what was there was decoded")
    }

    /// Cut files give every frame the data holds — as many as ffmpeg decodes, frame threads and all
    /// — and fail as truncated: an MP4 whose index runs past the end, an FLV cut inside a packet.
    @Test(arguments: ["damaged-cut.mp4", "cut.flv"])
    func aCutFileGivesEveryFrameItHolds(name: String) async throws {
        let path = name.hasSuffix(".flv") ? try Fixtures.reader(name) : try Fixtures.clip(name)
        let expected = try await Reference.allFrames(path).count
        let result = await DecodeSession(source: path).run(into: NullSink(pixelFormat: .rgb24))
        #expect(result.framesDelivered == expected, "\(name): \(result.framesDelivered) frames, ffmpeg \(expected)")
        guard case .failed(let error) = result.status else {
            Issue.record("\(name) must fail as truncated, got \(result.status)")
            return
        }
        #expect(error.code == .truncated, "\(error)")
    }

    /// A NUT file cut anywhere (FFmpeg's muxer ends each one with its index) gives every frame
    /// ffmpeg decodes from it and fails as truncated; the whole file completes.
    @Test func aNUTFileCutShortFailsAsTruncated() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let whole = folder + "/whole.nut"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=4", "-f", "lavfi", "-i", "sine=duration=4",
                "-c:v", "mpeg4", "-c:a", "pcm_s16le", "-shortest", whole,
            ])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let complete = await DecodeSession(source: whole).run(into: NullSink(), audio: NullAudioSink())
        #expect(complete.status == .completed, "\(complete.status)")
        for fraction in [0.3, 0.6, 0.99] {
            let path = folder + "/cut-\(fraction).nut"
            try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: URL(fileURLWithPath: path))
            let expected = try await Reference.allFrames(path).count
            let result = await DecodeSession(source: path).run(into: NullSink(pixelFormat: .rgb24), audio: NullAudioSink())
            #expect(result.framesDelivered == expected, "cut at \(fraction): \(result.framesDelivered) frames, ffmpeg \(expected)")
            guard case .failed(let error) = result.status else {
                Issue.record("cut at \(fraction) must fail as truncated, got \(result.status)")
                continue
            }
            #expect(error.code == .truncated, "\(error)")
        }
    }

    /// Damage the demuxer itself reports (a Matroska resync past zeroed bytes) is counted, every
    /// run the same, whatever a frame-threaded decoder makes of it.
    @Test func damageTheContainerReportsIsCounted() async throws {
        let path = try Fixtures.reader("zeroed.mkv")
        var counts: Set<Int> = []
        for _ in 0..<4 {
            let result = await DecodeSession(source: path).run(into: NullSink())
            #expect(result.status == .completed, "\(result.status)")
            counts.insert(result.damagedPackets)
        }
        #expect(counts.allSatisfy { $0 >= 1 }, "damage counted \(counts)")
        let strict = await DecodeSession(source: path, configuration: DecodeConfiguration(strict: true)).run(into: NullSink())
        #expect(strict.status != .completed)
    }

    /// One invalid NAL unit in a complete file: that packet is dropped (as ffmpeg does), the other
    /// 29 frames come out exactly as ffmpeg's, and the run completes with the damage counted;
    /// strict makes it a failure.
    @Test func oneBadPacketIsCountedNotFatal() async throws {
        let path = try Fixtures.reader("bad-nal.mp4")
        let reference = try await Reference.allFrames(path)
        try #require(reference.count == 29)
        let sink = InMemorySink(pixelFormat: .rgb24)
        let result = await DecodeSession(source: path).run(into: sink)
        #expect(result.status == .completed, "\(result.status)")
        #expect(result.damagedPackets == 1)
        #expect(result.firstDamage?.code == .decodeFailed)
        #expect(sink.frames.map(\.bytes) == reference)
        let strict = await DecodeSession(source: path, configuration: DecodeConfiguration(strict: true)).run(into: NullSink())
        guard case .failed(let error) = strict.status else {
            Issue.record("strict: \(strict.status)")
            return
        }
        #expect(error.message.contains("1 damaged packet"), "\(error)")
    }

    /// A raw H.264 stream has no durations and no timestamps: it plays whole, and images at
    /// explicit times come by decoding forward.
    @Test func aRawElementaryStreamPlaysAndGivesImages() async throws {
        let path = try Fixtures.reader("raw.h264")
        let reference = try await Reference.allFrames(path)
        let sink = InMemorySink(pixelFormat: .rgb24)
        let result = await DecodeSession(source: path).run(into: sink)
        #expect(result.status == .completed, "\(result.status)")
        #expect(sink.frames.count == reference.count)
        #expect(sink.frames.map(\.bytes) == reference)
        let asset = Asset(path: path)
        #expect(!(try await asset.load(.duration)).isNumeric)
        var results: [AssetImageGenerator.Result] = []
        for await r in AssetImageGenerator(asset: asset).images(for: [MediaTime(value: 1, timescale: 2), MediaTime(value: 3, timescale: 2)]) {
            results.append(r)
        }
        #expect(results.count == 2)
        for (r, k) in zip(results, [12, 37]) {
            #expect(r.image?.pixels == reference[k], "at \(r.requestedTime.seconds) s: \(String(describing: r.error))")
        }
        // Past the last frame: an error for that time alone.
        var late: [AssetImageGenerator.Result] = []
        for await r in AssetImageGenerator(asset: asset).images(for: [MediaTime(value: 9, timescale: 1)]) { late.append(r) }
        #expect(late.first?.error?.code == .invalidArgument)
    }

    /// Two captures joined, the second's timestamps 50,000 s later: every frame is decoded, with
    /// the container's own times (as ffmpeg reports them), and realtime playback follows the jump:
    /// it takes the clip's length, not 14 hours.
    @Test func aTimestampJumpIsFollowed() async throws {
        let path = try Fixtures.reader("jump.ts")
        let frames = try await Reference.frameTimes(path)
        let sink = InMemorySink(pixelFormat: .rgb24)
        let audio = InMemoryAudioSink()
        let result = await DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 10)))
            .run(into: sink, audio: audio)
        #expect(result.status == .completed, "\(result.status)")
        #expect(sink.frames.map(\.presentationTime) == frames)

        let clock = ManualPlaybackClock()
        let log = TimeLog(clock: clock)
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: TimestampSink(log: log),
            configuration: PlayerConfiguration(realtime: true, decoding: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 10))),
            clock: clock)
        player.play()
        let finished: Void? = await withDeadline(Bound.seconds(20), "realtime playback across the jump") { await player.waitUntilIdle() }
        #expect(finished != nil)
        let entries = log.entries
        #expect(entries.count == 100)
        if let first = entries.first, let last = entries.last {
            #expect((last.clock - first.clock).seconds < 5, "played over \((last.clock - first.clock).seconds) s of clock time")
        }
    }

    // MARK: Images and compositions: the same rule

    /// An exact image past the cut is not the last frame that exists: it fails as truncated; an
    /// image before the cut is made. As sessions judge the same files.
    @Test(arguments: ["damaged-cut.mp4", "cut.mkv", "cut.flv"])
    func anImagePastACutFailsAsTruncated(name: String) async throws {
        let path = name.hasPrefix("damaged") ? try Fixtures.clip(name) : try Fixtures.reader(name)
        let frames = try await Reference.frameTimes(path)
        let last = try #require(frames.last)
        let generator = AssetImageGenerator(asset: Asset(path: path))
        var results: [AssetImageGenerator.Result] = []
        // The first frame's time, and a time after the last frame the data holds (inside the
        // duration the container declares).
        for await result in generator.images(for: [frames[0], last + MediaTime(value: 1, timescale: 4)]) { results.append(result) }
        try #require(results.count == 2)
        #expect(results[0].image != nil && results[0].error == nil, "\(name): \(String(describing: results[0].error))")
        #expect(
            results[1].image == nil && results[1].error?.code == .truncated,
            "\(name): \(String(describing: results[1].error)), actual \(String(describing: results[1].actualTime))")
    }

    /// Damage met while looking for an image is counted in its result; `strict` fails it.
    @Test func imagesCountDamageAndStrictFailsIt() async throws {
        let path = try Fixtures.reader("zeroed.mkv")
        let frames = try await Reference.frameTimes(path)
        let times = [frames[frames.count / 2], frames[frames.count - 2]]
        var lenient = AssetImageGenerator(asset: Asset(path: path))
        lenient.decoderCount = 1
        var counted = 0
        for await result in lenient.images(for: times) {
            #expect(result.image != nil, "\(String(describing: result.error))")
            counted += result.damagedPackets
        }
        #expect(counted > 0, "the zeroed stretch was decoded past without a count")
        var strict = lenient
        strict.strict = true
        var failures = 0
        for await result in strict.images(for: times) where result.error != nil {
            #expect(result.error?.code == .decodeFailed)
            failures += 1
        }
        #expect(failures > 0, "strict images decoded past damage")
    }

    /// A composition's layer whose source is cut short fails there as truncated (it does not loop
    /// at the cut); its sound fails the same way; the run exits 1 and says so.
    @Test(arguments: ["damaged-cut.mp4", "cut.mkv"])
    func aCompositionNamesATruncatedLayer(name: String) async throws {
        let path = name.hasPrefix("damaged") ? try Fixtures.clip(name) : try Fixtures.reader(name)
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await CLI.run([
            "compose", "--size", "160x90", "--rate", "25", "--duration", "4", "--format", "y4m", "--out", out + "/c", "--json",
            "--layer", "x=0,y=0,w=160,h=90,loop=forever,audio=yes,source=\(path)",
        ])
        #expect(run.status == 1, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let layer = try #require((summary["layers"] as? [[String: Any]])?.first)
        #expect((layer["error"] as? [String: Any])?["code"] as? String == "io.truncated", "\(layer)")
        #expect(layer["loopsCompleted"] as? Int == 0, "it looped at the cut: \(layer)")
    }

    /// Damage in a layer is counted in the summary; `--strict` fails the layer.
    @Test func aCompositionCountsDamageAndStrictFailsIt() async throws {
        let path = try Fixtures.reader("zeroed.mkv")
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        for strict in [false, true] {
            let run = try await CLI.run(
                [
                    "compose", "--size", "160x90", "--rate", "25", "--duration", "2", "--format", "none", "--out", out + "/\(strict)", "--json",
                    "--layer", "x=0,y=0,w=160,h=90,source=\(path)",
                ] + (strict ? ["--strict"] : []))
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
            let layer = try #require((summary["layers"] as? [[String: Any]])?.first)
            if strict {
                #expect(run.status == 1 && (layer["error"] as? [String: Any])?["code"] as? String == "decode.decodeFailed", "\(layer)")
            } else {
                #expect(run.status == 0 && layer["error"] == nil && (layer["damagedPackets"] as? Int ?? 0) > 0, "\(layer)")
            }
        }
    }
}
