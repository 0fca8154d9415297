import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// `playhead play` end to end: frame files, summary.json, exit status.
@Suite struct CLIPlayTests {
    @Test func dumpsEveryFrameOfSeveralFilesAndSummarizes() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clips = ["h264-aac.mp4", "rotated-90.mp4", "vp9-opus.webm"]
        let paths = try clips.map { try Fixtures.clip($0) }
        let run = try await CLI.run(["play", "--out", out.path] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")

        let summary = try readSummary(out)
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.map { $0["path"] as? String } == paths)
        for (position, (clip, file)) in zip(clips, files).enumerated() {
            let stream = try #require(try Fixtures.ffprobe(clip).streams.first { $0.codec_type == "video" })
            let expectedFrames = try #require(stream.nb_read_frames.flatMap(Int.init))
            #expect(file["status"] as? String == "completed")
            #expect(file["framesDecoded"] as? Int == expectedFrames)
            #expect(file["framesWritten"] as? Int == expectedFrames)
            #expect(file["firstPTS"] as? Double == stream.start_time.flatMap(Double.init))
            let folder = out.appendingPathComponent(String(format: "%02d-%@", position + 1, clip))
            let all = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            let names = all.filter { $0.hasPrefix("frame-") }
            #expect(all.contains("audio.wav") == (clip != "rotated-90.mp4"), "clips with audio get audio.wav")
            #expect(names.count == expectedFrames)
            #expect(names.first == "frame-000001.png")
            #expect(names.last == String(format: "frame-%06d.png", expectedFrames))
            #expect(leftoverTemporaryFiles(in: folder.path).isEmpty, "no temporary file may be left")
        }
        let rotatedSize = try #require(files[1]["outputSize"] as? [String: Int])
        #expect(rotatedSize == ["width": 180, "height": 320])
    }

    @Test func pngFramesHoldTheDecodedPictures() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("4x3.mp4")
        let run = try await CLI.run(["play", "--out", out.path, "--size", "640x360", "--frames", "3", clip])
        #expect(run.status == 0)
        let png = out.appendingPathComponent("01-4x3.mp4/frame-000003.png").path
        // Decode the PNG with ffmpeg, and compare with ffmpeg's own fit of frame 2 into 640x360.
        let fromPNG = try await Reference.run(try Reference.ffmpeg(), ["-loglevel", "error", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let expected = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-loglevel", "error", "-i", clip, "-vf",
                "select=eq(n\\,2),scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2",
                "-vsync", "0", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
            ])
        #expect(fromPNG.count == 640 * 360 * 3)
        #expect(Reference.psnr(fromPNG, expected) >= 30)
    }

    /// `play --format mp4` exports each file into one MP4: H.264 and its sound as AAC (the sound
    /// against the source's, decoded by ffmpeg: same length up to the encoder's priming, and
    /// correlated > 0.99 at the best offset); a file without sound gives a picture-only MP4, one
    /// without picture a sound-only one; `--no-audio` leaves the sound out; no WAV beside them.
    @Test func mp4ExportsCarryTheSound() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let withSound = try Fixtures.clip("h264-aac.mp4"), soundOnly = try Fixtures.clip("audio-only.m4a"),
            silent = try Fixtures.clip("rotated-90.mp4")
        let run = try await CLI.run(["play", "--json", "--format", "mp4", "--out", out.path + "/a", withSound, soundOnly, silent])
        #expect(run.status == 0, "\(run.stderr)")
        func streams(_ path: String) async throws -> String {
            String(
                decoding: try await Reference.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path]),
                as: UTF8.self
            )
            .split(separator: "\n").joined(separator: ",")
        }
        let folder = out.path + "/a"
        #expect(try await streams(folder + "/01-h264-aac.mp4/video.mp4") == "h264,aac")
        #expect(try await streams(folder + "/02-audio-only.m4a/video.mp4") == "aac")
        #expect(try await streams(folder + "/03-rotated-90.mp4/video.mp4") == "h264")
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".wav") || $0.contains(".tmp") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let files = try #require(document["files"] as? [[String: Any]])
        #expect(files.map { $0["audioFrames"] as? Int != nil } == [true, true, false], "\(files)")

        for clip in [withSound, soundOnly] {
            let name = URL(fileURLWithPath: clip).lastPathComponent
            let position = clip == withSound ? "01" : "02"
            let source = try await Self.monoSamples(clip)
            let exported = try await Self.monoSamples(folder + "/\(position)-\(name)/video.mp4")
            // AAC adds its priming (1024 samples) and pads its last frame.
            #expect(
                exported.count >= source.count && exported.count <= source.count + 3 * 1024, "\(name): \(exported.count) samples for \(source.count)")
            let offset =
                (0...2048).max {
                    Self.correlation(source, exported, offset: $0, count: 8192) < Self.correlation(source, exported, offset: $1, count: 8192)
                } ?? 0
            let whole = Self.correlation(source, exported, offset: offset, count: source.count - 1)
            #expect(whole > 0.99, "\(name): correlation \(whole) at offset \(offset)")
        }

        let quiet = try await CLI.run(["play", "--format", "mp4", "--no-audio", "--out", out.path + "/b", withSound])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(try await streams(out.path + "/b/01-h264-aac.mp4/video.mp4") == "h264")
    }

    /// A sound that starts 1 s after the picture is led in by silence; a picture that starts 1 s
    /// after the sound by its first frame (25 frames at 25 fps): either way both streams of the
    /// MP4 start at 0 and keep the source's offset.
    @Test func mp4ExportsKeepALateStreamInSync() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let lateSound = out.path + "/late-sound.mp4", latePicture = out.path + "/late-picture.mp4"
        for (path, late) in [(lateSound, "1:a"), (latePicture, "1:v")] {
            let early = late == "1:a" ? "0:v" : "0:a"
            _ = try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-loglevel", "error", "-i", clip, "-itsoffset", "1", "-i", clip,
                    "-map", early, "-map", late, "-c", "copy", path,
                ])
        }
        let run = try await CLI.run(["play", "--format", "mp4", "--out", out.path + "/p", lateSound, latePicture])
        #expect(run.status == 0, "\(run.stderr)")
        func durations(_ path: String) async throws -> [String: Double] {
            let text = String(
                decoding: try await Reference.run(
                    "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", path]),
                as: UTF8.self)
            var result: [String: Double] = [:]
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: ",")
                if fields.count == 2 { result[String(fields[0])] = Double(fields[1]) }
            }
            return result
        }
        // AAC adds up to about 0.1 s (its priming and last frame).
        let soundLate = try await durations(out.path + "/p/01-late-sound.mp4/video.mp4")
        #expect(abs((soundLate["video"] ?? 0) - 2) < 0.05 && (soundLate["audio"] ?? 0) > 2.95 && (soundLate["audio"] ?? 0) < 3.12, "\(soundLate)")
        let samples = try await Self.monoSamples(out.path + "/p/01-late-sound.mp4/video.mp4")
        #expect(samples.count > 48_000 && samples[0..<45_000].allSatisfy { abs(Int($0)) < 64 }, "the first second is silence")
        #expect(samples[48_000..<96_000].contains { abs(Int($0)) > 1000 }, "then the sound")
        let pictureLate = try await durations(out.path + "/p/02-late-picture.mp4/video.mp4")
        #expect(
            abs((pictureLate["video"] ?? 0) - 3) < 0.05 && (pictureLate["audio"] ?? 0) > 1.95 && (pictureLate["audio"] ?? 0) < 2.12, "\(pictureLate)")
    }

    /// `--frames N` cuts the sound where the Nth frame ends, counted from the first frame: a
    /// picture that starts 1 s after its sound keeps that second of sound and N frames' more.
    @Test func aFrameLimitCutsTheSoundAtTheLastFramesEnd() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let late = out.path + "/late-picture.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            ["-loglevel", "error", "-i", clip, "-itsoffset", "1", "-i", clip, "-map", "0:a", "-map", "1:v", "-c", "copy", late])
        let run = try await CLI.run(["play", "--frames", "10", "--format", "y4m", "--out", out.path + "/p", late])
        #expect(run.status == 0, "\(run.stderr)")
        let text = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-show_entries", "stream=duration", "-of", "csv=p=0",
                    out.path + "/p/01-late-picture.mp4/audio.wav",
                ]), as: UTF8.self)
        let seconds = try #require(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(text)")
        // 1 s before the picture, then 10 frames at 25 fps.
        #expect(abs(seconds - 1.4) < 0.03, "\(seconds) s of sound")
    }

    /// A file that fails part way keeps what was decoded as a partial MP4 (as Y4M does), even
    /// before the MP4 knew whether a sound would come: the summary counts what ffprobe finds.
    @Test func aFailedExportKeepsItsFramesAsAPartialMP4() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let run = try await CLI.run(["play", "--json", "--format", "mp4", "--out", out.path, try Fixtures.clip("damaged-cut.mp4")])
        #expect(run.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
        let file = try #require((document["files"] as? [[String: Any]])?.first)
        let written = try #require(file["framesWritten"] as? Int)
        #expect(written > 0 && file["partial"] as? Bool == true && file["status"] as? String == "failed", "\(file)")
        let probe = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0",
                out.path + "/01-damaged-cut.mp4/video.mp4",
            ])
        #expect(Int(String(decoding: probe, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) == written)
    }

    static func monoSamples(_ path: String) async throws -> [Int16] {
        let bytes = try await Reference.run(
            try Reference.ffmpeg(), ["-loglevel", "error", "-i", path, "-map", "0:a", "-ac", "1", "-f", "s16le", "-"])
        return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// Normalised correlation of `a[0..<count]` with `b[offset..<offset + count]` (0 when out of range).
    static func correlation(_ a: [Int16], _ b: [Int16], offset: Int, count: Int) -> Double {
        let n = min(count, a.count, b.count - offset)
        guard n > 0 else { return 0 }
        var ab = 0.0, aa = 0.0, bb = 0.0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for i in 0..<n {
                    let x = Double(a[i]), y = Double(b[offset + i])
                    ab += x * y
                    aa += x * x
                    bb += y * y
                }
            }
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
    }

    /// A picture whose width is no multiple of libswscale's blocks (580) between bars: the bars stay
    /// exactly black (no column of the picture's rows runs into them) and the picture matches
    /// ffmpeg's `scale` + `pad`.
    @Test func barsBesideAPictureOfAnyWidthStayBlack() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("anamorphic.mp4")
        let run = try await CLI.run(["play", "--out", out.path, "--format", "y4m", "--size", "640x326", "--frames", "5", clip])
        #expect(run.status == 0, "\(run.stderr)")
        let played = try Y4MFile(out.appendingPathComponent("01-anamorphic.mp4/frames.y4m").path)
        try #require(played.size == PixelSize(width: 640, height: 326) && played.frameCount == 5)
        // 240x180 with 4:3 pixels shows as 320x180: fitted, 580x326 at x = 30.
        let expected = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-loglevel", "error", "-i", clip, "-vf", "scale=580:326,pad=640:326:30:0:black",
                "-frames:v", "5", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-",
            ])
        let frameBytes = 640 * 326 * 3 / 2
        try #require(expected.count == 5 * frameBytes)
        for n in 0..<5 {
            let frame = try played.frame(n)
            let reference = Array(expected[(n * frameBytes)..<((n + 1) * frameBytes)])
            #expect(Reference.psnr(frame, reference) >= 40, "frame \(n)")
            let barColumns = Array(0..<30) + Array(610..<640)
            let lumaBars = (0..<326).allSatisfy { y in barColumns.allSatisfy { frame[y * 640 + $0] == 16 } }
            let chromaBars = (0..<163).allSatisfy { y in
                barColumns.filter { $0 % 2 == 0 }.allSatisfy {
                    frame[640 * 326 + y * 320 + $0 / 2] == 128 && frame[640 * 326 * 5 / 4 + y * 320 + $0 / 2] == 128
                }
            }
            #expect(lumaBars && chromaBars, "frame \(n): the bars are not black")
        }
    }

    @Test func y4mAndPPMDumpsAreReadableByFFmpeg() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("odd-size.mp4")
        #expect(try await CLI.run(["play", "--out", out.path, "--format", "y4m", clip]).status == 0)
        let y4m = out.appendingPathComponent("01-odd-size.mp4/frames.y4m").path
        let probe = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-count_frames", "-show_entries",
                    "stream=width,height,nb_read_frames", "-of", "csv=p=0", y4m,
                ]), as: UTF8.self)
        // 321x181 is rounded up to even for 4:2:0.
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "322,182,50")

        #expect(try await CLI.run(["play", "--out", out.path, "--format", "ppm", "--frames", "2", clip]).status == 0)
        let ppm = out.appendingPathComponent("01-odd-size.mp4/frame-000002.ppm")
        let bytes = try Data(contentsOf: ppm)
        #expect(bytes.starts(with: Data("P6\n321 181\n255\n".utf8)))
        #expect(bytes.count == "P6\n321 181\n255\n".utf8.count + 321 * 181 * 3)
    }

    @Test func badFileAmongGoodOnesFailsAloneWithExitOne() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let paths = [try Fixtures.clip("h264-aac.mp4"), try Fixtures.clip("bad-random.mp4"), try Fixtures.clip("damaged-cut.mp4")]
        let run = try await CLI.run(["play", "--out", out.path, "--format", "none", "--json"] + paths)
        #expect(run.status == 1)
        let fromStdout = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let files = try #require(fromStdout["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["completed", "failed", "failed"])
        #expect((files[1]["error"] as? [String: Any])?["code"] as? String == "demux.unrecognizedFormat")
        #expect(((files[2]["error"] as? [String: Any])?["message"] as? String)?.contains("damaged-cut.mp4") == true)
        #expect((files[2]["framesDecoded"] as? Int ?? 0) > 0)
        let onDisk = try readSummary(out)
        #expect((onDisk["files"] as? [[String: Any]])?.count == 3)
    }

    @Test func queueNumbersFramesContinuouslyAndSkipsABadFile() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let names = ["4x3.mp4", "bad-text.mp4", "portrait.mp4", "hevc-aac.mkv"]
        let paths = try names.map { try Fixtures.clip($0) }
        let run = try await CLI.run(["play", "--queue", "--out", out.path, "--size", "160x90"] + paths)
        #expect(run.status == 1, "a failed item makes the exit status 1")
        let expected = try ["4x3.mp4", "portrait.mp4", "hevc-aac.mkv"].map {
            try #require(try Fixtures.ffprobe($0).streams.first { $0.codec_type == "video" }?.nb_read_frames.flatMap(Int.init))
        }
        let total = expected.reduce(0, +)
        // The folder's ownership mark and log of what was written aside, only frames and the WAV.
        let written = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("queue").path)
            .filter { $0 != ".playhead-owner" && $0 != ".playhead-written" }.sorted()
        #expect(written == ["audio.wav"] + (1...total).map { String(format: "frame-%06d.png", $0) })
        let summary = try readSummary(out)
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["completed", "failed", "completed", "completed"])
        #expect(files.map { $0["framesWritten"] as? Int } == [expected[0], 0, expected[1], expected[2]])
        let queue = try #require(summary["queue"] as? [String: Any])
        #expect(queue["framesPresented"] as? Int == total)
        // Only the last file has audio: the queue's WAV holds exactly its samples.
        let once = await AudioSession(source: paths[3]).run(into: InMemoryAudioSink()).frames
        #expect(queue["audioFrames"] as? Int == once)
        #expect(files.map { $0["audioFrames"] as? Int } == [nil, nil, nil, once])
        #expect(try await Reference.wavFrames(out.appendingPathComponent("queue/audio.wav").path) == once)
    }

    @Test(arguments: [4, 2])
    func sixFilesRespectTheSessionLimit(limit: Int) async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let paths = try ["h264-aac.mp4", "hevc-aac.mkv", "vp9-opus.webm", "4x3.mp4", "portrait.mp4", "rotated-90.mp4"].map { try Fixtures.clip($0) }
        let run = try await CLI.run(["play", "--out", out.path, "--max-sessions", String(limit), "--size", "320x180"] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let summary = try readSummary(out)
        #expect(summary["maxConcurrentSessions"] as? Int == limit)
        #expect(summary["peakConcurrentSessions"] as? Int == limit)
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.allSatisfy { $0["status"] as? String == "completed" && $0["framesWritten"] as? Int == 50 })
    }

    @Test func loopThreeWritesEveryFrameThriceNumberedOn() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let run = try await CLI.run(["play", "--out", out.path, "--loop", "3", "--format", "ppm", "--size", "64x36", clip])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let folder = out.appendingPathComponent("01-h264-aac.mp4")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().filter { $0.hasPrefix("frame-") }
        #expect(names == (1...150).map { String(format: "frame-%06d.ppm", $0) })
        // By content: frame n + 50 and n + 100 are frame n again (the counter drawn in each frame
        // makes every frame of the clip distinct), so nothing repeats or goes missing at a seam.
        let frames = try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
        #expect(Set(frames[0..<50]).count == 50)
        for n in 0..<50 {
            #expect(frames[n + 50] == frames[n] && frames[n + 100] == frames[n], "frame \(n) differs across loops")
        }
        let file = try #require((try readSummary(out))["files"] as? [[String: Any]]).first
        #expect(file?["loopsCompleted"] as? Int == 3)
        #expect(file?["framesWritten"] as? Int == 150)
    }

    @Test func interruptCancelsAForeverLoopCleanly() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clip = try Fixtures.clip("video-only.mp4")
        let binary = try CLI.binary()
        let process = Process()
        process.executableURL = binary
        process.arguments = ["play", "--out", out.path, "--loop", "forever", "--realtime", "--format", "ppm", "--size", "32x18", clip]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Interrupt once frames are being written (so it lands while playing, not while starting).
        let firstFrame = out.appendingPathComponent("01-video-only.mp4/frame-000001.ppm").path
        for _ in 0..<1000 where !FileManager.default.fileExists(atPath: firstFrame) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(FileManager.default.fileExists(atPath: firstFrame))
        try await Task.sleep(for: .milliseconds(100))
        process.interrupt()
        let status = try await offPool {
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 130, "128 + SIGINT")
        let summary = try readSummary(out)
        #expect(summary["state"] as? String == "cancelled")
        #expect(summary["signal"] as? String == "SIGINT")
        let file = try #require(summary["files"] as? [[String: Any]]).first
        #expect(file?["status"] as? String == "cancelled")
    }

    @Test func audioGoesToWAVLoopsAppendAndAudioOnlyFilesPlay() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let clips = ["h264-aac.mp4", "audio-only.mp3", "video-only.mp4"]
        let paths = try clips.map { try Fixtures.clip($0) }
        let run = try await CLI.run(["play", "--out", out.path, "--loop", "2", "--size", "32x18"] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let files = try #require((try readSummary(out))["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["completed", "completed", "completed"])
        for (index, clip) in clips.enumerated() where clip != "video-only.mp4" {
            let once = await AudioSession(source: paths[index]).run(into: InMemoryAudioSink()).frames
            #expect(files[index]["audioFrames"] as? Int == 2 * once, "\(clip): a looped clip's WAV holds exactly twice the samples")
            let wav = out.appendingPathComponent(String(format: "%02d-%@/audio.wav", index + 1, clip)).path
            #expect(try await Reference.wavFrames(wav) == 2 * once)
        }
        #expect(files[2]["audioFrames"] == nil)
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("03-video-only.mp4/audio.wav").path))

        let quiet = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: quiet) }
        #expect(try await CLI.run(["play", "--out", quiet.path, "--no-audio", "--size", "32x18", paths[0]]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: quiet.appendingPathComponent("01-h264-aac.mp4/audio.wav").path))
    }

    @Test func queueWritesOneWAVInTheFirstAudiosFormat() async throws {
        let out = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let paths = try ["stereo-44k.mp4", "h264-aac.mp4", "audio-only.mp3"].map { try Fixtures.clip($0) }
        let run = try await CLI.run(["play", "--queue", "--out", out.path, "--size", "32x18"] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let wav = out.appendingPathComponent("queue/audio.wav").path
        let probe = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-show_entries", "stream=sample_rate,channels",
                    "-of", "csv=p=0", wav,
                ]), as: UTF8.self)
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "44100,2")
        var expected: [Int16] = []
        for path in paths { expected += await PlayerAudioTests.audio(path, AudioFormat(sampleRate: 44100, channelCount: 2)) }
        #expect(try await Reference.wavSamples(wav) == expected, "every file's audio, one after another, sample for sample")
        let summary = try readSummary(out)
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(files.compactMap { $0["audioFrames"] as? Int }.reduce(0, +) == expected.count / 2)
        #expect((summary["queue"] as? [String: Any])?["audioPath"] as? String == wav)
    }

    @Test func usageErrorsExitWithTwo() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        #expect(try await CLI.run(["play", clip]).status == 2)
        #expect(try await CLI.run(["play", "--out", "/tmp/x", "--size", "wide", clip]).status == 2)
        #expect(try await CLI.run(["play", "--out", "/tmp/x", "--gravity", "sideways", clip]).status == 2)
        #expect(try await CLI.run(["play", "--out", "/tmp/x", "--frames", "0", clip]).status == 2)
        #expect(try await CLI.run(["play", "--out", "/tmp/x", "--loop", "0", clip]).status == 2)
        #expect(try await CLI.run(["play", "--out", "/tmp/x", "--max-sessions", "0", clip]).status == 2)
    }

    private func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func readSummary(_ out: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
