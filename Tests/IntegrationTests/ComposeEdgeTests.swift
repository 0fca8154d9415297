import Foundation
import Testing

/// What a composition shows and sounds at the edges of its items, against ffmpeg's decode of the
/// same sources: a Matroska clip whose last group has two frames held after its end; frames whose
/// container rounded their times to the millisecond shown at their own instants and to the last
/// of them; sound-only items (raw AAC, MP3 with its gapless header, Ogg Opus) lasting the sound
/// they decode, not their headers; a time range counted from each item's start; an MP4 export
/// of a Matroska clip at the clip's own rate; an encrypted sound-only item refused as encrypted.
@Suite struct ComposeEdgeTests {
    /// Gray 32x24 pictures of every frame of `path` (as decoded, one per frame).
    static func pictures(_ path: String) async throws -> [[UInt8]] {
        let bytes = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                "-vf", "scale=32:24:flags=area", "-pix_fmt", "gray", "-f", "rawvideo", "-",
            ])
        return stride(from: 0, to: bytes.count - 767, by: 768).map { Array(bytes[$0..<($0 + 768)]) }
    }

    /// For each picture of `output`, the number of the source picture nearest to it.
    static func sourceFrames(of output: String, in source: String) async throws -> [Int] {
        let reference = try await pictures(source)
        try #require(reference.count > 2, "ffmpeg decoded \(reference.count) frames of \(source)")
        return try await pictures(output).map { picture in
            reference.indices.min { a, b in distance(reference[a], picture) < distance(reference[b], picture) } ?? -1
        }
    }

    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
    }

    static func make(_ path: String, _ arguments: [String]) async throws {
        _ = try await Reference.run(try Reference.ffmpeg(), ["-hide_banner", "-loglevel", "error", "-y"] + arguments + [path])
    }

    /// Presentation times of `path`'s video frames as ffprobe gives them, in order.
    static func frameTimes(_ path: String) async throws -> [Double] {
        let out = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time",
                "-of", "csv=p=0", path,
            ])
        // A frame with side data has a trailing comma (and an empty line after it).
        return String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.split(separator: ",").first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    /// Crashed once: the last frame kept to hold after the end was a frame the reader reused.
    @Test func holdsTheLastFrameOfAShortLastGroup() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/short-last-group.mkv"
        try await Self.make(
            clip, ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "26", "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p"])
        let run = try await CLI.run([
            "compose", "--format", "y4m", "--out", folder + "/out", "--size", "160x120", "--rate", "25", "--duration", "2",
            "--layer", "x=0,y=0,w=160,h=120,source=\(clip)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let shown = try await Self.sourceFrames(of: folder + "/out/composition/frames.y4m", in: clip)
        #expect(shown == Array(0..<26) + Array(repeating: 25, count: 24), "\(shown)")
    }

    /// A 29.97 fps clip in Matroska (times rounded to the millisecond) at its own rate: every frame
    /// once, in order — none lost to a time rounded up past its instant.
    @Test func roundedTimesShowEveryFrameAtItsOwnRate() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, codec) in [
            ("ntsc.mkv", ["-c:v", "libx264", "-bf", "2"]), ("ntsc.webm", ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"]),
        ] {
            let clip = folder + "/" + name
            try await Self.make(clip, ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30000/1001:duration=3"] + codec + ["-pix_fmt", "yuv420p"])
            let count = try await Self.frameTimes(clip).count
            let run = try await CLI.run([
                "compose", "--format", "y4m", "--out", folder + "/" + name + ".out", "--size", "160x120", "--rate", "30000/1001",
                "--duration", "\(Double(count) * 1001 / 30000)", "--layer", "x=0,y=0,w=160,h=120,source=\(clip)",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            let shown = try await Self.sourceFrames(of: folder + "/" + name + ".out/composition/frames.y4m", in: clip)
            #expect(shown == Array(0..<count), "\(name): \(shown)")
        }
    }

    /// A looping 23.976 fps WebM at 30 fps (1 ms gaps between its rounded frames): every pass
    /// shows the source's last frame and lasts as long as the others (no pass cut short when
    /// an instant falls in a gap after the data ended).
    @Test func everyPassReachesTheLastFrame() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/film.webm"
        try await Self.make(
            clip,
            [
                "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=24000/1001:duration=1.5", "-c:v", "libvpx", "-deadline", "realtime",
                "-cpu-used", "8", "-g", "12", "-pix_fmt", "yuv420p",
            ])
        let last = try await Self.frameTimes(clip).count - 1
        let run = try await CLI.run([
            "compose", "--format", "y4m", "--out", folder + "/out", "--size", "160x120", "--rate", "30", "--duration", "24",
            "--layer", "x=0,y=0,w=160,h=120,loop=forever,source=\(clip)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let shown = try await Self.sourceFrames(of: folder + "/out/composition/frames.y4m", in: clip)
        var passes: [[Int]] = [[]]
        for (i, frame) in shown.enumerated() {
            if i > 0, frame < shown[i - 1] { passes.append([]) }
            passes[passes.count - 1].append(frame)
        }
        try #require(passes.count >= 14, "\(passes.count) passes")
        for (n, pass) in passes.dropLast().enumerated() {
            #expect(pass.last == last && (pass.count == 45 || pass.count == 46), "pass \(n): \(pass)")
        }
    }

    /// Sound-only items looping: each pass is ffmpeg's decode of the item, exactly — a raw AAC
    /// stream whose header-less duration ffmpeg guesses from its bit rate, an MP3 whose gapless
    /// header trims its padding, an Ogg Opus stream with its pre-skip.
    @Test(arguments: ["vbr.aac", "gapless.mp3", "skip.opus"]) func soundOnlyItemsLastWhatTheyDecode(name: String) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/" + name
        switch name {
        case "vbr.aac":
            // Quiet, then noise: the first packets' bit rate says the stream is several times longer.
            try await Self.make(
                clip,
                [
                    "-f", "lavfi", "-i", "aevalsrc=exprs='if(lt(t,1.5),0.001*sin(2*PI*100*t),0.5*(random(0)-0.5))':s=48000:d=2.5",
                    "-c:a", "aac", "-b:a", "192k",
                ])
        case "gapless.mp3":
            try await Self.make(
                clip, ["-f", "lavfi", "-i", "anoisesrc=color=white:seed=3:sample_rate=48000:duration=1.3:amplitude=0.5", "-c:a", "libmp3lame"])
        default:
            try await Self.make(
                clip, ["-f", "lavfi", "-i", "anoisesrc=color=white:seed=4:sample_rate=48000:duration=1.3:amplitude=0.5", "-c:a", "libopus"])
        }
        let source = try await SeamTests.samples(clip)
        try #require(source.count > 48_000, "ffmpeg decoded \(source.count) samples of \(name)")
        let probe = try await CLI.run(["probe", "--json", clip])
        if name == "vbr.aac" { #expect(probe.stdout.contains("\"duration\" : null"), "a raw AAC stream's duration is not known: \(probe.stdout)") }
        let run = try await CLI.run([
            "compose", "--format", "y4m", "--out", folder + "/out", "--size", "16x16", "--rate", "25", "--duration", "8",
            "--layer", "x=0,y=0,w=16,h=16,loop=forever,audio=yes,source=\(clip)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let mixed = try await Reference.wavSamples(folder + "/out/composition/audio.wav")
        let (passes, differing) = SeamTests.differingPasses(mixed, expected: source)
        #expect(
            passes >= 3 && differing.isEmpty, "\(name): passes \(differing) of \(passes) differ from ffmpeg's decode (\(source.count) samples each)")
    }

    /// A layout's time range counts from each item's start (as `thumbnails --at` does): a
    /// transport stream whose timestamps begin at 1.4 s shows the frames from 1.3 s into it.
    @Test func timeRangesCountFromTheItemsStart() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/clip.ts"
        try await Self.make(clip, ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2.5", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let layout = folder + "/layout.json"
        try Data(#"[{"source": "\#(clip)", "rect": [0, 0, 160, 120], "timeRange": {"start": 1.3, "duration": 0.7}}]"#.utf8).write(
            to: URL(fileURLWithPath: layout))
        let run = try await CLI.run([
            "compose", "--format", "y4m", "--out", folder + "/out", "--size", "160x120", "--rate", "25", "--duration", "0.7",
            "--layout", layout,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let times = try await Self.frameTimes(clip)
        let start = try #require(times.first)
        // ffprobe's start time of a stream without audio is its first frame's.
        let shown = try await Self.sourceFrames(of: folder + "/out/composition/frames.y4m", in: clip)
        try #require((17...18).contains(shown.count), "\(shown.count) frames")
        let expected = shown.indices.map { k in times.lastIndex { $0 <= start + 1.3 + Double(k) / 25 + 1e-6 } ?? 0 }
        #expect(shown == expected && expected.first == 32, "\(shown), expected \(expected)")
    }

    /// An MP4 export of a Matroska clip at 29.97 fps reads back at 29.97 fps, every frame once.
    @Test func mp4ExportOfMatroskaKeepsItsRate() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/r2997.mkv"
        try await Self.make(
            clip,
            [
                "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30000/1001:duration=3", "-f", "lavfi",
                "-i", "aevalsrc=exprs='0.5*sin(2*PI*1000*t)':s=48000:d=3:c=stereo",
                "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac",
            ])
        let run = try await CLI.run(["play", "--format", "mp4", "--out", folder + "/out", clip])
        #expect(run.status == 0, "\(run.stderr)")
        let video = folder + "/out/01-r2997.mkv/video.mp4"
        let rate = try await Reference.run(
            "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=r_frame_rate", "-of", "csv=p=0", video])
        #expect(String(decoding: rate, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "30000/1001")
        let shown = try await Self.sourceFrames(of: video, in: clip)
        let count = try await Self.frameTimes(clip).count
        #expect(shown == Array(0..<count), "\(shown)")
    }

    /// A clip cut short anywhere fails its layer with `io.truncated`, as `play` fails it — in
    /// MP4, Matroska, MPEG-TS and FLV, with the sound given by the layer (the cut may fall in a
    /// packet of the stream the picture's reader does not read).
    @Test func aCutClipFailsItsLayerAsPlayFailsIt() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for format in ["mp4", "mkv", "ts", "flv"] {
            let whole = folder + "/whole." + format
            try await Self.make(
                whole,
                [
                    "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=4", "-f", "lavfi", "-i", "sine=frequency=440:duration=4",
                    "-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac",
                ] + (format == "mp4" ? ["-movflags", "+faststart"] : []))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
            for percent in [20, 35, 65, 85, 90, 95, 98] {
                let cut = folder + "/cut\(percent)." + format
                try bytes.prefix(bytes.count * percent / 100).write(to: URL(fileURLWithPath: cut))
                let out = folder + "/out-\(format)-\(percent)"
                let run = try await CLI.run([
                    "compose", "--format", "none", "--json", "--out", out, "--size", "160x120", "--rate", "25", "--duration", "4.2",
                    "--layer", "x=0,y=0,w=160,h=120,audio=yes,source=\(cut)",
                ])
                let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
                let layer = try #require((document["layers"] as? [[String: Any]])?.first)
                #expect(
                    run.status == 1 && (layer["error"] as? [String: Any])?["code"] as? String == "io.truncated",
                    "\(format) cut at \(percent) %: \(layer)")
            }
        }
    }

    /// An encrypted sound-only item as a composition's sound is refused as encrypted.
    @Test func encryptedSoundOnlyItemIsRefusedAsEncrypted() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/cenc.m4a"
        try await Self.make(
            clip,
            [
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2", "-c:a", "aac", "-encryption_scheme", "cenc-aes-ctr",
                "-encryption_key", "00112233445566778899aabbccddeeff", "-encryption_kid", "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
            ])
        let run = try await CLI.run([
            "compose", "--format", "y4m", "--json", "--out", folder + "/out", "--size", "16x16", "--rate", "25", "--duration", "1",
            "--layer", "x=0,y=0,w=16,h=16,audio=yes,source=\(clip)",
        ])
        #expect(run.status == 1, "\(run.stderr)")
        // The layer's only item cannot play: the layer fails, naming why.
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let layer = try #require((document["layers"] as? [[String: Any]])?.first)
        #expect((layer["error"] as? [String: Any])?["code"] as? String == "decode.encrypted", "\(layer)")
        #expect(!run.stdout.contains("conversionFailed"), "\(run.stdout)")
    }
}
