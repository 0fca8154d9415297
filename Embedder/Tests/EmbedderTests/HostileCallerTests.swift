import Foundation
import Playhead
import Testing

/// What an app may pass, however absurd, gets a typed error or a harmless answer — never a trap —
/// and what it misuses is refused or ended, never left waiting: the library findings of the third
/// hostile round, tried through the public API alone. Each case gives back the descriptors and
/// threads it took (``ReturnsToBaseline``); run alone (see scripts/test.sh).
@Suite(.serialized, .returnsToBaseline) struct HostileCallerTests {
    // MARK: No value a caller passes traps

    @Test func contactSheetsOfAbsurdSizesAreRefused() async {
        let absurd: [(columns: Int, cell: PixelSize, spacing: Int, cells: [Int], details: Int)] = [
            (4, PixelSize(width: Int.max, height: 90), 10, [4], 0),
            (4, PixelSize(width: 160, height: Int.max), 10, [4], 0),
            (4, PixelSize(width: 160, height: 90), Int.max, [4], 0),
            (Int.max, PixelSize(width: 160, height: 90), 10, [4], 0),
            (4, PixelSize(width: 160, height: 90), 10, [Int.max], 0),
            (4, PixelSize(width: 160, height: 90), 10, [-5], 0),
            (4, PixelSize(width: 160, height: 90), 10, [4], Int.max),
            (4, PixelSize(width: 160, height: 90), 10, [4], -3),
            (0, PixelSize(width: 160, height: 90), 10, [4], 0),
            (4, PixelSize(width: -160, height: 90), 10, [4], 0),
        ]
        for shape in absurd {
            #expect(throws: PlayheadError.self, "\(shape)") {
                _ = try ContactSheet.size(
                    columns: shape.columns, cellSize: shape.cell, cellCounts: shape.cells, detailLines: shape.details, headings: .large,
                    spacing: shape.spacing)
            }
        }
        var sheet = ContactSheet(sections: [ContactSheet.Section(title: "x", cells: [])], columns: 2, cellSize: PixelSize(width: 8, height: 8))
        sheet.spacing = Int.max
        await #expect(throws: PlayheadError.self) { _ = try await sheet.render() }
        sheet.spacing = 4
        sheet.cellSize = PixelSize(width: Int.max - 1, height: 8)
        await #expect(throws: PlayheadError.self) { _ = try await sheet.render() }
    }

    @Test func imagesOfImpossibleSizesAreRefusedAndDrawingAnywhereIsClipped() throws {
        #expect(throws: PlayheadError.self) {
            _ = try GeneratedImage(size: PixelSize(width: -2, height: -3), pixels: [UInt8](repeating: 0, count: 18))
        }
        #expect(throws: PlayheadError.self) { _ = try GeneratedImage(size: PixelSize(width: 2, height: 2), pixels: [0, 1, 2]) }
        #expect(throws: PlayheadError.self) { _ = try GeneratedImage(size: PixelSize(width: Int.max, height: 3), gray: 0) }
        #expect(throws: PlayheadError.self) { _ = try GeneratedImage(size: PixelSize(width: -1, height: 1), gray: 0) }
        var canvas = try GeneratedImage(size: PixelSize(width: 4, height: 4), gray: 0)
        let dot = try GeneratedImage(size: PixelSize(width: 2, height: 2), gray: 255)
        for (x, y) in [(Int.max, 0), (Int.min, 0), (0, Int.max), (0, Int.min), (Int.max, Int.min), (3, 3), (-1, -1)] {
            canvas.draw(dot, atX: x, y: y)
        }
        // Only the two that overlap drew: the corners (3,3) and (0,0).
        #expect(canvas.pixels[0] == 255 && canvas.pixels[(3 * 4 + 3) * 3] == 255 && canvas.pixels[(1 * 4 + 1) * 3] == 0)
    }

    @Test func aCapturedFrameWhosePlanesDoNotMatchItsSizeHasNoImage() {
        let frame = CapturedFrame(
            itemTime: .zero, duration: .zero, index: 0, source: "app", size: PixelSize(width: 4, height: 4), pixelFormat: .rgb24,
            pixelFormatName: "rgb24", planes: [[1, 2, 3]], bytesPerRow: [12])
        #expect(frame.image == nil)
    }

    @Test func aLayoutOfNothingIsEmpty() {
        let layout = VideoGravity.resizeAspect.layout(stored: PixelSize(width: 0, height: 0), canvas: PixelSize(width: -4, height: 8), alignment: 0)
        #expect(layout.content.width == 0 && layout.content.height == 0)
    }

    @Test func anInvalidRangeIsNotAValidOne() {
        #expect(!TimeRange(start: MediaTime(seconds: 5), end: MediaTime(seconds: 1)).isValid)
        #expect(!TimeRange(start: .invalid, duration: MediaTime(seconds: 1)).isValid)
        #expect(TimeRange(start: .zero, duration: MediaTime(seconds: 1)).isValid)
        #expect(TimeRange(start: MediaTime(seconds: 3), duration: .positiveInfinity).isValid, "from 3 s to the end")
        #expect(!TimeRange(start: .zero, duration: .negativeInfinity).isValid)
    }

    // MARK: Misuse is refused

    @Test func aCompositorRefusesBackwardRangesAbsurdPlacesAndALayerPastItsLimit() throws {
        let asset = Asset(path: try EmbedderTests.clip())
        guard let rate = FrameRate(numerator: 25) else { throw PlayheadError(code: .invalidArgument, message: "25 fps") }
        let compositor = Compositor(canvas: CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: rate))
        let backward = CompositionLayer(
            assets: [asset], rect: PixelRect(x: 0, y: 0, width: 64, height: 36),
            timeRange: TimeRange(start: MediaTime(seconds: 5), end: MediaTime(seconds: 1)))
        #expect(throws: PlayheadError.self) { _ = try compositor.add(backward) }
        let far = CompositionLayer(assets: [asset], rect: PixelRect(x: Int.max - 1, y: 0, width: Int.max, height: 36))
        #expect(throws: PlayheadError.self) { _ = try compositor.add(far) }
        let small = CompositionLayer(assets: [asset], rect: PixelRect(x: 0, y: 0, width: 2, height: 2))
        for _ in 0..<Compositor.maximumLayers { _ = try compositor.add(small) }
        #expect(throws: PlayheadError.self, "a layer past the limit") { _ = try compositor.add(small) }
    }

    /// The obvious code writes its files: sessions finish the audio sinks they were given when
    /// they complete (before, a WAV or an MP4 fed this way was never written, and the run said
    /// `completed`).
    @Test func theObviousSessionCodeWritesItsFiles() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("embedder-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sound = await AudioSession(source: try EmbedderTests.clip()).run(into: WAVSink(path: folder + "/sound.wav"))
        #expect(sound.status == .completed && sound.frames > 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/sound.wav"))
        let mp4 = MP4Sink(path: folder + "/copy.mp4")
        let copy = await DecodeSession(source: try EmbedderTests.clip()).run(into: mp4, audio: mp4.soundInput())
        #expect(copy.status == .completed && mp4.framesWritten == copy.framesDelivered && mp4.audioFramesWritten > 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/copy.mp4"))
    }

    /// A byte source whose reads block part way: the session ends at its timeouts (before, it
    /// waited for the read for ever, six threads with it).
    @Test func aByteSourceThatBlocksDoesNotHoldTheSession() async throws {
        let source = BlocksPartWay(try Data(contentsOf: URL(fileURLWithPath: try EmbedderTests.clip())))
        defer { source.release.signal() }
        let asset = Asset(
            byteSource: source, name: "store://blocking.mp4", options: AssetOptions(openTimeout: .seconds(1), stallTimeout: .seconds(1)))
        let start = ContinuousClock.now
        let result = await DecodeSession(asset: asset).run(into: NullSink())
        guard case .failed(let error) = result.status else {
            Issue.record("\(result.status)")
            return
        }
        #expect(error.code == .timedOut, "\(error)")
        #expect(ContinuousClock.now - start < .seconds(8), "\(ContinuousClock.now - start)")
    }

    /// A byte source that blocks from its first byte: the open ends at its open timeout, as a
    /// typed error naming the source, whether a key load or a session asked for it.
    @Test func aByteSourceThatNeverAnswersEndsAtTheOpenTimeout() async throws {
        let source = BlocksPartWay(try Data(contentsOf: URL(fileURLWithPath: try EmbedderTests.clip())), blockingFrom: 0)
        defer { source.release.signal() }
        let options = AssetOptions(openTimeout: .seconds(1), stallTimeout: .seconds(60))
        let start = ContinuousClock.now
        do {
            let tracks = try await Asset(byteSource: source, name: "store://silent.mp4", options: options).load(.tracks)
            Issue.record("opened a source that never answers: \(tracks.count) tracks")
        } catch {
            #expect(error.code == .timedOut && error.file == "store://silent.mp4", "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(6), "the load ended \(ContinuousClock.now - start) after it began")
        let result = await DecodeSession(asset: Asset(byteSource: source, name: "store://silent.mp4", options: options)).run(into: NullSink())
        guard case .failed(let error) = result.status else {
            Issue.record("\(result.status)")
            return
        }
        #expect(error.code == .timedOut, "\(error)")
    }

    /// A byte source that blocks part way, under timeouts longer than the test: a cancel ends the
    /// session as cancelled, within its patience, its threads given back (the suite's trait).
    @Test func aSessionOverABlockingByteSourceEndsOnCancel() async throws {
        let source = BlocksPartWay(try Data(contentsOf: URL(fileURLWithPath: try EmbedderTests.clip())))
        defer { source.release.signal() }
        let asset = Asset(
            byteSource: source, name: "store://patient.mp4", options: AssetOptions(openTimeout: .seconds(60), stallTimeout: .seconds(60)))
        let run = Task { await DecodeSession(asset: asset).run(into: NullSink()) }
        #expect(await Task.detached { source.blocking.wait(timeout: .now() + 20) == .success }.value, "no read reached the block")
        let cancelled = ContinuousClock.now
        run.cancel()
        let result = await run.value
        #expect(result.status == .cancelled, "\(result.status)")
        #expect(ContinuousClock.now - cancelled < .seconds(4), "answered \(ContinuousClock.now - cancelled) after its cancel")
    }

    @Test func aSessionWhoseStartIsAfterItsEndIsRefused() async throws {
        var configuration = DecodeConfiguration()
        configuration.startTime = MediaTime(seconds: 1.5)
        configuration.endTime = MediaTime(seconds: 0.5)
        let session = DecodeSession(asset: Asset(path: try EmbedderTests.clip()), configuration: configuration)
        let result = await session.run(into: NullSink())
        guard case .failed(let error) = result.status else {
            Issue.record("ran: \(result.status)")
            return
        }
        #expect(error.code == .invalidArgument, "\(error)")
    }

    @Test func aLoopOfARangePastTheClipsEndStopsAndSaysWhy() async throws {
        let player = QueuePlayer(output: NullSink())
        let item = PlayerItem(
            asset: Asset(path: try EmbedderTests.clip()), timeRange: TimeRange(start: MediaTime(seconds: 30), duration: MediaTime(seconds: 1)))
        let looper = PlayerLooper(player: player, templateItem: item)
        player.play()
        let waited = Task { await looper.waitUntilFinished() }
        let deadline = ContinuousClock.now + .seconds(20)
        while !looper.isFinished, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        waited.cancel()
        #expect(looper.isFinished, "the looper spun on an empty range")
        #expect(looper.failure != nil)
        player.removeAllItems()
    }

    @Test func aSecondLooperOnAPlayerEndsTheFirstsWait() async throws {
        let player = QueuePlayer(output: NullSink())
        let asset = Asset(path: try EmbedderTests.clip())
        let first = PlayerLooper(player: player, templateItem: PlayerItem(asset: asset), loopCount: 5)
        let second = PlayerLooper(player: player, templateItem: PlayerItem(asset: asset), loopCount: 1)
        #expect(first.isFinished && first.failure?.code == .invalidState, "\(String(describing: first.failure))")
        player.play()
        await first.waitUntilFinished()
        await second.waitUntilFinished()
        #expect(second.loopsCompleted == 1)
    }

    @Test func aMissingSheetFontIsAnError() async throws {
        var sheet = ContactSheet(
            sections: [
                ContactSheet.Section(
                    title: "x", cells: [ContactSheet.Cell(image: try GeneratedImage(size: PixelSize(width: 8, height: 8), gray: 9), label: "0")])
            ],
            columns: 1, cellSize: PixelSize(width: 8, height: 8))
        sheet.fontFile = "/nonexistent/Font.ttf"
        do {
            _ = try await sheet.render()
            Issue.record("drawn with another font")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("/nonexistent/Font.ttf"), "\(error)")
        }
    }

    // MARK: One writer at a time

    /// A stream given to a second session while the first writes it, and an item a second player
    /// reaches while the first plays it, are refused; the first goes on whole.
    @Test func oneStreamAndOneItemTakeOneWriterAtATime() async throws {
        let clip = try EmbedderTests.clip()
        let stream = FrameStream(pixelFormat: .rgb24, bufferingLimit: 1)
        let first = Task { await DecodeSession(source: clip).run(into: stream) }
        let deadline = ContinuousClock.now + .seconds(30)
        while stream.streamInfo == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let second = await DecodeSession(source: clip).run(into: stream)
        guard case .failed(let error) = second.status else {
            Issue.record("a second session into one stream: \(second.status)")
            return
        }
        #expect(error.code == .invalidState, "\(error)")
        var frames = 0
        for await _ in stream { frames += 1 }
        let done = await first.value
        #expect(done.status == .completed && frames == done.framesDelivered && frames > 0, "\(frames) frames of \(done)")

        let item = PlayerItem(asset: Asset(path: clip))
        let held = FrameStream(pixelFormat: .rgb24, bufferingLimit: 1)
        let playing = Player(item: item, output: held)
        playing.play()
        while held.streamInfo == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let other = Player(item: item, output: NullSink())
        let events = other.events
        other.play()
        var refusal: PlayheadError?
        for await event in events {
            if case .itemFailed(let failed, let error) = event, failed === item {
                refusal = error
                break
            }
        }
        #expect(refusal?.code == .invalidState, "\(String(describing: refusal))")
        #expect(item.status == .readyToPlay, "\(item.status)")
        var shown = 0
        let reading = Task {
            var count = 0
            for await _ in held { count += 1 }
            return count
        }
        await playing.waitUntilIdle()
        try await playing.finishOutput()
        shown = await reading.value
        #expect(shown == done.framesDelivered && item.hasPlayedToEnd, "\(shown) frames shown by the first player")
    }

    // MARK: What an app needs is there

    @Test func aRenderLoopHasThePlayersClockToAskWith() async throws {
        let output = VideoOutput(pixelFormat: .rgb24)
        let player = Player(
            item: PlayerItem(asset: Asset(path: try EmbedderTests.clip())), output: output, configuration: PlayerConfiguration(realtime: true))
        #expect(output.currentItemTime == nil)
        player.play()
        var first: MediaTime?
        let deadline = ContinuousClock.now + .seconds(20)
        while first == nil, ContinuousClock.now < deadline {
            first = output.currentItemTime
            try await Task.sleep(for: .milliseconds(5))
        }
        let start = try #require(first, "no item time after the first frame")
        try await Task.sleep(for: .milliseconds(300))
        let later = try #require(output.currentItemTime)
        #expect(later > start, "the item time moves on with the clock: \(start.seconds) s, then \(later.seconds) s")
        let frame = try #require(output.copyFrame(forItemTime: later))
        #expect(frame.itemTime <= later)
        #expect(player.currentTime() >= later)
        // At the host time a picture will be on screen: the clock's now and 200 ms ahead of it,
        // 200 ms apart in the item at rate 1.
        let now = SystemPlaybackClock().now()
        let atNow = try #require(output.itemTime(forHostTime: now))
        let ahead = try #require(output.itemTime(forHostTime: now + .milliseconds(200)))
        #expect(abs((ahead - atNow).seconds - 0.2) < 0.001, "200 ms ahead is \((ahead - atNow).seconds) s on in the item")
        player.pause()
        let paused = try #require(output.currentItemTime)
        try await Task.sleep(for: .milliseconds(100))
        #expect(output.currentItemTime == paused, "paused, the item time stands still")
        #expect(output.itemTime(forHostTime: SystemPlaybackClock().now() + .seconds(1)) == paused, "paused, a time to come shows the same")
    }

    @Test func aCompositionRendersUntilItsLayersEndWithoutAFrameCount() async throws {
        guard let rate = FrameRate(numerator: 25) else { throw PlayheadError(code: .invalidArgument, message: "25 fps") }
        let compositor = Compositor(canvas: CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: rate))
        _ = try compositor.add(
            CompositionLayer(assets: [Asset(path: try EmbedderTests.clip())], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .times(2)))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(.untilLayersEnd, into: sink)
        // Twice the clip (its length is its duration: 25 fps video from 0) at 25 fps.
        let length = try await Asset(path: try EmbedderTests.clip()).load(.duration)
        let expected = Int((length.seconds * 2 * 25).rounded(.up))
        #expect(
            expected > 0 && report.error == nil && report.framesWritten == expected && sink.frames.count == expected, "\(report.framesWritten) frames"
        )
    }

    // MARK: Every wait ends on cancel

    /// An app's sink whose `write` does not return: the cancelled session still answers (after
    /// its patience), and once the write returns every thread it held ends (the suite's
    /// baseline check).
    @Test func aWriteThatNeverReturnsHoldsOnlyItsThread() async throws {
        final class Stuck: FrameSink, Sendable {
            let pixelFormat = OutputPixelFormat.rgb24
            let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) {
                entered.signal()
                release.wait()
                release.signal()
            }
            func finish() throws(PlayheadError) {}
            func abort() {}
        }
        let sink = Stuck()
        defer { sink.release.signal() }
        let run = Task { await DecodeSession(asset: Asset(path: try EmbedderTests.clip())).run(into: sink) }
        #expect(await Task.detached { sink.entered.wait(timeout: .now() + 30) == .success }.value, "no frame reached the sink")
        let cancelled = ContinuousClock.now
        run.cancel()
        let result = try await run.value
        #expect(result.status == .cancelled, "\(result.status)")
        #expect(
            ContinuousClock.now - cancelled < .seconds(4),
            "answered \(ContinuousClock.now - cancelled) after its cancel (a second's patience; it was 5 s)")
    }

    /// Four tasks add, update, move and remove layers (some with backward or absurd ranges and
    /// places, refused) while a compositor renders: the render goes on, `stop()` ends it, and
    /// every thread it took ends (the suite's baseline check).
    @Test func editsFromManyTasksWhileRenderingNeverHoldTheRender() async throws {
        guard let rate = FrameRate(numerator: 25) else { throw PlayheadError(code: .invalidArgument, message: "25 fps") }
        let compositor = Compositor(canvas: CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: rate))
        let asset = Asset(path: try EmbedderTests.clip())
        let base = try compositor.add(CompositionLayer(assets: [asset], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .forever))
        let render = Task { await compositor.render(frames: nil, into: NullSink()) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var mine: [CompositionLayer.ID] = []
                    for step in 0..<40 {
                        let start = MediaTime(seconds: Double((step * 7 + worker) % 5) - 1)
                        var layer = CompositionLayer(
                            assets: [asset], rect: PixelRect(x: step % 64 - 8, y: worker * 9, width: 16 + step, height: 9), loop: .forever)
                        layer.timeRange = TimeRange(start: start, duration: MediaTime(seconds: Double(step % 3) - 1))
                        switch (step + worker) % 4 {
                        case 0: if let id = try? compositor.add(layer) { mine.append(id) }
                        case 1: if let id = mine.last { try? compositor.update(id, to: layer) }
                        case 2: if let id = mine.first { try? compositor.move(id, to: layer.rect, zIndex: step - 20) }
                        default: if !mine.isEmpty { compositor.remove(mine.removeFirst()) }
                        }
                        try await Task.sleep(for: .milliseconds(2))
                    }
                }
            }
            try await group.waitForAll()
        }
        let stopped = ContinuousClock.now
        compositor.stop()
        let report = await render.value
        #expect(ContinuousClock.now - stopped < .seconds(5), "the render ended \(ContinuousClock.now - stopped) after stop()")
        #expect(report.error == nil && report.framesWritten > 0, "\(String(describing: report.error)), \(report.framesWritten) frames")
        #expect(report.layers.contains { $0.id == base && $0.framesShown > 0 }, "the first layer drew")
    }

    /// A second iterator of one image sequence gets nothing and stops nothing: the first gets
    /// every image.
    @Test func aSecondIteratorOfOneImageSequenceGetsNothing() async throws {
        let times = [MediaTime.zero, MediaTime(seconds: 0.5), MediaTime(seconds: 1)]
        let results = AssetImageGenerator(asset: Asset(path: try EmbedderTests.clip())).images(for: times)
        var mine = results.makeAsyncIterator()
        do {
            var other = results.makeAsyncIterator()
            let first = await other.next()
            #expect(first == nil, "a second iterator got \(String(describing: first))")
        }
        var answered: [MediaTime] = []
        while let result = await mine.next() {
            if result.image != nil { answered.append(result.requestedTime) }
        }
        #expect(answered == times, "the first iterator got \(answered)")
    }

    /// An image of a byte source that stops answering ends at the stall timeout (it took 18 s
    /// for a 2 s stall before), and the read's thread ends once the read returns.
    @Test func anImageOfAStalledSourceEndsAtItsStallTimeout() async throws {
        let source = BlocksPartWay(try Data(contentsOf: URL(fileURLWithPath: try EmbedderTests.clip())))
        defer { source.release.signal() }
        let asset = Asset(byteSource: source, name: "store://stalling.mp4", options: AssetOptions(stallTimeout: .seconds(1)))
        let start = ContinuousClock.now
        do {
            let image = try await AssetImageGenerator(asset: asset).image(at: MediaTime(seconds: 1.8))
            Issue.record("an image past the stall: \(image.actualTime)")
        } catch {
            #expect(error.code == .timedOut, "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(5), "the image ended \(ContinuousClock.now - start) after it was asked for")
    }

    @Test func measuringLoudnessEndsWhenItsTaskIsCancelled() async throws {
        // Two hours of sound to measure (FLAC of silence: quick to make, minutes to decode).
        let long = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-long-\(UUID().uuidString).flac").path
        defer { try? FileManager.default.removeItem(atPath: long) }
        let status = spawnAndWait(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo", "-t", "7200", "-c:a", "flac", long])
        try #require(status == 0, "could not make \(long)")
        guard let rate = FrameRate(numerator: 25) else { throw PlayheadError(code: .invalidArgument, message: "25 fps") }
        let compositor = Compositor(canvas: CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: rate), loudnessTarget: -23)
        var layer = CompositionLayer(assets: [Asset(path: long)], rect: PixelRect(x: 0, y: 0, width: 64, height: 36))
        layer.providesAudio = true
        _ = try compositor.add(layer)
        let measuring = Task { await compositor.measureLoudness() }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        measuring.cancel()
        await measuring.value
        #expect(ContinuousClock.now - cancelled < .seconds(2), "the wait outlived its cancelled task by \(ContinuousClock.now - cancelled)")
    }
}

