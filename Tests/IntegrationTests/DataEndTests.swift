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

    /// Two captures joined, the second's timestamps 50,000 s later: the jump is followed, so the
    /// frames run on without a gap and realtime playback takes the clip's length, not 14 hours.
    @Test func aTimestampJumpIsFollowed() async throws {
        let path = try Fixtures.reader("jump.ts")
        let sink = InMemorySink(pixelFormat: .rgb24)
        let audio = InMemoryAudioSink()
        let result = await DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 10)))
            .run(into: sink, audio: audio)
        #expect(result.status == .completed, "\(result.status)")
        #expect(sink.frames.count == 100)
        #expect(result.timestampDiscontinuities >= 1)
        let times = sink.frames.map(\.presentationTime.seconds)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 > 0 && $0 < 0.1 }, "largest step \(gaps.max() ?? 0) s")

        let clock = ManualPlaybackClock()
        let log = TimeLog(clock: clock)
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: TimestampSink(log: log),
                            configuration: PlayerConfiguration(realtime: true, decoding: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 10))),
                            clock: clock)
        player.play()
        let finished = await withDeadline(Bound.seconds(20), "realtime playback across the jump") { await player.waitUntilIdle() }
        #expect(finished != nil)
        let entries = log.entries
        #expect(entries.count == 100)
        if let first = entries.first, let last = entries.last {
            #expect((last.clock - first.clock).seconds < 5, "played over \((last.clock - first.clock).seconds) s of clock time")
        }
    }
}
