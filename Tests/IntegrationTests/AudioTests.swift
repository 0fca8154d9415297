import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Audio decoding against ffmpeg's own: `ffmpeg -i clip -f s16le -` at the source's rate and channels.
@Suite struct AudioTests {
    static let clips = ["h264-aac.mp4", "hevc-aac.mkv", "vp9-opus.webm", "stereo-44k.mp4", "audio-only.m4a", "audio-only.mp3"]

    static func reference(_ path: String, rate: Int, channels: Int) async throws -> [Int16] {
        let bytes = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a:0",
                "-f", "s16le", "-ar", String(rate), "-ac", String(channels), "-",
            ])
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// End to end: `playhead play` writes each clip's audio.wav, and the WAV holds what ffmpeg
    /// decodes from the clip (within one audio frame, the same signal).
    @Test func playWritesWAVsThatMatchFFmpeg() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-wavs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let paths = try Self.clips.map { try Fixtures.clip($0) }
        let run = try await CLI.run(["play", "--out", out.path, "--format", "ppm", "--size", "16x8"] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        for (index, clip) in Self.clips.enumerated() {
            let wav = out.appendingPathComponent(String(format: "%02d-%@/audio.wav", index + 1, clip)).path
            let ours = try await Reference.wavSamples(wav)
            let info = try #require(try Fixtures.ffprobe(clip).streams.first { $0.codec_type == "audio" })
            let rate = try #require(info.sample_rate.flatMap { Int($0) }), channels = try #require(info.channels)
            let expected = try await Self.reference(paths[index], rate: rate, channels: channels)
            #expect(abs(ours.count - expected.count) <= 1152 * channels, "\(clip): \(ours.count) samples vs ffmpeg's \(expected.count)")
            #expect(Self.correlation(ours, expected) > 0.999, "\(clip)")
        }
    }

    static func correlation(_ a: [Int16], _ b: [Int16]) -> Double {
        let n = min(a.count, b.count)
        guard n > 1000 else { return 0 }
        var dot = 0.0, a2 = 0.0, b2 = 0.0
        for i in 0..<n {
            let x = Double(a[i]), y = Double(b[i])
            dot += x * y
            a2 += x * x
            b2 += y * y
        }
        return dot / (a2.squareRoot() * b2.squareRoot())
    }

    @Test(arguments: clips)
    func samplesMatchFFmpeg(clip: String) async throws {
        let path = try Fixtures.clip(clip)
        let sink = InMemoryAudioSink()
        let result = await AudioSession(source: path).run(into: sink)
        #expect(result.status == .completed)
        let info = try #require(sink.info)
        let expected = try await Self.reference(path, rate: info.sampleRate, channels: info.channelCount)
        let ours = sink.samples
        // Within one audio frame (at most 1152 samples per channel for these codecs).
        #expect(abs(ours.count - expected.count) <= 1152 * info.channelCount, "\(ours.count) samples vs ffmpeg's \(expected.count)")
        #expect(result.frames * info.channelCount == ours.count)
        // Same content over the common length: correlation of the two signals.
        let correlation = Self.correlation(ours, expected)
        #expect(correlation > 0.999, "correlation \(correlation)")
    }

    @Test func wavFileHoldsEverySampleAndLoopsAppendExactly() async throws {
        let path = try Fixtures.clip("audio-only.m4a")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-wav-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let once = await AudioSession(source: path).run(into: InMemoryAudioSink())
        // Three passes into one WAV sink: exactly three times the samples.
        let wav = folder.appendingPathComponent("audio.wav").path
        let sink = WAVSink(path: wav)
        for _ in 0..<3 {
            let pass = await AudioSession(source: path).run(into: sink, completion: .leaveOpen)
            #expect(pass.status == .completed)
        }
        try sink.finish()
        #expect(sink.framesWritten == 3 * once.frames)
        let probe = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,duration_ts",
                    "-of", "csv=p=0", wav,
                ]), as: UTF8.self)
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s16le,48000,1,\(3 * once.frames)")
        #expect(
            leftoverTemporaryFiles(in: (wav as NSString).deletingLastPathComponent).isEmpty,
            "no temporary file left")
    }

    /// One demuxer for both tracks: the session's audio is the standalone decode's, sample for
    /// sample, and the video is untouched (every frame ffprobe counts).
    @Test(arguments: clips)
    func decodeSessionDeliversAudioBesideVideo(clip: String) async throws {
        let path = try Fixtures.clip(clip)
        let alone = InMemoryAudioSink()
        _ = await AudioSession(source: path).run(into: alone)
        let audio = InMemoryAudioSink()
        let result = await DecodeSession(source: path).run(into: NullSink(), audio: audio)
        #expect(result.status == .completed)
        #expect(audio.samples.count > 1000)
        #expect(audio.samples == alone.samples, "\(audio.samples.count) samples vs \(alone.samples.count) decoded alone")
        #expect(result.audioFramesDelivered * (result.audio?.channelCount ?? 0) == audio.samples.count)
        let videoStream = try Fixtures.ffprobe(clip).streams.first { $0.codec_type == "video" }
        if let videoStream {
            #expect(result.framesDelivered == Int(try #require(videoStream.nb_read_frames)))
        } else {
            #expect(result.framesDelivered == 0)
            #expect(clip.hasPrefix("audio-only"), "only the audio-only clips have no video track")
        }
        #expect(audio.isFinished, "the session finishes the audio sink when it completes")
        let open = InMemoryAudioSink()
        _ = await DecodeSession(source: path).run(into: NullSink(), audio: open, audioCompletion: .leaveOpen)
        #expect(!open.isFinished && open.samples == alone.samples, "left open, for more sessions to feed")
    }

    /// The obvious code writes its file: a session into a WAV, a decode session into an MP4 with
    /// its sound input — each finished when the run completes, checked by ffprobe; a cancelled
    /// run's WAV is given up (a valid, shorter file), not finished as if complete.
    @Test func sessionsFinishTheirSinksWhenTheyComplete() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wav = folder + "/sound.wav"
        let sound = await AudioSession(source: try Fixtures.clip("audio-only.m4a")).run(into: WAVSink(path: wav))
        #expect(sound.status == .completed)
        let samples = String(
            decoding: try await Reference.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", wav]),
            as: UTF8.self)
        #expect(
            Int(samples.trimmingCharacters(in: .whitespacesAndNewlines)) == sound.frames, "\(samples) samples in the WAV, \(sound.frames) decoded")

        let mp4 = folder + "/both.mp4"
        let sink = MP4Sink(path: mp4)
        let both = await DecodeSession(source: try Fixtures.clip("h264-aac.mp4")).run(into: sink, audio: sink.soundInput())
        #expect(both.status == .completed, "\(both.status)")
        let streams = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", "-of", "csv=p=0", mp4]),
            as: UTF8.self)
        #expect(streams.contains("video,\(both.framesDelivered)") && streams.contains("audio,"), "\(streams)")

        // A picture without sound into an MP4 with a sound input: the session's finish tells the
        // file there is no sound.
        let silent = folder + "/picture.mp4"
        let pictureSink = MP4Sink(path: silent)
        let picture = await DecodeSession(source: try Fixtures.clip("video-only.mp4")).run(into: pictureSink, audio: pictureSink.soundInput())
        #expect(picture.status == .completed && FileManager.default.fileExists(atPath: silent), "\(picture.status)")

        // Cancelled at once: the WAV is given up, never finished as complete.
        let cut = folder + "/cut.wav"
        let session = AudioSession(source: try Fixtures.clip("audio-only.m4a"))
        session.cancel()
        let cancelled = await session.run(into: WAVSink(path: cut))
        #expect(cancelled.status == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: cut), "nothing written, nothing kept")
    }

    /// The audio ends where the video does: a frame limit or an end time cuts it to the sample.
    @Test func audioStopsWithTheVideo() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let limited = InMemoryAudioSink()
        let byFrames = await DecodeSession(source: path, configuration: DecodeConfiguration(frameLimit: 10)).run(into: NullSink(), audio: limited)
        #expect(byFrames.status == .completed)
        #expect(byFrames.framesDelivered == 10)
        #expect(limited.samples.count == 10 * 48000 / 25, "10 frames at 25 fps are 0.4 s: 19200 samples, got \(limited.samples.count)")
        let full = InMemoryAudioSink()
        _ = await AudioSession(source: path).run(into: full)
        #expect(limited.samples == Array(full.samples[0..<19200]))
        let windowed = InMemoryAudioSink()
        let range = DecodeConfiguration(startTime: MediaTime(value: 1, timescale: 2), endTime: MediaTime(value: 3, timescale: 2))
        let byRange = await DecodeSession(source: path, configuration: range).run(into: NullSink(), audio: windowed)
        #expect(byRange.status == .completed)
        #expect(windowed.samples.count == 48000, "0.5 s to 1.5 s is 48000 samples, got \(windowed.samples.count)")
        #expect(windowed.samples == Array(full.samples[24000..<72000]))
    }

    /// Conversion to another rate and channel count (what a player does to match items).
    @Test func sessionConvertsToTheFormatAskedFor() async throws {
        let path = try Fixtures.clip("vp9-opus.webm")
        let sink = InMemoryAudioSink()
        let configuration = DecodeConfiguration(audioFormat: AudioFormat(sampleRate: 44100, channelCount: 2))
        let result = await DecodeSession(source: path, configuration: configuration).run(into: NullSink(), audio: sink)
        #expect(result.status == .completed)
        #expect(sink.info?.sampleRate == 44100)
        #expect(sink.info?.channelCount == 2)
        let frames = sink.samples.count / 2
        #expect(abs(frames - 2 * 44100) <= 1024, "2 s at 44.1 kHz, got \(frames) frames")
        // Both channels carry the mono source.
        #expect(stride(from: 0, to: sink.samples.count, by: 2).allSatisfy { sink.samples[$0] == sink.samples[$0 + 1] })
    }

    /// The audio output fails: the session fails, and its video output is not passed off as
    /// complete either: what the Y4M file got is kept as a valid, shorter file, marked partial.
    @Test func anAudioSinkFailureAbortsTheVideoOutput() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let y4m = folder.appendingPathComponent("frames.y4m").path
        let result = await DecodeSession(source: path).run(into: Y4MSink(path: y4m), audio: FailingAudioSink(after: 5))
        guard case .failed(let error) = result.status else {
            Issue.record("expected a failure, got \(result.status)")
            return
        }
        #expect(error.code == .writeFailed)
        if FileManager.default.fileExists(atPath: y4m) {
            let frames = String(
                decoding: try await Reference.run(
                    "/usr/bin/ffprobe",
                    [
                        "-v", "error", "-count_frames", "-show_entries",
                        "stream=nb_read_frames", "-of", "csv=p=0", y4m,
                    ]), as: UTF8.self)
            #expect(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)) == result.framesDelivered, "the kept file holds what was written")
        } else {
            #expect(result.framesDelivered == 0, "frames were written, so the file must be kept")
        }
        #expect(leftoverTemporaryFiles(in: folder.path).isEmpty, "no temporary file left")
    }

    @Test func fileWithoutAudioSaysSo() async throws {
        let result = await AudioSession(source: try Fixtures.clip("video-only.mp4")).run(into: InMemoryAudioSink())
        guard case .failed(let error) = result.status else {
            Issue.record("a file without audio must fail, got \(result.status)")
            return
        }
        #expect(error.code == .noStreams)
    }
}
