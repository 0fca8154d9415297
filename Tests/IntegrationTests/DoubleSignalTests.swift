import Foundation
import Glibc
import Testing

/// GNU `timeout` (and other supervisors) deliver one signal twice: to the process, and to its
/// process group. That is one signal, not a user's second Ctrl-C: the run stops cleanly — its
/// recordings complete, its summary says `cancelled` — every time. A real second signal stops the
/// process at once and still never throws a valid recording away.
extension HostileOperationsTests {
    /// The signal is timed from the recordings' first bytes (a channel's start-up, on a loaded
    /// machine, once outlasted a fixed 1.5 s, and nothing had been recorded to keep): `timeout`
    /// is sent its own timer's signal then (`SIGALRM`, which it unblocks for itself: its time is
    /// up), and does what it does when its time is up — `TERM` to the channel, then to the whole
    /// process group.
    @Test func aSignalDeliveredTwiceByTimeoutStopsAChannelCleanly() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let binary = try CLI.binary().path
        for run in 0..<6 {
            let ts = folder + "/rec\(run).ts", mp4 = folder + "/rec\(run).mp4"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = [
                "-s", "TERM", "120", binary, "playout", "--layout", layout, "--size", "64x36", "--rate", "25", "--clock", "realtime",
                "--duration", "60", "--out", ts, "--out", mp4,
            ]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            // Both recordings begun (their temporary files made), then 0 to 1.5 s more.
            let begun = try await offPool {
                let until = Date().addingTimeInterval(60)
                while Date() < until, process.isRunning {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                    if names.contains(where: { $0.hasPrefix(".rec\(run).ts.") }), names.contains(where: { $0.hasPrefix(".rec\(run).mp4.") }) {
                        return true
                    }
                    usleep(10_000)
                }
                return false
            }
            try await Task.sleep(for: .milliseconds(300 * run))
            kill(process.processIdentifier, SIGALRM)
            let text = try await offPool {
                let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return text
            }
            #expect(begun, "run \(run): the recordings never began: \(text)")
            #expect(process.terminationStatus == 124, "run \(run): timeout's status \(process.terminationStatus): \(text)")
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
    /// kept, cut to their valid part. (The same signal again half a second or more after the
    /// first is a second signal too: `SignalRuleTests`; a clean stop here ends sooner than a
    /// second Ctrl-C would come.)
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

/// Two different signals (a supervisor's TERM, then a user's Ctrl-C): the second stops `play` at
/// once, and its summary says so — `cancelled`, by which signals, with the export it kept cut —
/// never `running` beside the kept files; with `--json`, on standard output too (nothing was
/// printed there before).
extension HostileOperationsTests {
    @Test func aSecondSignalLeavesASummaryThatSaysSo() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let out = folder + "/out"
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = [
            "play", "--realtime", "--loop", "forever", "--format", "mp4", "--json", "--out", out, try Fixtures.clip("h264-aac.mp4"),
        ]
        let errors = Pipe(), printed = Pipe()
        process.standardError = errors
        process.standardOutput = printed
        try process.run()
        // Once the export is being written (its summary says `running`), two signals.
        let until = Date().addingTimeInterval(60)
        func exporting() -> Bool {
            let names = (FileManager.default.enumerator(atPath: out)?.allObjects as? [String]) ?? []
            return names.contains { $0.contains("/.video.mp4.") && $0.hasSuffix(".partial") }
        }
        while Date() < until, !exporting() { try await Task.sleep(for: .milliseconds(20)) }
        // A few fragments of the export.
        try await Task.sleep(for: .seconds(2))
        // A third, different signal meanwhile leaves the stop to the second.
        kill(process.processIdentifier, SIGTERM)
        kill(process.processIdentifier, SIGINT)
        kill(process.processIdentifier, SIGQUIT)
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("summary.json says so"), "\(text)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/summary.json"))) as? [String: Any])
        #expect(summary["state"] as? String == "cancelled", "\(summary)")
        // The same summary on standard output.
        let stdout = printed.fileHandleForReading.readDataToEndOfFile()
        let echoed = try #require(
            try? JSONSerialization.jsonObject(with: stdout) as? [String: Any], "--json printed: \(String(decoding: stdout, as: UTF8.self))")
        #expect(NSDictionary(dictionary: echoed).isEqual(to: summary), "\(echoed) is not \(summary)")
        // Sent back to back, they may be taken in any order: the second one taken stops it.
        let first = summary["signal"] as? String, second = summary["stoppedAtOnceBy"] as? String
        let numbers: [String: Int32] = ["SIGTERM": SIGTERM, "SIGINT": SIGINT, "SIGQUIT": SIGQUIT]
        #expect(first != second && first.flatMap { numbers[$0] } != nil, "\(summary)")
        let stopper = try #require(second.flatMap { numbers[$0] }, "\(summary)")
        #expect(process.terminationStatus == 128 + stopper, "\(process.terminationStatus)")
        let files = try #require(summary["files"] as? [[String: Any]])
        #expect(!files.isEmpty && !files.contains { $0["status"] as? String == "running" }, "\(files)")
        let kept = try #require(summary["keptCut"] as? [String])
        #expect(kept.count == 1, "\(kept)")
        for path in kept {
            #expect(try await Self.decodedFrames(path) > 0, "\(path) was kept cut: its frames decode")
        }
    }
}

