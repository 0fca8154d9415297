import Foundation
import Playhead
import Testing

/// The sound of a composition: the chosen layer's audio, pass for pass as its picture plays,
/// AAC in the MP4 beside the H.264 — against the source's audio decoded by ffmpeg, placed by the
/// layer's own timeline (loops, time range, after-end).
@Suite struct CompositionAudioTests {
    /// A 2 s clip at 25 fps whose sound is a chirp (a rising tone: every stretch of it is found
    /// at one place only, so a sample missing or repeated at a seam shows as a shift).
    static func chirpClip(in folder: String) async throws -> String {
        let path = folder + "/chirp.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error",
                "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=2",
                "-f", "lavfi", "-i", "aevalsrc=0.6*sin(2*PI*(150+500*t)*t):s=48000:d=2.2",
                "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "192k", "-shortest", path,
            ])
        return path
    }

    /// Mono samples of `path`'s audio at 48 kHz, as ffmpeg decodes them.
    static func samples(_ path: String) async throws -> [Float] {
        let bytes = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a",
                "-f", "s16le", "-ac", "1", "-ar", "48000", "-",
            ])
        return stride(from: 0, to: bytes.count - 1, by: 2).map { Float(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
    }

    static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let n = min(a.count, b.count)
        guard n > 0 else { return 0 }
        var ab = 0.0, aa = 0.0, bb = 0.0
        for (x, y) in zip(a.prefix(n), b.prefix(n)) {
            ab += Double(x) * Double(y)
            aa += Double(x) * Double(x)
            bb += Double(y) * Double(y)
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
    }

    /// The shift (output sample − expected sample) in `range` that best matches `expected`
    /// around `window`.
    static func lag(of output: [Float], against expected: [Float], window: Range<Int>, in range: ClosedRange<Int>) -> (lag: Int, correlation: Double)
    {
        var best = (lag: range.lowerBound, correlation: -2.0)
        for lag in range {
            let start = window.lowerBound + lag, end = window.upperBound + lag
            guard start >= 0, end <= output.count else { continue }
            let c = correlation(output[start..<end], expected[window])
            if c > best.correlation { best = (lag, c) }
        }
        return best
    }

    /// A layer playing 1 s of the clip (from 0.5 s) twice, then clearing, over 3.2 s of canvas;
    /// another layer (silent here) beside it. The MP4's sound is the clip's samples 24000 ..< 72000
    /// twice, then silence: every 0.1 s window sits at one and the same shift (no sample lost
    /// or repeated at the seam), with the source's waveform (correlation ≥ 0.95 after AAC).
    @Test func theSoundFollowsTheLayersTimeline() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try await Self.chirpClip(in: folder)
        let layout = folder + "/layout.json"
        try """
        [{"source": "\(try Fixtures.clip("h264-aac.mp4"))", "rect": [0, 0, 320, 180], "loop": "forever"},
         {"source": "chirp.mp4", "rect": [160, 90, 160, 90], "z": 1, "timeRange": {"start": 0.5, "duration": 1}, "loop": 2,
          "afterEnd": "clear", "audio": true}]
        """.write(toFile: layout, atomically: true, encoding: .utf8)
        let run = try await CLI.run([
            "compose", "--json", "--size", "320x180", "--rate", "30", "--duration", "3.2", "--format", "mp4",
            "--layout", layout, "--out", folder + "/out",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(
            (summary["audio"] as? [String: Any])?["error"] == nil && (summary["audio"] as? [String: Any])?["source"] as? String != nil, "\(summary)")
        let mp4 = folder + "/out/composition/video.mp4"
        let streams = try await Reference.run(
            "/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames", "-of", "csv=p=0", mp4])
        let lines = String(decoding: streams, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.contains("h264,96") && lines.contains { $0.hasPrefix("aac,") }, "\(lines)")

        let source = try await Self.samples(clip)
        let expected = Array(source[24000..<72000]) + Array(source[24000..<72000]) + [Float](repeating: 0, count: 57_600)
        let output = try await Self.samples(mp4)
        #expect(abs(output.count - expected.count) < 4096, "\(output.count) samples for \(expected.count)")
        // The whole file's shift (the muxer starts the sound a little late, as it does for ffmpeg's own MP4s).
        let whole = Self.lag(of: output, against: expected, window: 4800..<9600, in: -4096...4096)
        #expect(whole.correlation > 0.98, "\(whole)")
        for start in stride(from: 0, to: 96000 - 4800, by: 4800) {
            let window = start..<(start + 4800)
            let local = Self.lag(of: output, against: expected, window: window, in: (whole.lag - 64)...(whole.lag + 64))
            #expect(
                local.lag == whole.lag && local.correlation > 0.95,
                "window at \(Double(start) / 48000) s: shift \(local.lag), not \(whole.lag) (\(local.correlation))")
        }
        // After the content ends: silence.
        let tail = output[(96000 + whole.lag + 2400)..<min(output.count, expected.count + whole.lag - 2400)]
        #expect(tail.allSatisfy { abs($0) < 64 }, "the cleared layer is silent after it ends")
    }

    /// Music under a composition: a layer of sound alone (1.5 s of the chirp, no picture) loops
    /// the sound for the whole canvas, seam for seam, and draws nothing; a sound layer whose
    /// source has no sound says so in the summary.
    @Test func aLayerOfSoundAloneLoopsTheSound() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try await Self.chirpClip(in: folder)
        let music = folder + "/music.m4a"
        _ = try await Reference.run(
            try Reference.ffmpeg(), ["-v", "error", "-i", clip, "-map", "0:a", "-t", "1.5", "-c:a", "aac", "-b:a", "192k", music])
        let run = try await CLI.run([
            "compose", "--json", "--size", "160x90", "--rate", "25", "--duration", "4", "--out", folder + "/o.mp4",
            "--layer", "x=0,y=0,w=160,h=90,source=\(try Fixtures.clip("h264-aac.mp4"))",
            "--layer", "x=0,y=0,w=160,h=90,z=1,loop=forever,audio=yes,source=\(music)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let layers = try #require(summary["layers"] as? [[String: Any]])
        #expect(
            layers.count == 2 && layers[1]["framesShown"] as? Int == 0 && (layers[1]["loopsCompleted"] as? Int ?? 0) >= 2
                && layers[1]["error"] == nil, "\(layers)")
        #expect(layers[0]["framesShown"] as? Int == 100, "the picture below shows through: \(layers)")
        // The music lasts 1.5 s (72000 samples: ffmpeg decodes the last AAC frame's padding too).
        let source = try await Self.samples(music)
        #expect(source.count >= 72_000 && source.count < 74_000, "\(source.count)")
        let output = try await Self.samples(folder + "/o.mp4")
        #expect(abs(output.count - 192_000) < 4096, "\(output.count)")
        // The music's samples again and again, each 0.1 s at one shift.
        let expected = (0..<4).flatMap { _ in source.prefix(72_000) }
        let whole = Self.lag(of: output, against: expected, window: 4800..<9600, in: -4096...4096)
        #expect(whole.correlation > 0.98, "\(whole)")
        // (The window that ends at a seam is left out: the end of the music, encoded once already,
        // is where AAC is least faithful; the window that starts there shows the seam's exactness.)
        for start in stride(from: 0, to: 192_000 - 9600, by: 4800) where (start + 4800) % 72_000 != 0 {
            let window = start..<(start + 4800)
            let local = Self.lag(of: output, against: expected, window: window, in: (whole.lag - 64)...(whole.lag + 64))
            #expect(
                local.lag == whole.lag && local.correlation > 0.9,
                "window at \(Double(start) / 48000) s: shift \(local.lag), not \(whole.lag) (\(local.correlation))")
        }
        // A sound layer without sound: the summary names it.
        let silent = try await CLI.run([
            "compose", "--json", "--size", "160x90", "--duration", "1", "--out", folder + "/s.mp4",
            "--layer", "x=0,y=0,w=160,h=90,audio=yes,source=\(try Fixtures.clip("video-only.mp4"))",
        ])
        let quiet = try #require(try JSONSerialization.jsonObject(with: Data(silent.stdout.utf8)) as? [String: Any])
        #expect(((quiet["audio"] as? [String: Any])?["silent"] as? [String])?.first?.hasSuffix("video-only.mp4") == true, "\(quiet)")
    }

    /// Sound is refused where it cannot be written (one Y4M file, standard output); beside frames
    /// in a folder it goes into audio.wav.
    @Test func soundNeedsAFileThatCarriesItAndOneLayer() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let y4m = try await CLI.run([
            "compose", "--size", "320x180", "--duration", "1", "--out", folder + "/a.y4m",
            "--layer", "x=0,y=0,w=320,h=180,audio=yes,source=\(clip)",
        ])
        #expect(y4m.status == 2 && y4m.stderr.contains("MP4"), "\(y4m.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/a.y4m"))
        let beside = try await CLI.run([
            "compose", "--json", "--size", "320x180", "--rate", "25", "--duration", "1", "--format", "y4m", "--out", folder + "/w",
            "--layer", "x=0,y=0,w=320,h=180,audio=yes,source=\(clip)",
        ])
        #expect(beside.status == 0, "\(beside.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(beside.stdout.utf8)) as? [String: Any])
        let audio = try #require(summary["audio"] as? [String: Any])
        #expect(audio["path"] as? String == folder + "/w/composition/audio.wav" && audio["frames"] as? Int == 48_000, "\(audio)")
        // The clip's own samples: one second of them, from its first frame's time.
        let source = try await Self.samples(clip)
        let written = try await Self.samples(folder + "/w/composition/audio.wav")
        #expect(written.count == 48_000 && Array(source.prefix(48_000)) == written, "\(written.count) samples")
    }

    /// Several layers that give sound are mixed, sample for sample: their sum, clipped to 16 bits,
    /// each from where its layer starts (a layer added later starts its sound then).
    @Test func soundsOfSeveralLayersAreSummed() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let a = folder + "/a.mp4", b = folder + "/b.mkv"
        for (path, tone, seconds) in [(a, 440, 2), (b, 660, 3)] {
            _ = try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=\(seconds)",
                    "-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=48000:duration=\(seconds)",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", path.hasSuffix("mkv") ? "pcm_s16le" : "aac", "-shortest", path,
                ])
        }
        let run = try await CLI.run([
            "compose", "--json", "--size", "64x36", "--rate", "25", "--duration", "3", "--format", "y4m", "--out", folder + "/m",
            "--layer", "x=0,y=0,w=64,h=36,audio=yes,source=\(a)", "--layer", "x=0,y=0,w=32,h=18,z=1,audio=yes,source=\(b)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(((summary["audio"] as? [String: Any])?["sources"] as? [String])?.count == 2, "\(summary)")
        let mixed = try await Self.samples(folder + "/m/composition/audio.wav")
        let first = try await Self.samples(a), second = try await Self.samples(b)
        #expect(mixed.count == 3 * 48_000, "\(mixed.count)")
        // The first layer's picture lasts 2 s: its sound is cut there; the second plays throughout.
        var expected: [Float] = []
        for i in 0..<(3 * 48_000) {
            let x: Float = i < 96_000 && i < first.count ? first[i] : 0
            let y: Float = i < second.count ? second[i] : 0
            expected.append(max(-32768, min(32767, x + y)))
        }
        var differing: [Int] = []
        for i in 0..<min(mixed.count, expected.count) where mixed[i] != expected[i] { differing.append(i) }
        #expect(differing.isEmpty, "\(differing.count) samples differ from the sum, first at \(differing.first ?? -1)")
    }
}
