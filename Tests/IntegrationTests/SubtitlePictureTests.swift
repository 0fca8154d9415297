import Foundation
import Testing

@testable import Playhead

/// A bitmap subtitle track's pictures (PGS, and DVD as ffmpeg's own encoder converts them), with
/// ffmpeg as the oracle: each picture that `playhead subtitles --format json` writes, put where
/// its cue says on a black canvas, is the frame ffmpeg draws by overlaying the same track on black
/// (`[black][0:s]overlay`) at a time inside the cue — every pixel of the canvas, so a picture in the
/// wrong place, of the wrong colour or transparency, or a missing one fails.
@Suite struct SubtitlePictureTests {
    static let canvas = (width: 320, height: 240)

    /// The fixtures: the PGS file, the same in Matroska, and DVD subtitles (ffmpeg's `dvdsub`
    /// encoder, from the PGS pictures) in Matroska.
    static func files(in folder: String) async throws -> [String] {
        let sup = folder + "/pictures.sup"
        try SubtitleTests.pictureSubtitles(sup)
        let pgs = folder + "/pgs.mkv", dvd = folder + "/dvd.mkv"
        _ = try await Reference.run(try Reference.ffmpeg(), ["-v", "error", "-y", "-i", sup, "-map", "0", "-c", "copy", pgs])
        _ = try await Reference.run(try Reference.ffmpeg(), ["-v", "error", "-y", "-i", sup, "-c:s", "dvdsub", dvd])
        return [sup, pgs, dvd]
    }

