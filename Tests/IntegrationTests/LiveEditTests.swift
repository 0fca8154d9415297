import Foundation
import Playhead
import Testing

/// A layer's new version (``Compositor/update(_:to:)``), taken at its next item boundary: the same
/// playlist goes on with its next item, another one starts from its first, and a layer anchored to
/// a schedule rejoins its schedule — each told by the records of what aired.
@Suite struct LiveEditTests {
    static let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: LoopCacheTests.twentyFive, background: .black)

    /// Three one-second clips of their own (named by colour).
    static func clips(in folder: String, seconds: [String: Int] = [:]) async throws -> [String] {
        var paths: [String] = []
        for colour in ["red", "green", "blue"] {
            let path = "\(folder)/\(colour).mp4"
            _ = try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=\(colour):size=64x36:rate=25:duration=\(seconds[colour] ?? 1)",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", path,
                ])
            paths.append(path)
        }
        return paths
    }

    /// Renders `frames` of `layer`, replaced by `edited` when frame `at` is written; the records of
    /// every item that aired, in order.
    static func render(_ layer: CompositionLayer, editedTo edited: CompositionLayer, at: Int, frames: Int) async throws -> [LayerItemRecord] {
        let records = Locked<[LayerItemRecord]>([])
        let compositor = Compositor(canvas: canvas) { record in records.withLock { $0.append(record) } }
        let id = try compositor.add(layer)
        let sink = EditingSink(at: at) { try? compositor.update(id, to: edited) }
        let report = await compositor.render(frames: frames, into: sink)
        #expect(report.error == nil && report.framesWritten == frames, "\(report)")
        return records.withLock { $0 }
    }

    /// Moved part way through its first item: the playlist goes on with its second item at the
    /// first item's end (not from its first item again), its passes back to back.
    @Test func theSamePlaylistGoesOnWithItsNextItem() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = try await Self.clips(in: folder)
        let layer = CompositionLayer(assets: paths.map { Asset(path: $0) }, rect: PixelRect(x: 0, y: 0, width: 32, height: 36), loop: .forever)
        var moved = layer
        moved.assets = paths.map { Asset(path: $0) }
        moved.rect = PixelRect(x: 32, y: 0, width: 32, height: 36)
        let records = try await Self.render(layer, editedTo: moved, at: 10, frames: 150)
        #expect(records.map(\.source) == paths + paths, "\(records.map(\.source))")
        #expect(records.map(\.start.seconds) == [0, 1, 2, 3, 4, 5], "\(records.map(\.start.seconds))")
    }

    /// Another playlist starts from its first item at the current item's end.
    @Test func anotherPlaylistStartsFromItsFirstItem() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = try await Self.clips(in: folder)
        let layer = CompositionLayer(assets: paths.map { Asset(path: $0) }, rect: PixelRect(size: Self.canvas.size), loop: .forever)
        let other = CompositionLayer(assets: [paths[2], paths[1]].map { Asset(path: $0) }, rect: PixelRect(size: Self.canvas.size), loop: .forever)
        let records = try await Self.render(layer, editedTo: other, at: 10, frames: 100)
        #expect(records.map(\.source) == [paths[0], paths[2], paths[1], paths[2]], "\(records.map(\.source))")
    }

    /// A layer that has played out (once, holding its last frame) has no boundary to come: its new
    /// version starts as soon as it is given.
    @Test func aLayerThatHasEndedTakesItsNewVersionAtOnce() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = try await Self.clips(in: folder)
        let layer = CompositionLayer(assets: [Asset(path: paths[0])], rect: PixelRect(size: Self.canvas.size), loop: .once)
        let other = CompositionLayer(assets: [Asset(path: paths[2])], rect: PixelRect(size: Self.canvas.size), loop: .once)
        let records = try await Self.render(layer, editedTo: other, at: 40, frames: 100)
        #expect(records.map(\.source) == [paths[0], paths[2]], "\(records.map(\.source))")
        // Given while frame 40 (1.6 s) was written: taken with one of the next frames.
        let start = records.last?.start.seconds ?? 0
        #expect(start >= 1.6 && start <= 1.8, "the new version began at \(start) s")
    }

    /// A layer anchored to a schedule, edited: its new version joins where the schedule is when it
    /// is taken (by the wall clock at that moment), not at the next item of the old version.
    @Test func aScheduledLayerRejoinsItsSchedule() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A playlist of 1 s and 6 s: 7 s a cycle, begun 6.5 s ago (the long item, 5.5 s in).
        let paths = Array(try await Self.clips(in: folder, seconds: ["green": 6]).prefix(2))
        let scheduled = Date().addingTimeInterval(-6.5)
        let layer = CompositionLayer(
            assets: paths.map { Asset(path: $0) }, rect: PixelRect(size: Self.canvas.size), loop: .forever, scheduledStart: scheduled)
        var moved = layer
        moved.rect = PixelRect(x: 0, y: 0, width: 32, height: 36)
        let records = try await Self.render(layer, editedTo: moved, at: 1, frames: 100)
        try #require(records.count >= 2, "\(records)")
        let (first, joined) = (records[0], records[1])
        // The old version: the long item, joined where the schedule stood when the render began
        // (about 6.5 s into the cycle: later on a loaded machine), ending with the cycle.
        let begun = try #require(first.wallClockStart).timeIntervalSince(scheduled).truncatingRemainder(dividingBy: 7)
        #expect(first.source == paths[1] && abs(first.end.seconds - (7 - begun)) < 0.05, "\(first), joined \(begun) s into the cycle")
        // The new version: where the schedule stood when it was taken.
        let wall = try #require(joined.wallClockStart)
        let lengths = [1.0, 6.0], into = wall.timeIntervalSince(scheduled).truncatingRemainder(dividingBy: 7)
        let item = into < lengths[0] ? 0 : 1
        let offset = item == 0 ? into : into - lengths[0]
        #expect(joined.source == paths[item], "the schedule plays item \(item) \(offset) s in: \(joined)")
        #expect(abs(joined.start.seconds - (first.end.seconds - offset)) < 0.05, "begun \(offset) s before it was taken: \(joined)")
    }
}

