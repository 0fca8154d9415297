import Foundation
import Synchronization
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// What an app may share by mistake between two writers at once — one output given to two
/// sessions, renders or players, one item queued in two players, one compositor rendered twice,
/// one sequence of images iterated twice — is refused with `state.invalidState` before it is
/// touched; the first writer's work goes on as if nothing happened, and one writer after another
/// is fine.
@Suite struct OneWriterTests {
    static let small = DecodeConfiguration(outputSize: PixelSize(width: 16, height: 9))

    /// A sink that holds its first frame until it is let through, and counts what it is told.
    final class HeldSink: FrameSink, Sendable {
        let pixelFormat = OutputPixelFormat.rgb24
        private let counts = Mutex((begins: 0, writes: 0, finishes: 0, aborts: 0, open: false))

        var begins: Int { counts.withLock { $0.begins } }
        var writes: Int { counts.withLock { $0.writes } }
        var finishes: Int { counts.withLock { $0.finishes } }
        var aborts: Int { counts.withLock { $0.aborts } }

        func letThrough() { counts.withLock { $0.open = true } }

        func begin(_ info: FrameStreamInfo) throws(PlayheadError) { counts.withLock { $0.begins += 1 } }
        func write(_ frame: VideoFrame) throws(PlayheadError) {
            counts.withLock { $0.writes += 1 }
            while !counts.withLock({ $0.open }) { usleep(2000) }
        }
        func finish() throws(PlayheadError) { counts.withLock { $0.finishes += 1 } }
        func abort() { counts.withLock { $0.aborts += 1 } }

        /// Waits until a writer is held at its first frame.
        func waitForAWriter() async throws {
            let deadline = ContinuousClock.now + Bound.seconds(30)
            while writes == 0 {
                guard ContinuousClock.now < deadline else { throw PlayheadError(code: .invalidState, message: "no writer came") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    static func refusal(_ status: DecodeResult.Status) -> PlayheadError? {
        if case .failed(let error) = status, error.code == .invalidState { return error }
        return nil
    }

    @Test func anOutputTakesOneWriterAtATime() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let sink = HeldSink()
        let first = Task { await DecodeSession(source: path, configuration: Self.small).run(into: sink) }
        try await sink.waitForAWriter()

        // A second session, a render and a player given the same sink, while it is written.
        defer { sink.letThrough() }
        let second = try #require(
            await withDeadline(Bound.seconds(10), "a second session refused") {
                await DecodeSession(source: path, configuration: Self.small).run(into: sink)
            })
        let refused = try #require(Self.refusal(second.status), "a second writer gave \(second.status)")
        #expect(refused.message.contains("another session, render or player") && refused.file == path, "\(refused)")
        #expect(second.framesDelivered == 0)

        let canvas = CompositionCanvas(size: PixelSize(width: 16, height: 8), frameRate: try #require(FrameRate(numerator: 25)))
        let render = await withDeadline(Bound.seconds(10), "a render refused") { await Compositor(canvas: canvas).render(frames: 3, into: sink) }
        #expect(render?.error?.code == .invalidState && render?.framesWritten == 0, "\(String(describing: render))")

        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: sink, configuration: PlayerConfiguration(decoding: Self.small))
        let events = player.events
        player.play()
        let failure = await withDeadline(Bound.seconds(10), "a player refused") { () -> PlayheadError? in
            for await event in events {
                if case .itemFailed(_, let error) = event { return error }
            }
            return nil
        }
        #expect(failure??.code == .invalidState, "the player's item: \(String(describing: failure))")
        // Let go of, the player gives up only an output it wrote: not this one.
        player.abortOutput()
        #expect(sink.begins == 1 && sink.writes == 1 && sink.aborts == 0 && sink.finishes == 0, "the first writer's sink was touched")

        sink.letThrough()
        let done = await first.value
        #expect(done.status == .completed && done.framesDelivered == 100, "\(done)")
        #expect(sink.writes == 100 && sink.finishes == 1 && sink.aborts == 0)
        // The refused player never finishes or gives up what another wrote, even once it is free.
        #expect(throws: PlayheadError.self) { try player.finishOutput() }
        player.abortOutput()
        #expect(sink.finishes == 1 && sink.aborts == 0, "the refused player touched the sink")

        // One writer after another is fine.
        let again = await DecodeSession(source: path, configuration: Self.small).run(into: sink)
        #expect(again.status == .completed && sink.writes == 200 && sink.finishes == 2, "\(again)")
    }

    /// A sink whose `write` does not return holds only its own thread: the cancelled session
    /// answers within its patience; the sink stays claimed (and untouched) until the write
    /// returns, then is given up and free again.
    @Test func aWriteThatDoesNotReturnHoldsOnlyItsThread() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let sink = HeldSink()
        defer { sink.letThrough() }
        let session = DecodeSession(source: path, configuration: Self.small)
        let run = Task { await session.run(into: sink) }
        try await sink.waitForAWriter()
        let patience = RunAnswer<DecodeResult>.patience
        let cancelled = ContinuousClock.now
        let control = WakeLateness(sleeping: patience)
        run.cancel()
        let result = await withDeadline(Bound.seconds(10), "a cancelled session whose sink does not return") { await run.value }
        let waited = ContinuousClock.now - cancelled
        let late = await control.measured()
        #expect(result?.status == .cancelled, "\(String(describing: result))")
        // Its patience, then an answer — not the sink's time (never, here). Counted past how late
        // the batch wakes a control sleep, with room for the answer's own hops through the
        // cooperative pool (on two busy cores each costs up to a second: 4.7 s once, the control
        // 1.6 s late). The tight bound, against the 5 s it once took, is the embedder's
        // `aWriteThatNeverReturnsHoldsOnlyItsThread`, run alone.
        #expect(
            waited >= patience && waited < patience + late + Bound.seconds(6),
            "the cancelled run answered after \(waited) (a control sleep of \(patience) woke \(late) late)")
        #expect(sink.aborts == 0 && sink.finishes == 0, "the sink was told something while its write had not returned")
        // Still inside it: no other writer may have it.
        let meanwhile = await DecodeSession(source: path, configuration: Self.small).run(into: sink)
        #expect(Self.refusal(meanwhile.status) != nil, "\(meanwhile.status)")

