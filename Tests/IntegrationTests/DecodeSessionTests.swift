import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Real decodes of the sample clips, checked against ffprobe's counts and ffmpeg's pixels.
@Suite struct DecodeSessionTests {
    @Test(arguments: Fixtures.videoClips)
    func framesDecodedEqualFFprobeCount(clip: String) async throws {
        let path = try Fixtures.clip(clip)
        let expected = try Fixtures.ffprobe(clip)
        let video = try #require(expected.streams.first { $0.codec_type == "video" })
        let count = try #require(video.nb_read_frames.flatMap(Int.init))
        let sink = NullSink()
        let result = await DecodeSession(source: path).run(into: sink)
        #expect(result.status == .completed)
        #expect(result.framesDecoded == count)
        #expect(result.framesDelivered == count)
        #expect(result.damagedPackets == 0)
    }

    @Test(arguments: Fixtures.videoClips)
    func firstAndMiddleFramesMatchFFmpeg(clip: String) async throws {
        let path = try Fixtures.clip(clip)
        let sink = InMemorySink(pixelFormat: .rgb24)
        let result = await DecodeSession(source: path, configuration: DecodeConfiguration(appliesPreferredTrackTransform: false)).run(into: sink)
        #expect(result.status == .completed)
        let frames = sink.frames
        try #require(frames.count > 2)
        for index in [0, frames.count / 2] {
            let reference = try await Reference.rgbFrame(path, index: index)
            try #require(reference.count == frames[index].bytes.count, "frame \(index) sizes differ")
            let psnr = Reference.psnr(frames[index].bytes, reference)
            #expect(psnr >= 40, "\(clip) frame \(index): PSNR \(psnr) dB")
        }
    }

    /// A session cancelled while its pictures lag its sound (a slow frame sink) keeps a WAV that
    /// ends where its last delivered frame ends, not seconds later (ffprobe's sample count).
    @Test func aCancelledSessionKeepsItsSoundToItsLastFrame() async throws {
        /// Takes ten frames slowly, then holds the eleventh until the test has cancelled the
        /// session: the cut lands at the same frame however loaded the machine is.
        final class SlowSink: FrameSink, @unchecked Sendable {
            // @unchecked Sendable: the session's output thread calls it, one call at a time;
            // the counter is locked and the semaphore is thread-safe.
            let pixelFormat = OutputPixelFormat.yuv420p
            let written = Locked(0)
            let release = DispatchSemaphore(value: 0)
            func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
            func write(_ frame: VideoFrame) throws(PlayheadError) {
                if written.withLock({ $0 }) == 10 { release.wait() } else { usleep(20_000) }
                written.withLock { $0 += 1 }
            }
            func finish() throws(PlayheadError) {}
            func abort() {}
        }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = SlowSink()
        let wav = WAVSink(path: folder + "/sound.wav")
        let run = Task { await DecodeSession(source: try Fixtures.clip("h264-aac.mp4")).run(into: sink, audio: wav) }
        while sink.written.withLock({ $0 }) < 10 { try await Task.sleep(for: .milliseconds(5)) }
        run.cancel()
        sink.release.signal()
        let result = try await run.value
        #expect(result.status == .cancelled && result.framesDelivered <= 11, "\(result.status), \(result.framesDelivered) frames")
        let last = try #require(result.lastPresentationTime)
        let first = try #require(result.firstPresentationTime)
        // 25 fps: the last frame ends 40 ms after its time.
        let end = (last - first).seconds + 0.04
        let frames = try #require(try await Reference.wavFrames(folder + "/sound.wav"))
        let rate = try #require(result.audio?.sampleRate)
        let sound = Double(frames) / Double(rate)
        #expect(wav.isPartial && abs(sound - end) < 0.002, "\(sound) s of sound kept with frames to \(end) s")
    }

