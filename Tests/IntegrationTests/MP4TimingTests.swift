import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// An exported MP4 keeps every frame and the sound where the source has them, measured as a
/// player that honours timestamps would (ffprobe's frame times; ffmpeg's decoded sound laid out by
/// its timestamps): a source of variable frame rate keeps its frame times; a flash and a beep that
/// coincide in the source coincide in the export, of a file and of a queue with gaps where an item
/// has no sound or no picture.
@Suite struct MP4TimingTests {
    /// Where things are in a file, in seconds of its own timeline.
    struct Timing {
        var frameTimes: [Double]
        var flash: Double?
        var beep: Double?
        /// The beep as a player that plays the sound without gaps from its first decoded sample
        /// (after the edit list) finds it.
        var contiguousBeep: Double?
    }

    /// `from`: where to start looking for the flash and the beep.
    static func measure(_ path: String, from: Double = 0) async throws -> Timing {
        let ffmpeg = try Reference.ffmpeg()
        let times = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time",
                    "-of", "csv=p=0", path,
                ]), as: UTF8.self
        )
        .split(separator: "\n").compactMap { Double($0.split(separator: ",").first ?? "") }
        // Each frame as 8x8 grey, in decoding order with the times above.
        let grey = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough", "-s", "8x8", "-pix_fmt", "gray",
                "-f", "rawvideo", "-",
            ])
        #expect(grey.count == times.count * 64, "\(path): \(grey.count / 64) frames decoded, \(times.count) timed")
        var flash: Double?
        for (index, time) in times.enumerated() where (index + 1) * 64 <= grey.count && time >= from {
            if grey[(index * 64)..<((index + 1) * 64)].reduce(0, { $0 + Int($1) }) / 64 > 128 {
                flash = time
                break
            }
        }
        // The sound's first decoded sample (after the edit list hides the priming): its time.
        let first = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-select_streams", "a", "-show_entries", "frame=pts_time",
                    "-of", "csv=p=0", path,
                ]), as: UTF8.self
        )
        .split(separator: "\n").first.flatMap { Double($0.split(separator: ",").first ?? "") }
        /// The first sample louder than the beep's threshold at or after `from`, in seconds, with
        /// the sound decoded by `filter` and counted from its first sample.
        func beep(_ filter: [String]) async throws -> Double? {
            guard let first else { return nil }
            let sound = try await Reference.run(
                ffmpeg, ["-v", "error", "-i", path, "-map", "0:a"] + filter + ["-ac", "1", "-ar", "48000", "-f", "s16le", "-"])
            var index = max(0, Int((from - first) * 48000)) * 2
            while index + 1 < sound.count {
                let sample = Int16(bitPattern: UInt16(sound[index]) | UInt16(sound[index + 1]) << 8)
                if abs(Int(sample)) > 3000 { return first + Double(index / 2) / 48000 }
                index += 2
            }
            return nil
        }
        // Laid out on its timestamps (a gap between packets filled with silence), and as decoded.
        let laidOut = try await beep(["-af", "aresample=async=1:min_hard_comp=0.001"])
        let contiguousBeep = try await beep([])
        return Timing(frameTimes: times, flash: flash, beep: laidOut, contiguousBeep: contiguousBeep)
    }

    /// Black at `rate` with a white flash and a 1 kHz beep at `at`; `timing` (an expression of N
    /// for setpts) makes the frame rate vary.
    static func flashAndBeep(_ path: String, duration: Double, at: Double, timing: String? = nil) async throws {
        var video = "[0:v]drawbox=c=white:t=fill:enable='between(t,\(at),\(at + 0.02))'"
        if let timing { video = "[0:v]setpts='(\(timing))/TB',drawbox=c=white:t=fill:enable='between(t,\(at),\(at + 0.02))'" }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:s=320x240:r=30:d=\(duration * 3)", "-f", "lavfi", "-i",
                "sine=f=1000:sample_rate=48000:d=\(duration)",
                "-filter_complex", video + "[v];[1:a]volume=volume=0:enable='not(between(t,\(at),\(at + 0.1)))'[a]",
                "-map", "[v]", "-map", "[a]", "-t", String(duration), "-fps_mode", "vfr", "-c:v", "libx264", "-preset", "veryfast", "-c:a", "aac",
                path,
            ])
    }

    static func play(_ arguments: [String], out: String) async throws {
        let run = try await CLI.run(["play", "--format", "mp4", "--out", out] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test func variableFrameRateKeepsEveryFrameAndTheSoundInPlace() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 30 fps for a second, 10 fps for two, then 20 fps: the flash falls in the slow part.
        let source = folder + "/vfr.mp4"
        try await Self.flashAndBeep(source, duration: 4, at: 2.2, timing: "if(lt(N,30),N/30,if(lt(N,50),1+(N-30)/10,3+(N-50)/20))")
        let original = try await Self.measure(source)
        try #require(original.frameTimes.count > 50 && original.flash != nil && original.beep != nil, "\(original)")
        try await Self.play([source], out: folder + "/p")
        let export = try await Self.measure(folder + "/p/01-vfr.mp4/video.mp4")
        #expect(export.frameTimes.count == original.frameTimes.count)
        // Every frame where the source has it: the edit list hides the encoder's reordering delay.
        let shift = (export.frameTimes.first ?? 0) - (original.frameTimes.first ?? 0)
        #expect(abs(shift) < 0.001, "the picture starts \(shift) s late")
        let worst = zip(export.frameTimes, original.frameTimes).map { abs($0 - shift - $1) }.max() ?? .infinity
        #expect(worst < 0.001, "a frame is \(worst) s from its time")
        try Self.expectInSync(export, original, shift: shift)
    }

    /// A session of a range (start 12 s, end 22 s of a 30 s source, at 30 fps) into an MP4 with
    /// its sound input: the file holds the range alone — it begins at 0 with the frame displayed
    /// at 12 s, lasts 10 s, and its flash and beep (at 15 s in the source) are 3 s in, together.
    /// Before, it was 22 s long, the first frame held over silence for 10 s.
    @Test func aSessionOfARangeMakesAFileOfThatRange() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/long.mp4"
        try await Self.flashAndBeep(source, duration: 30, at: 15)
        let original = try await Self.measure(source, from: 14)
        let out = folder + "/range.mp4"
        let sink = MP4Sink(path: out)
        let configuration = DecodeConfiguration(startTime: MediaTime(seconds: 12), endTime: MediaTime(seconds: 22))
        let result = await DecodeSession(source: source, configuration: configuration).run(into: sink, audio: sink.soundInput())
        #expect(result.status == .completed && result.framesDelivered == 300, "\(result.status), \(result.framesDelivered) frames")
        let export = try await Self.measure(out)
        #expect(export.frameTimes.count == 300 && abs((export.frameTimes.first ?? -1) - 0) < 0.001, "\(export.frameTimes.prefix(3))")
        #expect(abs((export.frameTimes.last ?? 0) - 299.0 / 30) < 0.002, "last frame at \(export.frameTimes.last ?? 0)")
        #expect(abs((export.flash ?? 0) - ((original.flash ?? 0) - 12)) < 0.001, "flash at \(String(describing: export.flash))")
        #expect(abs((export.beep ?? 0) - ((original.beep ?? 0) - 12)) < 0.001, "beep at \(String(describing: export.beep))")
        let duration = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", out]),
            as: UTF8.self)
        // Each stream lasts the range (the sound to its AAC frame, 1024 samples).
        let streams = duration.split(separator: "\n").map { $0.split(separator: ",") }
        for stream in streams where stream.count == 2 {
            let seconds = Double(stream[1]) ?? 0
            #expect(abs(seconds - 10) < (stream[0] == "audio" ? 1024.0 / 48000 : 0.001), "the \(stream[0]) lasts \(seconds) s")
        }
        #expect(streams.count == 2, "\(duration)")
    }

    /// A first frame followed by 10 s without a picture (the encoder would take that gap for its
    /// reordering delay): every frame keeps its time, the picture starts at 0 and lasts as long
    /// as the source's, and the sound stays with it.
    @Test func aGapAfterTheFirstFrameMovesNothing() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/gap.mp4"
        try await Self.flashAndBeep(source, duration: 12, at: 11, timing: "if(eq(N,0),0,(N/30)+10)")
        let original = try await Self.measure(source)
        try #require(original.frameTimes.count > 20 && (original.frameTimes.dropFirst().first ?? 0) > 10, "\(original.frameTimes.prefix(3))")
        try await Self.play([source], out: folder + "/p")
        let export = try await Self.measure(folder + "/p/01-gap.mp4/video.mp4")
        #expect(export.frameTimes.count == original.frameTimes.count)
        let worst = zip(export.frameTimes, original.frameTimes).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 0.001, "a frame is \(worst) s from its time")
        let durations = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "stream=duration",
                    "-of", "csv=p=0", folder + "/p/01-gap.mp4/video.mp4",
                ]), as: UTF8.self)
        let duration = try #require(Double(durations.trimmingCharacters(in: .whitespacesAndNewlines)), "\(durations)")
        #expect(duration < 12.5, "the picture lasts \(duration) s")
        try Self.expectInSync(export, original, shift: 0)
    }

    @Test func aQueueKeepsTheSoundWithThePictureAcrossItemsWithoutOne() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/flash.mp4"
        try await Self.flashAndBeep(source, duration: 3, at: 1.5)
        let original = try await Self.measure(source)
        // A picture alone (2 s), a sound alone (2 s), then the flash: 4 s into the queue.
        try await Self.play(
            ["--queue", "--size", "320x240", try Fixtures.clip("video-only.mp4"), try Fixtures.clip("audio-only.m4a"), source], out: folder + "/q")
        let export = try await Self.measure(folder + "/q/queue/video.mp4", from: 4.3)
        let shift = export.frameTimes.first ?? 0
        #expect(abs(shift) < 0.001, "the picture starts \(shift) s late")
        let flash = try #require(export.flash), expected = try #require(original.flash)
        #expect(abs(flash - shift - 4 - expected) < 0.02, "the flash at \(flash - shift) s, not \(4 + expected)")
        try Self.expectInSync(export, original, shift: shift)
    }

    /// The beep is as far from the flash as in the source, to 3 ms, whether the sound is laid out
    /// by its timestamps or played without gaps from its first sample (the AAC priming hidden).
    static func expectInSync(_ export: Timing, _ original: Timing, shift: Double, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let flash = try #require(export.flash, sourceLocation: sourceLocation), beep = try #require(export.beep, sourceLocation: sourceLocation)
        let sourceGap = try #require(original.beep, sourceLocation: sourceLocation) - (try #require(original.flash, sourceLocation: sourceLocation))
        #expect(
            abs((beep - flash) - sourceGap) < 0.003,
            "sound \(((beep - flash) - sourceGap) * 1000) ms from the picture (flash \(flash), beep \(beep))",
            sourceLocation: sourceLocation)
        let played = try #require(export.contiguousBeep, sourceLocation: sourceLocation)
        #expect(
            abs((played - flash) - sourceGap) < 0.003,
            "played without gaps, the sound is \(((played - flash) - sourceGap) * 1000) ms from the picture",
            sourceLocation: sourceLocation)
    }

    // MARK: As ffmpeg's CLI decodes an export

    /// Where a file's flashes and beeps are as `ffmpeg -i FILE` decodes it to raw frames and raw
    /// sound (frames at the output's constant rate, the sound from its first sample without
    /// timestamps): the numbers of the flash frames, the beeps' onsets in seconds, and the
    /// streams' durations as ffprobe reads them.
    struct Decoded: CustomStringConvertible {
        var flashes: [Int]
        var onsets: [Double]
        var pictureDuration: Double
        var soundDuration: Double
        /// Seconds of sound decoded.
        var decodedSound: Double
        var description: String {
            "flashes \(flashes), onsets \(onsets.map { (($0 * 10000).rounded() / 10000) }), picture \(pictureDuration) s, sound \(soundDuration) s"
        }
    }

    static func decodedByFFmpeg(_ path: String) async throws -> Decoded {
        let ffmpeg = try Reference.ffmpeg()
        let grey = try await Reference.run(
            ffmpeg, ["-v", "error", "-i", path, "-map", "0:v:0", "-s", "8x8", "-pix_fmt", "gray", "-f", "rawvideo", "-"])
        let flashes = stride(from: 0, to: grey.count / 64, by: 1).filter { i in grey[(i * 64)..<((i + 1) * 64)].reduce(0) { $0 + Int($1) } / 64 > 128
        }
        let sound = try await Reference.run(ffmpeg, ["-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1", "-f", "s16le", "-"])
        var onsets: [Double] = []
        var index = 0
        while index + 1 < sound.count {
            let sample = Int16(bitPattern: UInt16(sound[index]) | UInt16(sound[index + 1]) << 8)
            if abs(Int(sample)) > 3000 {
                onsets.append(Double(index / 2) / 48000)
                index += 2 * 24_000
            } else {
                index += 2
            }
        }
        func duration(_ stream: String) async throws -> Double {
            let text = String(
                decoding: try await Reference.run(
                    "/usr/bin/ffprobe",
                    [
                        "-v", "error", "-select_streams", stream, "-show_entries", "stream=duration",
                        "-of", "csv=p=0", path,
                    ]), as: UTF8.self)
            return try #require(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(path) \(stream): \(text)")
        }
        return Decoded(
            flashes: flashes, onsets: onsets, pictureDuration: try await duration("v:0"), soundDuration: try await duration("a:0"),
            decodedSound: Double(sound.count / 2) / 48000)
    }

    /// 4 s at 25 fps with B-frames: a white flash on frames 0, 25, 50 and 75 and a 1 kHz beep
    /// for the first 50 ms of each second; `pictureDelay` starts the picture that much after the sound.
    static func flashesAndBeeps(_ path: String, pictureDelay: Double = 0) async throws {
        var video = "[0:v]geq=lum='if(eq(mod(N\\,25)\\,0)\\,235\\,16)':cb=128:cr=128"
        if pictureDelay > 0 { video += ",setpts=PTS+\(pictureDelay)/TB" }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:s=160x90:r=25:d=4", "-f", "lavfi", "-i",
                "sine=f=1000:sample_rate=48000:d=\(4 + pictureDelay)",
                "-filter_complex", video + "[v];[1:a]volume=volume=0:enable='gte(mod(t\\,1)\\,0.05)'[a]",
                "-map", "[v]", "-map", "[a]", "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-c:a", "aac", path,
            ])
    }

    /// Every export decoded as ffmpeg decodes any file: the flashes on the source's frame numbers
    /// (no first frame repeated), each beep within 1 ms of the source's, for a file, a picture
    /// that starts after its sound, a queue and a composition; the composition's sound as long as
    /// its picture.
    @Test func exportsDecodeLikeTheirSourceFrameForFrameAndSampleForSample() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/flash.mp4", late = folder + "/late.mp4", variable = folder + "/vfr.mp4"
        try await Self.flashesAndBeeps(source)
        try await Self.flashesAndBeeps(late, pictureDelay: 0.5)
        // 30 fps for a second, 10 fps for two, then 20 fps; one flash and beep at 2.2 s.
        try await Self.flashAndBeep(variable, duration: 4, at: 2.2, timing: "if(lt(N,30),N/30,if(lt(N,50),1+(N-30)/10,3+(N-50)/20))")
        for (input, name) in [(source, "flash.mp4"), (late, "late.mp4"), (variable, "vfr.mp4")] {
            let original = try await Self.decodedByFFmpeg(input)
            try #require(!original.flashes.isEmpty && !original.onsets.isEmpty, "the source: \(original)")
            try await Self.play([input], out: folder + "/p-" + name)
            let export = try await Self.decodedByFFmpeg(folder + "/p-\(name)/01-\(name)/video.mp4")
            #expect(export.flashes == original.flashes, "\(name): export \(export), source \(original)")
            #expect(
                export.onsets.count == original.onsets.count && zip(export.onsets, original.onsets).allSatisfy { abs($0 - $1) < 0.001 },
                "\(name): export \(export), source \(original)")
            // The picture as long as the source's (the variable-rate source's edit list ends at its
            // last frame's start; the export lasts through that frame's own duration, 1/30 s);
            // the sound as long as the source's decoded sound (ffmpeg decodes the AAC padding
            // after the last sample too; the export keeps it).
            let lastFrame = name == "vfr.mp4" ? 1.0 / 30 + 0.001 : 0.001
            #expect(
                abs(export.pictureDuration - original.pictureDuration) < lastFrame && abs(export.soundDuration - original.decodedSound) < 0.0015,
                "\(name): export \(export), source \(original)")
        }
        let original = try await Self.decodedByFFmpeg(source)
        // A queue of the file twice: the second begins where the first's longer stream ends (its
        // sound, with the AAC padding ffmpeg decodes: the sound joins sample for sample), its
        // picture with it.
        try await Self.play(["--queue", source, source], out: folder + "/q")
        let queue = try await Self.decodedByFFmpeg(folder + "/q/queue/video.mp4")
        let second = Int((original.decodedSound * 25).rounded())
        #expect(queue.flashes == original.flashes + original.flashes.map { $0 + second }, "queue \(queue)")
        let twice = original.onsets + original.onsets.map { $0 + original.decodedSound }
        #expect(
            queue.onsets.count == twice.count && zip(queue.onsets, twice).allSatisfy { abs($0 - $1) < 0.001 }, "queue \(queue), expected \(twice)")
        // A composition looping the file for 6 s: frames and beeps pass after pass, the sound as long as the picture.
        let run = try await CLI.run([
            "compose", "--size", "160x90", "--rate", "25", "--duration", "6", "--format", "mp4", "--out", folder + "/c",
            "--layer", "x=0,y=0,w=160,h=90,loop=forever,audio=yes,source=\(source)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let composed = try await Self.decodedByFFmpeg(folder + "/c/composition/video.mp4")
        #expect(composed.flashes == [0, 25, 50, 75, 100, 125], "composition \(composed)")
        let composedOnsets = original.onsets + original.onsets.prefix(2).map { $0 + 4 }
        #expect(
            composed.onsets.count == composedOnsets.count && zip(composed.onsets, composedOnsets).allSatisfy { abs($0 - $1) < 0.001 },
            "composition \(composed)")
        #expect(abs(composed.pictureDuration - 6) < 0.001 && abs(composed.soundDuration - 6) < 0.001, "composition \(composed)")
    }
}
