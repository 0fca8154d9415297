import Foundation
import Testing

/// GNU `timeout` (and other supervisors) deliver one signal twice: to the process, and to its
/// process group. That is one signal, not a user's second Ctrl-C: the run stops cleanly — its
/// recordings complete, its summary says `cancelled` — every time. A real second signal stops the
/// process at once and still never throws a valid recording away.
extension HostileOperationsTests {
    @Test func aSignalDeliveredTwiceByTimeoutStopsAChannelCleanly() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let binary = try CLI.binary().path
        for run in 0..<6 {
            let ts = folder + "/rec\(run).ts", mp4 = folder + "/rec\(run).mp4"
            // Sent 1 to 3 s into the run, from the first bytes of the recording on.
            let (output, status) = try await Reference.runAllowingFailure(
                "/usr/bin/timeout",
                [
                    "-s", "TERM", String(format: "%.1f", 1.5 + Double(run) * 0.3), binary, "playout", "--layout", layout, "--size", "64x36",
                    "--rate", "25", "--clock", "realtime", "--duration", "60", "--out", ts, "--out", mp4,
                ])
            let text = String(decoding: output, as: UTF8.self)
            #expect(status == 124, "run \(run): timeout's status \(status): \(text)")
            #expect(!text.contains("stopped at once"), "run \(run): the duplicate counted as a second signal: \(text)")
            for path in [ts, mp4] {
                #expect(FileManager.default.fileExists(atPath: path), "run \(run): \(path) was lost: \(text)")
            }
            if FileManager.default.fileExists(atPath: mp4) {
                let frames = try await Self.decodedFrames(mp4)
                #expect(frames > 0, "run \(run): \(frames) frames in the MP4")
            }
        }
    }

    @Test func aSignalDeliveredTwiceByTimeoutLeavesPlaysSummaryCancelled() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let binary = try CLI.binary().path
        let clip = try Fixtures.clip("h264-aac.mp4")
        for run in 0..<6 {
            let out = folder + "/out\(run)"
            let (output, status) = try await Reference.runAllowingFailure(
                "/usr/bin/timeout",
                [
                    "-s", "INT", String(format: "%.1f", 1.0 + Double(run) * 0.2), binary, "play", "--realtime", "--loop", "forever",
                    "--format", "mp4", "--out", out, clip,
                ])
            let text = String(decoding: output, as: UTF8.self)
            #expect(status == 124, "run \(run): timeout's status \(status): \(text)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/summary.json"))) as? [String: Any],
                "run \(run): no summary")
            #expect(summary["state"] as? String == "cancelled", "run \(run): \(summary["state"] ?? "none"): \(text)")
        }
    }

    /// A user's real second signal stops at once, and the recordings being written are still
    /// kept, cut to their valid part.
    @Test func aSecondSignalStopsAtOnceAndKeepsTheRecordings() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let binary = try CLI.binary()
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "60",
            "--out", folder + "/rec.ts", "--out", folder + "/rec.mp4",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Three seconds of recording (a few fragments of the MP4), then two signals.
        let until = Date().addingTimeInterval(60)
        while Date() < until, !(try FileManager.default.contentsOfDirectory(atPath: folder).contains { $0.hasPrefix(".rec.mp4.") }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .seconds(3))
        // Two different signals at once: the first starts a clean stop, the second stops at once.
        kill(process.processIdentifier, SIGINT)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("stopped at once"), "\(text)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        for name in ["rec.ts", "rec.mp4"] {
            let path = folder + "/" + name
            #expect(FileManager.default.fileExists(atPath: path), "\(name) was lost: \(text)")
            if FileManager.default.fileExists(atPath: path) {
                let frames = try await Self.decodedFrames(path)
                #expect(frames > 0, "\(name): \(frames) frames kept")
            }
        }
    }
}
