import Foundation
import Playhead
import Testing

/// The library's contract as an embedding app sees it: only what is public, used the way app code
/// uses it — loading, playing into its own code, images, a coordinator, a composition — and
/// misused the way app code misuses it: cancelled waits, dropped sequences, sinks used after they
/// were handed over, an error read for what it says.
@Suite struct EmbedderTests {
    /// The repository's top folder (this file is Embedder/Tests/EmbedderTests/EmbedderTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A sample clip of the package (2 s, 320x180, 25 fps, AAC).
    static func clip(_ name: String = "h264-aac.mp4") throws -> String {
        let path = root.appendingPathComponent("SampleMedia/\(name)").path
        try #require(FileManager.default.fileExists(atPath: path), "missing \(path)")
        return path
    }

    @Test func loadingKeysAndReadingAnError() async throws {
        let asset = Asset(path: try Self.clip())
        let (tracks, duration) = try await asset.load(.tracks, .duration)
        #expect(tracks.contains { $0.mediaType == .video } && tracks.contains { $0.mediaType == .audio })
        #expect(abs(duration.seconds - 2) < 0.1, "\(duration)")
        #expect(await asset.status(of: .duration) == .loaded)

        let missing = Asset(path: "/nonexistent/folder/clip.mp4")
        do {
            _ = try await missing.load(.duration)
            Issue.record("a missing file loaded")
        } catch {
            // Typed throws: `error` is a PlayheadError without a cast.
            #expect(error.code == .fileNotFound && error.code.family == .io)
            #expect(error.file == "/nonexistent/folder/clip.mp4")
            #expect(error.localizedDescription.contains(error.message), "\(error.localizedDescription)")
        }
    }

    @Test func framesPulledAndStreamedIntoTheAppsOwnCode() async throws {
        let asset = Asset(path: try Self.clip())
        // A stream read after it was handed to the session (it is Sendable: no `sending` trap).
        let stream = FrameStream(pixelFormat: .rgb24, bufferingLimit: 2)
        async let result = DecodeSession(asset: asset).run(into: stream)
        var times: [MediaTime] = []
        for await frame in stream {
            #expect(frame.planes.count == 1 && frame.planes[0].count == 320 * 180 * 3)
            times.append(frame.itemTime)
        }
        #expect(await result.status == .completed)
        #expect(times.count == 50 && times == times.sorted())

        // A render loop's output, read after the player finished.
        let output = VideoOutput(pixelFormat: .yuv420p)
        let player = Player(item: PlayerItem(asset: asset), output: output)
        player.play()
        await player.waitUntilIdle()
        try await player.finishOutput()
        let last = try #require(output.copyFrame(forItemTime: .positiveInfinity))
        #expect(last.index == 49 && last.planes.count == 3 && output.isFinished)
        #expect(output.copyFrame(forItemTime: MediaTime(seconds: -1)) == nil)
    }

