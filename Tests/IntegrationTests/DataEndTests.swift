import Foundation
import Testing
@testable import Playhead

/// How a file's data ends, decided from the container's evidence and never from a declared
/// duration; damage decoded past and counted; timestamp jumps followed.
@Suite struct DataEndTests {
    /// A complete fragmented MP4 whose durations say "unknown" (0xFFFFFFFF) plays every frame and
    /// sample and completes; its duration is reported unknown, not invented.
    @Test func aFragmentedMP4WithUnknownDurationsCompletes() async throws {
        let path = try Fixtures.reader("fragmented-unknown.mp4")
        let frames = try await Reference.frameTimes(path)
        let samples = try await Reference.run(try Reference.ffmpeg(), ["-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a",
                                                                       "-f", "s16le", "-"]).count / 2
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
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: TimestampSink(log: log),
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
}
