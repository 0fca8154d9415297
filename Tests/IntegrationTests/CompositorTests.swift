import Foundation
import Playhead
import Synchronization
import Testing

@testable import PlayheadMedia

/// The compositor against an oracle built from ffmpeg: every layer's frames scaled by ffmpeg's
/// bicubic `scale` to the layer's picture size, the frame each layer should show at each output
/// time worked out from ffprobe's timestamps (the last one at or before it, loops included), and
/// placed by the layout rule. Each layer's region of every output frame must match (PSNR ≥ 40 dB).
@Suite struct CompositorTests {
    /// A 64x36 canvas at 25 fps with one layer: `h264-aac.mp4` looping over all of it.
    static func loopingClip() throws -> Compositor {
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        try compositor.add(
            CompositionLayer(assets: [Asset(path: try Fixtures.clip("h264-aac.mp4"))], rect: PixelRect(size: canvas.size), loop: .forever))
        return compositor
    }

    struct Expected {
        var clip: String
        var rect: PixelRect
        var gravity: VideoGravity
        var loop: LayerLoop
        var afterEnd: LayerAfterEnd
        var content: PixelRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
        var frames: [[UInt8]] = []
        var times: [MediaTime] = []
        var length: MediaTime = .zero

        /// The index of the frame shown at layer time `t`, or nil for none.
        func shown(at t: MediaTime) -> Int? {
            var offset = t
            var passes = 1
            while !(offset < length) {
                switch loop {
                case .forever: break
                case .times(let n) where passes < n: break
                default: return afterEnd == .holdLastFrame ? times.count - 1 : nil
                }
                offset = offset - length
                passes += 1
            }
            let first = times[0]
            return times.lastIndex { !(offset < $0 - first) } ?? 0
        }
    }

