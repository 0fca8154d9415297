import Foundation
import Playhead
import Synchronization
import Testing

/// More of the third hostile round's library findings, through the public API alone: outputs
/// (a channel sink used twice or going nowhere, a trimmed MP4, two renders into one sink), images
/// over damaged data, a blank search without a usable limit, a player's status after a seek while
/// paused, and a library that never prints. In ``HostileCallerTests``, so each case is held to the
/// suite's baseline of descriptors and threads.
extension HostileCallerTests {
    /// A folder of its own for a case; removed by the caller.
    static func folder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("embedder-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A compositor of the sample clip on a small 25 fps canvas.
    static func smallComposition() throws -> Compositor {
        guard let rate = FrameRate(numerator: 25) else { throw PlayheadError(code: .invalidArgument, message: "25 fps") }
        let compositor = Compositor(canvas: CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: rate))
        _ = try compositor.add(CompositionLayer(assets: [Asset(path: try EmbedderTests.clip())], rect: PixelRect(x: 0, y: 0, width: 64, height: 36)))
        return compositor
    }

    // MARK: Outputs

    /// A channel sink takes one stream: a second render into it is refused and leaves no thread
    /// blocked (the suite's baseline; before, four per session, and the render said `completed`
    /// for frames that went nowhere); the first stream's recording is whole.
    @Test func aChannelSinkTakesOneStream() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let rate = FrameRate(numerator: 25), let target = ChannelTarget(folder + "/recording.ts") else {
            throw PlayheadError(code: .invalidArgument, message: "a recording target")
        }
        let sink = ChannelSink(targets: [target], rate: rate, preset: "ultrafast")
        let first = try await Self.smallComposition().render(frames: 25, into: sink)
        #expect(first.error == nil && first.framesWritten == 25, "\(String(describing: first.error)), \(first.framesWritten) frames")
        #expect(sink.status.first?.state != .failed, "\(sink.status)")
        let second = try await Self.smallComposition().render(frames: 25, into: sink)
        #expect(second.error?.code == .invalidState, "a second stream into one channel sink: \(String(describing: second.error))")
        #expect(second.framesWritten == 0, "\(second.framesWritten) frames written into a used sink")
        let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/recording.ts")[.size] as? Int) ?? 0
        #expect(size > 0 && size % 188 == 0, "the first stream's recording: \(size) bytes")
    }

    /// A channel that went nowhere says so: an HLS target in a folder that does not exist (it said
    /// `finished` with nothing written), and the render's report carries the error.
    @Test func aChannelWhoseEveryTargetFailedIsAnError() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let rate = FrameRate(numerator: 25), let target = ChannelTarget(folder + "/missing/live.m3u8") else {
            throw PlayheadError(code: .invalidArgument, message: "an HLS target")
        }
        let sink = ChannelSink(targets: [target], rate: rate, preset: "ultrafast", segmentSeconds: 1, timeout: 1)
        let report = try await Self.smallComposition().render(frames: 50, into: sink)
        #expect(report.error?.code == .writeFailed, "\(String(describing: report.error))")
        #expect(sink.status.map(\.state) == [.failed], "\(sink.status)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/missing"), "a folder made for a target that named a missing one")
    }

    /// A session of a range into an MP4 makes a file of that range: 0.4 s to 1.4 s of the 2 s clip
    /// is a second long (25 frames), by ffprobe (it was the whole length from 0, the first frame frozen over
    /// silence before the range).
    @Test func aTrimmedSessionMakesAFileOfItsRange() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = MP4Sink(path: folder + "/range.mp4")
        let configuration = DecodeConfiguration(startTime: MediaTime(seconds: 0.4), endTime: MediaTime(seconds: 1.4))
        let result = await DecodeSession(source: try EmbedderTests.clip(), configuration: configuration).run(into: sink, audio: sink.soundInput())
        #expect(result.status == .completed && result.framesDelivered == 25, "\(result.status), \(result.framesDelivered) frames")
        let probe = folder + "/probe.csv"
        let status = spawnAndWait(
            "/usr/bin/ffprobe",
            ["-v", "error", "-show_entries", "stream=codec_type,duration,start_time", "-of", "csv=p=0", "-o", probe, folder + "/range.mp4"])
        try #require(status == 0, "ffprobe could not read the file")
        let streams = try String(contentsOfFile: probe, encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",") }
        #expect(streams.count == 2, "\(streams)")
        for stream in streams where stream.count == 3 {
            let (start, duration) = (Double(stream[1]) ?? -1, Double(stream[2]) ?? -1)
            #expect(abs(start) < 0.001, "the \(stream[0]) starts at \(start) s")
            // The sound to its AAC frame (1024 samples).
            #expect(abs(duration - 1) < (stream[0] == "audio" ? 0.025 : 0.001), "the \(stream[0]) lasts \(duration) s")
        }
    }

    /// Two renders into one sink at once: the second is refused, the first goes on whole.
    @Test func twoRendersIntoOneSinkAreRefused() async throws {
        // A stream not read until the second render was tried: the first waits on it meanwhile.
        let stream = FrameStream(pixelFormat: .rgb24, bufferingLimit: 1)
        let first = try Self.smallComposition()
        let running = Task { await first.render(frames: 40, into: stream) }
        let deadline = ContinuousClock.now + .seconds(30)
        while stream.streamInfo == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        let second = try await Self.smallComposition().render(frames: 10, into: stream)
        #expect(second.error?.code == .invalidState && second.framesWritten == 0, "\(String(describing: second.error))")
        var frames = 0
        for await _ in stream { frames += 1 }
        let done = await running.value
        #expect(done.error == nil && done.framesWritten == 40 && frames == 40, "the first render: \(done.framesWritten) frames, \(frames) read")
    }

    // MARK: Images

    /// Images over noise fail as the data's damage, counted as a session counts it, and neither
    /// the decoder's complaints nor a sheet's font lines are printed (the library never writes to
    /// standard error).
    @Test func imagesOverNoiseFailAsDamageAndPrintNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let noise = try garbled(try EmbedderTests.clip(), to: folder + "/noise.mp4")
        let printed = folder + "/stderr.txt"
        var results: [AssetImageGenerator.Result] = []
        var counted = 0
        try await withStandardError(into: printed) {
            counted = await DecodeSession(source: noise).run(into: NullSink()).damagedPackets
            for await result in AssetImageGenerator(asset: Asset(path: noise)).images(for: [0.5, 1.5].map { MediaTime(seconds: $0) }) {
                results.append(result)
            }
            // A sheet's text (it printed its font's fallback).
            let cell = ContactSheet.Cell(image: try GeneratedImage(size: PixelSize(width: 8, height: 8), gray: 9), label: "0")
            let sheet = ContactSheet(
                sections: [ContactSheet.Section(title: "noise", cells: [cell])], columns: 1, cellSize: PixelSize(width: 8, height: 8))
            _ = try await sheet.render()
        }
        #expect(counted > 0, "the session counts the damage")
        #expect(results.count == 2)
        for result in results {
            #expect(result.error?.code == .decodeFailed, "at \(result.requestedTime.seconds) s: \(String(describing: result.error))")
            #expect(result.damagedPackets > 0 && result.firstDamage != nil, "at \(result.requestedTime.seconds) s: damage counted")
        }
        let text = (try? String(contentsOfFile: printed, encoding: .utf8)) ?? "(unreadable)"
        #expect(text.isEmpty, "the library printed: \(text.prefix(300))")
    }

    /// A blank-frame search limit that is not a number searches nothing (it searched without
    /// limit); a real one moves the image off the blank second.
    @Test func aBlankSearchLimitThatIsNotATimeSearchesNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/black-first.mp4"
        let made = spawnAndWait(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "color=black:s=160x90:r=25:d=1", "-f", "lavfi", "-i", "testsrc=s=160x90:r=25:d=1",
                "-filter_complex", "[0:v][1:v]concat=n=2:v=1", "-pix_fmt", "yuv420p", "-c:v", "libx264", clip,
            ])
        try #require(made == 0, "could not make \(clip)")
        func image(limit: MediaTime?) async -> AssetImageGenerator.Result? {
            var generator = AssetImageGenerator(asset: Asset(path: clip))
            generator.blankFrameSearchLimit = limit
            for await result in generator.images(for: [MediaTime(seconds: 0.2)]) { return result }
            return nil
        }
        let invalid = await image(limit: .invalid)
        #expect(invalid?.image != nil && invalid?.blankFrameTime == nil, "\(String(describing: invalid))")
        #expect(abs((invalid?.actualTime?.seconds ?? -1) - 0.2) < 0.05, "\(String(describing: invalid?.actualTime))")
        let searched = await image(limit: MediaTime(seconds: 2))
        #expect(searched?.blankFrameTime != nil && (searched?.actualTime?.seconds ?? 0) >= 1, "\(String(describing: searched))")
    }

    // MARK: A player's status

    /// Pause, seek, play: once frames flow again the player says `playing` (it said
    /// `waitingToPlay` for the rest of the item while frames played). On a clock the test holds,
    /// so that no frame is late however busy the machine is.
    @Test func pauseSeekPlayPlaysAgain() async throws {
        let item = PlayerItem(asset: Asset(path: try EmbedderTests.clip()))
        let clock = HeldClock()
        clock.open(until: .milliseconds(500))
        let player = Player(item: item, output: NullSink(), configuration: PlayerConfiguration(realtime: true), clock: clock)
        func wait(for status: TimeControlStatus) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while player.timeControlStatus != status, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        }
        player.play()
        try await wait(for: .playing)
        #expect(player.timeControlStatus == .playing)
        player.pause()
        let target = MediaTime(seconds: 0.2)
        _ = await player.seek(to: target)
        clock.open(until: clock.now() + .milliseconds(600))
        player.play()
        try await wait(for: .playing)
        let deadline = ContinuousClock.now + .seconds(20)
        while item.currentTime <= target + MediaTime(seconds: 0.2), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(item.currentTime > target + MediaTime(seconds: 0.2), "frames after the seek: \(item.currentTime.seconds)")
        #expect(player.timeControlStatus == .playing, "frames play again: \(player.timeControlStatus)")
        player.pause()
        player.replaceCurrentItem(with: nil)
        await player.waitUntilIdle()
    }
}