/// A channel's layout kept by the library (``CompositionLayout``): a version is taken whole or
/// not at all — one that cannot be taken changes nothing, and the version before it stays.
@Suite struct CompositionLayoutTests {
    @Test func aRefusedVersionChangesNothingAndTheOldOneStays() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = try await LiveEditTests.clips(in: folder)
        let compositor = Compositor(canvas: LiveEditTests.canvas)
        let layout = CompositionLayout(compositor: compositor)
        let left = PixelRect(x: 0, y: 0, width: 32, height: 36), right = PixelRect(x: 32, y: 0, width: 32, height: 36)
        let a = CompositionLayout.Layer(name: "a", sources: [paths[0]], rect: left, loop: .forever)
        let b = CompositionLayout.Layer(name: "b", sources: [paths[1]], rect: right, zIndex: 1, loop: .forever)
        try layout.apply([a, b])
        /// The layers a render draws now, by name.
        func drawn() async -> [String] {
            _ = await compositor.render(frames: 1, into: InMemorySink())
            return compositor.progress.layers.compactMap { layout.name(of: $0.id) }
        }
        #expect(await drawn() == ["a", "b"])
        // b removed, c added, d off the canvas: refused whole.
        let c = CompositionLayout.Layer(name: "c", sources: [paths[2]], rect: right, loop: .forever)
        let d = CompositionLayout.Layer(name: "d", sources: [paths[2]], rect: PixelRect(x: 60, y: 0, width: 32, height: 36))
        do {
            try layout.apply([a, c, d])
            Issue.record("a layer off the canvas was taken")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("layer d"), "\(error)")
        }
        #expect(layout.layers.map(\.name) == ["a", "b"])
        #expect(await drawn() == ["a", "b"], "the refused version was partly applied")
        // Too many layers at once: refused whole too.
        let many = (0..<Compositor.maximumLayers).map { CompositionLayout.Layer(name: "m\($0)", sources: [paths[0]], rect: left) }
        #expect(throws: PlayheadError.self) { try layout.apply([a, b] + many) }
        #expect(await drawn() == ["a", "b"])
        // The old version again: nothing to change; a real change is taken.
        try layout.apply([a, b])
        #expect(await drawn() == ["a", "b"])
        try layout.apply([a, c])
        #expect(await drawn() == ["a", "c"])
        // Two layers of one name are refused.
        #expect(throws: PlayheadError.self) { try layout.apply([a, a]) }
    }

    /// Every field of a layer's description takes part in telling versions apart (the equality is
    /// the compiler's): a layer whose schedule alone changes is a new version.
    @Test func anyFieldThatChangesMakesANewVersion() throws {
        let base = CompositionLayout.Layer(name: "a", sources: ["x.mp4"], rect: PixelRect(x: 0, y: 0, width: 2, height: 2))
        var changes: [CompositionLayout.Layer] = []
        var edited = base
        edited.scheduledStart = Date(timeIntervalSince1970: 1)
        changes.append(edited)
        edited = base
        edited.afterEnd = .clear
        changes.append(edited)
        edited = base
        edited.timeRange = TimeRange(start: .zero, duration: .positiveInfinity)
        changes.append(edited)
        edited = base
        edited.providesAudio = true
        changes.append(edited)
        for change in changes { #expect(change != base) }
    }
}