        sink.letThrough()
        let deadline = ContinuousClock.now + Bound.seconds(10)
        while sink.aborts == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(sink.aborts == 1 && sink.finishes == 0, "given up once its write returned: \(sink.aborts) aborts")
        var free = false
        while !free, ContinuousClock.now < deadline {
            free = !OutputClaims.isClaimed(sink)
            if !free { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(free, "the sink stayed claimed after its write returned")
        let after = await DecodeSession(source: path, configuration: Self.small).run(into: sink)
        #expect(after.status == .completed && after.framesDelivered == 100, "\(after)")
    }

    /// A refused run gives up the outputs it was given that no one else holds: a stream's
    /// consumer gets its end instead of waiting for ever.
    @Test func aRefusedRunEndsItsOtherOutputs() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = WAVSink(path: folder.appendingPathComponent("sound.wav").path)
        let frames = HeldSink()
        defer { frames.letThrough() }
        let first = Task { await DecodeSession(source: path, configuration: Self.small).run(into: frames, audio: wav) }
        try await frames.waitForAWriter()

        let stream = FrameStream(pixelFormat: .rgb24, bufferingLimit: 4)
        let refused = await DecodeSession(source: path, configuration: Self.small).run(into: stream, audio: wav)
        #expect(Self.refusal(refused.status) != nil, "\(refused.status)")
        let ended = await withDeadline(Bound.seconds(10), "the refused run's stream ending") { () -> Int in
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        #expect(ended == 0)

        // A second render of a compositor that renders: its stream ends too.
        let canvas = CompositionCanvas(size: PixelSize(width: 16, height: 8), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        let held = HeldSink()
        defer { held.letThrough() }
        let rendering = Task { await compositor.render(frames: 3, into: held) }
        try await held.waitForAWriter()
        let other = FrameStream(pixelFormat: .rgb24, bufferingLimit: 4)
        let second = await compositor.render(frames: 3, into: other)
        #expect(second.error?.code == .invalidState, "\(second)")
        let otherEnded = await withDeadline(Bound.seconds(10), "the refused render's stream ending") { () -> Int in
            var count = 0
            for await _ in other { count += 1 }
            return count
        }
        #expect(otherEnded == 0)
        held.letThrough()
        #expect(await rendering.value.framesWritten == 3)
        frames.letThrough()
        #expect(await first.value.status == .completed)
    }

    /// An app's object that takes both frames and sound is one output of a player, not two
    /// writers of one output.
    @Test func onePlayerMayWriteFramesAndSoundToOneObject() async throws {
        final class BothSink: FrameSink, AudioSink, Sendable {
            let pixelFormat = OutputPixelFormat.rgb24
            private let counts = Mutex((frames: 0, samples: 0, finishes: 0))
            var frames: Int { counts.withLock { $0.frames } }
            var samples: Int { counts.withLock { $0.samples } }
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) { counts.withLock { $0.frames += 1 } }
            func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}
            func write(_ buffer: AudioBuffer) throws(PlayheadError) { counts.withLock { $0.samples += buffer.frameCount } }
            func finish() throws(PlayheadError) { counts.withLock { $0.finishes += 1 } }
            func abort() {}
        }
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let both = BothSink()
        let player = Player(
            item: PlayerItem(asset: Asset(path: path)), output: both, audioOutput: both, configuration: PlayerConfiguration(decoding: Self.small))
        let events = player.events
        player.play()
        _ = await withDeadline(Bound.seconds(30), "a player into one object") { await player.waitUntilIdle() }
        try await player.finishOutput()
        player.abortOutput()
        let failed = await withDeadline(Bound.seconds(5), "the player's events") { () -> Bool in
            for await event in events {
                if case .itemFailed = event { return true }
                if case .itemEnded = event { return false }
            }
            return false
        }
        #expect(failed == false, "the item failed")
        #expect(both.frames == 100 && both.samples > 0, "\(both.frames) frames, \(both.samples) samples")
    }

