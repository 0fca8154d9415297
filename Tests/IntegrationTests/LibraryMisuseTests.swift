import Foundation
import PlayheadRunFolder
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Arguments an embedding app may pass by mistake — a zero interval, absurd thread counts and
/// limits, infinite or invalid seek times — are held to what they can mean, never a trap; values
/// print as a person would read them.
@Suite struct LibraryMisuseTests {
    let tiny = PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9)))

    @Test(arguments: [
        MediaTime.zero, .invalid, .indefinite, .positiveInfinity, MediaTime(value: -1, timescale: 1), MediaTime(value: 1, timescale: 1_000_000_000),
    ])
    func aPeriodicObserverWithoutAUsableIntervalSeesEveryFrame(interval: MediaTime) async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let frames = try await Reference.frameTimes(path)
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: NullSink(pixelFormat: .rgb24), configuration: tiny)
        let seen = Locked<[MediaTime]>([])
        player.addPeriodicTimeObserver(forInterval: interval) { time in seen.withLock { $0.append(time) } }
        player.play()
        _ = await withDeadline(Bound.seconds(30), "playing with an observer every \(interval)") { await player.waitUntilIdle() }
        #expect(seen.withLock { $0 } == frames, "interval \(interval): \(seen.withLock { $0.count }) calls for \(frames.count) frames")
    }

    @Test func absurdDecodeSettingsAreHeldToTheirRange() async throws {
        var configuration = DecodeConfiguration(
            outputSize: PixelSize(width: 16, height: 9), frameLimit: -3, decoderThreads: 5000,
            packetQueueCapacity: .max, frameQueueCapacity: 1_000_000)
        #expect(configuration.decoderThreads == DecodeConfiguration.maximumDecoderThreads)
        #expect(configuration.packetQueueCapacity == 4096 && configuration.frameQueueCapacity == 64)
        #expect(configuration.frameLimit == 0)
        configuration.decoderThreads = .max
        #expect(configuration.decoderThreads == DecodeConfiguration.maximumDecoderThreads)
        configuration.decoderThreads = -7
        #expect(configuration.decoderThreads == 0)
        configuration.frameLimit = -1
        #expect(configuration.frameLimit == 0)

        // A session asked for the most threads decodes (the count reaches FFmpeg held to the bound).
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let result = await DecodeSession(source: path, configuration: configuration).run(into: NullSink(pixelFormat: .rgb24))
        #expect(result.status == .completed && result.framesDelivered == 0, "a limit of 0 after -1: \(result)")
        var unlimited = configuration
        unlimited.frameLimit = nil
        let all = await DecodeSession(source: path, configuration: unlimited).run(into: NullSink(pixelFormat: .rgb24))
        #expect(all.status == .completed && all.framesDelivered == 100, "\(all)")
    }

    @Test func aFrameLimitOfZeroDeliversNothing() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let sink = InMemorySink(pixelFormat: .rgb24)
        let result = await DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9), frameLimit: 0))
            .run(into: sink)
        #expect(result.status == .completed, "\(result)")
        #expect(result.framesDelivered == 0 && sink.frames.isEmpty, "\(result.framesDelivered) frames delivered for a limit of 0")
    }

    @Test func seeksToTimesThatAreNotNumbers() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let frames = try await Reference.frameTimes(path)
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: NullSink(pixelFormat: .rgb24), configuration: tiny)
        let last = try #require(frames.last)
        let toEnd = await withDeadline(Bound.seconds(20), "seek to +infinity") { await player.seek(to: .positiveInfinity) }
        #expect(toEnd == .some(last), "+infinity shows the last frame, not \(String(describing: toEnd))")
        let toStart = await withDeadline(Bound.seconds(20), "seek to -infinity") { await player.seek(to: .negativeInfinity) }
        #expect(toStart == .some(frames[0]), "-infinity shows the first frame, not \(String(describing: toStart))")
        for time in [MediaTime.invalid, .indefinite] {
            let landed = await withDeadline(Bound.seconds(20), "seek to \(time)") { await player.seek(to: time) }
            #expect(landed == .some(nil), "a seek to \(time) moves nothing")
        }
        #expect(player.currentItem?.currentTime == frames[0], "the invalid seeks left the player where it was")
        // A start time of +infinity is the end too (not the start).
        let session = DecodeSession(
            source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9), startTime: .positiveInfinity))
        let sink = InMemorySink(pixelFormat: .rgb24)
        _ = await session.run(into: sink)
        #expect(
            !sink.frames.isEmpty && sink.frames.map(\.presentationTime).allSatisfy { $0 == last },
            "a start at +infinity gave \(sink.frames.map(\.presentationTime.seconds))")
    }

    @Test func valuesPrintAsAPersonReadsThem() throws {
        let image = try GeneratedImage(size: PixelSize(width: 1920, height: 1080), gray: 7)
        let printed = "\(image)"
        #expect(printed == "GeneratedImage(1920x1080, RGB, 6220800 bytes)")
        var dumped = ""
        dump(image, to: &dumped)
        #expect(dumped.count < 300, "dump wrote \(dumped.count) characters")
        let error = PlayheadError(code: .fileNotFound, message: "no such file", file: "https://alice:PASSWORD@example.com/a.mp4?token=SECRET")
        #expect(error.localizedDescription.contains("no such file") && error.localizedDescription.contains("example.com"))
        let renamed = error.naming(file: "https://bob:HUNTER2@example.com/b.mp4?X-Amz-Signature=SIG")
        for text in [error.localizedDescription, "\(error)", "\(renamed)", renamed.file ?? ""] {
            for secret in ["PASSWORD", "SECRET", "HUNTER2", "SIG"] { #expect(!text.contains(secret), "\(text)") }
        }
    }

    /// Every wait of the API ends when the waiting task is cancelled, and what it waited for goes on.
    @Test func cancellingTheWaitingTaskEndsEveryWait() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        // Paused players: nothing ends until they play.
        let player = QueuePlayer(items: [PlayerItem(asset: Asset(path: path))], output: NullSink(pixelFormat: .rgb24), configuration: tiny)
        try await Self.endsWhenCancelled("QueuePlayer.waitUntilIdle") { await player.waitUntilIdle() }
        #expect(player.items().count == 1, "the item is still there")
        player.play()
        _ = await withDeadline(Bound.seconds(20), "the player, played after the cancelled wait") { await player.waitUntilIdle() }
        #expect(player.statistics.framesPresented == 100)

        let looping = QueuePlayer(output: NullSink(pixelFormat: .rgb24), configuration: tiny)
        let looper = PlayerLooper(player: looping, templateItem: PlayerItem(asset: Asset(path: path)))
        try await Self.endsWhenCancelled("PlayerLooper.waitUntilFinished") { await looper.waitUntilFinished() }
        #expect(!looper.isFinished)
        looping.removeAllItems()

        let clock = ManualPlaybackClock()
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 1, clock: clock)
        let id = await coordinator.submit(
            PlaybackRequest(source: path, loop: .forever, realtime: true, decoding: tiny.decoding),
            output: { NullSink(pixelFormat: .rgb24) })
        try await Self.endsWhenCancelled("PlaybackCoordinator.waitUntilIdle") { await coordinator.waitUntilIdle() }
        try await Self.endsWhenCancelled("PlaybackCoordinator.outcome") {
            do {
                _ = try await coordinator.outcome(of: id)
                Issue.record("a cancelled outcome wait returned an outcome")
            } catch let error as PlayheadError {
                #expect(error.code == .cancelled, "\(error)")
            }
        }
        #expect(await coordinator.runningSessions == [id], "the session goes on")
        await coordinator.cancel(id)
        let outcome = await withDeadline(Bound.seconds(20), "the cancelled session's outcome") { try? await coordinator.takeOutcome(of: id) }
        #expect(outcome??.status == .cancelled)
        // Taken: asking again is an error, not a wait that never ends.
        await #expect(throws: PlayheadError.self) { try await coordinator.outcome(of: id) }
        do {
            _ = try await coordinator.takeOutcome(of: id)
            Issue.record("an outcome was taken twice")
        } catch {
            #expect(error.code == .invalidState, "\(error)")
        }
        // Another coordinator's id is not answered with one of this coordinator's sessions.
        let other = PlaybackCoordinator()
        do {
            _ = try await other.outcome(of: id)
            Issue.record("another coordinator answered for \(id)")
        } catch {
            #expect(error.code == .invalidArgument, "\(error)")
        }
    }
    /// `finishOutput()` asked for by a task that is cancelled completes the file all the same:
    /// before, the worker's job was dropped and the MP4 was left neither finished nor given up
    /// (no file at its name), the call throwing `cancelled`.
    @Test func aFinishAskedForByACancelledTaskStillCompletesTheFile() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("finished.mp4").path
        let player = QueuePlayer(
            output: MP4Sink(path: path),
            configuration: PlayerConfiguration(decoding: DecodeConfiguration(outputSize: PixelSize(width: 64, height: 36))))
        player.insert(PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4"))), after: nil)
        player.play()
        await player.waitUntilIdle()
        let finishing = Task { () async -> PlayheadError? in
            while !Task.isCancelled { await Task.yield() }
            do throws(PlayheadError) {
                try await player.finishOutput()
                return nil
            } catch {
                return error
            }
        }
        finishing.cancel()
        let failure = await finishing.value
        #expect(failure == nil, "\(String(describing: failure))")
        #expect(try await HostileOperationsTests.decodedFrames(path) == 50, "the finished file")
    }

    @Test func aCancelledPrepareLeavesTheItemAsItWas() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let item = PlayerItem(asset: Asset(url: try #require(URL(string: "tcp://127.0.0.1:\(server.port)"))))
        let prepare = Task { await item.prepare() }
        try await Task.sleep(for: .milliseconds(300))
        prepare.cancel()
        _ = await withDeadline(Bound.seconds(5), "a cancelled prepare") { await prepare.value }
        #expect(item.status == .unknown, "a cancelled prepare left the item \(item.status)")
    }

    /// At an item's end, play() does nothing until a seek; a seek to the start and play() play
    /// it all again, and waitUntilIdle waits for that.
    @Test func playingAgainAfterTheEndNeedsASeek() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: NullSink(pixelFormat: .rgb24), configuration: tiny)
        player.play()
        _ = await withDeadline(Bound.seconds(20), "the first play") { await player.waitUntilIdle() }
        #expect(player.statistics.framesPresented == 100)
        player.play()
        #expect(player.rate == 0 && player.timeControlStatus == .paused, "play() at the end: rate \(player.rate), \(player.timeControlStatus)")
        let landed = await withDeadline(Bound.seconds(20), "seek to the start after the end") { await player.seek(to: .zero) }
        #expect(landed == .some(.zero))
        player.play()
        _ = await withDeadline(Bound.seconds(20), "the second play") { await player.waitUntilIdle() }
        #expect(player.statistics.framesPresented == 200, "waitUntilIdle returned after \(player.statistics.framesPresented) frames")
    }

    /// An item queued behind one that ended and stayed current (`actionAtItemEnd` `.none`) does
    /// not play (the current one waits for a seek, as AVQueuePlayer's does), so the player is
    /// still idle: waitUntilIdle returns (it waited for ever before).
    @Test func anItemQueuedAfterTheEndLeavesThePlayerIdle() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let first = PlayerItem(asset: Asset(path: path))
        let player = QueuePlayer(items: [first], output: NullSink(pixelFormat: .rgb24), configuration: tiny, actionAtItemEnd: .none)
        player.play()
        _ = await withDeadline(Bound.seconds(20), "the first item") { await player.waitUntilIdle() }
        player.insert(PlayerItem(asset: Asset(path: path)), after: nil)
        let idle = await withDeadline(Bound.seconds(10), "idle after an insert behind the ended item") { () async -> Bool in
            await player.waitUntilIdle()
            return true
        }
        #expect(idle == true, "waitUntilIdle did not return")
        #expect(player.currentItem === first && player.statistics.framesPresented == 100, "\(player.statistics.framesPresented) frames")
        player.removeAllItems()
    }

    /// A sequence of images dropped without being iterated starts no work: the file is never
    /// opened (it was opened at once, and its producer blocked for good with its demuxer).
    @Test func anImageSequenceNeverIteratedCostsNothing() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("clip.mp4").path
        try FileManager.default.copyItem(atPath: try Fixtures.reader("audio-video-4s.mp4"), toPath: path)
        let generator = AssetImageGenerator(asset: Asset(path: path))
        for _ in 0..<4 { _ = generator.images(for: [.zero, MediaTime(value: 2, timescale: 1)]) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(Self.descriptors(to: path) == 0, "dropped sequences opened the file")
        // Iterated, the same request answers.
        var answers = 0
        for await result in generator.images(for: [.zero, MediaTime(value: 2, timescale: 1)]) where result.image != nil { answers += 1 }
        #expect(answers == 2)
    }

    /// An asset's idle demuxers go with the asset: a file it read is closed once it is dropped.
    @Test func aDroppedAssetKeepsNoFileOpen() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("clip.mp4").path
        try FileManager.default.copyItem(atPath: try Fixtures.reader("audio-video-4s.mp4"), toPath: path)
        do {
            let asset = Asset(path: path)
            _ = try await asset.load(.tracks, .duration)
            let result = await DecodeSession(asset: asset, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9)))
                .run(into: NullSink(pixelFormat: .rgb24))
            #expect(result.status == .completed)
        }
        var open = Self.descriptors(to: path)
        let deadline = ContinuousClock.now + Bound.seconds(20)
        while open > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            open = Self.descriptors(to: path)
        }
        #expect(open == 0, "the asset is gone but \(open) descriptor(s) to its file stay open")
    }

    static func descriptors(to path: String) -> Int {
        let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return links.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }

    /// Tolerances that make no window (negative, or past what a time holds) are held to what they
    /// can mean; none traps.
    @Test func absurdTolerancesAreHeld() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let frames = try await Reference.frameTimes(path)
        var generator = AssetImageGenerator(asset: Asset(path: path))
        generator.requestedTimeToleranceBefore = MediaTime(value: 1, timescale: 1)
        generator.requestedTimeToleranceAfter = MediaTime(value: -2, timescale: 1)
        let image = try await generator.image(at: MediaTime(value: 2, timescale: 1))
        #expect(image.actualTime <= MediaTime(value: 2, timescale: 1) && image.actualTime >= MediaTime(value: 1, timescale: 1), "\(image.actualTime)")
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: NullSink(pixelFormat: .rgb24), configuration: tiny)
        let huge = MediaTime(value: .max, timescale: 1)
        let landed = await withDeadline(Bound.seconds(20), "a seek with huge tolerances") {
            await player.seek(to: MediaTime(value: 2, timescale: 1), toleranceBefore: huge, toleranceAfter: huge)
        }
        #expect(landed.flatMap { $0 }.map { frames.contains($0) } == true, "\(String(describing: landed))")
    }

    /// A session runs once: run twice at the same time, one run gets every frame and the other is
    /// refused (they shared the frames, each "completed"); a run after the end is refused too.
    @Test func aSessionRunsOnce() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let session = DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9)))
        async let first = session.run(into: NullSink(pixelFormat: .rgb24))
        async let second = session.run(into: NullSink(pixelFormat: .rgb24))
        let results = await [first, second]
        let completed = results.filter { $0.status == .completed }
        #expect(completed.count == 1 && completed.first?.framesDelivered == 100, "\(results)")
        let refused = results.filter { if case .failed(let error) = $0.status { return error.code == .invalidState } else { return false } }
        #expect(refused.count == 1, "\(results)")
        let again = await session.run(into: NullSink(pixelFormat: .rgb24))
        if case .failed(let error) = again.status { #expect(error.code == .invalidState) } else { Issue.record("a second run gave \(again.status)") }
    }

    /// A byte source's asset plays through the coordinator and the audio session as a file does.
    @Test func byteSourceAssetsEverywhere() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 1)
        let request = PlaybackRequest(asset: Asset(byteSource: MemoryByteSource(bytes), name: "upload.mp4"), decoding: tiny.decoding)
        let id = await coordinator.submit(request, output: { NullSink(pixelFormat: .rgb24) })
        let outcome = await withDeadline(Bound.seconds(20), "the byte source's session") { try? await coordinator.takeOutcome(of: id) }
        #expect(outcome??.status == .completed && outcome??.framesPresented == 100, "\(String(describing: outcome))")
        let fromFile = await AudioSession(source: path).run(into: NullAudioSink())
        let fromBytes = await AudioSession(asset: Asset(byteSource: MemoryByteSource(bytes), name: "upload.mp4")).run(into: NullAudioSink())
        #expect(fromBytes.status == .completed && fromBytes.frames == fromFile.frames && fromFile.frames > 0, "\(fromBytes) vs \(fromFile)")
    }

    /// The command-line tool's folder policy stays with its runs: an app's sink writing into a
    /// folder a run once made (its owner mark still there) never writes the run's log.
    @Test func aLibrarySinkNeverWritesTheToolsLog() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-library-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let inner = folder + "/01-clip"
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: inner + "/" + OutputFolder.ownerMarkName, contents: Data("token".utf8)))
        let sink = ImageSequenceSink(directory: inner, format: .png)
        let result = await DecodeSession(source: try Fixtures.clip("h264-aac.mp4"), configuration: DecodeConfiguration(frameLimit: 2))
            .run(into: sink)
        #expect(result.status == .completed && result.framesDelivered == 2, "\(result)")
        #expect(FileManager.default.fileExists(atPath: inner + "/frame-000002.png"))
        #expect(!FileManager.default.fileExists(atPath: inner + "/.playhead-written"), "the library wrote the tool's log")
    }

    /// A compositor's rules hold for every way in: an update with a loop count of 0 is refused as an
    /// add is; a stop that comes before the render (a signal at a channel's start) ends it at its
    /// first frame, and the next render runs on.
    @Test func aCompositorsRulesAndAnEarlyStop() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let canvas = CompositionCanvas(size: PixelSize(width: 32, height: 18), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        let layer = CompositionLayer(assets: [Asset(path: clip)], rect: PixelRect(x: 0, y: 0, width: 32, height: 18), loop: .forever)
        let id = try compositor.add(layer)
        var never = layer
        never.loop = .times(0)
        #expect(throws: PlayheadError.self, "a loop count of 0 by update") { try compositor.update(id, to: never) }
        #expect(throws: PlayheadError.self, "a loop count of 0 by add") { try compositor.add(never) }

        compositor.stop()
        let stopped = await withDeadline(Bound.seconds(20), "an endless render stopped before it began") {
            await compositor.render(frames: nil, into: NullSink(pixelFormat: .rgb24))
        }
        #expect(stopped?.error == nil && stopped?.framesWritten == 1, "\(String(describing: stopped))")
        let next = await compositor.render(frames: 5, into: NullSink(pixelFormat: .rgb24))
        #expect(next.error == nil && next.framesWritten == 5, "the stop ended one render only: \(next)")
    }

    /// A second run of an audio session is refused; a WAV file takes samples of its own format
    /// only, and none before its stream began; a manual clock never goes back.
    @Test func audioSessionsRunOnceAndWAVFilesHoldOneFormat() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let session = AudioSession(source: clip)
        let first = InMemoryAudioSink()
        #expect(await session.run(into: first).status == .completed)
        let second = await session.run(into: InMemoryAudioSink())
        guard case .failed(let error) = second.status else {
            Issue.record("a second run was not refused: \(second)")
            return
        }
        #expect(error.code == .invalidState)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let wav = WAVSink(path: path)
        let samples = [Int16](repeating: 0, count: 96)
        try samples.withUnsafeBufferPointer { buffer in
            let early = AudioBuffer(samples: buffer, frameCount: 48, channelCount: 2, sampleRate: 48000, presentationTime: .zero)
            #expect(throws: PlayheadError.self, "samples before begin") { try wav.write(early) }
            try wav.begin(AudioStreamInfo(source: "test", sampleRate: 48000, channelCount: 2))
            try wav.write(early)
            let mono = AudioBuffer(samples: buffer, frameCount: 96, channelCount: 1, sampleRate: 48000, presentationTime: .zero)
            #expect(throws: PlayheadError.self, "samples of another channel count") { try wav.write(mono) }
        }
        try wav.finish()
        #expect(wav.framesWritten == 48)

        let clock = ManualPlaybackClock()
        let before = clock.now()
        clock.advance(by: .seconds(-5))
        #expect(clock.now() == before)
    }

    /// Runs `body` in a task, cancels the task after a moment, and expects `body` to end promptly.
    static func endsWhenCancelled(_ what: String, _ body: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await body() }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        let ended: Bool? = await withDeadline(Bound.seconds(5), "\(what) after its task was cancelled") {
            _ = try? await task.value
            return true
        }
        #expect(ended != nil, "\(what) did not end when cancelled")
    }

}