    /// A picture that reached its end (a track shorter than the sound, a cover picture) is no
    /// picture stopped short: a session cancelled while its sound goes on keeps that sound whole.
    @Test func aCancelledSessionKeepsTheSoundPastAPictureThatEnded() async throws {
        /// A WAV told where the picture stopped, that holds its next buffer once two seconds are
        /// written until the test has cancelled the session (the cut lands there however loaded
        /// the machine is).
        final class SlowWAV: AudioSink, SoundEndCutting, @unchecked Sendable {
            // @unchecked Sendable: the session's audio thread calls it, one call at a time; the
            // counter is locked and the semaphore is thread-safe.
            let wav: WAVSink
            let written = Locked(0)
            let release = DispatchSemaphore(value: 0)
            init(_ wav: WAVSink) { self.wav = wav }
            func begin(_ info: AudioStreamInfo) throws(PlayheadError) { try wav.begin(info) }
            func write(_ buffer: AudioBuffer) throws(PlayheadError) {
                if written.withLock({ $0 }) >= 96_000 { release.wait() }
                try wav.write(buffer)
                written.withLock { $0 += buffer.frameCount }
            }
            func finish() throws(PlayheadError) { try wav.finish() }
            func abort() { wav.abort() }
            func keepSound(until seconds: Double) { wav.keepSound(until: seconds) }
        }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/short-picture.mp4"
        try await Reference.pictureShorterThanSound(at: clip, picture: "0.2", sound: "sine=frequency=440:sample_rate=48000:duration=20")
        let sink = SlowWAV(WAVSink(path: folder + "/sound.wav"))
        let pictures = InMemorySink(pixelFormat: .yuv420p)
        let run = Task { await DecodeSession(source: clip).run(into: pictures, audio: sink) }
        // Two seconds of sound written (then held), and the 0.2 s picture's five frames out: the
        // demux thread read on past the held sound, so the decoder gave its last frames.
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while sink.written.withLock({ $0 }) < 96_000 || pictures.frames.count < 5, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        run.cancel()
        sink.release.signal()
        let result = await run.value
        #expect(result.status == .cancelled && result.framesDelivered == 5, "\(result.status), \(result.framesDelivered) frames")
        let frames = try #require(try await Reference.wavFrames(folder + "/sound.wav"))
        #expect(frames >= 96_000, "\(frames) samples kept past a 0.2 s picture that ended")
    }

    /// A picture that ends long before its sound (one second of frames over twelve of sound)
    /// reaches its last frame while the sound is still held back (as a realtime player holds it):
    /// the demux thread reads the sound on past its full route, so the video decoder learns that
    /// the data ended and gives the frames it held. The sound then comes whole and in order
    /// (ffmpeg's decode).
    @Test func aPictureThatEndsEarlyGivesItsLastFramesWhileTheSoundIsHeld() async throws {
        /// Holds the sound's first buffer until released.
        final class HeldSound: AudioSink, @unchecked Sendable {
            // @unchecked Sendable: the session's audio thread calls it, one call at a time;
            // the semaphore is thread-safe and `inner` is Sendable.
            let inner = InMemoryAudioSink()
            let release = DispatchSemaphore(value: 0)
            private var held = false
            func begin(_ info: AudioStreamInfo) throws(PlayheadError) { try inner.begin(info) }
            func write(_ buffer: AudioBuffer) throws(PlayheadError) {
                if !held {
                    held = true
                    release.wait()
                }
                try inner.write(buffer)
            }
            func finish() throws(PlayheadError) { try inner.finish() }
            func abort() { inner.abort() }
        }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/short-picture.mp4"
        try await Reference.pictureShorterThanSound(
            at: clip, picture: "1", sound: "aevalsrc=sin(2*PI*(200+40*t)*t):s=48000:d=12", video: ["-bf", "3"])
        let frames = try await Reference.frameTimes(clip)
        let sound = HeldSound()
        let pictures = InMemorySink(pixelFormat: .yuv420p)
        let run = Task { await DecodeSession(source: clip).run(into: pictures, audio: sound) }
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while pictures.frames.count < frames.count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let reached = pictures.frames.count
        sound.release.signal()
        #expect(reached == frames.count, "\(reached) of \(frames.count) frames while the sound was held")
        let result = await run.value
        #expect(result.status == .completed && result.framesDelivered == frames.count)
        let info = try #require(sound.inner.info)
        let expected = try await AudioTests.reference(clip, rate: info.sampleRate, channels: info.channelCount)
        let ours = sound.inner.samples
        #expect(abs(ours.count - expected.count) <= 1024 * info.channelCount, "\(ours.count) samples vs ffmpeg's \(expected.count)")
        let correlation = AudioTests.correlation(ours, expected)
        #expect(correlation > 0.999, "the sound in order: correlation \(correlation)")
    }