extension HostileOperationsTests {
    /// Runs the CLI with `arguments`, waits until its output folder `out` holds a few entries (it
    /// is writing), lets it run `after` more, sends SIGINT and waits for it to exit.
    static func interrupted(_ arguments: [String], writing out: String, after: Duration) async throws -> Process {
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let until = Date().addingTimeInterval(60)
        while Date() < until, ((FileManager.default.enumerator(atPath: out)?.allObjects as? [String]) ?? []).count < 4 {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: after)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        return process
    }
}

/// A run stopped by a signal keeps its sound and its frames together: the sound, decoded ahead of
/// slower pictures, is cut to the end of the last frame kept — in the WAV beside PNG frames and in
/// the MP4's sound track alike (ffprobe's durations).
extension HostileOperationsTests {
    @Test(arguments: ["png", "mp4"]) func aSignalKeepsTheSoundToTheKeptFrames(format: String) async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/long.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=960x540:rate=30:duration=30", "-f", "lavfi", "-i",
                "sine=frequency=440:duration=30", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", clip,
            ])
        let out = folder + "/out"
        // A second of output once the first file is being written, then a signal.
        let process = try await Self.interrupted(["play", "--format", format, "--out", out, clip], writing: out, after: .seconds(1))
        #expect(process.terminationStatus == 128 + SIGINT)
        let item = out + "/01-long.mp4"
        func durations(_ path: String) async throws -> [String: Double] {
            let text = String(
                decoding: try await Reference.run(
                    "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", path]),
                as: UTF8.self)
            var found: [String: Double] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: ",")
                if parts.count == 2, let seconds = Double(parts[1]) { found[String(parts[0])] = seconds }
            }
            return found
        }
        let picture: Double, sound: Double
        if format == "mp4" {
            let found = try await durations(item + "/video.mp4")
            picture = try #require(found["video"])
            sound = try #require(found["audio"])
        } else {
            let frames = try FileManager.default.contentsOfDirectory(atPath: item).filter { $0.hasSuffix(".png") }.count
            picture = Double(frames) / 30
            sound = try #require(try await durations(item + "/audio.wav")["audio"])
        }
        #expect(picture > 0.5 && picture < 29, "stopped part way: \(picture) s of frames")
        #expect(sound <= picture + 0.002 && sound >= picture - 0.04, "\(sound) s of sound kept with \(picture) s of frames")
    }
}

/// A realtime player paces its sound and its picture together: a stop keeps the sound played,
/// even while the picture stands frozen (a Matroska file whose 1 s video track's last frames the
/// decoder holds until the data ends, its 20 s of sound playing on).
extension HostileOperationsTests {
    @Test func aRealtimeStopKeepsTheSoundPlayedWhileThePictureStood() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/short-picture.mkv"
        try await Reference.pictureShorterThanSound(at: clip, picture: "1", sound: "sine=frequency=440:duration=20")
        let out = folder + "/out"
        _ = try await Self.interrupted(["play", "--realtime", "--format", "png", "--out", out, clip], writing: out, after: .seconds(3))
        let text = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                ["-v", "error", "-show_entries", "stream=duration", "-of", "csv=p=0", out + "/01-short-picture.mkv/audio.wav"]),
            as: UTF8.self)
        let sound = try #require(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(text)")
        #expect(sound > 2, "\(sound) s of the sound played in about 3 s kept")
    }
}

