import Foundation
import Testing

@testable import Playhead

/// Subtitles drawn into the picture (`--subtitles` on `play` and `thumbnails`,
/// ``DecodeConfiguration/subtitles``, ``AssetImageGenerator/subtitles``), with
/// `ffmpeg -vf subtitles=FILE:si=N` as the oracle (the same libass, the same fonts): each frame is
/// ffmpeg's, a frame inside a cue shows text the plain picture lacks, one outside it is the plain picture.
@Suite struct SubtitleBurnInTests {
    /// A 320x180 film with the English SRT (#1) and French ASS (#2) tracks of ``SubtitleTests``.
    static func film(in folder: String) async throws -> String {
        try await SubtitleTests.files(in: folder)
        let path = folder + "/film.mkv"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=3", "-i", folder + "/en.srt", "-i", folder + "/fr.ass",
                "-map", "0:v", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-c:s:0", "srt", "-c:s:1", "ass",
                "-metadata:s:s:0", "language=eng", "-metadata:s:s:1", "language=fra", path,
            ])
        return path
    }

    /// Frame `number` (from 1) of `path` as ffmpeg decodes it to RGB, through `filter` when given.
    static func ffmpegFrame(_ path: String, _ number: Int, filter: String?) async throws -> [UInt8] {
        let chain = (filter.map { [$0] } ?? []) + [selecting(number)]
        return try await rgbFrame(["-i", path, "-vf", chain.joined(separator: ",")])
    }

    /// The filter that keeps frame `number` (from 1) alone.
    static func selecting(_ number: Int) -> String { "select=eq(n\\,\(number - 1))" }

    /// The one frame ffmpeg gives for `arguments` (its inputs and filters), as RGB.
    static func rgbFrame(_ arguments: [String]) async throws -> [UInt8] {
        try await Reference.run(
            try Reference.ffmpeg(), ["-v", "error"] + arguments + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
    }

    /// The bytes of two pictures that differ by more than 8 (rounding in a conversion aside).
    static func differing(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return Int.max }
        return zip(a, b).filter { abs(Int($0) - Int($1)) > 8 }.count
    }

    /// The pixels of a PPM file of `size` (empty when it is not one).
    static func ours(_ ppm: String, size: String = "320 180") throws -> [UInt8] {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: ppm)))
        let header = Array("P6\n\(size)\n255\n".utf8)
        guard data.starts(with: header) else { return [] }
        return Array(data.dropFirst(header.count))
    }

    @Test func playDrawsTheChosenSubtitlesAsFFmpegDoes() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.film(in: folder)
        // English (#1, the default), French (#2, ASS, styled), the sidecar SubRip file.
        let cases: [(spec: String, filter: String, inside: [Int], outside: [Int])] = [
            ("default", "subtitles=\(path):si=0", [14, 26, 55], [5, 45, 75]),
            ("lang:fra", "subtitles=\(path):si=1", [20, 40, 60], [5, 50, 75]),
            (folder + "/en.srt", "subtitles=\(folder)/en.srt", [26], [5]),
        ]
        for (number, (spec, filter, inside, outside)) in cases.enumerated() {
            let out = folder + "/out\(number)"
            let run = try await CLI.run(["play", "--out", out, "--format", "ppm", "--no-audio", "--subtitles", spec, path])
            #expect(run.status == 0, "\(spec): \(run.stderr)")
            for frame in inside + outside {
                let ours = try Self.ours(out + String(format: "/01-film.mkv/frame-%06d.ppm", frame))
                let theirs = try await Self.ffmpegFrame(path, frame, filter: filter)
                let plain = try await Self.ffmpegFrame(path, frame, filter: nil)
                #expect(
                    Self.differing(ours, theirs) <= ours.count / 1000, "\(spec) frame \(frame): \(Self.differing(ours, theirs)) bytes unlike ffmpeg's"
                )
                if inside.contains(frame) {
                    #expect(Self.differing(ours, plain) > 300, "\(spec) frame \(frame) shows no text")
                } else {
                    #expect(Self.differing(ours, plain) <= ours.count / 1000, "\(spec) frame \(frame) shows text outside its cues")
                }
            }
        }
        // A track the file lacks: the file fails, naming what it holds.
        let missing = try await CLI.run(["play", "--out", folder + "/m", "--format", "none", "--subtitles", "lang:deu", path])
        #expect(missing.status == 1 && missing.stderr.contains("demux.trackNotFound"), "\(missing.stderr)")
        let typo = try await CLI.run(["play", "--out", folder + "/t", "--format", "none", "--subtitles", folder + "/none.srt", path])
        #expect(typo.status == 2, "\(typo.stderr)")
    }

    /// A thumbnail shows the cue of its time, as ffmpeg draws it; the library's generator too.
    @Test func imagesShowTheCueOfTheirTime() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.film(in: folder)
        let run = try await CLI.run([
            "thumbnails", "--out", folder + "/t", "--at", "1,1.9", "--format", "ppm", "--size", "320x180", "--subtitles", "lang:fra", path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        for (number, frame) in [(1, 26), (2, 48)] {
            let ours = try Self.ours(folder + "/t/01-film.mkv/thumb-000\(number).ppm")
            let theirs = try await Self.ffmpegFrame(path, frame, filter: "subtitles=\(path):si=1")
            #expect(Self.differing(ours, theirs) <= ours.count / 1000, "thumbnail \(number): \(Self.differing(ours, theirs)) bytes unlike ffmpeg's")
        }
        var generator = AssetImageGenerator(asset: Asset(path: path))
        generator.subtitles = .track(.default)
        let (image, _) = try await generator.image(at: MediaTime(value: 1, timescale: 1))
        let theirs = try await Self.ffmpegFrame(path, 26, filter: "subtitles=\(path):si=0")
        let plain = try await Self.ffmpegFrame(path, 26, filter: nil)
        #expect(Self.differing(image.pixels, theirs) <= image.pixels.count / 1000 && Self.differing(image.pixels, plain) > 300)
    }

    /// A file whose timestamps begin at 5 s: its own track is drawn on its own timeline (ffmpeg
    /// with `-copyts`, which keeps it), a subtitle file beside it from the file's start (ffmpeg
    /// without, which starts it at 0).
    @Test func aLateFileKeepsItsCuesInPlace() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await SubtitleTests.files(in: folder)
        let late = folder + "/late.mkv"
        for (spec, filter, copyts) in [("default", "subtitles=\(late):si=0", true), (folder + "/en.srt", "subtitles=\(folder)/en.srt", false)] {
            let out = folder + "/t-\(copyts)"
            let run = try await CLI.run(["thumbnails", "--out", out, "--at", "1", "--format", "ppm", "--size", "64x36", "--subtitles", spec, late])
            #expect(run.status == 0, "\(run.stderr)")
            let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out + "/01-late.mkv/thumb-0001.ppm")))
            let ours = Array(data.dropFirst("P6\n64 36\n255\n".utf8.count))
            let theirs = try await Reference.run(
                try Reference.ffmpeg(),
                ["-v", "error"] + (copyts ? ["-copyts"] : []) + [
                    "-i", late, "-vf", filter + ",select=eq(n\\,25)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
                ])
            let plain = try await Self.ffmpegFrame(late, 26, filter: nil)
            #expect(
                Self.differing(ours, theirs) <= 8 && Self.differing(ours, plain) > 20,
                "\(spec): \(Self.differing(ours, theirs)), \(Self.differing(ours, plain))")
        }
    }

    /// A composition layer draws its items' subtitles (`subtitles=`), in every pass: the first
    /// decoded, the second drawn from the loop cache (recorded as shown); a channel layer takes a
    /// subtitle file named beside its layout (`"subtitles"`), heard in its recording as the text drawn.
    @Test func layersDrawTheirItemsSubtitles() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.film(in: folder)
        let run = try await CLI.run([
            "compose", "--json", "--size", "320x180", "--rate", "25", "--duration", "6", "--format", "ppm", "--out", folder + "/c",
            "--layer", "x=0,y=0,w=320,h=180,loop=2,subtitles=lang:fra,source=\(path)",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let layer = try #require((summary["layers"] as? [[String: Any]])?.first)
        #expect((layer["framesFromLoopCache"] as? Int ?? 0) > 0, "the second pass is the loop cache's: \(layer)")
        let theirs = try await Self.ffmpegFrame(path, 20, filter: "subtitles=\(path):si=1")
        for frame in [20, 95] {
            let ours = try Self.ours(folder + String(format: "/c/composition/frame-%06d.ppm", frame))
            #expect(Self.differing(ours, theirs) <= ours.count / 1000, "frame \(frame): \(Self.differing(ours, theirs)) bytes unlike ffmpeg's")
        }

        try Data(#"[{"name": "film", "source": "film.mkv", "rect": [0, 0, 320, 180], "subtitles": "en.srt"}]"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/layout.json"))
        let channel = try await CLI.run([
            "playout", "--layout", folder + "/layout.json", "--size", "320x180", "--clock", "virtual", "--duration", "2", "--out", folder + "/rec.ts",
        ])
        #expect(channel.status == 0, "\(channel.stderr)")
        // The channel's frame 26 (1.0 s, inside the first cue), against ffmpeg's with and without the text.
        let aired = try await Self.ffmpegFrame(folder + "/rec.ts", 26, filter: nil)
        let burned = try await Self.ffmpegFrame(path, 26, filter: "subtitles=\(folder)/en.srt")
        let plain = try await Self.ffmpegFrame(path, 26, filter: nil)
        try #require(aired.count == burned.count && burned.count == plain.count && !aired.isEmpty, "\(aired.count) bytes against \(burned.count)")
        let (withText, without) = (Reference.psnr(aired, burned), Reference.psnr(aired, plain))
        #expect(withText > without + 3, "the recording is \(withText) dB from the drawn frame, \(without) dB from the plain one")
    }

    /// A byte source's own subtitles cannot be drawn (the filter opens files by name: a local file
    /// of the byte source's name would be read instead): refused, naming why; a subtitle file can.
    @Test func aByteSourcesOwnSubtitlesAreRefused() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.film(in: folder)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var configuration = DecodeConfiguration(frameLimit: 30)
        configuration.subtitles = .track(.default)
        let refused = await DecodeSession(asset: Asset(byteSource: MemoryByteSource(bytes), name: "film.mkv"), configuration: configuration)
            .run(into: NullSink())
        guard case .failed(let error) = refused.status else {
            Issue.record("drawn: \(refused.status)")
            return
        }
        #expect(error.code == .invalidArgument && error.message.contains("opens the file again"), "\(error)")
        configuration.subtitles = .file(folder + "/en.srt")
        let drawn = await DecodeSession(asset: Asset(byteSource: MemoryByteSource(bytes), name: "film.mkv"), configuration: configuration)
            .run(into: NullSink())
        #expect(drawn.status == .completed && drawn.framesDelivered == 30, "\(drawn.status)")
    }
}
