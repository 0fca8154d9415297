import Foundation
import Glibc
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A channel never waits for a source: items are opened ahead of their turn on worker threads,
/// and one whose source does not answer fails when its open times out, while every frame leaves
/// on time (realtime, on the machine's clock).
@Suite struct ChannelSourceTests {
    /// A playlist whose second item is a server that accepts and never answers (or a FIFO
    /// nobody writes), under a 3 s `--timeout`: before, every output froze for the 3 s (75 frames
    /// late at 25 fps) when its turn came; now it is opened while the first item plays, the layer
    /// holds its last picture until that open times out, the item fails in the as-run log (its
    /// filler slot follows), the next one plays, and no frame is late beyond the machine's own
    /// jitter.
    @Test(arguments: ["http", "fifo"]) func aSourceThatNeverAnswersStallsNoFrame(kind: String) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try SilentServer()
        defer { server.close() }
        let never = kind == "fifo" ? folder + "/never.mp4" : "http://127.0.0.1:\(server.port)/never.mp4"
        if kind == "fifo" { try #require(mkfifo(never, 0o644) == 0) }
        let sources = [try Fixtures.clip("h264-aac.mp4"), never, try Fixtures.clip("4x3.mp4")]
        let layout = folder + "/channel.json"
        try Data(
            """
            [{"name": "screen", "sources": [\(sources.map { "\"\($0)\"" }.joined(separator: ", "))], "rect": [0, 0, 64, 36], "loop": "forever", "audio": true}]
            """.utf8
        ).write(to: URL(fileURLWithPath: layout))
        let result = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "9", "--timeout", "3",
            "--slot", "1", "--out", folder + "/rec.mp4", "--as-run", folder + "/as-run.jsonl",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let late = try #require(
            result.stderr.firstMatch(of: /(\d+) late;/).flatMap { Int($0.1) }, "no summary: \(result.stderr)")
        // The stall would make 75; what is left is the machine's (a loaded CI machine's) jitter.
        #expect(late < 12, "\(late) frames late: \(result.stderr)")
        let items = ((try? String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.filter { $0["kind"] as? String == "item" }
        let failed = items.filter { $0["item"] as? Int == 2 }
        #expect(failed.first?["status"] as? String == "failed", "\(items)")
        let why = "\(failed.first?["error"] ?? "")"
        #expect(why.contains("timedOut"), "the open timed out: \(failed)")
        if let start = failed.first?["canvasStart"] as? Double, let end = failed.first?["canvasEnd"] as? Double {
            // Opened ahead, when the first item began (canvas time 0): it fails 3 s after that,
            // not 3 s after its turn came.
            #expect(start == 2 && abs(end - 3) < 0.75, "the item failed when its open, begun ahead, timed out: \(start)–\(end)")
        }
        #expect(items.contains { $0["item"] as? Int == 3 && $0["status"] as? String == "played" }, "the next item played: \(items)")
        let frames = try await HostileOperationsTests.decodedFrames(folder + "/rec.mp4")
        #expect(frames == 225, "\(frames) frames recorded")
        // The failed item's turn is silent, and the sound comes back with the first item's next
        // pass (from canvas time ≈ 6.1 s; before, a pass that never opened ended the layer's sound).
        let sound = try await Reference.run(
            try Reference.ffmpeg(),
            ["-v", "error", "-ss", "6.6", "-t", "1", "-i", folder + "/rec.mp4", "-map", "0:a", "-ac", "1", "-f", "s16le", "-"])
        let loudest = sound.withUnsafeBytes { raw in raw.bindMemory(to: Int16.self).map { abs(Int($0)) }.max() ?? 0 }
        #expect(sound.count > 0 && loudest > 1000, "the first item's sound plays again: peak \(loudest)")
    }

    /// A source that stops sending in the middle of an item (an HTTP server that sends half the
    /// file, then nothing; a 3 s stall timeout): the layer's picture is decoded on a worker and
    /// waited for until its frame is due, so the layer holds its last picture while the read
    /// stalls, the item fails when the stall times out (the next one plays), and no frame is late
    /// beyond the machine's jitter — before, the render thread read the source itself and every
    /// output froze for the stall (75 frames late at 25 fps). A layer beside it goes on moving.
    /// The layer gives the sound: it is decoded ahead on a worker too (before, its reads stalled
    /// the render just as the picture's did), silent while the source stalls, and the next
    /// item's sound plays (before, one pass's failure silenced the layer for good).
    @Test func aSourceThatStopsSendingMidItemStallsNoFrame() async throws {
        func folder(_ root: String, _ name: String) -> String { root + "/" + name }
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Six seconds whose bytes are spread evenly (a high rate, index in front): half the file
        // is about three seconds of pictures and sound.
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=6", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000:duration=6", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "2M", "-g", "25",
                "-c:a", "aac", "-ac", "2", "-movflags", "+faststart", root + "/clip.mp4",
            ])
        // The next item: a tone of its own, loud from its first sample.
        let next = folder(root, "next.mp4")
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x36:rate=25:duration=8", "-f", "lavfi", "-i",
                "sine=frequency=1000:sample_rate=48000:duration=8", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-ac", "2",
                next,
            ])
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let stalling = Asset(
            url: try #require(URL(string: server.url("stall-half", "clip.mp4"))),
            options: AssetOptions(openTimeout: .seconds(3), stallTimeout: .seconds(3)))
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        let layer = try compositor.add(
            CompositionLayer(
                assets: [stalling, Asset(path: next)], rect: PixelRect(x: 0, y: 0, width: 32, height: 36), loop: .once, providesAudio: true))
        // Beside it, a layer of a local clip (every frame its own picture) that must go on moving.
        let moving = folder(root, "moving.mp4")
        try await Self.smallClip(moving, "testsrc2", seconds: 10)
        try compositor.add(
            CompositionLayer(assets: [Asset(path: moving)], rect: PixelRect(x: 32, y: 0, width: 32, height: 36), zIndex: 1, loop: .forever))
        let sink = PicturesAndSound()
        let report = await compositor.render(frames: 225, into: sink, realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 225, "\(String(describing: report.error))")
        // While the first layer's source stalls (from about frame 75 to its timeout 3 s later),
        // the second moves on: it never shows one picture for long (a frozen render: 75 frames).
        let frozen = Self.longestFreeze(of: sink.pictures.frames[60..<160], left: false)
        #expect(frozen <= 10, "the layer beside a stalled one held a picture for \(frozen) frames")
        // The stall would make 75; what is left is the machine's (a loaded CI machine's) jitter.
        #expect(report.lateFrames < 25, "\(report.lateFrames) frames late")
        let account = try #require(report.layers.first { $0.id == layer })
        let failure = account.itemFailures.first { $0.0 == 0 }?.1
        #expect(failure?.code == .timedOut, "the stalled item failed when its read timed out: \(String(describing: failure))")
        #expect(account.framesShown > 100, "the layer held its picture, then played its next item: \(account.framesShown) frames shown")
        // The sound: the first item's tone while its data lasted, silence while it stalled, the
        // next item's tone once it plays (its pass begins where the stalled one failed).
        #expect(report.audioFailure?.code == .timedOut, "the stalled item's sound failed: \(String(describing: report.audioFailure))")
        #expect(report.soundMissed > .zero, "the sound while the source stalled was missed, not waited for")
        let sound = sink.sound
        #expect(sound.count >= 9 * 48000 * 2 - 2, "\(sound.count) samples for 9 s of stereo")
        /// The loudest sample of the left channel over `seconds` from `start`, and how often it
        /// crosses zero a second (a tone of f Hz: 2f).
        func listen(from start: Double, seconds: Double) -> (peak: Int, crossings: Double) {
            let (first, count) = (Int(start * 48000), Int(seconds * 48000))
            guard (first + count) * 2 <= sound.count else { return (-1, 0) }
            let left = (first..<(first + count)).map { sound[$0 * 2] }
            let crossings = zip(left, left.dropFirst()).filter { ($0 >= 0) != ($1 >= 0) }.count
            return (left.map { abs(Int($0)) }.max() ?? 0, Double(crossings) / seconds)
        }
        let first = listen(from: 0.5, seconds: 2), stalled = listen(from: 4, seconds: 1), after = listen(from: 7.5, seconds: 1)
        #expect(first.peak > 1000 && abs(first.crossings - 880) < 40, "the first item's 440 Hz played: \(first)")
        #expect(stalled.peak < 100, "silence while its source stalled: \(stalled)")
        #expect(after.peak > 1000 && abs(after.crossings - 2000) < 40, "the next item's 1000 Hz plays after the stalled one failed: \(after)")
    }

    /// A source that keeps sending, but slower than its picture's own rate (about 40 KB/s for
    /// 2 Mbit/s; never a stall): the channel keeps its time, and the item's pass ends at the
    /// length its picture declares, its decode let go — before, the layer waited for that decode
    /// for ever: it froze on the slow item, and the items after it never showed (nor sounded).
    @Test func aSourceSlowerThanItsRateEndsAtItsLength() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.spreadClip(root + "/slow.mp4", seconds: 4)
        let red = root + "/red.mp4"
        try await Self.smallClip(red, "color=c=red", seconds: 10)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let slow = Asset(
            url: try #require(URL(string: server.url("slow", "slow.mp4"))), options: AssetOptions(openTimeout: .seconds(3), stallTimeout: .seconds(3))
        )
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        try compositor.add(CompositionLayer(assets: [slow, Asset(path: red)], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .once))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 250, into: sink, realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 250, "\(String(describing: report.error))")
        #expect(report.lateFrames < 25, "\(report.lateFrames) frames late")
        // From shortly after 4 s on, the next item: red.
        let frames = sink.frames
        let reds = frames[150..<250].filter { frame in
            let (r, g, b) = (Int(frame.bytes[0]), Int(frame.bytes[1]), Int(frame.bytes[2]))
            return r > 180 && g < 80 && b < 80
        }
        #expect(reds.count == 100, "the next item showed in \(reds.count) of the 100 frames after the slow one's length")
    }

    /// A source whose pictures come far too slowly, whatever length it declares (here 20 s of
    /// noise, each frame about a second of the server's 40 KB/s, under a 3 s stall timeout): a
    /// decode out longer than the stall timeout ends the pass where the layer is, and the next
    /// item plays — before, the layer showed a picture every few seconds until the declared
    /// length.
    @Test func aSourceFallingFarBehindEndsAtItsStallTimeout() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "nullsrc=size=320x180:rate=25:duration=20,geq=lum='random(1)*255':cb=128:cr=128",
                "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-g", "50", "-movflags", "+faststart", root + "/slow.mp4",
            ])
        let red = root + "/red.mp4"
        try await Self.smallClip(red, "color=c=red", seconds: 10)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let slow = Asset(
            url: try #require(URL(string: server.url("slow", "slow.mp4"))), options: AssetOptions(openTimeout: .seconds(3), stallTimeout: .seconds(3))
        )
        let records = Locked<[LayerItemRecord]>([])
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas) { record in records.withLock { $0.append(record) } }
        try compositor.add(CompositionLayer(assets: [slow, Asset(path: red)], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .once))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 300, into: sink, realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 300, "\(String(describing: report.error))")
        let first = records.withLock { $0 }.first
        #expect(
            first?.status == .failed && (first?.error?.message.contains("stall timeout") ?? false) && (first?.end.seconds ?? 99) < 10,
            "\(String(describing: first))")
        // The next item, red, in the last 2 s (before, the slow one held the layer to 20 s).
        let reds = sink.frames[250..<300].filter { frame in
            let (r, g, b) = (Int(frame.bytes[0]), Int(frame.bytes[1]), Int(frame.bytes[2]))
            return r > 180 && g < 80 && b < 80
        }
        #expect(reds.count == 50, "the next item showed in \(reds.count) of the last 50 frames")
    }

    /// A channel's item whose source is down for a moment (its server accepts and never answers,
    /// then answers in full) is opened again on a later pass once its failure is old enough, and
    /// plays — before, it failed at once on every pass for the rest of the run. Its next item's
    /// pass (2 s) is shorter than the failure's 4 s: the item is failed again at once in between
    /// (that does not move the retry), and the opening that failed while the server was still
    /// down, ahead of its turn, is not taken for a new failure once the retry is due.
    @Test func aChannelTriesAFailedItemAgain() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let red = root + "/red.mp4"
        try await Self.smallClip(red, "color=c=red", seconds: 2)
        let (compositor, records, flaky, server) = try await Self.flakyChannel(in: root, fixedAfter: 2.5, retry: .seconds(4))
        defer { server.stop() }
        try compositor.add(
            CompositionLayer(assets: [flaky, Asset(path: red)], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .forever))
        let report = await compositor.render(frames: 275, into: NullSink(), realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 275, "\(String(describing: report.error))")
        let flakyPasses = records.withLock { $0 }.filter { $0.item == 0 }.map { ($0.status, ($0.end - $0.start).seconds) }
        #expect(
            flakyPasses.first?.0 == .failed,
            "its first pass failed: \(flakyPasses) \(records.withLock { $0 }.map { ($0.item, $0.status, $0.start.seconds, $0.end.seconds, String(describing: $0.error)) })"
        )
        #expect(
            flakyPasses.contains { $0.0 == .played && abs($0.1 - 4) < 0.1 }, "a later pass opened it again and played it whole: \(flakyPasses)")
    }

    /// A channel's layer whose one item fails (its source down for a moment) shows the
    /// background until the failure lapses, then opens it again and plays it — before, the
    /// layer failed for the rest of the run (every item had failed).
    @Test func aChannelLayerWhoseOnlyItemFailedTriesItAgain() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (compositor, records, flaky, server) = try await Self.flakyChannel(in: root, fixedAfter: 1.5, retry: .seconds(3))
        defer { server.stop() }
        let id = try compositor.add(CompositionLayer(assets: [flaky], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .forever))
        let report = await compositor.render(frames: 275, into: NullSink(), realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 275, "\(String(describing: report.error))")
        let passes = records.withLock { $0 }.map { ($0.status, $0.start.seconds, ($0.end - $0.start).seconds) }
        #expect(passes.first?.0 == .failed, "its first pass failed: \(passes)")
        #expect(passes.contains { $0.0 == .played && abs($0.2 - 4) < 0.1 }, "a later pass opened it again and played it whole: \(passes)")
        let layer = try #require(report.layers.first { $0.id == id })
        #expect(layer.failure == nil && layer.framesShown > 100, "\(String(describing: layer.failure)), \(layer.framesShown) frames shown")
    }

    /// A channel's layer that showed a picture, then failed its every item, shows the background
    /// while it waits — and still while the retry's source does not answer: the picture it held
    /// is let go when it starts waiting (it showed again, stale, while the retry's open waited).
    /// Its one item plays (2 s), then its server stops answering: the next pass stalls (the last
    /// picture held, as for any stall) and fails; the first retry, 1 s later, waits 1 s for an
    /// open that fails; the server is back 3 s after the failure, and a later retry plays.
    @Test func aWaitingLayerLetsItsLastPictureGo() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Large enough that a pass from the start asks the server again (nothing buffered).
        try await Self.spreadClip(root + "/clip.mp4", seconds: 2)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        server.isBroken = false
        let clip = Asset(
            url: try #require(URL(string: server.url("flaky", "clip.mp4"))),
            options: AssetOptions(openTimeout: .seconds(1), stallTimeout: .seconds(1)))
        let records = Locked<[LayerItemRecord]>([])
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(
            canvas: canvas,
            onRecord: { record in
                let earlier = records.withLock { records in
                    defer { records.append(record) }
                    return records
                }
                if record.status == .played, earlier.isEmpty { server.isBroken = true }
                if record.status == .failed, !earlier.contains(where: { $0.status == .failed }) {
                    DispatchQueue.global().asyncAfter(deadline: .now() + 3) { server.isBroken = false }
                }
            })
        compositor.failedItemRetry = .seconds(1)
        try compositor.add(CompositionLayer(assets: [clip], rect: PixelRect(x: 0, y: 0, width: 64, height: 36), loop: .forever))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 300, into: sink, realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 300, "\(String(describing: report.error))")
        let passes = records.withLock { $0 }
        let summary = passes.map { "\($0.status) \($0.start.seconds)–\($0.end.seconds)" }
        // Played, failed (the stall), failed (the retry whose open waited), …, played again.
        let failedAt = try #require(passes.firstIndex { $0.status == .failed }, "\(summary)")
        #expect(passes.first?.status == .played && failedAt == 1, "\(summary)")
        let back = try #require(passes[failedAt...].firstIndex { $0.status == .played }, "the server came back: \(summary)")
        let retries = passes[(failedAt + 1)..<back].filter { $0.status == .failed }
        #expect(!retries.isEmpty, "a retry met the server still down (else nothing here is tested): \(summary)")
        // From two frames past the failure to the pass that played again: the background alone.
        let from = Int((passes[failedAt].end.seconds * 25).rounded(.up)) + 2
        let to = Int((passes[back].start.seconds * 25).rounded(.down))
        #expect(to - from >= 25, "waited a second at least: frames \(from)..<\(to), \(summary)")
        let frames = sink.frames
        let shown = frames[min(from, frames.count)..<min(max(from, to), frames.count)].filter { frame in
            frame.bytes.contains { $0 > 40 }
        }.map(\.index)
        #expect(shown.isEmpty, "a picture showed in \(shown.count) frames while the layer waited, from \(shown.first ?? -1): \(summary)")
        #expect(frames[...min(40, frames.count - 1)].contains { $0.bytes.contains { $0 > 40 } }, "the first pass showed its pictures")
    }

    /// A 64x36, 25 fps compositor whose as-run records are kept, with `failedItemRetry` of
    /// `retry`, and a 4 s clip behind a server that does not answer until `fixedAfter` seconds
    /// after the first failed record of item 0 (1 s open and stall timeouts).
    static func flakyChannel(
        in root: String, fixedAfter: Double, retry: Duration
    ) async throws -> (Compositor, Locked<[LayerItemRecord]>, Asset, TestHTTPServer) {
        try await spreadClip(root + "/flaky.mp4", seconds: 4)
        let server = try TestHTTPServer(root: root)
        let flaky = Asset(
            url: try #require(URL(string: server.url("flaky", "flaky.mp4"))),
            options: AssetOptions(openTimeout: .seconds(1), stallTimeout: .seconds(1)))
        let records = Locked<[LayerItemRecord]>([])
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let fixed = Locked(false)
        let compositor = Compositor(
            canvas: canvas,
            onRecord: { record in
                records.withLock { $0.append(record) }
                if record.status == .failed, record.item == 0, !fixed.withLock({ $0 }) {
                    fixed.withLock { $0 = true }
                    DispatchQueue.global().asyncAfter(deadline: .now() + fixedAfter) { server.isBroken = false }
                }
            })
        compositor.failedItemRetry = retry
        return (compositor, records, flaky, server)
    }

    /// A demuxer whose source stalled is not kept for the next user (who would fail at once on
    /// its stalled connection): the asset and the preparer close it, and the next pass opens the
    /// source anew. One that read a local file to its end is kept.
    @Test func aStalledDemuxerIsNotKeptForReuse() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.spreadClip(root + "/clip.mp4", seconds: 4)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        /// Opens `asset`, reads it to its end (or failure), gives it back to the asset, and says
        /// whether the asset kept it for its next user.
        func readAndGiveBack(_ asset: Asset) async throws -> (reusable: Bool, kept: Bool, failure: PlayheadError?) {
            try await Task.detached { () throws -> (Bool, Bool, PlayheadError?) in
                let demuxer = try asset.openDemuxer(interrupt: InterruptFlag())
                let packet = try OwnedPacket()
                var failure: PlayheadError?
                reading: while true {
                    switch demuxer.read(into: packet) {
                    case .packet: packet.unref()
                    case .end(let end):
                        failure = end.failure
                        break reading
                    }
                }
                let reusable = demuxer.isReusable
                asset.giveBack(demuxer)
                return (reusable, asset.keptDemuxer(interrupt: InterruptFlag()) != nil, failure)
            }.value
        }
        let stalled = try await readAndGiveBack(
            Asset(url: try #require(URL(string: server.url("stall-half", "clip.mp4"))), options: AssetOptions(stallTimeout: .seconds(1))))
        #expect(stalled.failure?.code == .timedOut, "\(String(describing: stalled.failure))")
        #expect(!stalled.reusable && !stalled.kept, "a stalled demuxer was kept: \(stalled)")
        let local = try await readAndGiveBack(Asset(path: root + "/clip.mp4"))
        #expect(local.failure == nil && local.reusable && local.kept, "a local file's demuxer is kept: \(local)")
    }

    /// A filler whose source stops sending (half its file, then nothing; a 3 s stall timeout)
    /// plays in a failed item's slot: its picture is decoded as an item's is — waited for until
    /// the frame is due — so the slot holds the filler's last picture while it stalls and then
    /// shows the background, and a layer beside it goes on moving. Before, the render thread
    /// decoded the filler itself and every output froze for the stall (75 frames late at 25 fps).
    @Test func aFillerThatStopsSendingStallsNoFrame() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.spreadClip(root + "/filler.mp4", seconds: 6)
        let moving = root + "/moving.mp4"
        try await Self.smallClip(moving, "testsrc2", seconds: 10)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let filler = Asset(
            url: try #require(URL(string: server.url("stall-half", "filler.mp4"))),
            options: AssetOptions(openTimeout: .seconds(3), stallTimeout: .seconds(3)))
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas, failurePolicy: .filler(filler, slot: MediaTime(value: 8, timescale: 1)))
        // An item that fails at once: the filler plays for its 8 s slot.
        try compositor.add(
            CompositionLayer(assets: [Asset(path: root + "/missing.mp4")], rect: PixelRect(x: 0, y: 0, width: 32, height: 36), loop: .once))
        try compositor.add(
            CompositionLayer(assets: [Asset(path: moving)], rect: PixelRect(x: 32, y: 0, width: 32, height: 36), zIndex: 1, loop: .forever))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 200, into: sink, realtime: SystemPlaybackClock())
        #expect(report.error == nil && report.framesWritten == 200, "\(String(describing: report.error))")
        let frames = sink.frames
        // The filler moved while its data lasted.
        #expect(Set(frames[5..<40].map { Self.half($0, left: true) }).count > 20, "the filler played")
        // While the filler stalls (from about 3 s to its timeout 3 s later), the layer beside it moves.
        let frozen = Self.longestFreeze(of: frames[60..<180], left: false)
        #expect(frozen <= 10, "the layer beside a stalled filler held a picture for \(frozen) frames")
        #expect(report.lateFrames < 25, "\(report.lateFrames) frames late")
    }

    /// A live edit adds a layer that joins its schedule, whose source accepts and never answers
    /// (a 3 s open timeout): its items' lengths are measured on workers, and the channel takes the
    /// edit once they are known (here: failed), drawing the layers before meanwhile — before, the
    /// render thread opened the source itself to place the layer on its schedule, and every
    /// output froze for the timeout (75 frames late at 25 fps).
    @Test func aScheduledLayerOfASilentSourceStallsNoFrame() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let canvas = CompositionCanvas(size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)))
        let compositor = Compositor(canvas: canvas)
        try compositor.add(
            CompositionLayer(assets: [Asset(path: try Fixtures.clip("h264-aac.mp4"))], rect: PixelRect(size: canvas.size), loop: .forever))
        let silent = Asset(
            url: try #require(URL(string: "http://127.0.0.1:\(server.port)/never.mp4")), options: AssetOptions(openTimeout: .seconds(3)))
        let editor = Task {
            while compositor.progress.frames < 25 { try? await Task.sleep(for: .milliseconds(5)) }
            _ = try? compositor.add(
                CompositionLayer(
                    assets: [silent], rect: PixelRect(x: 0, y: 0, width: 32, height: 36), zIndex: 1, loop: .forever,
                    scheduledStart: Date().addingTimeInterval(-1)))
        }
        let report = await compositor.render(frames: 150, into: NullSink(pixelFormat: .yuv420p), realtime: SystemPlaybackClock())
        _ = await editor.value
        #expect(report.error == nil && report.framesWritten == 150)
        // The stall would make 75 (50 even bounded to the start's patience); what is left is the
        // machine's (a loaded CI machine's) jitter.
        #expect(report.lateFrames < 25, "\(report.lateFrames) frames late")
        #expect(report.layers.count == 2, "the edit was taken once its lengths were known (failed): \(report.layers.count) layers")
    }

    /// A channel whose layer joins its schedule from the start shows that layer in its first
    /// frame: the render waits for the layer's lengths (measured on workers) before its first
    /// frame, as for its first items, not after it.
    @Test func aScheduledLayerShowsFromTheFirstFrame() async throws {
        let canvas = CompositionCanvas(
            size: PixelSize(width: 64, height: 36), frameRate: try #require(FrameRate(numerator: 25)),
            background: try #require(RGBColor(parsing: "#FF00FF")))
        let compositor = Compositor(canvas: canvas)
        try compositor.add(
            CompositionLayer(
                assets: [Asset(path: try Fixtures.clip("h264-aac.mp4"))], rect: PixelRect(size: canvas.size), loop: .forever,
                scheduledStart: Date().addingTimeInterval(-1.5)))
        let sink = InMemorySink(pixelFormat: .rgb24)
        let report = await compositor.render(frames: 3, into: sink, realtime: SystemPlaybackClock())
        #expect(report.error == nil && sink.frames.count == 3)
        let first = try #require(sink.frames.first)
        let background =
            first.bytes.count / 3 == 64 * 36
            && stride(from: 0, to: first.bytes.count, by: 3).allSatisfy {
                first.bytes[$0] == 255 && first.bytes[$0 + 1] == 0 && first.bytes[$0 + 2] == 255
            }
        #expect(!background, "the first frame shows the background alone")
    }

    /// An item of eight hours of sound after a short clip: measuring its sound (decoding it
    /// whole, seconds of work) is begun ahead and no longer holds the boundary up (before, 100
    /// frames late there); the item's sound plays from its turn, from the start its stream
    /// declares, while it is measured.
    @Test func anHoursLongSoundItemStartsOnTime() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try Reference.ffmpeg()
        _ = try await Reference.run(
            ffmpeg,
            ["-v", "error", "-f", "lavfi", "-i", "color=c=blue:s=64x36:r=25:d=0.4", "-c:v", "libx264", "-pix_fmt", "yuv420p", folder + "/short.mp4"])
        _ = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=10", "-ac", "1", "-c:a", "aac", "-b:a", "32k",
                folder + "/ten.m4a",
            ])
        // Eight hours: the ten seconds repeated, without encoding them again.
        _ = try await Reference.run(
            ffmpeg, ["-v", "error", "-stream_loop", "2879", "-i", folder + "/ten.m4a", "-c", "copy", folder + "/eight-hours.m4a"])
        let layout = folder + "/channel.json"
        try Data(
            """
            [{"name": "screen", "sources": ["short.mp4", "eight-hours.m4a"], "rect": [0, 0, 64, 36], "loop": "forever", "audio": true}]
            """.utf8
        ).write(to: URL(fileURLWithPath: layout))
        let result = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "4",
            "--out", folder + "/rec.mp4",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let late = try #require(result.stderr.firstMatch(of: /(\d+) late;/).flatMap { Int($0.1) }, "no summary: \(result.stderr)")
        #expect(late < 12, "\(late) frames late: \(result.stderr)")
        let sound = try await Reference.run(
            ffmpeg, ["-v", "error", "-ss", "0.6", "-t", "0.5", "-i", folder + "/rec.mp4", "-map", "0:a", "-ac", "1", "-f", "s16le", "-"])
        let loudest = sound.withUnsafeBytes { raw in raw.bindMemory(to: Int16.self).map { abs(Int($0)) }.max() ?? 0 }
        #expect(sound.count > 0 && loudest > 1000, "the long item's sound plays from its turn: peak \(loudest)")
    }

    /// The preparer alone: a channel's take of an item whose source does not answer returns at
    /// once (not ready), and the open's failure comes when it times out, once; a render that
    /// waits takes what it asks for; what is given back is taken again without opening.
    @Test func thePreparerNeverWaitsInAChannel() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let silent = Asset(
            url: try #require(URL(string: "http://127.0.0.1:\(server.port)/never.mp4")), options: AssetOptions(openTimeout: .seconds(1)))
        let channel = ItemPreparer(waits: false)
        defer { channel.close() }
        let interrupt = InterruptFlag()
        let asked = ContinuousClock.now
        #expect(try channel.take(silent, interrupt: interrupt) == nil)
        #expect(ContinuousClock.now - asked < .milliseconds(500), "not ready, at once")
        #expect(server.connectionPending(timeoutMilliseconds: 5000), "its open began on a worker")
        let deadline = ContinuousClock.now + .seconds(20)
        while !channel.isReady(silent), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(throws: PlayheadError.self) { try channel.take(silent, interrupt: interrupt) }
        #expect(!channel.isReady(silent), "the failure is taken once")

        let clip = Asset(path: try Fixtures.clip("h264-aac.mp4"))
        let waiting = ItemPreparer(waits: true)
        defer { waiting.close() }
        let demuxer = try #require(try waiting.take(clip, interrupt: interrupt))
        #expect(demuxer.video != nil)
        waiting.giveBack(demuxer, of: clip)
        #expect(waiting.isReady(clip))
        let again = try #require(try waiting.take(clip, interrupt: interrupt))
        #expect(again === demuxer, "the same demuxer, not opened again")
        waiting.giveBack(again, of: clip)
        // Past its capacity, the oldest are given back to their assets.
        for _ in 0..<ItemPreparer.capacity {
            let other = Asset(path: try Fixtures.clip("4x3.mp4"))
            waiting.prepare(other)
            let opened = try #require(try waiting.take(other, interrupt: interrupt))
            waiting.giveBack(opened, of: other)
        }
        #expect(!waiting.isReady(clip), "the oldest went back to its asset")
    }
}