/// Runs `path` with `arguments` and waits for it (its exit status; -1 when it could not start):
/// `posix_spawn` and `waitpid`, so that no run loop or pipe of Foundation's `Process` is left open
/// to count against the case that made the file (``ReturnsToBaseline``).
func spawnAndWait(_ path: String, _ arguments: [String]) -> Int32 {
    var pid: pid_t = 0
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    guard posix_spawn(&pid, path, nil, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { return -1 }
    }
    // Exited normally: its exit code (WIFEXITED, WEXITSTATUS); killed: -1.
    return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
}

/// A byte source of `bytes` whose reads answer the first third (the header and the first frames)
/// and block past it until ``release`` is signalled (then the data ends there).
final class BlocksPartWay: ByteSource {
    let bytes: Data
    /// Where reads begin to block: a third of the way in, unless told otherwise.
    let limit: Int
    let release = DispatchSemaphore(value: 0)
    /// Signalled each time a read begins to block.
    let blocking = DispatchSemaphore(value: 0)
    init(_ bytes: Data, blockingFrom limit: Int? = nil) {
        self.bytes = bytes
        self.limit = min(bytes.count, max(0, limit ?? bytes.count / 3))
    }
    var size: Int64? { Int64(bytes.count) }
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset >= Int64(limit) {
            blocking.signal()
            release.wait()
            release.signal()
            return 0
        }
        let count = min(buffer.count, limit - Int(offset))
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<(Int(offset) + count)])) }
        return count
    }
}