/// A signal as a run opens its output folder: the folder is either left out (nothing was made,
/// or what opening made is removed again) or it is the run's, with its summary — never a folder
/// holding only the run's lock file. The moment the run takes its folder is found (a binary
/// search on the delay of the signal), then signals are sent around it, half a millisecond apart.
extension HostileOperationsTests {
    @Test func aSignalAsTheFolderOpensLeavesNoFolderHoldingOnlyItsLock() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        var runs = 0
        var lockOnly: [String] = []
        /// Whether a run signalled `delay` microseconds after its start got its summary written.
        func signalled(after delay: Int) throws -> Bool {
            runs += 1
            let out = folder + "/run\(runs)/out"
            let process = Process()
            process.executableURL = try CLI.binary()
            process.arguments = ["play", "--format", "none", "--loop", "forever", "--out", out, clip]
            process.standardError = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            usleep(UInt32(delay))
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            let left = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted()
            if !left.isEmpty, !left.contains("summary.json") { lockOnly.append("signal after \(delay) µs: \(left)") }
            if left.isEmpty, FileManager.default.fileExists(atPath: folder + "/run\(runs)") {
                lockOnly.append("signal after \(delay) µs: the folders made on the way stay")
            }
            return left.contains("summary.json")
        }
        var (low, high) = (0, 2_000_000)
        while high - low > 2_000 {
            let middle = (low + high) / 2
            if try signalled(after: middle) { high = middle } else { low = middle }
        }
        for step in -24...24 { _ = try signalled(after: max(0, high + step * 500)) }
        #expect(lockOnly.isEmpty, "\(lockOnly)")
    }
}

/// The status endpoint faces probes on open networks: a thousand idle connections (the shipped
/// systemd unit allows 1024 descriptors) take neither its answers nor the channel's outputs.
extension HostileOperationsTests {
    @Test func aThousandIdleConnectionsStopNeitherTheStatusNorTheOutputs() async throws {
        // This test holds a thousand sockets of its own.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(4096, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = try await PlayoutTests.channel(in: folder)
        let port = try TestServers.freePort()
        let channel = try TestServers.launch(
            "/bin/sh",
            [
                "-c", "ulimit -n 1024 && exec \"$0\" \"$@\"", try CLI.binary().path, "playout", "--layout", layout, "--size", "64x36", "--rate", "25",
                "--clock", "realtime", "--duration", "12", "--segment", "1", "--out", folder + "/live.m3u8", "--status", "127.0.0.1:\(port)",
            ], log: folder + "/channel.log")
        defer { if channel.isRunning { channel.terminate() } }
        let until = ContinuousClock.now + .seconds(30)
        while TestServers.get(port: port, path: "/health") == nil, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(50)) }
        // A client that sends its request a byte at a time is let go within the server's 2 s.
        let slow = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(slow) }
        var server = sockaddr_in()
        server.sin_family = sa_family_t(AF_INET)
        server.sin_addr.s_addr = inet_addr("127.0.0.1")
        server.sin_port = UInt16(port).bigEndian
        let reached = withUnsafePointer(to: &server) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(slow, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(reached == 0, "could not reach the status server")
        let head = Array("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
        _ = head.withUnsafeBytes { send(slow, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let sending = ContinuousClock.now
        var letGo = false
        dripping: while ContinuousClock.now - sending < .seconds(10) {
            var byte: UInt8 = 0x61
            if send(slow, &byte, 1, Int32(MSG_NOSIGNAL)) < 0 {
                letGo = true
                break
            }
            var ready = pollfd(fd: slow, events: Int16(POLLIN), revents: 0)
            while poll(&ready, 1, 300) > 0 {
                var buffer = [UInt8](repeating: 0, count: 512)
                if recv(slow, &buffer, buffer.count, 0) <= 0 {
                    letGo = true
                    break dripping
                }
            }
        }
        #expect(letGo && ContinuousClock.now - sending < .seconds(5), "a slow client was held \(ContinuousClock.now - sending)")
        // A thousand connections that send nothing.
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for _ in 0..<1000 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { break }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            sockets.append(fd)
        }
        #expect(sockets.count == 1000, "the test opened \(sockets.count) sockets")
        // The status still answers, at once and all along.
        var answered = 0
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(500))
            if let answer = TestServers.get(port: port, path: "/status"), answer.status == 200 { answered += 1 }
        }
        #expect(answered >= 9, "/status answered \(answered) of 10 times under a thousand idle connections")
        channel.waitUntilExit()
        let log = (try? String(contentsOfFile: folder + "/channel.log", encoding: .utf8)) ?? ""
        #expect(channel.terminationStatus == 0, "exit \(channel.terminationStatus): \(log)")
        #expect(log.contains("live.m3u8 finished (1 connects, 0 drops"), "the HLS output: \(log)")
    }
}

