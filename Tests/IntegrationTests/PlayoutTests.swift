import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// `playhead playout` on the virtual clock: a long timeline whose every flash and beep stays
/// where it is at the start (no drift across a loop's seams), exactly duration × rate frames,
/// the sound as long as the picture.
@Suite struct PlayoutTests {
    /// A 4 s background at 25 fps with a white flash on frames 0, 25, 50, 75 and a 1 kHz beep for
    /// the first 50 ms of each second (as its 1024-sample frames fall), and its layout under a
    /// playlist zone (the right half: the left half shows the flashes).
    static func channel(in folder: String) async throws -> String {
        let ffmpeg = try Reference.ffmpeg()
        let background = folder + "/background.mp4"
        _ = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=64x36:r=25:d=4,geq=lum='if(eq(mod(N\\,25)\\,0)\\,235\\,16)':cb=128:cr=128",
                "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=4",
                "-filter_complex", "[1:a]volume=volume=0:enable='gte(mod(t\\,1)\\,0.05)'[a]", "-map", "0:v", "-map", "[a]",
                "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac", background,
            ])
        let layout = folder + "/channel.json"
        let zone = [try Fixtures.clip("h264-aac.mp4"), try Fixtures.clip("4x3.mp4")].map { "\"\($0)\"" }.joined(separator: ", ")
        try Data(
            """
            [{"name": "background", "source": "background.mp4", "rect": [0, 0, 64, 36], "loop": "forever", "audio": true},
             {"name": "zone", "sources": [\(zone)], "rect": [32, 0, 32, 36], "z": 1, "loop": "forever"}]
            """.utf8
        ).write(to: URL(fileURLWithPath: layout))
        return layout
    }

    /// Where the flashes (frame numbers, the left half brighter than mid-grey) and the beeps (the
    /// first sample louder than 2000 (of 32767) after half a second of quiet, in the sound
    /// decoded at 8 kHz mono, counted from the first sample) are in `path`; how long its sound
    /// lasts, and where its picture starts after its sound.
    static func marks(_ path: String) async throws -> (frames: Int, flashes: [Int], onsets: [Double], sound: Double, videoStart: Double) {
        let ffmpeg = try Reference.ffmpeg()
        let grey = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-i", path, "-map", "0:v", "-vf", "crop=32:36:0:0,scale=4:4", "-pix_fmt", "gray",
                "-fps_mode", "passthrough", "-f", "rawvideo", "-",
            ])
        let frames = grey.count / 16
        let flashes = (0..<frames).filter { n in grey[(n * 16)..<((n + 1) * 16)].reduce(0) { $0 + Int($1) } / 16 > 128 }
        let sound = try await Reference.run(ffmpeg, ["-v", "error", "-i", path, "-map", "0:a", "-ac", "1", "-ar", "8000", "-f", "s16le", "-"])
        var onsets: [Double] = []
        sound.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            var quiet = 0
            for i in 0..<samples.count {
                let loud = abs(Int(samples[i])) > 2000
                if loud, quiet >= 4000 { onsets.append(Double(i) / 8000) }
                quiet = loud ? 0 : quiet + 1
            }
        }
        let starts = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-show_entries", "stream=codec_type,start_time",
                    "-of", "csv=p=0", path,
                ]), as: UTF8.self)
        var start: [String: Double] = [:]
        for line in starts.split(separator: "\n") {
            let fields = line.split(separator: ",")
            if fields.count == 2, let value = Double(fields[1]) { start[String(fields[0])] = start[String(fields[0])] ?? value }
        }
        return (frames, flashes, onsets, Double(sound.count / 2) / 8000, (start["video"] ?? 0) - (start["audio"] ?? 0))
    }

    @Test func aVirtualHourKeepsEveryFlashAndBeepInPlace() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await Self.channel(in: folder)
        let source = try await Self.marks(folder + "/background.mp4")
        try #require(source.flashes == [0, 25, 50, 75] && source.onsets.count == 3, "the background: \(source)")
        let recording = folder + "/hour.ts"
        let run = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "3600",
            "--out", recording, "--as-run", folder + "/as-run.jsonl",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let channel = try await Self.marks(recording)
        #expect(channel.frames == 90_000, "\(channel.frames) frames")
        // A flash every second, on frame 25k, to the last.
        #expect(
            channel.flashes.count == 3600 && channel.flashes.enumerated().allSatisfy { $0.element == 25 * $0.offset },
            "\(channel.flashes.count) flashes; first off \(channel.flashes.enumerated().first { $0.element != 25 * $0.offset }.map { "\($0)" } ?? "none")"
        )
        // Every beep where the background has it within its second (its first pass's beep at 0
        // follows no silence), on the picture's timeline: the same at the end as at the start.
        let placed = channel.onsets.map { $0 - channel.videoStart }
        let seconds = placed.map { $0.rounded(.down) }
        let offsets = placed.map { $0 - $0.rounded(.down) }
        #expect(channel.onsets.count == 3599 && seconds.enumerated().allSatisfy { Int($0.element) == $0.offset + 1 }, "\(channel.onsets.count) beeps")
        let expected = source.onsets.map { ($0 - source.videoStart) - ($0 - source.videoStart).rounded(.down) }
        var worst = 0.0
        for (second, offset) in zip(seconds, offsets) where Int(second) % 4 != 0 {
            worst = max(worst, abs(offset - expected[Int(second) % 4 - 1]))
        }
        #expect(worst < 0.001, "a beep is \(worst * 1000) ms from where the background has it")
        let drift = zip(offsets, offsets.dropFirst(4)).map { abs($0 - $1) }.max() ?? 1
        #expect(drift < 0.001, "a beep moved \(drift * 1000) ms from one pass to the next")
        // The sound as long as the picture (and the AAC padding of its last frame).
        #expect(abs(channel.sound - channel.videoStart - 3600) < 0.05, "\(channel.sound) s of sound")
        // The as-run log: the background's 900 passes and the zone's items, in order.
        let lines = try String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8).split(separator: "\n")
        let records = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.filter { $0["layer"] as? String == "background" && $0["status"] as? String == "played" }.count == 900)
        #expect(records.contains { $0["kind"] as? String == "output" && $0["state"] as? String == "finished" })
    }

    /// `--loudness -23`: each item of a layer that gives sound is brought to the target (EBU R128,
    /// measured by libavfilter's ebur128 both here and in the channel), its measure in the as-run log.
    @Test func itemsAreBroughtToTheLoudnessTarget() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try Reference.ffmpeg()
        for (name, volume) in [("quiet", "0.1"), ("loud", "0.5")] {
            _ = try await Reference.run(
                ffmpeg,
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=3",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3,volume=\(volume)",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "\(folder)/\(name).mp4",
                ])
        }
        try Data(#"[{"name": "music", "sources": ["quiet.mp4", "loud.mp4"], "rect": [0, 0, 64, 36], "loop": "forever", "audio": true}]"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/channel.json"))
        let run = try await CLI.run([
            "playout", "--layout", folder + "/channel.json", "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "12",
            "--loudness", "-23", "--out", folder + "/out.ts", "--as-run", folder + "/as-run.jsonl",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        /// The integrated loudness of `seconds` of the channel's sound from `start`.
        func loudness(from start: Double, seconds: Double) async throws -> Double? {
            let text = String(
                decoding: try await Reference.run(
                    ffmpeg,
                    [
                        "-v", "error", "-ss", String(start), "-t", String(seconds), "-i", folder + "/out.ts", "-map", "0:a",
                        "-af", "ebur128=metadata=1,ametadata=mode=print:key=lavfi.r128.I:file=-", "-f", "null", "-",
                    ]), as: UTF8.self)
            return text.split(separator: "\n").last { $0.hasPrefix("lavfi.r128.I=") }.flatMap { Double($0.dropFirst("lavfi.r128.I=".count)) }
        }
        // Each pass of each item (the middle 2 s of each 3 s pass).
        for start in [0.5, 3.5, 6.5, 9.5] {
            let measured = try #require(try await loudness(from: start, seconds: 2), "no loudness at \(start) s")
            #expect(abs(measured + 23) < 0.5, "\(measured) LUFS from \(start) s, not -23")
        }
        let records = try String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.filter { $0["kind"] as? String == "item" }
        let measures = Dictionary(
            records.compactMap { record in (record["source"] as? String).map { ($0, record["loudness"] as? Double) } },
            uniquingKeysWith: { a, _ in a })
        #expect(
            measures.count == 2 && measures.values.allSatisfy { $0 != nil }
                && (measures[folder + "/loud.mp4"] ?? 0)! > (measures[folder + "/quiet.mp4"] ?? 0)!,
            "\(measures)")
    }

    /// A layer anchored to a schedule (`startsAt`) comes back where the schedule is: a channel
    /// (re)started 7.3 s into a playlist of a 2 s and a 3 s item that loops starts the second item
    /// 0.3 s in, its first pass begun 0.3 s before the channel's first frame, one loop completed.
    @Test func aRestartResumesOnSchedule() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let second = folder + "/three.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=3",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", second,
            ])
        let startsAt = Date().addingTimeInterval(-7.3).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        try Data(
            """
            [{"name": "show", "sources": ["\(try Fixtures.clip("video-only.mp4"))", "\(second)"], "rect": [0, 0, 64, 36], "loop": "forever", "startsAt": "\(startsAt)"}]
            """.utf8
        ).write(to: URL(fileURLWithPath: folder + "/channel.json"))
        let launched = Date()
        let run = try await CLI.run([
            "playout", "--layout", folder + "/channel.json", "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "1",
            "--out", folder + "/out.ts", "--as-run", folder + "/as-run.jsonl",
        ])
        let took = Date().timeIntervalSince(launched)
        #expect(run.status == 0, "\(run.stderr)")
        let first = try #require(
            try String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8).split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first { $0["kind"] as? String == "item" })
        let start = try #require(first["canvasStart"] as? Double)
        // The schedule is 7.3 s old when the command starts, and older by the time it takes to
        // start: at most as long as the whole run took (on a machine busy with other tests, more
        // than a second).
        #expect(first["item"] as? Int == 2 && start <= -0.3 + 0.01 && start >= -0.31 - took, "\(first), the run took \(took) s")
    }

    /// A refused layout version changes nothing (it removed one layer and added one that did not
    /// fit, and was half taken: the old layer gone, an orphan added that later versions could not
    /// remove); the old version saved again changes nothing either, and a real change after it is
    /// taken — through the file an operator edits, not only the library.
    @Test func aRefusedLayoutThenTheOldOneChangesNothing() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = try await LiveEditTests.clips(in: folder)
        func version(_ layers: [(name: String, source: String, rect: String)]) -> Data {
            Data(
                ("["
                    + layers.map { #"{"name": "\#($0.name)", "source": "\#($0.source)", "rect": \#($0.rect), "loop": "forever"}"# }
                    .joined(separator: ", ") + "]").utf8)
        }
        let first = version([("screen", paths[0], "[0, 0, 32, 36]"), ("side", paths[1], "[32, 0, 32, 36]")])
        let layout = folder + "/channel.json"
        func save(_ data: Data) throws {
            try data.write(to: URL(fileURLWithPath: layout + ".new"))
            try #require(rename(layout + ".new", layout) == 0)
        }
        try save(first)
        let errors = folder + "/stderr.txt"
        try #require(FileManager.default.createFile(atPath: errors, contents: nil))
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = [
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "60",
            "--out", folder + "/out.ts", "--as-run", folder + "/as-run.jsonl",
        ]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func said(_ text: String, times: Int = 1) async throws -> Bool {
            let deadline = ContinuousClock.now + Bound.seconds(30)
            while ContinuousClock.now < deadline {
                let written = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                if written.components(separatedBy: text).count - 1 >= times { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return false
        }
        func items(of layer: String) -> [[String: Any]] {
            ((try? String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["kind"] as? String == "item" && $0["layer"] as? String == layer }
        }
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while items(of: "side").isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        // side removed, bad added off the canvas: refused whole.
        try save(version([("screen", paths[0], "[0, 0, 32, 36]"), ("bad", paths[2], "[60, 0, 32, 36]")]))
        #expect(try await said("new version refused"), "\(String(describing: try? String(contentsOfFile: errors, encoding: .utf8)))")
        let sideBefore = items(of: "side").count
        // The old version saved again, then a real change.
        try save(first)
        #expect(try await said("new version taken"))
        try await Task.sleep(for: .seconds(2))
        try save(version([("screen", paths[0], "[0, 0, 32, 36]"), ("other", paths[2], "[32, 0, 32, 36]")]))
        #expect(try await said("new version taken", times: 2))
        let until = ContinuousClock.now + Bound.seconds(30)
        while items(of: "other").isEmpty, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(20)) }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 143, "\(process.terminationStatus)")
        #expect(items(of: "bad").isEmpty, "the refused layer aired: \(items(of: "bad"))")
        #expect(items(of: "side").count > sideBefore, "side played on after the refused version (\(sideBefore) items then)")
        #expect(!items(of: "other").isEmpty && items(of: "screen").allSatisfy { $0["status"] as? String == "played" })
        let written = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(written.contains("layer bad") || written.contains("bad"), "the refusal names the layer: \(written)")
    }

    /// A source file replaced while the channel plays it in a loop (an atomic rename, as a sync
    /// tool does) is taken at the layer's next item boundary without an edit of the layout: the
    /// channel shows the new picture from then on (the loop cache's pictures of the old file let
    /// go), and says so. A source missing at the start (its slots filled) is taken the same way
    /// once it appears.
    @Test func aSourceReplacedInPlaceIsTakenAtTheNextItem() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try Reference.ffmpeg()
        // The new file is 20 dB louder than the old one.
        for (colour, volume) in [("blue", "0.05"), ("red", "0.5")] {
            _ = try await Reference.run(
                ffmpeg,
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=\(colour):size=64x36:rate=25:duration=1",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1,volume=\(volume)",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "\(folder)/\(colour).mp4",
                ])
        }
        try FileManager.default.copyItem(atPath: folder + "/blue.mp4", toPath: folder + "/clip.mp4")
        try Data(
            #"""
            [{"name": "screen", "source": "clip.mp4", "rect": [0, 0, 32, 36], "gravity": "stretch", "loop": "forever", "audio": true},
             {"name": "late", "source": "late.mp4", "rect": [32, 0, 32, 36], "gravity": "stretch", "loop": "forever"}]
            """#.utf8
        )
        .write(to: URL(fileURLWithPath: folder + "/channel.json"))
        async let run = CLI.run([
            "playout", "--layout", folder + "/channel.json", "--size", "64x36", "--rate", "25", "--duration", "8",
            "--slot", "1", "--loudness", "-23", "--out", folder + "/out.ts", "--as-run", folder + "/as-run.jsonl",
        ])
        // Once the first pass has aired, the file is replaced.
        let deadline = ContinuousClock.now + Bound.seconds(30)
        func items() -> [[String: Any]] {
            ((try? String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.filter { $0["kind"] as? String == "item" }
        }
        while items().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!items().isEmpty, "the first pass never aired")
        try FileManager.default.copyItem(atPath: folder + "/red.mp4", toPath: folder + "/clip.mp4.new")
        #expect(rename(folder + "/clip.mp4.new", folder + "/clip.mp4") == 0)
        try FileManager.default.copyItem(atPath: folder + "/blue.mp4", toPath: folder + "/late.mp4.new")
        #expect(rename(folder + "/late.mp4.new", folder + "/late.mp4") == 0)
        let result = try await run
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source \(folder)/clip.mp4 changed: layer screen takes it"), "\(result.stderr)")
        #expect(result.stderr.contains("source \(folder)/late.mp4 changed: layer late takes it"), "\(result.stderr)")
        let screen = items().filter { $0["layer"] as? String == "screen" }, late = items().filter { $0["layer"] as? String == "late" }
        #expect(screen.allSatisfy { $0["status"] as? String == "played" }, "\(screen)")
        // The new file is measured as itself (brought to the target with its own gain).
        let before = screen.first?["loudness"] as? Double, after = screen.last?["loudness"] as? Double
        #expect(
            before != nil && after != nil && (after ?? 0) - (before ?? 0) > 15,
            "measured \(String(describing: before)) then \(String(describing: after)) LUFS")
        #expect(late.first?["status"] as? String == "failed" && late.last?["status"] as? String == "played", "\(late)")
        // Every frame's colour in the screen's rectangle (averaged to one pixel): blue, then red from an item boundary on.
        let bytes = Array(
            try await Reference.run(
                ffmpeg, ["-v", "error", "-i", folder + "/out.ts", "-vf", "crop=32:36:0:0,scale=1:1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
        let reds = stride(from: 0, to: bytes.count - 2, by: 3).map { bytes[$0] > 200 && bytes[$0 + 2] < 50 }
        let blues = stride(from: 0, to: bytes.count - 2, by: 3).map { bytes[$0 + 2] > 200 && bytes[$0] < 50 }
        #expect(reds.count == 200, "\(reds.count) frames")
        let change = try #require(reds.firstIndex(of: true), "the new file never aired")
        #expect(change % 25 == 0 && change >= 25, "the new file from frame \(change): not an item boundary")
        #expect(blues[..<change].allSatisfy { $0 } && reds[change...].allSatisfy { $0 }, "blue until frame \(change), red after")
    }
}