/// A playback clock the test holds: time moves as the player sleeps, up to a limit the test sets,
/// and stands there.
final class HeldClock: PlaybackClock {
    private let state = Mutex((now: Duration.zero, limit: Duration.zero))

    func now() -> Duration { state.withLock { $0.now } }

    func sleep(for duration: Duration) {
        let stopped = state.withLock { s -> Bool in
            let target = s.now + max(duration, .zero)
            s.now = max(s.now, min(target, s.limit))
            return target > s.limit
        }
        usleep(stopped ? 1000 : 50)
    }

    /// Lets the time run up to `limit`.
    func open(until limit: Duration) { state.withLock { $0.limit = limit } }
}

/// A copy of `clip` whose media data is noise from its middle on (its header intact), as a
/// damaged download leaves it; the noise is the same every run.
func garbled(_ clip: String, to path: String) throws -> String {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
    var offset = 0
    var seed: UInt64 = 7
    while offset + 8 <= bytes.count {
        let size = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
        guard size >= 8 else { break }
        if bytes[(offset + 4)..<(offset + 8)].elementsEqual("mdat".utf8) {
            for i in (offset + 8)..<min(offset + size, bytes.count) {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes[i] = UInt8(truncatingIfNeeded: seed >> 33)
            }
        }
        offset += size
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

/// Runs `body` with the process's standard error written into the file at `path`, then puts it
/// back.
func withStandardError(into path: String, _ body: () async throws -> Void) async throws {
    let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    try #require(file >= 0, "could not open \(path)")
    let saved = dup(STDERR_FILENO)
    defer {
        if saved >= 0 {
            dup2(saved, STDERR_FILENO)
            close(saved)
        }
        close(file)
    }
    try #require(saved >= 0 && dup2(file, STDERR_FILENO) >= 0, "could not move standard error")
    try await body()
}
