import Foundation
import Playhead
import Testing

/// Every pass of every loop and playlist carries the source's samples exactly: `play --loop`,
/// `play --queue --loop`, a `PlayerLooper`, a composition's looping layer and its playlist — each
/// pass compared, sample for sample, with ffmpeg's decode of the source, for AAC (MP4), Opus
/// (WebM), MP3 (Matroska) and PCM (QuickTime) sound. Each check runs several times: a seam that
/// depends on timing (which demuxer a pass gets, how far another thread has read) shows up as
/// passes that differ from run to run.
@Suite(.serialized) struct SeamTests {
    /// A short clip: 0.28 s of a counting picture (7 frames at 25 fps) over white noise (48 kHz mono;
    /// noise, so that a sample lost, doubled or decoded without its pre-roll anywhere shows).
    struct Clip: Sendable, CustomStringConvertible {
        var name: String
        var codecs: [String]
        var description: String { name }
    }

    static let clips = [
        Clip(name: "aac.mp4", codecs: ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "96k"]),
        Clip(name: "opus.webm", codecs: ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libopus", "-b:a", "64k"]),
        Clip(name: "mp3.mkv", codecs: ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "libmp3lame", "-b:a", "96k"]),
        Clip(name: "pcm.mov", codecs: ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "pcm_s16le"]),
    ]

    /// Makes `clip` in `folder` (the noise seeded by `seed`).
    static func make(_ clip: Clip, in folder: String, seed: Int = 7) async throws -> String {
        let path = folder + "/" + clip.name
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-y",
                "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=0.28",
                "-f", "lavfi", "-i", "anoisesrc=color=white:seed=\(seed):sample_rate=48000:duration=0.28:amplitude=0.5",
            ]
                + clip.codecs + ["-pix_fmt", "yuv420p", path])
        return path
    }

    /// Interleaved 16-bit samples of `path`'s audio as ffmpeg decodes it (its own rate and channels).
    static func samples(_ path: String) async throws -> [Int16] {
        let bytes = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a:0",
                "-f", "s16le", "-",
            ])
        return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// Where `path`'s picture begins and ends, as ffprobe shows it (the video stream's start time,
    /// its last frame's time plus duration), and the time of its first decoded audio sample.
    static func spans(_ path: String) async throws -> (start: Double, end: Double, audio: Double) {
        func fields(_ arguments: [String]) async throws -> [[Double]] {
            let out = try await Reference.run("/usr/bin/ffprobe", ["-v", "error"] + arguments + ["-of", "csv=p=0", path])
            return String(decoding: out, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").compactMap { Double($0) } }.filter {
                !$0.isEmpty
            }
        }
        let start = try #require(
            try await fields(["-select_streams", "v:0", "-show_entries", "stream=start_time"]).first?.first, "no video start in \(path)")
        let frames = try await fields(["-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time"])
        let end = try #require(frames.filter { $0.count == 2 }.map { $0[0] + $0[1] }.max(), "no video frames in \(path)")
        let audio = try #require(
            try await fields(["-select_streams", "a:0", "-show_entries", "frame=best_effort_timestamp_time", "-read_intervals", "%+#8"]).first?.first,
            "no audio frame in \(path)")
        return (start, end, audio)
    }

    /// The passes of `output` that are not `expected` (by pass number), and how many passes it holds.
    static func differingPasses(_ output: [Int16], expected: [Int16]) -> (passes: Int, differing: [Int]) {
        guard !expected.isEmpty else { return (0, []) }
        let passes = (output.count + expected.count - 1) / expected.count
        let differing = (0..<passes).filter { p in
            // The last pass may be cut short (where the output ends).
            let slice = output[(p * expected.count)..<min(output.count, (p + 1) * expected.count)]
            return !slice.elementsEqual(expected.prefix(slice.count))
        }
        return (passes, differing)
    }

    // MARK: Players

    /// `play --loop N`: every pass is the source's whole sound, again and again.
    @Test(arguments: clips) func playLoopRepeatsTheSourceExactly(clip: Clip) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.make(clip, in: folder)
        let source = try await Self.samples(path)
        try #require(source.count > 10_000, "ffmpeg decoded \(source.count) samples of \(clip)")
        for run in 0..<3 {
            let out = folder + "/out\(run)"
            let result = try await CLI.run(["play", "--loop", "60", "--format", "y4m", "--size", "16x16", "--out", out, path])
            #expect(result.status == 0, "\(result.stderr)")
            let written = try await Self.samples(out + "/01-\(clip.name)/audio.wav")
            let (passes, differing) = Self.differingPasses(written, expected: source)
            #expect(
                passes == 60 && written.count == 60 * source.count && differing.isEmpty,
                "run \(run) of \(clip): \(passes) passes, \(written.count) samples (\(60 * source.count) expected), passes that differ: \(differing)")
        }
    }

    /// `play --queue --loop N` of two files: each pass of each is its source, in turn.
    @Test func queueLoopRepeatsEachItemExactly() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await Self.make(Self.clips[1], in: folder)
        let second = try await Self.make(Self.clips[0], in: folder, seed: 11)
        let pair = try await Self.samples(first) + Self.samples(second)
        for run in 0..<2 {
            let out = folder + "/q\(run)"
            let result = try await CLI.run(["play", "--queue", "--loop", "25", "--format", "y4m", "--size", "16x16", "--out", out, first, second])
            #expect(result.status == 0, "\(result.stderr)")
            let written = try await Self.samples(out + "/queue/audio.wav")
            let (passes, differing) = Self.differingPasses(written, expected: pair)
            #expect(passes == 25 && written.count == 25 * pair.count && differing.isEmpty, "run \(run): \(passes) passes, differing \(differing)")
        }
    }

    /// A `PlayerLooper` on a queue player: the library's own loop.
    @Test(arguments: [clips[1], clips[2]]) func playerLooperRepeatsTheSourceExactly(clip: Clip) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.make(clip, in: folder)
        let source = try await Self.samples(path)
        for _ in 0..<2 {
            let sink = InMemoryAudioSink()
            let queue = QueuePlayer(output: NullSink(), audioOutput: sink)
            let looper = PlayerLooper(player: queue, templateItem: PlayerItem(asset: Asset(path: path)), loopCount: 40)
            queue.play()
            await looper.waitUntilFinished()
            await queue.waitUntilIdle()
            let (passes, differing) = Self.differingPasses(sink.samples, expected: source)
            #expect(looper.loopsCompleted == 40 && passes == 40 && differing.isEmpty, "\(clip): \(passes) passes, differing \(differing)")
        }
    }

    // MARK: Compositions

    /// A looping layer's sound beside Y4M frames: each pass is the span of the source that its
    /// picture shows (from the first frame to the last frame's end), sample for sample.
    @Test(arguments: clips) func composedLoopRepeatsTheSourceExactly(clip: Clip) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.make(clip, in: folder)
        let pass = try await Self.passOfPicture(path)
        for run in 0..<3 {
            let out = folder + "/c\(run)"
            let result = try await CLI.run([
                "compose", "--size", "16x16", "--rate", "25", "--duration", "16.8", "--format", "y4m", "--out", out,
                "--layer", "x=0,y=0,w=16,h=16,loop=forever,audio=yes,source=\(path)",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let written = try await Self.samples(out + "/composition/audio.wav")
            let (passes, differing) = Self.differingPasses(written, expected: pass)
            #expect(
                written.count == 806_400 && passes == (written.count + pass.count - 1) / pass.count && passes >= 50 && differing.isEmpty,
                "run \(run) of \(clip): \(passes) passes of \(pass.count) samples, \(written.count) samples, passes that differ: \(differing)")
        }
    }

    /// A layer's playlist (loop forever over two items of different codecs): pass after pass,
    /// each item's own span.
    @Test func composedPlaylistRepeatsEachItemExactly() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await Self.make(Self.clips[1], in: folder)
        let second = try await Self.make(Self.clips[2], in: folder, seed: 11)
        let pair = try await Self.passOfPicture(first) + Self.passOfPicture(second)
        let layout = folder + "/layout.json"
        try Data("[{\"sources\": [\"\(first)\", \"\(second)\"], \"rect\": [0, 0, 16, 16], \"loop\": \"forever\", \"audio\": true}]".utf8)
            .write(to: URL(fileURLWithPath: layout))
        for run in 0..<2 {
            let out = folder + "/p\(run)"
            let result = try await CLI.run([
                "compose", "--size", "16x16", "--rate", "25", "--duration", "11.2", "--format", "y4m", "--out", out, "--layout", layout,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let written = try await Self.samples(out + "/composition/audio.wav")
            let (passes, differing) = Self.differingPasses(written, expected: pair)
            #expect(written.count == 537_600 && passes >= 18 && differing.isEmpty, "run \(run): \(passes) passes, differing \(differing)")
        }
    }

    /// The sound of one pass of `path`'s picture: from the picture's start (the video stream's
    /// start time) to its last frame's end, the source's samples there (silence where it has none).
    static func passOfPicture(_ path: String) async throws -> [Int16] {
        let source = try await samples(path)
        let (start, end, audio) = try await spans(path)
        let offset = Int(((start - audio) * 48_000).rounded())
        let length = Int(((end - start) * 48_000).rounded())
        return (0..<length).map { i in
            let index = offset + i
            return index >= 0 && index < source.count ? source[index] : 0
        }
    }
}