    @Test func anAudioSinkTakesOneWriterAtATime() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = WAVSink(path: folder.appendingPathComponent("sound.wav").path)
        let frames = HeldSink()
        let first = Task { await DecodeSession(source: path, configuration: Self.small).run(into: frames, audio: wav) }
        try await frames.waitForAWriter()
        defer { frames.letThrough() }
        let second = try #require(
            await withDeadline(Bound.seconds(10), "a second writer of the WAV") { await AudioSession(source: path).run(into: wav) })
        if case .failed(let error) = second.status {
            #expect(error.code == .invalidState, "\(error)")
        } else {
            Issue.record("a second writer of the WAV gave \(second.status)")
        }
        #expect(second.frames == 0)
        frames.letThrough()
        let done = await first.value
        #expect(done.status == .completed, "\(done)")
        // The WAV holds the first session's sound alone (ffprobe counts it).
        let written = try #require(try await Reference.wavFrames(folder.appendingPathComponent("sound.wav").path))
        #expect(written > 0 && written == done.audioFramesDelivered, "\(written) samples in the WAV, \(done.audioFramesDelivered) delivered")
    }

    @Test func anItemPlaysInOnePlayerAtATime() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let configuration = PlayerConfiguration(decoding: Self.small)
        let item = PlayerItem(asset: Asset(path: path))
        let held = HeldSink()
        let first = Player(item: item, output: held, configuration: configuration)
        first.play()
        try await held.waitForAWriter()

        let other = InMemorySink(pixelFormat: .rgb24)
        let second = QueuePlayer(items: [item], output: other, configuration: configuration)
        let events = second.events
        second.play()
        defer { held.letThrough() }
        let failure = await withDeadline(Bound.seconds(10), "the second player refusing the item") { () -> PlayheadError? in
            for await event in events {
                if case .itemFailed(let failed, let error) = event, failed === item { return error }
            }
            return nil
        }
        #expect(failure??.code == .invalidState && failure??.message.contains("another player") == true, "\(String(describing: failure))")
        _ = await withDeadline(Bound.seconds(30), "the second player moving on") { await second.waitUntilIdle() }
        #expect(second.items().isEmpty && other.frames.count == 0)
        // The item is the first player's, as it was.
        #expect(item.status == .readyToPlay, "\(item.status)")

        held.letThrough()
        _ = await withDeadline(Bound.seconds(30), "the first player") { await first.waitUntilIdle() }
        #expect(item.hasPlayedToEnd && item.framesPresented == 100, "\(item.framesPresented) frames presented")

        // Out of the first player's queue, the item may play in another.
        first.replaceCurrentItem(with: nil)
        let third = Player(item: item, output: other, configuration: configuration)
        third.play()
        _ = await withDeadline(Bound.seconds(30), "the third player") { await third.waitUntilIdle() }
        #expect(other.frames.count == 100, "\(other.frames.count) frames in a player the item was free for")
    }

    /// A player let go of while its item's run is inside its output keeps the item until that
    /// run is over (it may still count a frame), then lets it go for good.
    @Test func aLetGoPlayerLetsItsItemGoWhenItsRunIsOver() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let configuration = PlayerConfiguration(decoding: Self.small)
        let item = PlayerItem(asset: Asset(path: path))
        let held = HeldSink()
        defer { held.letThrough() }
        var first: Player? = Player(item: item, output: held, configuration: configuration)
        first?.play()
        try await held.waitForAWriter()
        first = nil

        let other = InMemorySink(pixelFormat: .rgb24)
        let refused = QueuePlayer(items: [item], output: other, configuration: configuration)
        refused.play()
        _ = await withDeadline(Bound.seconds(30), "a player refused the item") { await refused.waitUntilIdle() }
        #expect(other.frames.count == 0, "the item played while the let-go player's run was inside its output")

        held.letThrough()
        let deadline = ContinuousClock.now + Bound.seconds(30)
        var frames = 0
        while frames == 0, ContinuousClock.now < deadline {
            let sink = InMemorySink(pixelFormat: .rgb24)
            let next = Player(item: item, output: sink, configuration: configuration)
            next.play()
            _ = await withDeadline(Bound.seconds(30), "a later player") { await next.waitUntilIdle() }
            frames = sink.frames.count
            if frames == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(frames == 100, "the item was never let go of: \(frames) frames")
    }

    @Test func aCompositorRendersOnceAtATime() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let canvas = CompositionCanvas(size: PixelSize(width: 32, height: 18), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        _ = try compositor.add(CompositionLayer(assets: [Asset(path: clip)], rect: PixelRect(x: 0, y: 0, width: 32, height: 18)))
        let held = HeldSink()
        let first = Task { await compositor.render(frames: 10, into: held) }
        try await held.waitForAWriter()
        defer { held.letThrough() }
        let second = await withDeadline(Bound.seconds(10), "a second render refused") {
            await compositor.render(frames: 10, into: InMemorySink(pixelFormat: .rgb24))
        }
        #expect(second?.error?.code == .invalidState && second?.framesWritten == 0, "\(String(describing: second))")
        held.letThrough()
        let done = await first.value
        #expect(done.error == nil && done.framesWritten == 10 && held.writes == 10, "\(done)")
        // Once it ended, the compositor renders again.
        let after = await compositor.render(frames: 5, into: NullSink(pixelFormat: .rgb24))
        #expect(after.error == nil && after.framesWritten == 5, "\(after)")
    }

    /// A render whose sink's `write` does not return answers a cancel after its patience; the
    /// compositor and the sink are free again once the write returns.
    @Test func aCancelledRenderDoesNotWaitForAStuckSink() async throws {
        let canvas = CompositionCanvas(size: PixelSize(width: 16, height: 8), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        let held = HeldSink()
        defer { held.letThrough() }
        let render = Task { await compositor.render(frames: 50, into: held) }
        try await held.waitForAWriter()
        render.cancel()
        let report = await withDeadline(Bound.seconds(10), "a cancelled render whose sink does not return") { await render.value }
        #expect(report?.error?.code == .cancelled, "\(String(describing: report))")
        // Still inside the sink: the compositor is still rendering.
        let meanwhile = await compositor.render(frames: 1, into: NullSink(pixelFormat: .rgb24))
        #expect(meanwhile.error?.code == .invalidState, "\(meanwhile)")

        held.letThrough()
        let deadline = ContinuousClock.now + Bound.seconds(10)
        var after = await compositor.render(frames: 2, into: NullSink(pixelFormat: .rgb24))
        while after.error != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            after = await compositor.render(frames: 2, into: NullSink(pixelFormat: .rgb24))
        }
        #expect(after.error == nil && after.framesWritten == 2, "the compositor stayed busy: \(after)")
        #expect(!OutputClaims.isClaimed(held), "the sink stayed claimed after its write returned")
    }

    /// An audio sink that holds its first samples until it is let through.
    final class HeldAudioSink: AudioSink {
        private let counts = Mutex((writes: 0, aborts: 0, open: false))
        var writes: Int { counts.withLock { $0.writes } }
        var aborts: Int { counts.withLock { $0.aborts } }
        func letThrough() { counts.withLock { $0.open = true } }
        func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}
        func write(_ buffer: AudioBuffer) throws(PlayheadError) {
            counts.withLock { $0.writes += 1 }
            while !counts.withLock({ $0.open }) { usleep(2000) }
        }
        func finish() throws(PlayheadError) {}
        func abort() { counts.withLock { $0.aborts += 1 } }
    }

    /// An audio session whose sink's `write` does not return answers a cancel after its patience;
    /// the sink is given up, and free, once the write returns.
    @Test func aCancelledAudioSessionDoesNotWaitForAStuckSink() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let sink = HeldAudioSink()
        defer { sink.letThrough() }
        let run = Task { await AudioSession(source: path).run(into: sink) }
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while sink.writes == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        run.cancel()
        let result = await withDeadline(Bound.seconds(10), "a cancelled audio session whose sink does not return") { await run.value }
        #expect(result?.status == .cancelled && result?.sampleRate == 48000, "\(String(describing: result))")
        #expect(sink.aborts == 0 && OutputClaims.isClaimed(sink), "the sink was let go of while its write had not returned")
        sink.letThrough()
        while sink.aborts == 0 || OutputClaims.isClaimed(sink), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(sink.aborts == 1 && !OutputClaims.isClaimed(sink), "\(sink.aborts) aborts once the write returned")
    }

    @Test func imagesIteratedTwiceGoToTheFirstIterator() async throws {
        let path = try Fixtures.reader("audio-video-4s.mp4")
        let times = [MediaTime.zero, MediaTime(value: 1, timescale: 1), MediaTime(value: 2, timescale: 1)]
        let results = AssetImageGenerator(asset: Asset(path: path)).images(for: times)
        var mine = results.makeAsyncIterator()
        do {
            // A second iterator, made and dropped: it gets nothing and stops nothing.
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
}
