import Foundation
import Glibc
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A channel's recordings go through the one muxer, as `play`'s and `compose`'s files do: an MP4
/// recording hides the AAC priming (a plain MP4 with edit lists, made when the channel ends) so
/// every flash and beep is where the MPEG-TS recording of the same channel has it; a recording on
/// a full disk keeps what it wrote as a valid file, whatever its container; a recording whose
/// name someone takes during the run is kept beside it.
@Suite struct ChannelRecordingTests {
    @Test func anMP4RecordingPlacesEveryFlashAndBeepWhereTheTransportStreamHasIt() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let source = try await PlayoutTests.marks(folder + "/background.mp4")
        try #require(source.flashes == [0, 25, 50, 75] && source.onsets.count == 3, "the background: \(source)")
        let run = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "12",
            "--out", folder + "/rec.ts", "--out", folder + "/rec.mp4",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let ts = try await PlayoutTests.marks(folder + "/rec.ts")
        let mp4 = try await PlayoutTests.marks(folder + "/rec.mp4")
        #expect(mp4.frames == 300 && ts.frames == 300, "\(mp4.frames) and \(ts.frames) frames")
        #expect(mp4.flashes == Array(stride(from: 0, to: 300, by: 25)), "MP4 flashes: \(mp4.flashes)")
        #expect(mp4.flashes == ts.flashes)
        // Both streams start together at 0: no priming shown as sound, no first frame held.
        let starts = try await Self.startTimes(folder + "/rec.mp4")
        #expect(starts.video.magnitude < 0.0005 && starts.audio.magnitude < 0.0005, "MP4 starts: \(starts)")
        #expect(mp4.videoStart.magnitude < 0.0005, "the picture starts \(mp4.videoStart * 1000) ms after the sound")
        // Every beep at the same place on the picture's timeline as in the transport stream, and
        // where the background has it within its second.
        let placedMP4 = mp4.onsets.map { $0 - mp4.videoStart }
        let placedTS = ts.onsets.map { $0 - ts.videoStart }
        #expect(placedMP4.count == 11 && placedMP4.count == placedTS.count, "\(placedMP4.count) and \(placedTS.count) beeps")
        let worst = zip(placedMP4, placedTS).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 0.0005, "a beep of the MP4 is \(worst * 1000) ms from the transport stream's")
        let expected = source.onsets.map { ($0 - source.videoStart) - ($0 - source.videoStart).rounded(.down) }
        for (second, onset) in placedMP4.enumerated() where (second + 1) % 4 != 0 {
            let offset = onset - onset.rounded(.down)
            #expect(abs(offset - expected[(second + 1) % 4 - 1]) < 0.001, "beep \(second + 1) at \(onset)")
        }
        // Each stream lasts the channel's 12 s (the edit list cuts the last AAC frame's padding).
        #expect(abs(starts.videoDuration - 12) < 0.001 && abs(starts.audioDuration - 12) < 0.001, "MP4 durations: \(starts)")
    }

    /// A recording that meets a full disk keeps what it wrote, a valid file whatever its
    /// container (a `.ts` recording was deleted whole while an `.mp4` kept its part).
    @Test(arguments: ["ts", "mp4"]) func aRecordingOnAFullDiskKeepsWhatItWrote(format: String) async throws {
        let disk = try await FullDisk.mount(kilobytes: 384)
        defer { disk.unmount() }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let recording = disk.path + "/rec." + format
        let run = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "600",
            "--crf", "0", "--out", recording, "--as-run", folder + "/as-run.jsonl",
        ])
        #expect(run.status != 0, "a recording that failed is not a success: \(run.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int, "nothing kept at \(recording)")
        #expect(size > 100_000 && (format != "ts" || size % 188 == 0), "kept \(size) bytes (whole transport packets)")
        let frames = try await HostileOperationsTests.decodedFrames(recording)
        #expect(frames > 25, "\(frames) frames kept")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0 != "rec." + format }
        #expect(leftovers.isEmpty, "left on the disk: \(leftovers)")
        let log = try String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8)
        #expect(log.contains("\"state\":\"failed\""), "the as-run log says the output failed: \(log.suffix(400))")
    }

    @Test func aRecordingWhoseNameIsTakenDuringTheRunIsKeptBesideIt() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let recording = folder + "/rec.mp4"
        async let running = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "8",
            "--out", recording,
        ])
        // Someone saves a file under the recording's name while it is being written.
        let until = Date().addingTimeInterval(60)
        while Date() < until, !((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains(where: { $0.hasPrefix(".rec.mp4.") }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        try Data("someone's".utf8).write(to: URL(fileURLWithPath: recording))
        let result = try await running
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: recording, encoding: .utf8) == "someone's", "the other file is left alone")
        let beside = folder + "/rec-2.mp4"
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(FileManager.default.fileExists(atPath: beside), "the recording is kept beside it: \(listed)")
        let frames = try await HostileOperationsTests.decodedFrames(beside)
        #expect(frames == 200, "\(frames) frames")
        #expect(result.stderr.contains("rec-2.mp4"), "the run says where the recording went: \(result.stderr)")
    }

    /// `--as-run` naming a FIFO nobody reads is refused at once, with a message; before, the
    /// channel blocked opening it, before its first frame, deaf to SIGTERM.
    @Test func anAsRunLogThatIsAFIFOIsRefusedAtOnce() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        try #require(mkfifo(folder + "/as-run.fifo", 0o644) == 0)
        let started = ContinuousClock.now
        let run = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "1",
            "--out", folder + "/rec.ts", "--as-run", folder + "/as-run.fifo",
        ])
        #expect(run.status != 0 && run.stderr.contains("as-run"), "\(run.status): \(run.stderr)")
        #expect(ContinuousClock.now - started < .seconds(20), "it waited for a reader")
    }

    /// Each stream's start time and duration (ffprobe), in seconds.
    static func startTimes(_ path: String) async throws -> (video: Double, audio: Double, videoDuration: Double, audioDuration: Double) {
        let text = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time,duration", "-of", "csv=p=0", path]),
            as: UTF8.self)
        var starts: [String: (Double, Double)] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ",")
            if fields.count == 3, let start = Double(fields[1]), let duration = Double(fields[2]) { starts[String(fields[0])] = (start, duration) }
        }
        return (starts["video"]?.0 ?? .nan, starts["audio"]?.0 ?? .nan, starts["video"]?.1 ?? .nan, starts["audio"]?.1 ?? .nan)
    }
}
