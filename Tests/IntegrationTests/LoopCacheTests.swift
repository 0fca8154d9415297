import CFFmpeg
import Foundation
import Testing

@testable import Playhead

/// The loop cache (``Compositor/loopCacheBytes``): a layer's later passes drawn from the pictures
/// recorded on its first must be the very pictures decoding draws — loops whose length never
/// lines up with the canvas's frames (each pass shows other frames of the source, B-frames
/// among them), a Matroska stream (times rounded to the millisecond), time ranges, playlists,
/// holding the last frame, a layer moved mid-pass — and what cannot be recorded whole (a cut
/// source, damage, a budget too small) is decoded as before.
@Suite struct LoopCacheTests {
    /// A 2.1 s test pattern at 30 fps with three B-frames in a row (non-reference ones among them):
    /// 52.5 frames of a 25 fps canvas, so every other pass shows the source's frames at other times.
    static func oddClip(in folder: String) async throws -> String {
        let path = folder + "/odd.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=2.1",
                "-c:v", "libx264", "-preset", "ultrafast", "-bf", "3", "-g", "30", "-pix_fmt", "yuv420p", path,
            ])
        return path
    }

    /// 1.5 s at 24000/1001 fps in Matroska (millisecond times), 4:3.
    static func filmClip(in folder: String) async throws -> String {
        let path = folder + "/film.mkv"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=240x180:rate=24000/1001:duration=1.5",
                "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "12", "-pix_fmt", "yuv420p", path,
            ])
        return path
    }

    /// 640x360 at 25 fps.
    static let canvas = CompositionCanvas(size: PixelSize(width: 640, height: 360), frameRate: twentyFive, background: .black)
    static let twentyFive: FrameRate = {
        guard let rate = FrameRate(numerator: 25) else { preconditionFailure("25 fps is a frame rate") }
        return rate
    }()

    /// The layers of a screen: a looping background, a looping zone, and a playlist of both cut to
    /// a time range, played three times, then held.
    static func layers(odd: String, film: String) -> [CompositionLayer] {
        [
            CompositionLayer(assets: [Asset(path: odd)], rect: PixelRect(size: canvas.size), gravity: .resize, loop: .forever),
            CompositionLayer(
                assets: [Asset(path: film)], rect: PixelRect(x: 320, y: 180, width: 320, height: 180), zIndex: 1, gravity: .resizeAspect,
                loop: .forever),
            CompositionLayer(
                assets: [Asset(path: odd), Asset(path: film)], rect: PixelRect(x: 0, y: 180, width: 320, height: 180), zIndex: 1,
                gravity: .resizeAspectFill, loop: .times(3), timeRange: TimeRange(start: MediaTime(seconds: 0.3), duration: MediaTime(seconds: 1)),
                afterEnd: .holdLastFrame),
        ]
    }

    static func render(
        _ layers: [CompositionLayer], frames: Int, loopCacheBytes: Int
    ) async throws -> (
        frames: [[UInt8]], report: CompositionReport, cached: Int
    ) {
        let compositor = Compositor(canvas: canvas, loopCacheBytes: loopCacheBytes)
        for layer in layers { try compositor.add(layer) }
        let sink = InMemorySink(pixelFormat: .yuv420p)
        let report = await compositor.render(frames: frames, into: sink)
        return (sink.frames.map(\.bytes), report, compositor.progress.loopCacheBytes)
    }

    @Test func recordedPassesDrawWhatDecodingDraws() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layers = Self.layers(odd: try await Self.oddClip(in: folder), film: try await Self.filmClip(in: folder))
        let decoded = try await Self.render(layers, frames: 300, loopCacheBytes: 0)
        #expect(decoded.report.error == nil && decoded.frames.count == 300)
        #expect(decoded.report.layers.allSatisfy { $0.framesFromLoopCache == 0 } && decoded.cached == 0)
        // Several times: the recording and the decoding run side by side on the first passes.
        for run in 1...3 {
            let cached = try await Self.render(layers, frames: 300, loopCacheBytes: 256 << 20)
            #expect(cached.report.error == nil && cached.frames.count == 300)
            let differing = zip(decoded.frames, cached.frames).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            #expect(differing.isEmpty, "run \(run): frames \(differing.prefix(12)) differ from decoding's")
            #expect(cached.report.layers.map(\.framesShown) == decoded.report.layers.map(\.framesShown))
            #expect(cached.report.layers.map(\.loopsCompleted) == decoded.report.layers.map(\.loopsCompleted))
            // Every layer drew most of its later passes from its recordings, which are still held.
            let fromCache = cached.report.layers.map(\.framesFromLoopCache)
            #expect(fromCache[0] > 200 && fromCache[1] > 200 && fromCache[2] > 50, "run \(run): \(fromCache)")
            #expect(cached.cached > 63 * 320 * 180 * 3 / 2, "run \(run): \(cached.cached) bytes held")
        }
    }

    /// A budget smaller than one picture records nothing: every pass is decoded, the same frames.
    @Test func aBudgetTooSmallRecordsNothing() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layers = Self.layers(odd: try await Self.oddClip(in: folder), film: try await Self.filmClip(in: folder))
        let decoded = try await Self.render(layers, frames: 120, loopCacheBytes: 0)
        let starved = try await Self.render(layers, frames: 120, loopCacheBytes: 50_000)
        #expect(starved.frames == decoded.frames)
        #expect(starved.report.layers.allSatisfy { $0.framesFromLoopCache == 0 } && starved.cached == 0)
    }

    /// A source cut short fails where its data stops, with or without the cache (it is never
    /// recorded, and never looped at the cut); damage decoded past is decoded again each pass.
    @Test(arguments: ["cut.mkv", "zeroed.mkv"]) func cutOrDamagedSourcesAreNotRecorded(name: String) async throws {
        let path = try Fixtures.reader(name)
        let layer = CompositionLayer(assets: [Asset(path: path)], rect: PixelRect(size: Self.canvas.size), loop: .forever)
        let decoded = try await Self.render([layer], frames: 150, loopCacheBytes: 0)
        let cached = try await Self.render([layer], frames: 150, loopCacheBytes: 256 << 20)
        #expect(cached.frames == decoded.frames)
        let (a, b) = (decoded.report.layers[0], cached.report.layers[0])
        #expect(a.failure?.code == b.failure?.code && a.damagedPackets == b.damagedPackets && a.loopsCompleted == b.loopsCompleted)
        #expect(b.framesFromLoopCache == 0 && cached.cached == 0, "\(b)")
        if name == "cut.mkv" { #expect(b.failure?.code == .truncated, "\(b)") } else { #expect(b.damagedPackets > 0 && b.loopsCompleted > 0) }
    }

    /// A layer moved part way through a pass draws at its new place from the next frame, with or
    /// without recordings (those made for the old place are let go), frame for frame.
    @Test func aMovedLayerDrawsWhatDecodingDraws() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let odd = try await Self.oddClip(in: folder)
        let layer = CompositionLayer(
            assets: [Asset(path: odd)], rect: PixelRect(x: 0, y: 0, width: 320, height: 180), gravity: .resizeAspect, loop: .forever)
        func draw(budget: LoopCacheBudget?) throws -> (pictures: [[UInt8]], fromCache: Int) {
            let reader = LayerReader(
                id: CompositionLayer.ID(value: 1), layer: layer, canvasSize: Self.canvas.size, outputFormat: AV_PIX_FMT_YUV420P,
                interrupt: InterruptFlag(), loopBudget: budget)
            var pictures: [[UInt8]] = []
            for n in 0..<200 {
                // Moved in the middle of the third pass, then back in the fifth.
                if n == 120 { reader.move(rect: PixelRect(x: 200, y: 100, width: 400, height: 240), zIndex: 0) }
                if n == 230 - 20 { reader.move(rect: PixelRect(x: 0, y: 0, width: 320, height: 180), zIndex: 0) }
                let canvas = try OwnedFrame(size: Self.canvas.size, format: AV_PIX_FMT_YUV420P)
                Compositor.paint(canvas, with: .black, format: AV_PIX_FMT_YUV420P)
                try reader.draw(at: Self.canvas.time(ofFrame: n), into: canvas)
                let frame = canvas.pointer.pointee
                var luma: [UInt8] = []
                for row in 0..<Self.canvas.size.height {
                    guard let base = frame.data.0 else { break }
                    luma += UnsafeBufferPointer(start: base + row * Int(frame.linesize.0), count: Self.canvas.size.width)
                }
                pictures.append(luma)
            }
            return (pictures, reader.framesFromLoopCache)
        }
        let decoded = try draw(budget: nil)
        let cached = try draw(budget: LoopCacheBudget(limit: 256 << 20))
        let differing = zip(decoded.pictures, cached.pictures).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(differing.isEmpty, "frames \(differing.prefix(12)) differ")
        #expect(decoded.fromCache == 0 && cached.fromCache > 60, "\(cached.fromCache)")
    }
}