    /// ffmpeg's frames of `path`'s subtitles overlaid on black, 25 a second for 6 s, as RGBA.
    static func ffmpegFrames(_ path: String) async throws -> [UInt8] {
        try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=\(canvas.width)x\(canvas.height):r=25:d=6,format=rgba", "-i", path,
                "-filter_complex", "[0:v][1:s]overlay=format=auto:eof_action=pass,format=rgba", "-frames:v", "150", "-f", "rawvideo",
                "-pix_fmt", "rgba", "-",
            ])
    }

    /// A PNG's pixels as RGBA, decoded by ffmpeg.
    static func rgba(_ png: String) async throws -> [UInt8] {
        try await Reference.run(try Reference.ffmpeg(), ["-v", "error", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgba", "-"])
    }

    @Test func picturesAreFFmpegsInTheirPlaces() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let frameBytes = Self.canvas.width * Self.canvas.height * 4
        for path in try await Self.files(in: folder) {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let out = folder + "/out-" + name
            let run = try await CLI.run(["subtitles", "--out", out, "--format", "json", "--json", path])
            #expect(run.status == 0, "\(name): \(run.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let report = try #require((summary["files"] as? [[String: Any]])?.first)
            #expect(report["pictures"] as? Int == 3, "\(name): \(report)")
            let place = out + "/01-" + name
            let cues = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: place + "/subtitles.json"))) as? [[String: Any]])
            #expect(cues.count == 3, "\(name): \(cues)")
            let reference = try await Self.ffmpegFrames(path)
            #expect(reference.count == 150 * frameBytes, "\(name): ffmpeg drew \(reference.count / frameBytes) frames")
            for (number, cue) in cues.enumerated() {
                let canvas = cue["canvas"] as? [String: Int]
                #expect(canvas == ["width": 320, "height": 240], "\(name) cue \(number + 1): \(cue)")
                let pictures = try #require(cue["pictures"] as? [[String: Any]], "\(name) cue \(number + 1): \(cue)")
                let expected = SubtitleTests.pictureCues[number].rect
                #expect(pictures.count == 1, "\(name) cue \(number + 1): \(pictures)")
                // Ours: each picture over black where the cue says it goes (alpha as overlay blends it).
                var ours = [UInt8](repeating: 0, count: frameBytes)
                for index in stride(from: 3, to: frameBytes, by: 4) { ours[index] = 255 }
                for picture in pictures {
                    let (x, y, w, h) = (
                        picture["x"] as? Int ?? -1, picture["y"] as? Int ?? -1, picture["width"] as? Int ?? 0, picture["height"] as? Int ?? 0
                    )
                    #expect(
                        x == expected.x && y == expected.y && w == expected.width && h == expected.height, "\(name) cue \(number + 1): \(picture)")
                    let file = try #require(picture["file"] as? String)
                    #expect(file == String(format: "cue-%06d-1.png", number + 1))
                    let pixels = try await Self.rgba(place + "/" + file)
                    try #require(pixels.count == w * h * 4 && x >= 0 && y >= 0 && x + w <= 320 && y + h <= 240, "\(name): \(file)")
                    for row in 0..<h {
                        for column in 0..<w {
                            let from = (row * w + column) * 4, to = ((y + row) * Self.canvas.width + x + column) * 4
                            let alpha = Int(pixels[from + 3])
                            for channel in 0..<3 {
                                let under = Int(ours[to + channel])
                                ours[to + channel] = UInt8((Int(pixels[from + channel]) * alpha + under * (255 - alpha) + 127) / 255)
                            }
                        }
                    }
                }
                // ffmpeg's frame half a second into the cue.
                let start = try #require(cue["start"] as? Double)
                let frame = Int(((start + 0.5) * 25).rounded())
                let theirs = reference[(frame * frameBytes)..<((frame + 1) * frameBytes)]
                let differing = zip(ours, theirs).filter { abs(Int($0) - Int($1)) > 2 }.count
                #expect(differing == 0, "\(name) cue \(number + 1): \(differing) bytes differ from ffmpeg's frame \(frame)")
                // The picture is not blank: ffmpeg shows something there (a wrong time would compare black with black).
                #expect(theirs.enumerated().contains { $0.offset % 4 != 3 && $0.element > 100 }, "\(name) cue \(number + 1): ffmpeg's frame is blank")
            }
        }
    }

    /// The library's stream: the same pictures and places, the canvas; a track that is not there
    /// is thrown by the loop (`demux.trackNotFound`), after nothing.
    @Test func theStreamGivesPicturesAndItsFailure() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sup = folder + "/pictures.sup"
        try SubtitleTests.pictureSubtitles(sup)
        let asset = Asset(path: sup)
        let stream = asset.subtitleCues(pictures: true, bufferingLimit: 1)
        var cues: [SubtitleCue] = []
        for try await cue in stream { cues.append(cue) }
        #expect(
            cues.map { $0.pictures.map(\.rect) }
                == SubtitleTests.pictureCues.map { [PixelRect(x: $0.rect.x, y: $0.rect.y, width: $0.rect.width, height: $0.rect.height)] })
        #expect(cues.map(\.start.seconds) == [1, 3, 5] && cues.prefix(2).map(\.end.seconds) == [2, 4.5], "\(cues.map(\.start))")
        #expect(stream.track?.canvasSize == PixelSize(width: 320, height: 240), "\(String(describing: stream.track))")
        // Without pictures: the times and counts only.
        var counted: [Int] = []
        var starts: [Double] = []
        for try await cue in asset.subtitleCues() {
            counted.append(cue.pictures.count * 10 + cue.pictureCount)
            starts.append(cue.start.seconds)
        }
        #expect(counted == [1, 1, 1], "\(starts)")
        // Read again from one asset, in every container: each read gives every cue (a rewind that
        // landed inside the first display set, or at the end of a Matroska file, gave fewer).
        for path in try await Self.files(in: folder) {
            let again = Asset(path: path)
            for round in 1...3 {
                var rects: [PixelRect] = []
                for try await cue in again.subtitleCues(pictures: true) { rects += cue.pictures.map(\.rect) }
                #expect(rects.count == 3, "\(path), read \(round): \(rects)")
            }
        }
        var taken = 0
        do {
            for try await _ in asset.subtitleCues(.index(7)) { taken += 1 }
            Issue.record("a missing track gave no error")
        } catch {
            #expect(error.code == .trackNotFound && taken == 0, "\(error)")
        }
    }

    /// A loop that stops early stops the read: the worker thread is given back (the read is
    /// over, short of the track's end) whether the loop breaks (its iterator dropped) or its task
    /// is cancelled while it waits — never a thread held by a queue nobody takes from.
    @Test func aLoopThatStopsEarlyStopsTheRead() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 400 cues, a picture each: far more than the queue holds.
        var text = ""
        for n in 0..<400 { text += String(format: "%d\n00:%02d:%02d,000 --> 00:%02d:%02d,500\nCue %d\n\n", n + 1, n / 60, n % 60, n / 60, n % 60, n) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/many.srt"))
        let asset = Asset(path: folder + "/many.srt")
        let broken = asset.subtitleCues(bufferingLimit: 1)
        var taken = 0
        for try await _ in broken {
            taken += 1
            if taken == 2 { break }
        }
        let until = ContinuousClock.now + Bound.seconds(5)
        while !broken.readHasEnded, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(10)) }
        #expect(broken.readHasEnded && broken.track == nil, "a broken loop left the read waiting (or it read on to the end)")
        #expect(!broken.isComplete, "a loop that broke off did not take every cue")

        let waiting = asset.subtitleCues(bufferingLimit: 1)
        let task = Task {
            var count = 0
            for try await _ in waiting {
                count += 1
                if count == 3 { try await Task.sleep(for: .seconds(60)) }
            }
            return count
        }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        _ = try? await task.value
        let later = ContinuousClock.now + Bound.seconds(5)
        while !waiting.readHasEnded, ContinuousClock.now < later { try await Task.sleep(for: .milliseconds(10)) }
        #expect(waiting.readHasEnded && waiting.track == nil && !waiting.isComplete, "a cancelled loop left the read waiting")

        // Read whole: every cue, and the track's facts.
        var all = 0
        let whole = asset.subtitleCues(bufferingLimit: 1)
        for try await _ in whole { all += 1 }
        #expect(all == 400 && whole.track?.cues.isEmpty == true && whole.isComplete, "\(all) cues")
    }

    /// A 320x240 film of 6 s with the PGS track of ``SubtitleTests/pictureSubtitles(_:)`` (its
    /// cues moved to 0, 2 and 4 s, as ffmpeg starts each input at 0).
    static func film(in folder: String) async throws -> (film: String, sup: String) {
        let sup = folder + "/pictures.sup"
        try SubtitleTests.pictureSubtitles(sup)
        let film = folder + "/film.mkv"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=6", "-i", sup, "-map", "0", "-map", "1", "-c:v", "libx264",
                "-preset", "ultrafast", "-c:s", "copy", film,
            ])
        return (film, sup)
    }

    /// Frame `number` (from 1) of `path` as ffmpeg decodes it to RGB, its subtitle track laid on
    /// (`[0:v][0:s]overlay`) when `overlaid`, or the pictures of `sidecar`.
    static func ffmpegFrame(_ path: String, _ number: Int, overlaid: Bool, sidecar: String? = nil) async throws -> [UInt8] {
        let select = SubtitleBurnInTests.selecting(number)
        guard let sidecar else {
            return try await SubtitleBurnInTests.rgbFrame(
                ["-i", path] + (overlaid ? ["-filter_complex", "[0:v][0:s]overlay=format=auto," + select] : ["-vf", select]))
        }
        // A file beside the film keeps its own times (as a SubRip file beside it does), which
        // ffmpeg does with -copyts (without, it would move the first cue to the film's start).
        return try await SubtitleBurnInTests.rgbFrame(
            ["-copyts", "-i", path, "-i", sidecar, "-filter_complex", "[0:v][1:s]overlay=format=auto," + select])
    }

    static func ppm(_ path: String) throws -> [UInt8] { try SubtitleBurnInTests.ours(path, size: "320 240") }

    /// Picture subtitles drawn in (`--subtitles` on `play`, `thumbnails` and a composition
    /// layer; a `.sup` file beside the film): each frame is ffmpeg's overlay of the track, a frame
    /// inside a cue shows the picture the plain frame lacks, one outside is the plain frame —
    /// thumbnails asked out of order too (the cues read again after a seek back), and every pass
    /// of a looped layer.
    @Test func picturesAreDrawnInAsFFmpegOverlaysThem() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (film, sup) = try await Self.film(in: folder)
        // Inside the cues (0–1, 2–3.5, 4– s) and between them.
        let inside = [6, 13, 51, 63, 81, 101, 140], outside = [31, 38, 95]
        let run = try await CLI.run(["play", "--out", folder + "/p", "--format", "ppm", "--no-audio", "--subtitles", "default", film])
        #expect(run.status == 0, "\(run.stderr)")
        for frame in inside + outside {
            let ours = try Self.ppm(folder + String(format: "/p/01-film.mkv/frame-%06d.ppm", frame))
            let theirs = try await Self.ffmpegFrame(film, frame, overlaid: true)
            let plain = try await Self.ffmpegFrame(film, frame, overlaid: false)
            #expect(
                SubtitleBurnInTests.differing(ours, theirs) == 0,
                "frame \(frame): \(SubtitleBurnInTests.differing(ours, theirs)) bytes unlike ffmpeg's")
            let shown = SubtitleBurnInTests.differing(ours, plain)
            #expect(inside.contains(frame) ? shown > 1000 : shown == 0, "frame \(frame): \(shown) bytes unlike the plain frame")
        }

        // Thumbnails out of order (a time before the last one reads the cues again), and the same
        // pictures from a .sup beside the film (its own times, from the film's start).
        for (name, spec) in [("track", "default"), ("sidecar", sup)] {
            let out = folder + "/t-" + name
            let thumbs = try await CLI.run(
                ["thumbnails", "--out", out, "--at", "4.5,0.5,2.5,1.5", "--format", "ppm", "--size", "320x240", "--subtitles", spec, film])
            #expect(thumbs.status == 0, "\(name): \(thumbs.stderr)")
            // Ascending order of time: 0.5, 1.5, 2.5, 4.5 s are frames 13, 38, 63, 113.
            for (number, frame) in [(1, 13), (2, 38), (3, 63), (4, 113)] {
                let ours = try Self.ppm(out + "/01-film.mkv/thumb-000\(number).ppm")
                let theirs = try await Self.ffmpegFrame(film, frame, overlaid: name == "track", sidecar: name == "sidecar" ? sup : nil)
                #expect(
                    SubtitleBurnInTests.differing(ours, theirs) == 0 && !ours.isEmpty,
                    "\(name) thumbnail \(number): \(SubtitleBurnInTests.differing(ours, theirs)) bytes unlike ffmpeg's")
            }
        }

        // A looped layer: the second pass (from the loop cache) shows the same pictures.
        let composed = try await CLI.run([
            "compose", "--json", "--size", "320x240", "--rate", "25", "--duration", "12", "--format", "ppm", "--out", folder + "/c",
            "--layer", "x=0,y=0,w=320,h=240,loop=2,subtitles=default,source=\(film)",
        ])
        #expect(composed.status == 0, "\(composed.stderr)")
        for frame in [13, 63] {
            let theirs = try await Self.ffmpegFrame(film, frame, overlaid: true)
            for pass in 0..<2 {
                let ours = try Self.ppm(folder + String(format: "/c/composition/frame-%06d.ppm", frame + 150 * pass))
                #expect(
                    SubtitleBurnInTests.differing(ours, theirs) <= ours.count / 1000 && !ours.isEmpty,
                    "pass \(pass + 1), frame \(frame): \(SubtitleBurnInTests.differing(ours, theirs)) bytes unlike ffmpeg's")
            }
        }
    }
}