    /// The app's own sink: a non-Sendable class handed over with `sending`, never touched again.
    @Test func anAppsOwnSink() async throws {
        final class Counter: FrameSink {
            let pixelFormat = OutputPixelFormat.rgb24
            var frames = 0
            var finished = false
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) { frames += 1 }
            func finish() throws(PlayheadError) { finished = true }
            func abort() {}
        }
        let result = await DecodeSession(source: try Self.clip(), configuration: DecodeConfiguration(frameLimit: 10)).run(into: Counter())
        #expect(result.status == .completed && result.framesDelivered == 10)
    }

    @Test func imagesAtTimesAndADroppedSequence() async throws {
        var generator = AssetImageGenerator(asset: Asset(path: try Self.clip()))
        generator.maximumSize = PixelSize(width: 160, height: 90)
        let (image, actual) = try await generator.image(at: MediaTime(seconds: 1))
        #expect(image.size == PixelSize(width: 160, height: 90) && actual == MediaTime(seconds: 1))
        #expect("\(image)".count < 100, "an image prints as a line: \(image)")
        // Made and dropped without iterating: nothing starts, nothing is held.
        _ = generator.images(for: [MediaTime(seconds: 0.5), MediaTime(seconds: 1.5)])
        var got: [(asked: MediaTime, shown: MediaTime?)] = []
        for await result in generator.images(for: [MediaTime(seconds: 1.5), MediaTime(seconds: 0.5)]) {
            got.append((result.requestedTime, result.actualTime))
        }
        #expect(got.map(\.asked) == [MediaTime(seconds: 0.5), MediaTime(seconds: 1.5)], "ascending time order")
        // The frame on screen at each time: 25 fps, so the one that began within 40 ms before it.
        #expect(got.map(\.shown) == [MediaTime(value: 12, timescale: 25), MediaTime(value: 37, timescale: 25)])
    }

    @Test func aContactSheetOfAnAssetsImages() async throws {
        let asset = Asset(path: try Self.clip())
        var generator = AssetImageGenerator(asset: asset)
        generator.maximumSize = PixelSize(width: 160, height: 90)
        generator.blankFrameSearchLimit = MediaTime(seconds: 0.2)
        var results: [AssetImageGenerator.Result] = []
        for await result in generator.images(for: [0.5, 1, 1.5, 9].map { MediaTime(seconds: $0) }) { results.append(result) }
        #expect(results.map { $0.image != nil } == [true, true, true, false], "9 s is past the 2 s clip")
        #expect(results.allSatisfy { $0.blankFrameTime == nil && !$0.isBlank }, "a test pattern is never blank")
        let section = try await ContactSheet.Section(asset: asset, name: "h264-aac.mp4", results: results)
        #expect(section.cells.map(\.label) == ["00:00.48", "00:01.00", "00:01.48", "00:09.00"])
        #expect(section.cells[3].failure?.contains("ends at") == true, "\(section.cells[3])")
        #expect(section.details.joined().contains("Duration 00:02.00"), "\(section.details)")
        var sheet = ContactSheet(sections: [section], columns: 3, cellSize: PixelSize(width: 160, height: 90))
        let picture = try await sheet.render()
        #expect(picture.size.width == 10 + 3 * 170)
        let jpeg = try await sheet.encoded(as: .jpeg)
        #expect(jpeg.starts(with: [0xFF, 0xD8]), "a JPEG file")
        // An absurd sheet is an error, not a crash.
        sheet.columns = 0
        await #expect(throws: PlayheadError.self) { try await sheet.render() }
    }

    @Test func cancelledWaitsEndAndPlayingGoesOn() async throws {
        let player = Player(
            item: PlayerItem(asset: Asset(path: try Self.clip())), output: NullSink(),
            configuration: PlayerConfiguration(realtime: true))
        player.play()
        // Playing once it has opened (on a loaded machine that takes longer than a moment).
        let opening = ContinuousClock.now + .seconds(10)
        while player.timeControlStatus != .playing, ContinuousClock.now < opening { try await Task.sleep(for: .milliseconds(10)) }
        try #require(player.timeControlStatus == .playing)
        let waiting = Task { await player.waitUntilIdle() }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        let start = ContinuousClock.now
        await waiting.value
        #expect(ContinuousClock.now - start < .seconds(1), "the cancelled wait ended at once")
        #expect(player.timeControlStatus == .playing, "playing went on")
        player.pause()
    }

    @Test func aCoordinatorsOutcomes() async throws {
        let coordinator = PlaybackCoordinator(maxConcurrentSessions: 2)
        let path = try Self.clip()
        let ids = await (0..<3).asyncMap { _ in
            await coordinator.submit(PlaybackRequest(asset: Asset(path: path)), output: { NullSink() })
        }
        for id in ids {
            let outcome = try await coordinator.takeOutcome(of: id)
            #expect(outcome.status == .completed && outcome.framesPresented == 50)
        }
        await #expect(throws: PlayheadError.self, "an outcome taken twice") { try await coordinator.takeOutcome(of: ids[0]) }
        #expect(await coordinator.peakConcurrentSessions <= 2)
    }

    @Test func aCompositionIntoMemory() async throws {
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        _ = try compositor.add(CompositionLayer(assets: [Asset(path: try Self.clip())], rect: PixelRect(x: 0, y: 0, width: 32, height: 36)))
        let frames = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 10, into: frames)
        #expect(report.error == nil && report.framesWritten == 10)
        #expect(frames.frames.count == 10 && frames.frames.allSatisfy { $0.bytes.count == 64 * 36 * 3 })
    }

    /// A looping layer given memory for its pictures draws its later passes without decoding
    /// them: the same pictures as without.
    @Test func aLoopDrawnFromItsFirstPass() async throws {
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        func render(loopCacheBytes: Int) async throws -> (frames: [[UInt8]], fromCache: Int?, held: Int) {
            let compositor = Compositor(canvas: canvas, loopCacheBytes: loopCacheBytes)
            _ = try compositor.add(
                CompositionLayer(assets: [Asset(path: try Self.clip())], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .forever))
            let frames = InMemorySink(pixelFormat: .rgb24)
            let report = await compositor.render(frames: 120, into: frames)
            #expect(report.error == nil)
            return (frames.frames.map(\.bytes), report.layers.first?.framesFromLoopCache, compositor.progress.loopCacheBytes)
        }
        let decoded = try await render(loopCacheBytes: 0)
        let cached = try await render(loopCacheBytes: 16 << 20)
        #expect(cached.frames.count == 120 && cached.frames == decoded.frames)
        // Passes of 50 frames: the second and third from the first's pictures.
        #expect(decoded.fromCache == 0 && cached.fromCache == 70, "\(String(describing: cached.fromCache))")
        #expect(decoded.held == 0 && cached.held > 0)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}
