import Foundation
import Glibc
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// `playhead playout` in real time, against real servers: HLS served by nginx and played by mpv
/// over HTTP, RTMP into nginx's RTMP module (restarted mid-stream: the output reconnects), SRT and
/// UDP read back by ffmpeg, a recording, the status endpoint, a layout edited mid-run, a missing
/// item filled, and SIGTERM stopping cleanly.
@Suite(.serialized) struct PlayoutLiveTests {
    static func probe(_ arguments: [String]) async throws -> String {
        String(decoding: try await Reference.run("/usr/bin/ffprobe", ["-v", "error"] + arguments), as: UTF8.self)
    }

    @Test func aLiveChannelToRealServers() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let www = folder + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        let nginx = try TestServers.Nginx(root: www)
        let ffmpeg = try Reference.ffmpeg()
        let srtPort = try TestServers.freePort(), udpPort = try TestServers.freePort(), statusPort = try TestServers.freePort()
        // Listeners first: what they receive in 8 s is kept.
        let srt = try TestServers.launch(
            ffmpeg, ["-v", "error", "-y", "-i", "srt://127.0.0.1:\(srtPort)?mode=listener", "-t", "8", "-c", "copy", folder + "/srt.ts"])
        let udp = try TestServers.launch(
            ffmpeg, ["-v", "error", "-y", "-i", "udp://127.0.0.1:\(udpPort)", "-t", "8", "-c", "copy", folder + "/udp.ts"])
        defer {
            srt.terminate()
            udp.terminate()
        }
        let clipA = try Fixtures.clip("h264-aac.mp4"), clipB = try Fixtures.clip("4x3.mp4"), clipC = try Fixtures.clip("stereo-44k.mp4")
        let layout = folder + "/channel.json"
        func write(_ text: String) throws {
            // As a deploy tool does: a new file renamed over the old one.
            try text.write(toFile: layout + ".new", atomically: false, encoding: .utf8)
            try #require(rename(layout + ".new", layout) == 0)
        }
        try write(
            """
            [{"name": "background", "source": "\(clipA)", "rect": [0, 0, 320, 180], "gravity": "aspect-fill", "loop": "forever"},
             {"name": "zone", "sources": ["\(clipB)", "\(folder)/missing.mp4", "\(clipA)"], "rect": [20, 20, 140, 100], "z": 1, "loop": "forever", "audio": true}]
            """)
        let binary = try CLI.binary()
        let channel = try TestServers.launch(
            binary.path,
            [
                "playout", "--layout", layout, "--size", "320x180", "--rate", "25", "--timeout", "5",
                "--out", www + "/live.m3u8", "--out", "rtmp://127.0.0.1:\(nginx.rtmpPort)/live/channel",
                "--out", "srt://127.0.0.1:\(srtPort)", "--out", "udp://127.0.0.1:\(udpPort)",
                "--out", folder + "/recording.ts", "--status", "127.0.0.1:\(statusPort)",
                "--as-run", folder + "/as-run.jsonl", "--slot", "2",
            ], log: folder + "/channel.log")
        defer { if channel.isRunning { channel.terminate() } }
        // Wall time counts from when the channel answers (a loaded machine may take seconds to
        // start it); its status from when it has sent 2 s.
        let deadline = ContinuousClock.now + Bound.seconds(30)
        var health = TestServers.get(port: statusPort, path: "/health")
        while health == nil, channel.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            health = TestServers.get(port: statusPort, path: "/health")
        }
        let started = Date()
        // The status endpoint.
        let answer = try #require(health, "no answer on /health")
        #expect(answer.status == 200 && answer.body == "ok\n", "\(answer)")
        var document: [String: Any] = [:]
        repeat {
            try await Task.sleep(for: .milliseconds(200))
            let status = try #require(TestServers.get(port: statusPort, path: "/status"))
            document = try #require(try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any], "\(status.body)")
        } while (document["framesOut"] as? Int ?? 0) <= 50 && ContinuousClock.now < deadline
        #expect(
            (document["framesOut"] as? Int ?? 0) > 50 && (document["layers"] as? [[String: Any]])?.count == 2
                && (document["outputs"] as? [Any])?.count == 5,
            "\(document)")
        let metrics = try #require(TestServers.get(port: statusPort, path: "/metrics"))
        #expect(
            metrics.body.contains("playhead_frames_total ") && metrics.body.contains("playhead_output_reconnects_total{")
                && metrics.body.contains("playhead_av_offset_seconds"),
            "\(metrics.body)")
        #expect(TestServers.get(port: statusPort, path: "/nothing")?.status == 404)
        // RTMP read back from nginx; HLS played by a real player over HTTP.
        let rtmp = try await Self.probe([
            "-rw_timeout", "5000000", "-show_entries", "stream=codec_name", "-of", "csv=p=0", "rtmp://127.0.0.1:\(nginx.rtmpPort)/live/channel",
        ])
        #expect(rtmp.contains("h264") && rtmp.contains("aac"), "RTMP: \(rtmp)")
        let (_, played) = try await Reference.runAllowingFailure(
            "/usr/bin/mpv",
            [
                "--no-config", "--vo=null", "--ao=null", "--length=2", "--really-quiet",
                "http://127.0.0.1:\(nginx.httpPort)/live.m3u8",
            ])
        #expect(played == 0, "mpv could not play the HLS over HTTP (exit \(played))")
        // A live edit: the zone plays another source from its next item; a new layer appears.
        try write(
            """
            [{"name": "background", "source": "\(clipA)", "rect": [0, 0, 320, 180], "gravity": "aspect-fill", "loop": "forever"},
             {"name": "zone", "sources": ["\(clipC)"], "rect": [20, 20, 140, 100], "z": 1, "loop": "forever", "audio": true},
             {"name": "extra", "source": "\(clipB)", "rect": [180, 20, 120, 90], "z": 2, "loop": "forever"}]
            """)
        try await Task.sleep(for: .seconds(2))
        // The RTMP server restarts: the output reconnects while the channel goes on.
        nginx.stop()
        try await Task.sleep(for: .seconds(1))
        try nginx.start()
        try await Task.sleep(for: .seconds(6))
        // Wall time until the stop is asked for (finishing the outputs after it adds no media).
        let elapsed = Date().timeIntervalSince(started)
        channel.terminate()
        channel.waitUntilExit()
        let log = (try? String(contentsOfFile: folder + "/channel.log", encoding: .utf8)) ?? ""
        #expect(channel.terminationStatus == 143, "exit \(channel.terminationStatus): \(log)")
        // The as-run log: the missing item filled, the edit taken, the outputs' accounts.
        let records = try String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(
            records.contains {
                $0["layer"] as? String == "zone" && $0["status"] as? String == "failed" && ($0["source"] as? String ?? "").hasSuffix("missing.mp4")
            },
            "\(records)")
        #expect(records.contains { $0["layer"] as? String == "zone" && $0["status"] as? String == "filler" })
        #expect(
            records.contains { $0["layer"] as? String == "zone" && ($0["source"] as? String ?? "").hasSuffix("stereo-44k.mp4") },
            "the edit: \(records)")
        #expect(records.contains { $0["layer"] as? String == "extra" })
        let outputs = records.filter { $0["kind"] as? String == "output" }
        // The SRT receiver records 8 s and leaves: that output is down (reconnecting) when the
        // channel ends, and says so rather than `finished`; the others finished.
        let srtAccount = outputs.first { ($0["target"] as? String ?? "").hasPrefix("srt://") }
        #expect(
            srtAccount?["state"] as? String == "reconnecting" && (srtAccount?["drops"] as? Int ?? 0) >= 1 && srtAccount?["lastError"] != nil,
            "SRT: \(String(describing: srtAccount))")
        #expect(
            outputs.count == 5
                && outputs.filter { !($0["target"] as? String ?? "").hasPrefix("srt://") }.allSatisfy { $0["state"] as? String == "finished" },
            "\(outputs)")
        let rtmpAccount = try #require(outputs.first { ($0["target"] as? String ?? "").hasPrefix("rtmp://") })
        #expect((rtmpAccount["connects"] as? Int ?? 0) >= 2 && (rtmpAccount["drops"] as? Int ?? 0) >= 1, "RTMP: \(rtmpAccount)")
        // As much media as wall time: the recording lasts as long as the channel ran.
        let recorded = try await Self.probe(["-show_entries", "format=duration", "-of", "csv=p=0", folder + "/recording.ts"])
        let seconds = try #require(Double(recorded.trimmingCharacters(in: .whitespacesAndNewlines)), "\(recorded)")
        #expect(abs(seconds - elapsed) < 2, "\(seconds) s recorded in \(elapsed) s")
        let playlist = try String(contentsOfFile: www + "/live.m3u8", encoding: .utf8)
        #expect(playlist.contains("#EXT-X-PROGRAM-DATE-TIME") && playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
        // SRT and UDP as received.
        srt.waitUntilExit()
        udp.waitUntilExit()
        for received in [folder + "/srt.ts", folder + "/udp.ts"] {
            let streams = try await Self.probe(["-show_entries", "stream=codec_name", "-of", "csv=p=0", received])
            #expect(streams.contains("h264") && streams.contains("aac"), "\(received): \(streams)")
        }
    }
}