    @Test func rotatedClipComesOutAsADisplayShowsIt() async throws {
        let path = try Fixtures.clip("rotated-90.mp4")
        let sink = InMemorySink(limit: 1)
        let result = await DecodeSession(source: path, configuration: DecodeConfiguration(frameLimit: 1)).run(into: sink)
        #expect(result.outputSize == PixelSize(width: 180, height: 320))
        let frame = try #require(sink.frames.first)
        #expect(frame.size == PixelSize(width: 180, height: 320))
        // ffmpeg turns by the display matrix too.
        let reference = try await Reference.rgbFrame(path, index: 0, autorotate: true)
        #expect(Reference.psnr(frame.bytes, reference) >= 40)
    }

    @Test func anamorphicClipComesOutWide() async throws {
        let sink = InMemorySink(limit: 1)
        let result = await DecodeSession(source: try Fixtures.clip("anamorphic.mp4"), configuration: DecodeConfiguration(frameLimit: 1)).run(
            into: sink)
        #expect(result.outputSize == PixelSize(width: 320, height: 180))
        // Matches ffmpeg's own scaling of the stored picture to the displayed size.
        let reference = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", try Fixtures.clip("anamorphic.mp4"),
                "-vf", "scale=320:180", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
            ])
        let frame = try #require(sink.frames.first)
        #expect(Reference.psnr(frame.bytes, reference) >= 30)
    }

    @Test func aspectFitPillarboxesA4x3ClipIn16x9() async throws {
        let frame = try await firstFrame("4x3.mp4", size: PixelSize(width: 640, height: 360), gravity: .resizeAspect)
        #expect(frame.size == PixelSize(width: 640, height: 360))
        // 4:3 at height 360 is 480 wide: bars of 80 columns on each side.
        #expect(columnsAreBlack(frame, 0..<80))
        #expect(columnsAreBlack(frame, 560..<640))
        #expect(!columnsAreBlack(frame, 80..<82))
        #expect(!columnsAreBlack(frame, 558..<560))
    }

    @Test func aspectFillHasNoBars() async throws {
        let frame = try await firstFrame("4x3.mp4", size: PixelSize(width: 640, height: 360), gravity: .resizeAspectFill)
        #expect(!columnsAreBlack(frame, 0..<2))
        #expect(!columnsAreBlack(frame, 638..<640))
        #expect(!rowsAreBlack(frame, 0..<2))
    }

    @Test func stretchFillsTheCanvas() async throws {
        let frame = try await firstFrame("portrait.mp4", size: PixelSize(width: 640, height: 360), gravity: .resize)
        #expect(!columnsAreBlack(frame, 0..<2))
        #expect(!columnsAreBlack(frame, 638..<640))
    }

    @Test func rotatedClipIsPillarboxedUpright() async throws {
        // Shown 180x320 → fit into 640x360 is 203x360 (rgb needs no even alignment), centered.
        let frame = try await firstFrame("rotated-90.mp4", size: PixelSize(width: 640, height: 360), gravity: .resizeAspect)
        #expect(columnsAreBlack(frame, 0..<218))
        #expect(columnsAreBlack(frame, 422..<640))
        #expect(!columnsAreBlack(frame, 220..<420))
    }

    @Test func framesCarryTimesAndIndices() async throws {
        let sink = InMemorySink(limit: 50)
        let result = await DecodeSession(
            source: try Fixtures.clip("h264-aac.mp4"), configuration: DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18))
        ).run(into: sink)
        #expect(result.status == .completed)
        let frames = sink.frames
        #expect(frames.map(\.index) == Array(0..<frames.count))
        for frame in frames {
            #expect(frame.presentationTime == MediaTime(value: Int64(frame.index), timescale: 25))
            #expect(frame.duration == MediaTime(value: 1, timescale: 25))
        }
        #expect(result.firstPresentationTime == .zero)
        #expect(result.lastPresentationTime == MediaTime(value: 49, timescale: 25))
        #expect(sink.isFinished)
    }

    @Test func frameLimitStopsEarlyAndCompletes() async throws {
        let sink = InMemorySink()
        let result = await DecodeSession(source: try Fixtures.clip("h264-aac.mp4"), configuration: DecodeConfiguration(frameLimit: 7)).run(into: sink)
        #expect(result.status == .completed)
        #expect(result.framesDelivered == 7)
        #expect(sink.frames.count == 7)
    }

    @Test func cancellingMidDecodeStopsPromptly() async throws {
        let session = DecodeSession(source: try Fixtures.clip("h264-aac.mp4"))
        let sink = CancellingSink(after: 5, cancel: { session.cancel() })
        let result = await session.run(into: sink)
        #expect(result.status == .cancelled)
        #expect(result.framesDelivered >= 5 && result.framesDelivered < 50)
        #expect(sink.aborted)
    }

    @Test func cancellingTheTaskCancelsTheSession() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        // 200 ms a frame: ten seconds of work, so the cancel lands part way however loaded the machine.
        let task = Task { await DecodeSession(source: path).run(into: SlowSink(microseconds: 200_000)) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let result = await task.value
        #expect(result.status == .cancelled)
        #expect(result.framesDelivered < 50)
    }

    /// A file cut short fails as truncated (its index promises more data than there is).
    @Test func aCutFileFailsAsTruncated() async throws {
        let clip = "damaged-cut.mp4"
        let result = await DecodeSession(source: try Fixtures.clip(clip)).run(into: NullSink())
        #expect(result.framesDelivered > 0)
        guard case .failed(let error) = result.status else {
            Issue.record("\(clip) should be reported failed, got \(result.status)")
            return
        }
        #expect(error.file?.hasSuffix(clip) == true)
        #expect(error.code == .truncated, "\(error)")
    }

    /// A complete file with damaged data inside is decoded past the damage and completes, with
    /// the damage counted; strict makes it a failure.
    @Test func damageIsDecodedPastAndCounted() async throws {
        let clip = try Fixtures.clip("damaged-zeroed.mp4")
        let lenient = await DecodeSession(source: clip).run(into: NullSink())
        #expect(lenient.status == .completed)
        #expect(lenient.damagedPackets > 0)
        #expect(lenient.firstDamage?.file?.hasSuffix("damaged-zeroed.mp4") == true)
        #expect(lenient.framesDelivered > 0)
        let strict = await DecodeSession(source: clip, configuration: DecodeConfiguration(strict: true)).run(into: NullSink())
        guard case .failed(let error) = strict.status else {
            Issue.record("strict: damage must fail the run, got \(strict.status)")
            return
        }
        #expect(error.code.family == .decode)
        #expect(strict.damagedPackets == lenient.damagedPackets)
    }

    @Test func badFilesFailBeforeAnyFrame() async throws {
        for name in Fixtures.badFiles {
            let sink = InMemorySink()
            let result = await DecodeSession(source: try Fixtures.clip(name)).run(into: sink)
            guard case .failed(let error) = result.status else {
                Issue.record("\(name) should fail")
                continue
            }
            #expect(error.code.family == .demux)
            #expect(result.framesDelivered == 0)
            #expect(!sink.isFinished)
        }
        let audioOnly = await DecodeSession(source: try Fixtures.clip("audio-only.m4a")).run(into: NullSink())
        #expect(
            audioOnly.status
                == .failed(
                    PlayheadError(
                        code: .noVideoTrack, message: "no video track to decode (only audio #0 aac)", file: try Fixtures.clip("audio-only.m4a"))))
    }

    @Test func unwritableOutputFailsTheSession() async throws {
        let result = await DecodeSession(source: try Fixtures.clip("h264-aac.mp4")).run(
            into: ImageSequenceSink(directory: "/dev/null/frames", format: .png))
        guard case .failed(let error) = result.status else {
            Issue.record("writing under /dev/null should fail, got \(result.status)")
            return
        }
        #expect(error.code == .writeFailed)
        #expect(result.framesDelivered == 0)
    }

    // MARK: Helpers

    private func firstFrame(_ clip: String, size: PixelSize, gravity: VideoGravity) async throws -> InMemorySink.Frame {
        let sink = InMemorySink(limit: 1)
        let configuration = DecodeConfiguration(outputSize: size, gravity: gravity, frameLimit: 1)
        let result = await DecodeSession(source: try Fixtures.clip(clip), configuration: configuration).run(into: sink)
        #expect(result.status == .completed)
        return try #require(sink.frames.first)
    }

    private func columnsAreBlack(_ frame: InMemorySink.Frame, _ columns: Range<Int>) -> Bool {
        for y in 0..<frame.size.height {
            for x in columns {
                let i = (y * frame.size.width + x) * 3
                if frame.bytes[i] > 8 || frame.bytes[i + 1] > 8 || frame.bytes[i + 2] > 8 { return false }
            }
        }
        return true
    }

    private func rowsAreBlack(_ frame: InMemorySink.Frame, _ rows: Range<Int>) -> Bool {
        for y in rows {
            for x in 0..<frame.size.width {
                let i = (y * frame.size.width + x) * 3
                if frame.bytes[i] > 8 || frame.bytes[i + 1] > 8 || frame.bytes[i + 2] > 8 { return false }
            }
        }
        return true
    }
}
