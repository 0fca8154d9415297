import Foundation
import Synchronization
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Bytes the caller fetches asynchronously: the same frames, sound, images and properties as the
/// file whatever sizes the reads come back in; a read that never returns ends in `io.timedOut`
/// within the stall timeout (+ 2 s) whether or not it honours cancellation; a cancellation stops
/// a hanging read promptly; a failing or over-full read is a typed error naming the source.
@Suite struct AsyncByteSourceTests {
    /// Serves `bytes`, each read cut to a random length and some after a short wait; from
    /// `hangFrom` on, a read waits `hang` (cancellably, or not) before it answers.
    final class RemoteSource: AsyncByteSource {
        let bytes: Data
        let hangFrom: Int64
        let hang: Duration
        let honoursCancellation: Bool
        let seed: UInt64
        let chunk: Int
        /// Reads hang only once armed.
        let armed: Atomic<Bool>
        let reads = Atomic<Int>(0)
        /// A read has started to hang.
        let hanging = Atomic<Bool>(false)
        /// A read that hung returned after all (its bytes must go nowhere).
        let returnedLate = Atomic<Bool>(false)

        init(
            _ bytes: Data, hangFrom: Int64 = .max, hang: Duration = .seconds(3600), honoursCancellation: Bool = true, seed: UInt64 = 1,
            chunk: Int = .max, armed: Bool = true
        ) {
            self.bytes = bytes
            self.hangFrom = hangFrom
            self.hang = hang
            self.honoursCancellation = honoursCancellation
            self.seed = seed
            self.chunk = chunk
            self.armed = Atomic(armed)
        }

        var size: Int64? { Int64(bytes.count) }

