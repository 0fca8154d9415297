import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

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
        try await clip(folder + "/odd.mp4", source: "testsrc2=size=320x180:rate=30:duration=2.1", bFrames: 3, gop: 30)
    }

    /// 1.5 s at 24000/1001 fps in Matroska (millisecond times), 4:3.
    static func filmClip(in folder: String) async throws -> String {
        try await clip(folder + "/film.mkv", source: "testsrc=size=240x180:rate=24000/1001:duration=1.5", bFrames: 2, gop: 12)
    }

    /// `source` (a lavfi graph) encoded by x264 into `path`.
    static func clip(_ path: String, source: String, bFrames: Int, gop: Int) async throws -> String {
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset", "ultrafast",
                "-bf", "\(bFrames)", "-g", "\(gop)", "-pix_fmt", "yuv420p", path,
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
            // What stays at the end: the two looping layers' items (63 pictures of the canvas, 36 of
            // the 240x180 film); the playlist that ended let its recordings go.
            let held =
                63 * PictureFormat.yuv420p.bytes(of: Self.canvas.size)
                + 36 * PictureFormat.yuv420p.bytes(of: PixelSize(width: 240, height: 180))
            #expect(cached.cached == held, "run \(run): \(cached.cached) bytes held, not \(held)")
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
    /// without recordings (those made for the old place are let go, and the item is recorded
    /// again from its next pass), frame for frame and plane for plane.
    @Test func aMovedLayerDrawsWhatDecodingDraws() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let odd = try await Self.oddClip(in: folder)
        let layer = CompositionLayer(
            assets: [Asset(path: odd)], rect: PixelRect(x: 0, y: 0, width: 320, height: 180), gravity: .resizeAspect, loop: .forever)
        // Passes of 52.5 frames: 0, 52.5, 105, 157.5, 210, 262.5 …
        func draw(budget: LoopCacheBudget?) throws -> (pictures: [[UInt8]], fromCache: [Bool]) {
            let reader = LayerReader(
                id: CompositionLayer.ID(value: 1), layer: layer, canvasSize: Self.canvas.size, outputFormat: .yuv420p,
                interrupt: InterruptFlag(), loopBudget: budget)
            var pictures: [[UInt8]] = []
            var fromCache: [Bool] = []
            for n in 0..<320 {
                // Moved in the middle of the third pass, back in the fourth; only its z-order
                // changes in the sixth (the recording stays).
                if n == 120 { reader.move(rect: PixelRect(x: 200, y: 100, width: 400, height: 240), zIndex: 0) }
                if n == 170 { reader.move(rect: PixelRect(x: 0, y: 0, width: 320, height: 180), zIndex: 0) }
                if n == 280 { reader.move(rect: PixelRect(x: 0, y: 0, width: 320, height: 180), zIndex: 3) }
                let canvas = try OwnedFrame(size: Self.canvas.size, format: PictureFormat.yuv420p)
                canvas.fill(with: .black)
                let before = reader.framesFromLoopCache
                try reader.draw(at: Self.canvas.time(ofFrame: n), into: canvas)
                fromCache.append(reader.framesFromLoopCache > before)
                pictures.append(Self.planes(of: canvas))
            }
            return (pictures, fromCache)
        }
        let decoded = try draw(budget: nil)
        let cached = try draw(budget: LoopCacheBudget(limit: 256 << 20))
        let differing = zip(decoded.pictures, cached.pictures).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(differing.isEmpty, "frames \(differing.prefix(12)) differ")
        #expect(!decoded.fromCache.contains(true))
        // The second and third passes from the first's recording; after each move the rest of the
        // pass is decoded and recorded again (from the keyframe at the item's start, so the whole
        // item), the next pass drawn from it — through the z-order change too.
        let runs = cached.fromCache.indices.filter { $0 == 0 || cached.fromCache[$0] != cached.fromCache[$0 - 1] }
        #expect(runs == [0, 53, 120, 158, 170, 210], "cache and decoding change over at frames \(runs)")
        #expect(cached.fromCache[53] && !cached.fromCache[120] && cached.fromCache[158] && !cached.fromCache[170] && cached.fromCache[319])
    }

    /// Every plane of a canvas, row by row.
    static func planes(of canvas: OwnedFrame) -> [UInt8] {
        let frame = canvas.pointer.pointee
        let (width, height) = (Self.canvas.size.width, Self.canvas.size.height)
        var bytes: [UInt8] = []
        for (plane, stride, w, h) in [
            (frame.data.0, frame.linesize.0, width, height), (frame.data.1, frame.linesize.1, width / 2, height / 2),
            (frame.data.2, frame.linesize.2, width / 2, height / 2),
        ] {
            guard let plane else { continue }
            for row in 0..<h { bytes += UnsafeBufferPointer(start: plane + row * Int(stride), count: w) }
        }
        return bytes
    }

    /// A channel restarted on schedule begins its loop part way into the item: that recording is
    /// replaced by a whole one on the next pass, so every pass after it is drawn from it.
    @Test func aLoopJoinedPartWayIsRecordedWholeOnItsNextPass() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let odd = try await Self.oddClip(in: folder)
        let layer = CompositionLayer(
            assets: [Asset(path: odd)], rect: PixelRect(size: Self.canvas.size), loop: .forever, scheduledStart: Date().addingTimeInterval(-1))
        let cached = try await Self.render([layer], frames: 300, loopCacheBytes: 256 << 20)
        #expect(cached.report.error == nil && cached.frames.count == 300)
        // About 28 frames of the first pass and 53 of the second are decoded; the rest is not
        // (recording only from where the channel joined would leave a second of every pass to
        // decode: about 150 from the cache). A loaded machine that starts the render a second
        // late joins the loop at another point of its first pass: at most a whole pass more.
        let fromCache = cached.report.layers[0].framesFromLoopCache
        #expect(fromCache >= 300 - 53 - 53 - 4, "\(fromCache) frames from the cache")
    }

    /// A live edit lets the old version's recordings go (its memory back to the budget) and the
    /// new version records its own; a removed layer gives everything back.
    @Test func editsAndRemovalsGiveTheMemoryBack() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let odd = try await Self.oddClip(in: folder), film = try await Self.filmClip(in: folder)
        let before = CompositionLayer(assets: [Asset(path: odd)], rect: PixelRect(size: Self.canvas.size), loop: .forever)
        let after = CompositionLayer(
            assets: [Asset(path: film)], rect: PixelRect(x: 0, y: 0, width: 320, height: 180), loop: .forever)
        /// Renders `frames` with `before`, edited to `after` (taken up at its first seam, 2.1 s)
        /// when frame 1 is written, or removed then.
        func render(remove: Bool, cache: Int) async throws -> (frames: [[UInt8]], cached: Int) {
            let compositor = Compositor(canvas: Self.canvas, loopCacheBytes: cache)
            let id = try compositor.add(before)
            let sink = EditingSink(at: 1) {
                if remove { compositor.remove(id) } else { try? compositor.update(id, to: after) }
            }
            let report = await compositor.render(frames: 200, into: sink)
            #expect(report.error == nil)
            return (sink.inner.frames.map(\.bytes), compositor.progress.loopCacheBytes)
        }
        let decoded = try await render(remove: false, cache: 0)
        let cached = try await render(remove: false, cache: 256 << 20)
        #expect(cached.frames == decoded.frames)
        // What stays is the new version's recording alone: the same as a render of it alone holds.
        let alone = try await Self.render([after], frames: 200, loopCacheBytes: 256 << 20)
        #expect(cached.cached == alone.cached && alone.cached > 0, "\(cached.cached) bytes held, \(alone.cached) for the new version alone")
        let removed = try await render(remove: true, cache: 256 << 20)
        #expect(removed.cached == 0, "\(removed.cached) bytes held after the layer was removed")
    }

    /// A budget with room for one layer's item but not both: the one that does not fit gives up
    /// part way (its memory back) and is decoded every pass; the pictures stay the same.
    @Test func aBudgetSpentPartWayGivesUpOneRecording() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layers = Array(Self.layers(odd: try await Self.oddClip(in: folder), film: try await Self.filmClip(in: folder)).prefix(2))
        let background = 63 * PictureFormat.yuv420p.bytes(of: Self.canvas.size)
        let decoded = try await Self.render(layers, frames: 200, loopCacheBytes: 0)
        let tight = try await Self.render(layers, frames: 200, loopCacheBytes: background + 100_000)
        #expect(tight.frames == decoded.frames)
        let fromCache = tight.report.layers.map(\.framesFromLoopCache)
        #expect(fromCache.filter { $0 > 0 }.count == 1, "\(fromCache)")
        #expect(tight.cached <= background + 100_000)
    }
}

/// A sink that keeps every frame and runs `edit` (once) when frame `at` is written: a change made
/// while the render is a few frames ahead at most.
final class EditingSink: FrameSink, @unchecked Sendable {
    // @unchecked Sendable: the compositor's output thread is its only caller while it renders; the
    // test reads `inner` after `render` returned.
    let pixelFormat = OutputPixelFormat.yuv420p
    let inner = InMemorySink(pixelFormat: .yuv420p)
    private let at: Int
    private let edit: () -> Void
    private var written = 0

    init(at: Int, edit: @escaping () -> Void) {
        self.at = at
        self.edit = edit
    }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) { try inner.begin(info) }
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        if written == at { edit() }
        written += 1
        try inner.write(frame)
    }
    func finish() throws(PlayheadError) { try inner.finish() }
    func abort() { inner.abort() }
}
