import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Memory stays flat over many sessions: 100 sessions cancelled mid-decode, and one clip looped
/// many times. Resident memory is read from /proc after a warm-up and at the end. The loop count is
/// 50 in the regular suite and 1000 with PLAYHEAD_SOAK=1 (scripts/reliability.sh soak).
@Suite(.serialized) struct SoakTests {
    static var residentBytes: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static var threadCount: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return 0 }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }

    static let long = ProcessInfo.processInfo.environment["PLAYHEAD_SOAK"] != nil

    @Test func cancellingHundredsOfSessionsMidDecodeKeepsMemoryFlat() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 4)
        let small = DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18))
        func cancelSessions(_ count: Int) async throws {
            for _ in 0..<count {
                let id = await coordinator.submit(
                    PlaybackRequest(source: path, loop: .forever, decoding: small),
                    output: { NullSink(pixelFormat: .rgb24) }, audioOutput: { NullAudioSink() })
                // Cancel once it is decoding.
                for _ in 0..<2000 {
                    if await coordinator.progress().first(where: { $0.id == id })?.framesPresented ?? 0 > 3 { break }
                    try? await Task.sleep(for: .milliseconds(1))
                }
                await coordinator.cancel(id)
                #expect(try await coordinator.outcome(of: id).status == .cancelled)
            }
        }
        // Warm up past the pool's and the allocator's plateau (worker threads, idle demuxers, malloc
        // arenas reach their working size over the first few dozen sessions), then measure.
        try await cancelSessions(40)
        let warm = Self.residentBytes
        let warmThreads = Self.threadCount
        try await cancelSessions(100)
        await coordinator.waitUntilIdle()
        let end = Self.residentBytes
        // Session threads end with their sessions; give the last ones a moment to exit.
        var endThreads = Self.threadCount
        for _ in 0..<200 where endThreads > warmThreads {
            try await Task.sleep(for: .milliseconds(10))
            endThreads = Self.threadCount
        }
        print("RSS cancel soak: \(warm / 1024) KiB after 40 sessions, \(end / 1024) KiB after 140; threads \(warmThreads) then \(endThreads)")
        #expect(warmThreads > 0)
        // Other suites run in parallel and start threads of their own: allow some, not 100 × 3.
        #expect(endThreads - warmThreads < 24, "threads went from \(warmThreads) to \(endThreads): session threads leak")
        #expect(warm > 0)
        #expect(end - warm < 24 << 20, "resident memory grew by \((end - warm) >> 20) MiB over 100 cancelled sessions")
        #expect(await coordinator.runningSessions.isEmpty)
    }

    @Test func loopingAClipManyTimesKeepsMemoryFlat() async throws {
        let loops = Self.long ? 1000 : 50
        let path = try Fixtures.clip("h264-aac.mp4")
        let once = await AudioSession(source: path).run(into: NullAudioSink()).frames
        let audio = NullAudioSink()
        let player = QueuePlayer(
            output: NullSink(pixelFormat: .rgb24), audioOutput: audio,
            configuration: PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18))))
        let looper = PlayerLooper(player: player, templateItem: PlayerItem(asset: Asset(path: path)), loopCount: loops)
        var warm = 0
        player.play()
        for _ in 0..<100_000 {
            if looper.loopsCompleted >= 10 { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        warm = Self.residentBytes
        await player.waitUntilIdle()
        let end = Self.residentBytes
        print("RSS loop soak: \(warm / 1024) KiB after 10 loops, \(end / 1024) KiB after \(loops)")
        #expect(looper.loopsCompleted == loops)
        #expect(player.statistics.framesPresented == loops * 50)
        #expect(audio.framesReceived == loops * once, "every loop's audio, whole")
        #expect(end - warm < 24 << 20, "resident memory grew by \((end - warm) >> 20) MiB over \(loops) loops")
    }
}