extension ChannelSourceTests {
    /// Makes a 320×180 clip of `seconds` at 25 fps whose bytes are spread evenly (2 Mbit/s, a
    /// keyframe a second, the index in front): half the file is about half its time.
    static func spreadClip(_ path: String, seconds: Int) async throws {
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=\(seconds)", "-c:v", "libx264", "-preset", "ultrafast",
                "-b:v", "2M", "-g", "25", "-movflags", "+faststart", path,
            ])
    }

    /// Makes a 64×36 clip of `seconds` at 25 fps from the lavfi source `source` (`testsrc2`: every
    /// frame its own picture; `color=c=red`).
    static func smallClip(_ path: String, _ source: String, seconds: Int) async throws {
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "\(source)\(source.contains("=") ? ":" : "=")size=64x36:rate=25:duration=\(seconds)", "-c:v",
                "libx264", "-preset", "ultrafast", path,
            ])
    }

    /// The left or right half of a 64×36 picture (rgb24).
    static func half(_ frame: InMemorySink.Frame, left: Bool) -> [UInt8] {
        (0..<36).flatMap { row in
            let start = (row * 64 + (left ? 0 : 32)) * 3
            return frame.bytes[start..<start + 32 * 3]
        }
    }

    /// The most consecutive frames of `frames` whose half shows one picture (a small picture of
    /// a moving clip repeats now and then; a frozen render repeats it for as long as it stalls).
    static func longestFreeze(of frames: ArraySlice<InMemorySink.Frame>, left: Bool) -> Int {
        var (longest, run, previous) = (1, 1, [UInt8]?.none)
        for frame in frames {
            let picture = half(frame, left: left)
            run = picture == previous ? run + 1 : 1
            longest = max(longest, run)
            previous = picture
        }
        return longest
    }
}

/// Keeps the pictures (``InMemorySink``) and the sound of a render.
private final class PicturesAndSound: AudioCarryingFrameSink, Sendable {
    let pictures = InMemorySink(pixelFormat: .rgb24)
    private let samples = Locked<[Int16]>([])
    var pixelFormat: OutputPixelFormat { pictures.pixelFormat }
    /// Every sample written, interleaved.
    var sound: [Int16] { samples.withLock { $0 } }

    func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {}
    func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) { samples.withLock { $0.append(contentsOf: buffer.samples) } }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) { try pictures.begin(info) }
    func write(_ frame: VideoFrame) throws(PlayheadError) { try pictures.write(frame) }
    func finish() throws(PlayheadError) { try pictures.finish() }
    func abort() { pictures.abort() }
}