        func read(at offset: Int64, maxLength: Int) async throws -> Data {
            let n = reads.wrappingAdd(1, ordering: .relaxed).newValue
            if offset >= hangFrom, armed.load(ordering: .relaxed) {
                hanging.store(true, ordering: .relaxed)
                if honoursCancellation {
                    try await Task.sleep(for: hang)
                } else {
                    // Deaf to cancellation, as a client that cannot stop its request.
                    let (seconds, attoseconds) = hang.components
                    let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { done.resume() }
                    }
                }
                returnedLate.store(true, ordering: .relaxed)
            }
            // A cheap, repeatable scatter of lengths and waits.
            var mix = (UInt64(n) &+ seed) &* 0x9E37_79B9_7F4A_7C15
            mix ^= mix >> 29
            if mix % 7 == 0 || !armed.load(ordering: .relaxed) { try await Task.sleep(for: .microseconds(300)) }
            guard offset < Int64(bytes.count) else { return Data() }
            let length = 1 + Int(mix % UInt64(min(maxLength, chunk)))
            let start = bytes.startIndex + Int(offset)
            return bytes.subdata(in: start..<min(bytes.endIndex, start + length))
        }
    }

    struct Refused: Error, CustomStringConvertible { var description: String { "the store refused the range" } }

    struct Throwing: AsyncByteSource {
        var size: Int64? { 1_000_000 }
        func read(at offset: Int64, maxLength: Int) async throws -> Data { throw Refused() }
    }

    struct Overfull: AsyncByteSource {
        var size: Int64? { 10_000_000 }
        func read(at offset: Int64, maxLength: Int) async throws -> Data { Data(count: maxLength + 1) }
    }

    static func frames(_ asset: Asset) async -> (DecodeResult, [InMemorySink.Frame], [Int16]) {
        let sink = InMemorySink(), audio = InMemoryAudioSink()
        let result = await DecodeSession(asset: asset).run(into: sink, audio: audio)
        return (result, sink.frames, audio.samples)
    }

    @Test(arguments: [("h264-aac.mp4", UInt64(1)), ("hevc-aac.mkv", UInt64(2)), ("h264-aac.mp4", UInt64(3))])
    func readsOfAnySizeGiveWhatTheFileGives(name: String, seed: UInt64) async throws {
        let path = try Fixtures.clip(name)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let file = Asset(path: path), remote = Asset(byteSource: RemoteSource(data, seed: seed), name: "store://" + name)
        let (fileTracks, fileDuration) = try await file.load(.tracks, .duration)
        let (remoteTracks, remoteDuration) = try await remote.load(.tracks, .duration)
        #expect(fileTracks == remoteTracks)
        #expect(fileDuration == remoteDuration)
        let (fileResult, fileFrames, fileSound) = await Self.frames(file)
        let (remoteResult, remoteFrames, remoteSound) = await Self.frames(remote)
        #expect(remoteResult.status == .completed && fileResult.status == .completed, "\(remoteResult.status)")
        #expect(!fileFrames.isEmpty && remoteFrames == fileFrames, "\(remoteFrames.count) of \(fileFrames.count) frames")
        #expect(!fileSound.isEmpty && remoteSound == fileSound, "\(remoteSound.count) of \(fileSound.count) samples")
        // Exact images at unsorted, repeated times between frames (seeks through the source).
        var generator = SystemRandomNumberGenerator()
        let times =
            (0..<6).map { _ in MediaTime(seconds: Double.random(in: 0..<1.9, using: &generator)) } + [
                MediaTime(seconds: 0.5), MediaTime(seconds: 0.5),
            ]
        var fromFile: [GeneratedImage?] = [], fromRemote: [GeneratedImage?] = []
        for await result in AssetImageGenerator(asset: file).images(for: times) { fromFile.append(result.image) }
        for await result in AssetImageGenerator(asset: remote).images(for: times) { fromRemote.append(result.image) }
        #expect(fromFile.count == times.count && fromFile.allSatisfy { $0 != nil })
        #expect(fromRemote == fromFile, "at \(times.map(\.seconds))")
    }

    @Test(arguments: [true, false])
    func aReadThatNeverAnswersTimesOut(honoursCancellation: Bool) async throws {
        // A stream read in order, in reads of at most 2 KB: the hang comes after some frames.
        let data = try await ByteSourceTests.transportStream()
        let options = AssetOptions(openTimeout: .seconds(30), stallTimeout: .seconds(1))
        // Midway: the frames before it, then io.timedOut.
        let midway = RemoteSource(data, hangFrom: Int64(data.count / 2), hang: .seconds(8), honoursCancellation: honoursCancellation, chunk: 2048)
        let start = ContinuousClock.now
        let (result, frames, _) = await Self.frames(Asset(byteSource: midway, name: "store://midway.ts", options: options))
        let took = ContinuousClock.now - start
        guard case .failed(let error) = result.status else {
            Issue.record("a source that stops answering should fail: \(result.status)")
            return
        }
        #expect(error.code == .timedOut && error.file == "store://midway.ts", "\(error)")
        #expect(took < .seconds(6), "\(took)")
        #expect(frames.count > 5, "\(frames.count)")
        let wasHanging = midway.hanging.load(ordering: .relaxed)
        #expect(wasHanging)
        // At the start: the key load fails the same way, bounded by the stall timeout.
        let silent = RemoteSource(data, hangFrom: 0, hang: .seconds(8), honoursCancellation: honoursCancellation)
        let opening = ContinuousClock.now
        do {
            _ = try await Asset(byteSource: silent, name: "store://silent.mp4", options: options).load(.tracks)
            Issue.record("a source that never answers should not open")
        } catch {
            #expect(error.code == .timedOut && error.file == "store://silent.mp4", "\(error)")
        }
        #expect(ContinuousClock.now - opening < .seconds(6))
        // The open timeout bounds an opening made of many slow reads as well.
        let shortOpen = AssetOptions(openTimeout: .seconds(1), stallTimeout: .seconds(30))
        let slowOpen = ContinuousClock.now
        do {
            _ = try await Asset(
                byteSource: RemoteSource(data, hangFrom: 0, hang: .seconds(8), honoursCancellation: honoursCancellation),
                name: "store://slow.mp4", options: shortOpen
            ).load(.tracks)
            Issue.record("a source that never answers should not open")
        } catch {
            #expect(error.code == .timedOut, "\(error)")
        }
        #expect(ContinuousClock.now - slowOpen < .seconds(6))
    }

    /// A 12 s stream (long enough that opening it reads only its start).
    static func longStream() async throws -> Data {
        Data(
            try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                    "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-f", "mpegts", "-",
                ]))
    }

    @Test func cancellingStopsAHangingReadPromptly() async throws {
        let data = try await Self.longStream()
        let options = AssetOptions(openTimeout: .seconds(60), stallTimeout: .seconds(60))
        // While playing (the source armed once frames come: opening reads its end for the
        // duration): the frames before the hang, then cancelled within seconds, not the hour the
        // read would take (3 s: a loaded machine's stalls, never the read's end).
        let source = RemoteSource(data, hangFrom: 0, honoursCancellation: false, chunk: 4096, armed: false)
        let asset = Asset(byteSource: source, name: "store://cancel.ts", options: options)
        let sink = InMemorySink()
        let session = Task { await DecodeSession(asset: asset).run(into: sink) }
        let deadline = ContinuousClock.now + .seconds(20)
        while sink.frames.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        source.armed.store(true, ordering: .relaxed)
        while !source.hanging.load(ordering: .relaxed), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let reachedHang = source.hanging.load(ordering: .relaxed)
        #expect(reachedHang && !sink.frames.isEmpty, "the source was never read up to its hang")
        #expect(sink.frames.count < 360, "the whole stream was read before the hang: \(sink.frames.count)")
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        let control = WakeLateness(sleeping: .seconds(1))
        session.cancel()
        let result = await session.value
        let waited = ContinuousClock.now - cancelled
        let late = await control.measured()
        #expect(waited < late + .seconds(3), "answered \(waited) after its cancel (a control sleep woke \(late) late)")
        #expect(result.status == .cancelled, "\(result.status)")
        // While opening: the key load ends as cancelled as promptly.
        let silent = RemoteSource(data, hangFrom: 0, honoursCancellation: false)
        let load = Task { try await Asset(byteSource: silent, name: "store://opening.ts", options: options).load(.tracks) }
        while !silent.hanging.load(ordering: .relaxed), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        let cancelledLoad = ContinuousClock.now
        let loadControl = WakeLateness(sleeping: .seconds(1))
        load.cancel()
        do {
            _ = try await load.value
            Issue.record("a cancelled load should throw")
        } catch let error as PlayheadError {
            #expect(error.code == .cancelled, "\(error)")
        }
        let loadWaited = ContinuousClock.now - cancelledLoad
        let loadLate = await loadControl.measured()
        #expect(loadWaited < loadLate + .seconds(3), "the load answered \(loadWaited) after its cancel (a control sleep woke \(loadLate) late)")
    }

    @Test func aFailingOrOverfullReadIsATypedErrorNamingTheSource() async throws {
        do {
            _ = try await Asset(byteSource: Throwing(), name: "store://refused.mp4").load(.tracks)
            Issue.record("a source that throws should not open")
        } catch {
            #expect(error.code == .readFailed && error.message.contains("the store refused the range"), "\(error)")
            #expect(error.file == "store://refused.mp4")
        }
        do {
            _ = try await Asset(byteSource: Overfull(), name: "store://overfull.mp4").load(.tracks)
            Issue.record("a source that returns more than asked should not open")
        } catch {
            #expect(error.code == .readFailed && error.message.contains("when asked for at most"), "\(error)")
        }
    }
}
