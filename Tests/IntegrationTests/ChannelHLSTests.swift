import Foundation
import Testing

@testable import Playhead
@testable import PlayheadCLI
@testable import PlayheadMedia

/// A channel's HLS output owns its files as every other output does: its segments take names no
/// user's file and no other channel's segment has, a playlist is written by one channel at a time,
/// and a full disk never publishes an empty or cut file — the playlist stays the last good one and,
/// once there is room again, goes on (its media sequence continued, `EXT-X-DISCONTINUITY` at the
/// join), while `/status` and `/health` say what happened.
@Suite struct ChannelHLSTests {
    /// The playlist's media sequence and entries (nil when it does not parse as a playlist).
    static func entries(_ path: String) -> (sequence: Int, entries: [String], discontinuities: Int)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard lines.first == "#EXTM3U",
            let sequence = lines.first(where: { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }).flatMap({ Int($0.dropFirst(22)) })
        else { return nil }
        return (sequence, lines.filter { !$0.hasPrefix("#") && !$0.isEmpty }, lines.filter { $0 == "#EXT-X-DISCONTINUITY" }.count)
    }

    /// Whether a channel's summary says its one output dropped and was opened again after each
    /// drop, and finished (a reopen that came before the disk had room drops once more: how many
    /// times depends on when the test frees it).
    static func cameBackAfterEachDrop(_ summary: String) -> Bool {
        guard let match = summary.firstMatch(of: /finished \((\d+) connects, (\d+) drops/),
            let connects = Int(match.1), let drops = Int(match.2)
        else { return false }
        return drops >= 1 && connects == drops + 1
    }

    @Test func aUsersFilesAndAnotherChannelsSegmentsAreLeftAlone() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let www = folder + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        // A user's files named as the muxer's own names would be.
        let users = ["live0.ts", "live1.ts", "live12.ts", "live10.ts", "live1-0.ts", "notes.txt"]
        for name in users { try Data("a user's \(name)".utf8).write(to: URL(fileURLWithPath: www + "/" + name)) }
        // Two channels into one folder at once: live.m3u8 and live1.m3u8.
        async let first = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "20", "--segment", "1",
            "--out", www + "/live.m3u8",
        ])
        async let second = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "20", "--segment", "1",
            "--out", www + "/live1.m3u8",
        ])
        let runs = try await [first, second]
        for run in runs { #expect(run.status == 0, "\(run.stderr)") }
        for name in users {
            #expect(try String(contentsOfFile: www + "/" + name, encoding: .utf8) == "a user's \(name)", "\(name) was touched")
        }
        for (playlist, stem) in [("live.m3u8", "live-"), ("live1.m3u8", "live1-")] {
            let listed = try #require(Self.entries(www + "/" + playlist), "\(playlist) does not parse")
            #expect(listed.entries.count == 6 && listed.sequence == 14, "\(playlist): \(listed)")
            #expect(listed.entries.allSatisfy { $0.hasPrefix(stem) && !users.contains($0) }, "\(playlist) lists \(listed.entries)")
            let frames = try await HostileOperationsTests.decodedFrames(www + "/" + playlist)
            #expect(frames == 150, "\(playlist): \(frames) frames decoded from the six segments")
        }
    }

    /// FFmpeg writes the playlist as `NAME.m3u8.tmp` and renames it: a user's file at that name
    /// stops the output, untouched, instead of being written over and renamed away.
    @Test func aUsersFileAtThePlaylistsTemporaryNameIsLeftAlone() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        try Data("a user's notes".utf8).write(to: URL(fileURLWithPath: folder + "/live.m3u8.tmp"))
        let run = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "3", "--segment", "1",
            "--out", folder + "/live.m3u8",
        ])
        #expect(run.status == 1 && run.stderr.contains("live.m3u8.tmp exists"), "\(run.stderr)")
        #expect(try String(contentsOfFile: folder + "/live.m3u8.tmp", encoding: .utf8) == "a user's notes")
        #expect(!FileManager.default.fileExists(atPath: folder + "/live.m3u8"), "nothing renamed over the playlist")
    }

    @Test func aPlaylistAnotherChannelWritesIsRefused() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        async let holder = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "6", "--segment", "1",
            "--out", folder + "/live.m3u8",
        ])
        // Once the first channel has its playlist (its first segment written), a second one asks for it.
        let until = Date().addingTimeInterval(60)
        while Date() < until, !FileManager.default.fileExists(atPath: folder + "/live.m3u8") { try await Task.sleep(for: .milliseconds(20)) }
        let intruder = try await CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "2", "--segment", "1",
            "--out", folder + "/live.m3u8",
        ])
        #expect(intruder.status == 1 && intruder.stderr.contains("another channel writes"), "\(intruder.stderr)")
        let held = try await holder
        #expect(held.status == 0, "\(held.stderr)")
        let listed = try #require(Self.entries(folder + "/live.m3u8"))
        // Six seconds: the playlist's whole window of six segments.
        #expect(listed.entries.count == 6 && listed.discontinuities == 0, "the first channel's playlist: \(listed)")
        let frames = try await HostileOperationsTests.decodedFrames(folder + "/live.m3u8")
        #expect(frames == 150, "\(frames) frames")
    }

    @Test func aFullDiskPublishesNothingCutAndTheOutputComesBackWhereItLeftOff() async throws {
        let disk = try await FullDisk.mount(kilobytes: 1024)
        defer { disk.unmount() }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        // Room for a few segments, then none until the ballast goes.
        let ballast = disk.path + "/ballast"
        try Data(count: 900 << 10).write(to: URL(fileURLWithPath: ballast))
        let port = try TestServers.freePort()
        let playlist = disk.path + "/live.m3u8"
        async let running = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "14", "--segment", "1",
            "--crf", "0", "--preset", "ultrafast", "--out", playlist, "--status", "127.0.0.1:\(port)", "--timeout", "2",
        ])
        // Every playlist published, all along: it parses, and every segment it lists is whole.
        var published: [(sequence: Int, entries: [String], discontinuities: Int)] = []
        var cut: [String] = []
        var freed = false
        var sawDrop = false
        let until = Date().addingTimeInterval(40)
        while Date() < until {
            // Looked at before the read: a playlist is only ever replaced (renamed over), so one
            // there before a read that fails is unreadable; one that appears during it is the first.
            let wasThere = FileManager.default.fileExists(atPath: playlist)
            if let listed = Self.entries(playlist) {
                if published.last.map({ $0.sequence != listed.sequence || $0.entries != listed.entries }) ?? true { published.append(listed) }
                for entry in listed.entries {
                    let size = (try? FileManager.default.attributesOfItem(atPath: disk.path + "/" + entry)[.size] as? Int) ?? nil
                    if let size, size == 0 || size % 188 != 0 { cut.append("\(entry): \(size) bytes") }
                }
            } else if wasThere {
                cut.append("an unreadable playlist")
            }
            if !freed, let (status, body) = TestServers.get(port: port, path: "/status"), status == 200,
                let document = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let outputs = document["outputs"] as? [[String: Any]], (outputs.first?["drops"] as? Int ?? 0) >= 1
            {
                sawDrop = true
                let health = TestServers.get(port: port, path: "/health")
                #expect(health?.status == 200, "a drop being retried is within its grace: \(String(describing: health))")
                try FileManager.default.removeItem(atPath: ballast)
                freed = true
            }
            if freed, published.last?.discontinuities ?? 0 > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let run = try await running
        #expect(sawDrop, "the full disk was never reported as a drop: \(run.stderr)")
        #expect(cut.isEmpty, "published cut or empty: \(cut.prefix(5))")
        // The output came back: the sequence went on, the join marked.
        let last = try #require(Self.entries(playlist))
        #expect(last.discontinuities >= 1, "no discontinuity at the join: \(last)")
        let sequences = published.map(\.sequence)
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 <= $1 }, "the media sequence went back: \(sequences)")
        #expect(Self.cameBackAfterEachDrop(run.stderr), "\(run.stderr)")
        let frames = try await HostileOperationsTests.decodedFrames(playlist)
        #expect(frames > 0, "the playlist at the end decodes")
    }

    /// The same on the virtual clock (a channel rendered as fast as it goes, a catch-up or a
    /// test): the output comes back once there is room, its sequence continued and the join
    /// marked — before, it never came back, and the run said `finished`.
    @Test func aFullDiskOnTheVirtualClockComesBackToo() async throws {
        let disk = try await FullDisk.mount(kilobytes: 1024)
        defer { disk.unmount() }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let ballast = disk.path + "/ballast"
        try Data(count: 900 << 10).write(to: URL(fileURLWithPath: ballast))
        let port = try TestServers.freePort()
        let playlist = disk.path + "/live.m3u8"
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = [
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "virtual", "--duration", "3600", "--segment", "1",
            "--crf", "0", "--preset", "ultrafast", "--out", playlist, "--status", "127.0.0.1:\(port)", "--timeout", "2",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Watched from a thread of its own: the join is in the playlist only while it is among
        // its last six segments, a fraction of a second of this render, and a watch on the
        // cooperative pool, held up by the suites beside it, once missed it for a whole minute.
        let diskPath = disk.path
        let (freed, joined, cut) = try await offPool { () -> (Bool, Bool, [String]) in
            var freed = false
            var cut: [String] = []
            let until = Date().addingTimeInterval(60)
            while Date() < until, process.isRunning {
                if let listed = Self.entries(playlist) {
                    for entry in listed.entries {
                        let size = (try? FileManager.default.attributesOfItem(atPath: diskPath + "/" + entry)[.size] as? Int) ?? nil
                        if let size, size == 0 || size % 188 != 0 { cut.append("\(entry): \(size) bytes") }
                    }
                    if freed, listed.discontinuities > 0 { return (freed, true, cut) }
                }
                if !freed, let (status, body) = TestServers.get(port: port, path: "/status"), status == 200,
                    let document = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                    let outputs = document["outputs"] as? [[String: Any]], (outputs.first?["drops"] as? Int ?? 0) >= 1
                {
                    try FileManager.default.removeItem(atPath: ballast)
                    freed = true
                }
                usleep(5000)
            }
            return (freed, false, cut)
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(freed, "the full disk was never reported as a drop: \(text)")
        #expect(joined, "the output never came back: \(String(describing: Self.entries(playlist))) \(text)")
        #expect(cut.isEmpty, "published cut or empty: \(cut.prefix(5))")
        #expect(Self.cameBackAfterEachDrop(text), "\(text)")
    }
}

extension ChannelHLSTests {
    /// An HLS output whose disk stays full: `/health` turns 503 once the output has been down
    /// past its grace, `/status` says it is reconnecting with the disk's error, not `connected`,
    /// and the as-run log's record of it at the end says so with its drops, never `finished`.
    /// (Before, each reopen — which succeeds on a full disk, then fails at the segment's end —
    /// counted as back up: `/health` said 200 for the whole run and `/status` `connected`.)
    @Test func aDiskFullPastItsGraceTurnsHealthUnhealthyAndTheLogSaysSo() async throws {
        let disk = try await FullDisk.mount(kilobytes: 1024)
        defer { disk.unmount() }
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        try Data(count: 900 << 10).write(to: URL(fileURLWithPath: disk.path + "/ballast"))
        let port = try TestServers.freePort()
        let asRun = folder + "/as-run.jsonl"
        // `--timeout 2`: a grace of 10 s (ChannelSink.downGrace), well inside the 24 s run.
        async let running = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "24", "--segment", "1",
            "--crf", "0", "--preset", "ultrafast", "--out", disk.path + "/live.m3u8", "--status", "127.0.0.1:\(port)", "--timeout", "2",
            "--as-run", asRun,
        ])
        var unhealthy: (state: String?, error: String?, why: String)?
        let healths = try await ChannelHealthTests.pollHealth(port: port, seconds: 70) { health in
            if health.status == 503, unhealthy == nil, let (status, body) = TestServers.get(port: port, path: "/status"), status == 200,
                let document = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let output = (document["outputs"] as? [[String: Any]])?.first
            {
                unhealthy = (output["state"] as? String, output["lastError"] as? String, health.body)
            }
            return false
        }
        let run = try await running
        #expect(healths.contains(503), "/health answered \(healths) over a disk full for the whole run: \(run.stderr)")
        #expect(unhealthy?.state == "reconnecting", "/status while unhealthy: \(String(describing: unhealthy))")
        #expect(unhealthy?.error?.contains("No space left") == true, "/status while unhealthy: \(String(describing: unhealthy))")
        #expect(unhealthy?.why.contains("has been down for") == true, "/health's reason: \(String(describing: unhealthy))")
        let records = try String(contentsOfFile: asRun, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let outputs = records.filter { $0["kind"] as? String == "output" }
        #expect(outputs.count == 1, "\(outputs)")
        let final = outputs.first?["state"] as? String
        #expect((final == "reconnecting" || final == "failed") && (outputs.first?["drops"] as? Int ?? 0) >= 1, "the as-run log: \(outputs)")
        #expect(!run.stderr.contains("finished ("), "the summary says an output finished: \(run.stderr)")
    }
}