    /// A 2 s test pattern at 24000/1001 fps (a frame rate that never lines up with 30).
    static func ntscFilmClip(in folder: String) async throws -> String {
        let path = folder + "/film.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=256x144:rate=24000/1001:duration=2",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "12", "-pix_fmt", "yuv420p", path,
            ])
        return path
    }

    /// Run twice: decoding every pass, and with the loop cache (later passes drawn from recorded
    /// pictures) — the same oracle for both.
    @Test(arguments: [0, 64 << 20]) func layersOfDifferentRatesLoopsAndGravitiesMatchTheOracle(loopCacheBytes: Int) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let canvasSize = PixelSize(width: 640, height: 360)
        var layers = await [
            // A looping background filling the canvas (25 fps, 2 s: seams at 2 s and 4 s).
            Expected(
                clip: try Fixtures.clip("h264-aac.mp4"), rect: PixelRect(size: canvasSize), gravity: .resize, loop: .forever, afterEnd: .holdLastFrame
            ),
            // 4:3, fit into a 16:9 box, held after it ends.
            Expected(
                clip: try Fixtures.clip("4x3.mp4"), rect: PixelRect(x: 0, y: 90, width: 320, height: 180), gravity: .resizeAspect, loop: .once,
                afterEnd: .holdLastFrame),
            // Anamorphic (240x180 stored, 4:3 pixels), fit; cleared after it ends.
            Expected(
                clip: try Fixtures.clip("anamorphic.mp4"), rect: PixelRect(x: 320, y: 0, width: 320, height: 180), gravity: .resizeAspect,
                loop: .once, afterEnd: .clear),
            // 23.976 fps, stretched, played twice.
            Expected(
                clip: try Self.ntscFilmClip(in: folder), rect: PixelRect(x: 320, y: 180, width: 320, height: 180), gravity: .resize, loop: .times(2),
                afterEnd: .clear),
        ]
        let canvas = CompositionCanvas(size: canvasSize, frameRate: try #require(FrameRate(numerator: 30)), background: .black)
        let compositor = Compositor(canvas: canvas, loopCacheBytes: loopCacheBytes)
        for (z, index) in layers.indices.enumerated() {
            let asset = Asset(path: layers[index].clip)
            let tracks = try await asset.load(.tracks)
            let video = try #require(tracks.first { $0.mediaType == .video })
            let stored = try #require(video.naturalSize)
            var layout = layers[index].gravity.layout(
                stored: stored, pixelAspectRatio: video.video?.pixelAspectRatio ?? .square, canvas: layers[index].rect.size, alignment: 2)
            layout.content.x += layers[index].rect.x
            layout.content.y += layers[index].rect.y
            layers[index].content = layout.content
            layers[index].frames = try await Reference.allFrames(layers[index].clip, pixelFormat: "yuv420p", size: layout.content.size)
            layers[index].times = try await Reference.frameTimes(layers[index].clip)
            let times = layers[index].times
            layers[index].length = times[times.count - 1] - times[0] + (times[1] - times[0])
            try compositor.add(
                CompositionLayer(
                    assets: [asset], rect: layers[index].rect, zIndex: z == 0 ? 0 : 1, gravity: layers[index].gravity,
                    loop: layers[index].loop, afterEnd: layers[index].afterEnd))
        }
        let sink = InMemorySink(pixelFormat: .yuv420p)
        let frameCount = 150
        let report = await compositor.render(frames: frameCount, into: sink)
        #expect(report.error == nil && report.framesWritten == frameCount)
        let frames = sink.frames
        try #require(frames.count == frameCount)

        let width = canvasSize.width, height = canvasSize.height
        for n in 0..<frameCount {
            let t = MediaTime(value: Int64(n), timescale: 30)
            // The expected picture: black, then each layer's frame in its content rectangle.
            var expected = [UInt8](repeating: 16, count: width * height) + [UInt8](repeating: 128, count: width * height / 2)
            var drawn: [(Int, Int)] = []
            for (i, layer) in layers.enumerated() {
                guard let k = layer.shown(at: t) else { continue }
                drawn.append((i, k))
                let source = layer.frames[k], c = layer.content
                for plane in 0..<3 {
                    let shift = plane == 0 ? 0 : 1
                    let planeWidth = width >> shift, planeOffset = plane == 0 ? 0 : width * height + (plane - 1) * (width / 2) * (height / 2)
                    let sourceWidth = c.width >> shift,
                        sourceOffset = plane == 0 ? 0 : c.width * c.height + (plane - 1) * (c.width / 2) * (c.height / 2)
                    for row in 0..<(c.height >> shift) {
                        let to = planeOffset + ((c.y >> shift) + row) * planeWidth + (c.x >> shift)
                        let from = sourceOffset + row * sourceWidth
                        expected.replaceSubrange(to..<(to + sourceWidth), with: source[from..<(from + sourceWidth)])
                    }
                }
            }
            let actual = frames[n].bytes
            #expect(Reference.psnr(actual, expected) >= 40, "frame \(n) at \(t.seconds) s (layers and frames \(drawn))")
            // Region by region (luma): a wrong frame in one small layer must not hide in the whole.
            for layer in layers {
                let c = layer.content
                var a: [UInt8] = [], e: [UInt8] = []
                for row in c.y..<(c.y + c.height) {
                    a += actual[(row * width + c.x)..<(row * width + c.x + c.width)]
                    e += expected[(row * width + c.x)..<(row * width + c.x + c.width)]
                }
                let psnr = Reference.psnr(a, e)
                #expect(psnr >= 40, "frame \(n) at \(t.seconds) s, layer \(URL(fileURLWithPath: layer.clip).lastPathComponent): \(psnr) dB")
            }
        }
        #expect(report.layers.map(\.loopsCompleted) == [2, 0, 0, 1], "\(report.layers)")
        #expect(report.layers.map(\.framesShown) == [150, 150, 60, 121], "\(report.layers)")
        // The looping background's passes after its first (frames 60 …), and the film's second
        // pass, came from the recordings; the layers that play once record nothing.
        let fromCache = report.layers.map(\.framesFromLoopCache)
        if loopCacheBytes > 0 {
            #expect(fromCache[0] == 90 && fromCache[1] == 0 && fromCache[2] == 0 && fromCache[3] > 50, "\(fromCache)")
        } else {
            #expect(fromCache == [0, 0, 0, 0])
        }
    }

    /// A sink that fails part way stops the rendering with its error (aborted, never finished);
    /// a cancelled task stops it too, between frames.
    @Test func aFailingSinkAndACancelledTaskStopTheRender() async throws {
        final class FailingSink: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: the compositor calls it from one thread at a time; the test
            // reads the counters only after `render` returned.
            let pixelFormat = OutputPixelFormat.yuv420p
            var written = 0, aborted = false, finished = false
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) {
                if written == 3 { throw PlayheadError(code: .diskFull, message: "full") }
                written += 1
            }
            func finish() throws(PlayheadError) { finished = true }
            func abort() { aborted = true }
        }
        let compositor = try Self.loopingClip()
        let sink = FailingSink()
        let report = await compositor.render(frames: 1000, into: sink)
        #expect(report.error?.code == .diskFull && report.framesWritten == 3)
        #expect(sink.aborted && !sink.finished)

        final class CountingSink: FrameSink, Sendable {
            let pixelFormat = OutputPixelFormat.yuv420p
            let count = Atomic<Int>(0)
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) { count.add(1, ordering: .relaxed) }
            func finish() throws(PlayheadError) {}
            func abort() {}
        }
        let counting = CountingSink()
        let endless = Task { await compositor.render(frames: 10_000_000, into: counting) }
        // Cancelled once it has written a few frames (however loaded the machine is).
        let deadline = ContinuousClock.now + .seconds(30)
        while counting.count.load(ordering: .relaxed) < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        endless.cancel()
        let stopped = await endless.value
        #expect(stopped.error?.code == .cancelled && stopped.framesWritten > 0 && stopped.framesWritten < 10_000_000)
        #expect(stopped.layers.first?.framesShown ?? 0 > 0, "the layers stay for a second render")
    }

    /// Realtime on a manual clock: frame n is written at n / rate, none late; a consumer that
    /// stalls makes the frames after it late, counted and still written.
    @Test func realtimePacesOnTheClockAndCountsLateFrames() async throws {
        let canvas = CompositionCanvas(
            size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 30000, denominator: 1001)))
        let compositor = Compositor(canvas: canvas)
        try compositor.add(
            CompositionLayer(assets: [Asset(path: try Fixtures.clip("h264-aac.mp4"))], rect: PixelRect(size: canvas.size), loop: .forever))
        let clock = ManualPlaybackClock()
        let report = await compositor.render(frames: 90, into: NullSink(), realtime: clock)
        #expect(report.error == nil && report.framesWritten == 90 && report.lateFrames == 0, "\(report)")
        #expect(report.lateness?.maximum == 0)
        let expected = 89.0 * 1001 / 30000
        let elapsed = Double(clock.now().components.seconds) + Double(clock.now().components.attoseconds) / 1e18
        #expect(abs(elapsed - expected) < 0.002, "paced over \(elapsed) s, not \(expected) s")

        final class StallingSink: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: called from the compositor's output thread, one call at a time.
            let pixelFormat = OutputPixelFormat.yuv420p
            let clock: ManualPlaybackClock
            init(clock: ManualPlaybackClock) { self.clock = clock }
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) { if frame.index == 10 { clock.advance(by: .milliseconds(200)) } }
            func finish() throws(PlayheadError) {}
            func abort() {}
        }
        let stalled = ManualPlaybackClock()
        let late = await compositor.render(frames: 30, into: StallingSink(clock: stalled), realtime: stalled)
        #expect(
            late.framesWritten == 30 && late.lateFrames == 5,
            "200 ms behind at 29.97 fps: the next 5 frames are more than half a frame late (\(late.lateFrames))")
    }

    /// Layers changed while rendering: a removed one stops showing, a moved one draws at its new
    /// place, an added one starts — each within the frames already in flight.
    @Test func layersChangeWhileRendering() async throws {
        final class ChangingSink: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: called from the compositor's output thread, one call at a time.
            let pixelFormat = OutputPixelFormat.rgb24
            var frames: [[UInt8]] = []
            let onFrame: (Int) -> Void
            init(onFrame: @escaping (Int) -> Void) { self.onFrame = onFrame }
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) {
                guard let plane = frame.plane(0) else { throw PlayheadError(code: .invalidState, message: "no plane 0") }
                frames.append(Array(UnsafeBufferPointer(start: plane.baseAddress, count: plane.bytesPerRow * plane.rows)))
                onFrame(frame.index)
            }
            func finish() throws(PlayheadError) {}
            func abort() {}
        }
        let canvas = CompositionCanvas(
            size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)),
            background: try #require(RGBColor(parsing: "#FF00FF")))
        let compositor = Compositor(canvas: canvas)
        let clip = try Fixtures.clip("h264-aac.mp4")
        let left = try compositor.add(
            CompositionLayer(assets: [Asset(path: clip)], rect: PixelRect(x: 0, y: 0, width: 32, height: 36), gravity: .resize, loop: .forever))
        let sink = ChangingSink { index in
            if index == 5 { compositor.remove(left) }
            if index == 10 {
                _ = try? compositor.add(
                    CompositionLayer(assets: [Asset(path: clip)], rect: PixelRect(x: 32, y: 0, width: 32, height: 36), gravity: .resize))
            }
        }
        let report = await compositor.render(frames: 30, into: sink)
        #expect(report.error == nil && report.layers.count == 2)
        let shownLeft = try #require(report.layers.first { $0.id == left }?.framesShown)
        #expect((6...9).contains(shownLeft), "removed after frame 5, with up to three frames in flight: \(shownLeft)")
        func isBackground(_ frame: [UInt8], x: Int) -> Bool { frame[(18 * 64 + x) * 3..<(18 * 64 + x) * 3 + 3].elementsEqual([255, 0, 255]) }
        let frames = sink.frames
        #expect(!isBackground(frames[0], x: 10) && isBackground(frames[29], x: 10), "the removed layer's place shows the background")
        #expect(isBackground(frames[0], x: 50) && !isBackground(frames[29], x: 50), "the added layer shows")
    }

    /// A composition hands its pictures over uncopied (as the channel's encoder queue and the MP4
    /// writer take them): a sink that keeps references to the last four is never drawn over by a
    /// later picture — the render takes new buffers for a picture still held.
    @Test func picturesHandedOverAreNeverDrawnOverWhileHeld() async throws {
        final class HoldingSink: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: called from the compositor's output thread, one call at a time;
            // the test reads the results only after `render` returned.
            let pixelFormat = OutputPixelFormat.yuv420p
            var held: [(frame: OwnedFrame, sum: Int)] = []
            var shared = 0, changed = 0, written = 0
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
                for _ in 0..<4 { held.append((try OwnedFrame(size: info.size, format: .yuv420p), 0)) }
            }
            static func sum(_ frame: OwnedFrame) -> Int {
                guard let data = frame.pointer.pointee.data.0 else { return -1 }
                let stride = Int(frame.pointer.pointee.linesize.0)
                var total = 0
                for row in 0..<frame.size.height {
                    for x in 0..<frame.size.width { total = total &* 31 &+ Int(data[row * stride + x]) }
                }
                return total
            }
            func write(_ frame: VideoFrame) throws(PlayheadError) {
                let slot = held[written % 4]
                if written >= 4, Self.sum(slot.frame) != slot.sum { changed += 1 }
                try slot.frame.hold(frame, file: "test")
                if frame.sharable, slot.frame.isShared { shared += 1 }
                held[written % 4].sum = Self.sum(slot.frame)
                written += 1
            }
            func finish() throws(PlayheadError) {}
            func abort() {}
        }
        let compositor = try Self.loopingClip()
        let sink = HoldingSink()
        let report = await compositor.render(frames: 60, into: sink)
        #expect(report.error == nil && sink.written == 60)
        #expect(sink.shared == 60, "every picture handed over by reference (\(sink.shared) of 60)")
        #expect(sink.changed == 0, "\(sink.changed) held pictures were drawn over")
    }

    /// A render until the layers end lasts as long as its longest layer, loops counted: the frames
    /// that start before that end (ffprobe's lengths); a failed layer ends at once; a layer that
    /// loops forever holds the render until it is stopped.
    @Test func aRenderUntilTheLayersEndLastsAsTheLongestLayer() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let times = try await Reference.frameTimes(clip)
        let step = try #require(zip(times, times.dropFirst()).map { $1 - $0 }.min())
        let length = try #require(times.last) + step
        let canvas = CompositionCanvas(
            size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 30000, denominator: 1001)))
        let whole = PixelRect(size: canvas.size)
        final class CountingSink: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: the compositor's output thread calls it, one call at a time; the
            // test reads it after `render` returned.
            let pixelFormat = OutputPixelFormat.yuv420p
            var written = 0, finished = false
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) { written += 1 }
            func finish() throws(PlayheadError) { finished = true }
            func abort() {}
        }
        let compositor = Compositor(canvas: canvas)
        try compositor.add(CompositionLayer(assets: [Asset(path: clip)], rect: whole, loop: .once))
        try compositor.add(CompositionLayer(assets: [Asset(path: clip)], rect: whole, zIndex: 1, loop: .times(2), afterEnd: .clear))
        try compositor.add(CompositionLayer(assets: [Asset(path: try Fixtures.clip("bad-random.mp4"))], rect: whole, zIndex: 2))
        // Frame n starts at n × 1001/30000 s: those before twice the clip's length.
        let end = length + length
        var expected = 0
        while MediaTime(value: Int64(expected) * 1001, timescale: 30000) < end { expected += 1 }
        let sink = CountingSink()
        let report = await compositor.render(.untilLayersEnd, into: sink)
        #expect(report.error == nil && sink.finished, "\(String(describing: report.error))")
        #expect(report.framesWritten == expected && sink.written == expected, "\(report.framesWritten) frames for \(end.seconds) s: \(expected)")
        #expect(report.layers.count == 3 && report.layers[2].failure != nil)

        // Looping forever: on until stopped.
        let endless = Compositor(canvas: canvas)
        try endless.add(CompositionLayer(assets: [Asset(path: clip)], rect: whole, loop: .forever))
        let counting = CountingSink()
        let stopper = Task {
            while endless.progress.frames < 3 * expected { try? await Task.sleep(for: .milliseconds(5)) }
            endless.stop()
        }
        let stopped = await endless.render(.untilLayersEnd, into: counting)
        _ = await stopper.value
        #expect(stopped.error == nil && stopped.framesWritten >= 3 * expected && counting.finished, "\(stopped.framesWritten) frames")
    }

    /// A stopped render says it is finishing (`isFinishing`) from the moment it left its frame
    /// loop until its outputs are finished, however long the finish takes — what `compose` asks
    /// before it would cancel a render that does not see a signal's stop.
    @Test func aStoppedRenderSaysItIsFinishingWhileItsFinishRuns() async throws {
        final class SlowFinish: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: the render's output thread calls it, one call at a time; the
            // flags are locked.
            let pixelFormat = OutputPixelFormat.yuv420p
            let written = Locked(0)
            let release = Locked(false)
            let finished = Locked(false)
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) { written.withLock { $0 += 1 } }
            func finish() throws(PlayheadError) {
                while !release.withLock({ $0 }) { usleep(1000) }
                finished.withLock { $0 = true }
            }
            func abort() {}
        }
        let compositor = try Self.loopingClip()
        let sink = SlowFinish()
        let render = Task { await compositor.render(frames: nil, into: sink) }
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while sink.written.withLock({ $0 }) < 10, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(!compositor.isFinishing, "drawing frames: not finishing")
        compositor.stop()
        while !compositor.isFinishing, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(compositor.isFinishing && !sink.finished.withLock { $0 }, "left its loop, finishing")
        sink.release.withLock { $0 = true }
        let report = await render.value
        #expect(report.error == nil && sink.finished.withLock { $0 } && report.framesWritten == sink.written.withLock { $0 })
    }

    /// A layer whose source fails is reported and shows the background; the others go on.
    @Test func aFailingLayerShowsTheBackgroundAndTheRestGoesOn() async throws {
        let canvas = CompositionCanvas(
            size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 10)),
            background: try #require(RGBColor(parsing: "#204060")))
        let compositor = Compositor(canvas: canvas)
        let good = try compositor.add(
            CompositionLayer(assets: [Asset(path: try Fixtures.clip("h264-aac.mp4"))], rect: PixelRect(x: 0, y: 0, width: 32, height: 36)))
        let bad = try compositor.add(
            CompositionLayer(assets: [Asset(path: "/nonexistent/clip.mp4")], rect: PixelRect(x: 32, y: 0, width: 32, height: 36)))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 5, into: sink)
        #expect(report.error == nil && sink.frames.count == 5)
        #expect(report.layers.first { $0.id == good }?.framesShown == 5)
        #expect(report.layers.first { $0.id == bad }?.failure?.code == .fileNotFound)
        let pixel = Array(try #require(sink.frames.last).bytes[(10 * 64 + 50) * 3..<(10 * 64 + 50) * 3 + 3])
        #expect(pixel == [0x20, 0x40, 0x60], "the failed layer's place shows the background")
        #expect(throws: PlayheadError.self) { try compositor.add(CompositionLayer(assets: [], rect: PixelRect(x: 0, y: 0, width: 2, height: 2))) }
        #expect(throws: PlayheadError.self) {
            try compositor.add(CompositionLayer(assets: [Asset(path: "x")], rect: PixelRect(x: 40, y: 0, width: 32, height: 36)))
        }
    }
}
