import Foundation
import Synchronization
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A caller's own bytes, read through custom I/O: the same frames, images and properties as the
/// file; a stream read once and in order; a failing source is a typed error naming it.
@Suite struct ByteSourceTests {
    /// Bytes that can be read only forward, once, like a socket; records any read that goes back.
    final class StreamSource: ByteSource {
        let bytes: Data
        let wentBack = Atomic<Bool>(false)
        private let next = Atomic<Int64>(0)
        init(_ bytes: Data) { self.bytes = bytes }
        var size: Int64? { nil }
        var isSeekable: Bool { false }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if offset != next.load(ordering: .relaxed) { wentBack.store(true, ordering: .relaxed) }
            let count = try MemoryByteSource(bytes).read(at: offset, into: buffer)
            next.store(offset + Int64(count), ordering: .relaxed)
            return count
        }
    }

    struct Broken: Error, CustomStringConvertible { var description: String { "the store said no" } }

    /// Fails every read after the first `good` bytes.
    struct FailingSource: ByteSource {
        let bytes: Data
        let good: Int64
        var size: Int64? { Int64(bytes.count) }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard offset < good else { throw Broken() }
            let limited = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, Int(good - offset))])
            return try MemoryByteSource(bytes).read(at: offset, into: limited)
        }
    }

    /// The sample clip as an MPEG-TS stream (remuxed by ffmpeg, nothing re-encoded).
    static func transportStream() async throws -> Data {
        let clip = try Fixtures.clip("h264-aac.mp4")
        return Data(
            try await Reference.run(try Reference.ffmpeg(), ["-hide_banner", "-loglevel", "error", "-i", clip, "-c", "copy", "-f", "mpegts", "-"]))
    }

    static func frames(_ asset: Asset) async -> (DecodeResult, [InMemorySink.Frame]) {
        let sink = InMemorySink()
        let result = await DecodeSession(asset: asset).run(into: sink)
        return (result, sink.frames)
    }

    /// A read that does not return until it is let go (a store client stuck on a dead connection).
    final class StuckSource: ByteSource {
        let release = DispatchSemaphore(value: 0)
        var size: Int64? { 1 << 20 }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            release.wait()
            throw Broken()
        }
    }

    /// A byte source whose read never returns: loading ends at the open timeout with
    /// `io.timedOut` naming it (the read's thread is left to end when the read does).
    @Test func aReadThatNeverReturnsEndsAtTheOpenTimeout() async throws {
        let source = StuckSource()
        defer { source.release.signal() }
        let asset = Asset(byteSource: source, name: "store://stuck.mp4", options: AssetOptions(openTimeout: .seconds(1)))
        let start = ContinuousClock.now
        let outcome = await withDeadline(Bound.seconds(10), "loading a source whose read never returns") { () -> PlayheadError? in
            do throws(PlayheadError) {
                _ = try await asset.load(.duration)
                return nil
            } catch {
                return error
            }
        }
        let error = try #require(outcome ?? nil, "the load did not fail")
        #expect(error.code == .timedOut && error.file == "store://stuck.mp4", "\(error)")
        #expect(ContinuousClock.now - start < .seconds(8), "\(ContinuousClock.now - start)")
    }

    /// The clip's bytes up to `good`, then reads that block until let go.
    final class StuckAfter: ByteSource {
        let bytes: Data
        let good: Int64
        let release = DispatchSemaphore(value: 0)
        init(_ bytes: Data, good: Int64) {
            self.bytes = bytes
            self.good = good
        }
        var size: Int64? { Int64(bytes.count) }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if offset >= good {
                release.wait()
                release.signal()
                throw Broken()
            }
            let limited = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, Int(good - offset))])
            return try MemoryByteSource(bytes).read(at: offset, into: limited)
        }
    }

    /// A session over a source whose reads block part way (its index read, its media not) ends
    /// at the stall timeout with `io.timedOut`, and at once when cancelled: before, it waited
    /// for the read for ever, with its threads.
    @Test func aReadThatBlocksMidSessionEndsAtTheStallTimeoutOrACancel() async throws {
        // A fragmented copy: its index first, so the open reads only the front.
        let front = Data(
            try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-hide_banner", "-loglevel", "error", "-i", try Fixtures.clip("h264-aac.mp4"), "-c", "copy", "-f", "mp4",
                    "-movflags", "frag_keyframe+empty_moov", "-",
                ]))
        let stuck = StuckAfter(front, good: Int64(front.count / 3))
        let alsoStuck = StuckAfter(front, good: Int64(front.count / 3))
        defer {
            stuck.release.signal()
            alsoStuck.release.signal()
        }
        let timed = Asset(byteSource: stuck, name: "store://stuck.mp4", options: AssetOptions(openTimeout: .seconds(30), stallTimeout: .seconds(1)))
        let start = ContinuousClock.now
        let result = await withDeadline(Bound.seconds(15), "a session whose reads block") { await DecodeSession(asset: timed).run(into: NullSink()) }
        guard case .failed(let error)? = result?.status else {
            Issue.record("\(String(describing: result?.status))")
            return
        }
        #expect(error.code == .timedOut && error.file == "store://stuck.mp4", "\(error)")
        #expect(ContinuousClock.now - start < .seconds(6), "\(ContinuousClock.now - start)")

        let patient = Asset(
            byteSource: alsoStuck, name: "store://patient.mp4",
            options: AssetOptions(openTimeout: .seconds(60), stallTimeout: .seconds(60)))
        let session = DecodeSession(asset: patient)
        let running = Task { await session.run(into: NullSink()) }
        try await Task.sleep(for: .milliseconds(500))
        let cancelledAt = ContinuousClock.now
        let control = WakeLateness(sleeping: .seconds(1))
        running.cancel()
        let cancelled = await withDeadline(Bound.seconds(10), "a cancelled session whose reads block") { await running.value }
        let waited = ContinuousClock.now - cancelledAt
        let late = await control.measured()
        #expect(cancelled?.status == .cancelled, "\(String(describing: cancelled?.status))")
        #expect(waited < late + .seconds(3), "answered \(waited) after its cancel (a control sleep woke \(late) late)")
    }

    @Test(arguments: ["h264-aac.mp4", "hevc-aac.mkv"])
    func memoryGivesWhatTheFileGives(name: String) async throws {
        let path = try Fixtures.clip(name)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let file = Asset(path: path), memory = Asset(byteSource: MemoryByteSource(data), name: name)
        let (fileTracks, fileDuration) = try await file.load(.tracks, .duration)
        let (memoryTracks, memoryDuration) = try await memory.load(.tracks, .duration)
        #expect(fileTracks == memoryTracks)
        #expect(fileDuration == memoryDuration)
        let (fileResult, fileFrames) = await Self.frames(file)
        let (memoryResult, memoryFrames) = await Self.frames(memory)
        #expect(memoryResult.status == .completed && fileResult.status == .completed)
        #expect(!fileFrames.isEmpty && memoryFrames == fileFrames, "\(memoryFrames.count) of \(fileFrames.count) frames")
        // Exact images at times of our choosing (several readers of one source at once).
        let times = [0.3, 1.1, 0.05, 1.9, 1.1].map { MediaTime(seconds: $0) }
        var fromFile: [GeneratedImage?] = [], fromMemory: [GeneratedImage?] = []
        for await result in AssetImageGenerator(asset: file).images(for: times) { fromFile.append(result.image) }
        for await result in AssetImageGenerator(asset: memory).images(for: times) { fromMemory.append(result.image) }
        #expect(fromFile.count == times.count && fromFile.allSatisfy { $0 != nil })
        #expect(fromMemory == fromFile)
    }

    @Test func aStreamIsReadOnceInOrderAndCannotBeOpenedAgain() async throws {
        let bytes = try await Self.transportStream()
        let source = StreamSource(bytes)
        let asset = Asset(byteSource: source, name: "upload.ts")
        let (result, frames) = await Self.frames(asset)
        let (_, fileFrames) = await Self.frames(Asset(byteSource: MemoryByteSource(bytes), name: "seekable.ts"))
        #expect(result.status == .completed, "\(result.status)")
        #expect(frames == fileFrames && !frames.isEmpty)
        let wentBack = source.wentBack.load(ordering: .relaxed)
        #expect(!wentBack, "a stream source was asked to go back")
        // Its bytes are used up: a second reader gets a typed error, not the middle of the stream.
        let (again, _) = await Self.frames(asset)
        guard case .failed(let error) = again.status else {
            Issue.record("a second read of a used-up stream should fail: \(again.status)")
            return
        }
        #expect(error.code == .seekFailed && error.file == "upload.ts")
    }

    /// A stream whose reads wait until it is let go, counting the reads from its start (one per
    /// open of it).
    final class GatedStreamSource: ByteSource {
        let stream: StreamSource
        let gate = DispatchSemaphore(value: 0)
        let opens = Atomic<Int>(0)
        /// Reads that wait at the gate (those of the first `free` bytes do not).
        let waiting = Atomic<Int>(0)
        private let letGo = Atomic<Bool>(false)
        private let free: Int64
        init(_ bytes: Data, free: Int64 = 0) {
            stream = StreamSource(bytes)
            self.free = free
        }
        var size: Int64? { nil }
        var isSeekable: Bool { false }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if offset == 0 { opens.add(1, ordering: .relaxed) }
            if offset < free {
                let limited = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, Int(free - offset))])
                return try stream.read(at: offset, into: limited)
            }
            if !letGo.load(ordering: .acquiring) {
                waiting.add(1, ordering: .relaxed)
                gate.wait()
                gate.signal()
            }
            return try stream.read(at: offset, into: buffer)
        }
        func open() {
            letGo.store(true, ordering: .releasing)
            gate.signal()
        }
    }

    /// The probe of a stream and a session of the same asset open it at once (a session does not
    /// wait for the probe; a channel's preparation neither): the session waits for the probe's
    /// open and plays from the demuxer it left. Before, both opened the stream: two readers of
    /// one stream, the second one's reads from the middle.
    @Test func aStreamsProbeAndASessionOpeningAtOnceReadItOnce() async throws {
        let bytes = try await Self.transportStream()
        let source = GatedStreamSource(bytes)
        let asset = Asset(byteSource: source, name: "upload.ts")
        async let described: [AssetTrack] = asset.load(.tracks)
        let deadline = ContinuousClock.now + Bound.seconds(10)
        while source.opens.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let opening = source.opens.load(ordering: .relaxed)
        try #require(opening == 1, "the probe did not start")
        async let played = Self.frames(asset)
        // The session's open is under way (or waiting for the probe's) when the bytes come.
        try await Task.sleep(for: .milliseconds(300))
        source.open()
        let (result, frames) = await played
        let tracks = try await described
        let (_, fileFrames) = await Self.frames(Asset(byteSource: MemoryByteSource(bytes), name: "seekable.ts"))
        #expect(result.status == .completed, "\(result.status)")
        #expect(frames == fileFrames && !frames.isEmpty, "\(frames.count) frames of \(fileFrames.count)")
        let opens = source.opens.load(ordering: .relaxed)
        #expect(opens == 1, "the stream was opened \(opens) times")
        let wentBack = source.stream.wentBack.load(ordering: .relaxed)
        #expect(!wentBack, "a read of the stream went back")
        #expect(tracks.contains { $0.mediaType == .video }, "\(tracks)")
    }

    /// A probe cancelled after it read part of a stream: the stream is used up, and a session of
    /// the asset fails with `demux.seekFailed` rather than reading it again from where the probe
    /// stopped (before: a demuxer opened on the middle of the stream).
    @Test func aStreamWhoseOpenStoppedAfterReadingIsNotOpenedAgainFromTheMiddle() async throws {
        let bytes = try await Self.transportStream()
        let source = GatedStreamSource(bytes, free: 4 * 188)
        let asset = Asset(byteSource: source, name: "upload.ts")
        let probe = Task { try await asset.load(.tracks) }
        let deadline = ContinuousClock.now + Bound.seconds(10)
        while source.waiting.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let waiting = source.waiting.load(ordering: .relaxed)
        try #require(waiting == 1, "the probe did not read its first bytes")
        await asset.cancelLoading()
        source.open()
        let cancelled = await probe.result
        #expect(throws: PlayheadError.self) { try cancelled.get() }
        // The probe's thread has ended its open (the session would wait for it otherwise).
        let (result, frames) = await Self.frames(asset)
        guard case .failed(let error) = result.status else {
            Issue.record("a session of a stream read in part should fail: \(result.status), \(frames.count) frames")
            return
        }
        #expect(error.code == .seekFailed && error.file == "upload.ts", "\(error)")
        let opens = source.opens.load(ordering: .relaxed)
        #expect(opens == 1, "the stream was opened \(opens) times")
    }

    @Test func aFailingSourceIsATypedErrorNamingIt() async throws {
        let data = try await Self.transportStream()
        // At once: the open fails.
        let none = Asset(byteSource: FailingSource(bytes: data, good: 0), name: "store://bucket/none.ts")
        do {
            _ = try await none.load(.tracks)
            Issue.record("a source that fails every read should not open")
        } catch {
            #expect(error.code == .readFailed && error.message.contains("the store said no"), "\(error)")
            #expect(error.file == "store://bucket/none.ts")
        }
        // Midway: the session fails with the source's error, after the frames it could read.
        let half = Asset(byteSource: FailingSource(bytes: data, good: Int64(data.count / 2)), name: "half.ts")
        let (result, frames) = await Self.frames(half)
        guard case .failed(let error) = result.status else {
            Issue.record("a source failing midway should fail the session: \(result.status)")
            return
        }
        #expect(error.code.family == .io && error.message.contains("the store said no"), "\(error)")
        #expect(frames.count > 5 && frames.count < 50, "\(frames.count)")
    }
}