/// `compose` into one named file has no summary file: with `--json`, a second signal leaves the
/// summary, stopped, on standard output (nothing was printed before).
extension HostileOperationsTests {
    @Test(arguments: [false, true]) func aSecondSignalPrintsComposesSummary(stdoutFull: Bool) async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/wall.mp4"
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = [
            "compose", "--size", "64x36", "--rate", "25", "--duration", "600", "--realtime", "--preset", "ultrafast", "--json",
            "--layer", "x=0,y=0,w=64,h=36,loop=forever,audio=yes,source=\(try Fixtures.clip("h264-aac.mp4"))", "--out", file,
        ]
        let errors = Pipe(), printed = Pipe()
        process.standardError = errors
        let full = stdoutFull ? FileHandle(forWritingAtPath: "/dev/full") : nil
        defer { try? full?.close() }
        process.standardOutput = full ?? printed
        try process.run()
        let until = Date().addingTimeInterval(60)
        func writing() -> Bool { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { $0.hasPrefix(".wall.mp4.") } }
        while Date() < until, !writing() { try await Task.sleep(for: .milliseconds(20)) }
        // A few fragments of the MP4.
        try await Task.sleep(for: .seconds(3))
        kill(process.processIdentifier, SIGTERM)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("stopped at once"), "\(text)")
        guard !stdoutFull else {
            // The summary standard output lost is said (the stop's status still wins).
            #expect(text.contains("could not write to standard output: No space left on device"), "\(text)")
            // Sent back to back, they may be taken in either order: the second one taken stops it.
            #expect([128 + SIGINT, 128 + SIGTERM].contains(process.terminationStatus), "\(process.terminationStatus)")
            return
        }
        let stdout = printed.fileHandleForReading.readDataToEndOfFile()
        let summary = try #require(
            try? JSONSerialization.jsonObject(with: stdout) as? [String: Any], "--json printed: \(String(decoding: stdout, as: UTF8.self))")
        #expect(summary["state"] as? String == "cancelled" && summary["stoppedAtOnceBy"] != nil, "\(summary)")
        #expect((summary["keptCut"] as? [String])?.contains(file) == true, "the kept file is named: \(summary) \(text)")
    }
}

/// A summary lost to a full standard output is said on standard error after a signal too (the
/// signal's status wins; before, the loss went unsaid).
extension HostileOperationsTests {
    @Test func aSummaryLostAfterASignalIsSaid() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/wall.mp4"
        let arguments = [
            "timeout", "--preserve-status", "-s", "TERM", "4", try CLI.binary().path, "compose", "--size", "64x36", "--rate", "25",
            "--duration", "600", "--realtime", "--preset", "ultrafast", "--json",
            "--layer", "x=0,y=0,w=64,h=36,loop=forever,source=\(try Fixtures.clip("h264-aac.mp4"))", "--out", file,
        ]
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let outcome = try await offPool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "exec \(quoted) > /dev/full"]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        #expect(outcome.0 == 143, "stopped by its signal: \(outcome.0) \(outcome.1)")
        #expect(outcome.1.contains("could not write to standard output: No space left on device"), "\(outcome.1)")
        #expect(FileManager.default.fileExists(atPath: file), "the composition is kept")
    }
}