/// `/health` of a channel: unhealthy when an output failed for good, or has been down (never
/// connected, or reconnecting) for longer than its grace.
@Suite struct ChannelHealthTests {
    static func output(_ state: ChannelTargetStatus.State, down: Double?, error: String? = nil) -> ChannelTargetStatus {
        var status = ChannelTargetStatus(target: "rtmp://host/live/***", state: state)
        status.downFor = down
        status.lastError = error
        return status
    }

    /// Asks a channel's `/health` every 250 ms until its server is gone once it has answered (the
    /// run ended), `each` says to stop, or `seconds` have passed.
    /// - Parameter each: called with every answer; true stops.
    /// - Returns: the statuses answered, each change once.
    static func pollHealth(
        port: Int, seconds: Double, _ each: ((status: Int, body: String)) async throws -> Bool
    ) async throws -> [Int] {
        var healths: [Int] = []
        let until = Date().addingTimeInterval(seconds)
        while Date() < until {
            guard let health = TestServers.get(port: port, path: "/health") else {
                // Not up yet, or gone: the run ended.
                if !healths.isEmpty { break }
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            if healths.last != health.status { healths.append(health.status) }
            if try await each(health) { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        return healths
    }

    @Test func anOutputDownLongerThanItsGraceMakesTheChannelUnhealthy() {
        #expect(PlayoutCommand.health([Self.output(.connected, down: nil)], grace: 10).0)
        #expect(PlayoutCommand.health([Self.output(.connecting, down: 9)], grace: 10).0, "still within its grace")
        let never = PlayoutCommand.health([Self.output(.connected, down: nil), Self.output(.connecting, down: 11)], grace: 10)
        #expect(!never.0 && never.1.contains("down for 11 s"), "\(never)")
        let dropped = PlayoutCommand.health([Self.output(.reconnecting, down: 30, error: "refused")], grace: 10)
        #expect(!dropped.0 && dropped.1.contains("refused"), "\(dropped)")
        #expect(!PlayoutCommand.health([Self.output(.failed, down: nil, error: "disk full")], grace: 10).0)
        #expect(!PlayoutCommand.health([], grace: 10).0)
    }
    /// A channel whose RTMP server never answers: `/health` is 200 while the output is within its
    /// grace, then 503 (it was 200 for the whole run), and the stream key — the last part of
    /// the URL, a streaming service's credential — is in none of `/status`, `/metrics`, the
    /// as-run log and standard error.
    @Test func anRTMPServerThatNeverAnswersTurnsHealthUnhealthyAndItsKeyIsNeverShown() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let silent = try SilentServer()
        defer { silent.close() }
        let port = try TestServers.freePort()
        let key = "s3cr3t-stream-key"
        async let running = CLI.run([
            "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime", "--duration", "20",
            "--out", "rtmp://127.0.0.1:\(silent.port)/live/\(key)", "--out", folder + "/rec.ts", "--timeout", "2",
            "--status", "127.0.0.1:\(port)", "--as-run", folder + "/as-run.jsonl",
        ])
        var shown: [String] = []
        let healths = try await Self.pollHealth(port: port, seconds: 60) { health in
            for path in ["/status", "/metrics"] {
                if let answer = TestServers.get(port: port, path: path), answer.body.contains(key) { shown.append(path) }
            }
            return health.status == 503
        }
        let run = try await running
        // (200 first, while within its grace, when the probe got in that early: a loaded machine's
        // first answer may come after it; the grace itself is `ChannelHealthTests`' first case's.)
        #expect(healths.last == 503 && healths.filter { $0 == 503 }.count == 1, "/health answered \(healths): \(run.stderr)")
        let log = (try? String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8)) ?? ""
        if log.contains(key) { shown.append("the as-run log") }
        if run.stderr.contains(key) || run.stdout.contains(key) { shown.append("the command's output") }
        #expect(shown.isEmpty, "the stream key is shown in \(Set(shown).sorted())")
        #expect(run.stderr.contains("rtmp://127.0.0.1:\(silent.port)/live/***"), "the target is named with its key hidden: \(run.stderr)")
    }
}
