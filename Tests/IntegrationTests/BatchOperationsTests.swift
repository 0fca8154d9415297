import Foundation
import Testing

/// Batch runs attacked through their operations: manifests that are pipes, FIFOs and process
/// substitutions, a byte-order mark, results files of another run, a locked results file,
/// absurd intervals, and a signal moments after the start.
@Suite(.serialized) struct BatchOperationsTests {
    static func records(_ path: String) -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
    }

    static func files(_ path: String) -> [[String: Any]] { records(path).filter { $0["kind"] as? String == "file" } }

    /// A manifest read once: a process substitution, a FIFO whose writer comes late, standard input.
    @Test func manifestsThatCanBeReadOnlyOnce() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try Fixtures.clip("h264-aac.mp4"), other = try Fixtures.clip("4x3.mp4")
        // Process substitution (bash): /dev/fd/N, a pipe.
        let binary = try CLI.binary().path
        let substituted = try await offPool { () throws -> (Int32, String) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [
                "-c",
                "exec '\(binary)' probe --progress-interval 0 --manifest <(printf '%s\\n' '\(clip)' '\(other)') --results '\(folder)/sub.jsonl'",
            ]
            let err = Pipe()
            process.standardError = err
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        #expect(substituted.0 == 0, "\(substituted.1)")
        #expect(
            Set(Self.files(folder + "/sub.jsonl").compactMap { $0["source"] as? String }) == [clip, other],
            "a piped manifest must be read, not counted away")

        // A FIFO: opened without blocking, its writer arriving a moment later.
        let fifo = folder + "/manifest.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Task.detached {
            try await Task.sleep(for: .milliseconds(500))
            try "\u{FEFF}\(clip)\n\(other)\n".write(toFile: fifo, atomically: false, encoding: .utf8)
        }
        let fromFIFO = try await CLI.run(["probe", "--progress-interval", "0", "--manifest", fifo, "--results", folder + "/fifo.jsonl"])
        try await writer.value
        #expect(fromFIFO.status == 0, "\(fromFIFO.stderr)")
        // The byte-order mark an editor wrote is not part of the first path.
        #expect(Set(Self.files(folder + "/fifo.jsonl").compactMap { $0["source"] as? String }) == [clip, other])
        #expect(Self.files(folder + "/fifo.jsonl").allSatisfy { $0["status"] as? String == "loaded" })

        // A FIFO nobody writes to: SIGTERM ends the run at once, with a true shard record.
        let silent = folder + "/silent.fifo"
        #expect(mkfifo(silent, 0o600) == 0)
        let start = ContinuousClock.now
        let stopped = try await HostileRun.signalled(
            ["probe", "--progress-interval", "0", "--manifest", silent, "--results", folder + "/silent.jsonl"],
            signal: SIGTERM, after: .milliseconds(700))
        #expect(ContinuousClock.now - start < .seconds(8), "a signal must end a run waiting on its manifest")
        #expect(stopped.status == 143 && !stopped.killedBySignal, "\(stopped.stderr)")
        let shard = Self.records(folder + "/silent.jsonl").last
        #expect(shard?["kind"] as? String == "shard" && shard?["state"] as? String == "cancelled", "\(String(describing: shard))")
    }

    /// A signal moments after the start is never lost: the run stops with 128 + the signal (or,
    /// before its handling is set up, the signal's default action ends it).
    @Test func aSignalRightAfterTheStartIsNotLost() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/manifest.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        var random = SeededGenerator()
        for _ in 0..<8 {
            let delay = Duration.milliseconds(Int.random(in: 5...150, using: &random))
            let outcome = try await HostileRun.signalled(["probe", "--progress-interval", "0", "--manifest", fifo], signal: SIGTERM, after: delay)
            #expect(
                outcome.status == 143 || (outcome.killedBySignal && outcome.status == SIGTERM),
                "SIGTERM after \(delay) (seed \(random.seed)): status \(outcome.status)")
        }
    }

    /// Resuming from the results of another command or another shard is refused (it would skip
    /// sources this one never did); a results file another run holds is refused, or with --wait
    /// waited for; a refused run leaves the output folder's summary as it was.
    @Test func resultsFilesOfAnotherRunOrLockedAreNotUsed() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let manifest = folder + "/manifest.txt"
        try "\(try Fixtures.clip("h264-aac.mp4"))\n\(try Fixtures.clip("4x3.mp4"))\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let results = folder + "/results.jsonl", out = folder + "/out"
        let probe = try await CLI.run(["probe", "--progress-interval", "0", "--manifest", manifest, "--results", results])
        #expect(probe.status == 0)
        let thumbnails = ["thumbnails", "--count", "1", "--progress-interval", "0", "--manifest", manifest, "--out", out]
        let other = try await CLI.run(thumbnails + ["--results", results, "--resume"])
        #expect(other.status != 0 && other.stderr.contains("another run"), "\(other.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/summary.json"), "a refused run wrote a summary")
        let sharded = try await CLI.run([
            "probe", "--progress-interval", "0", "--manifest", manifest, "--shard", "1/2", "--results", results, "--resume",
        ])
        #expect(sharded.status != 0 && sharded.stderr.contains("shard"), "\(sharded.stderr)")

        // A run's own results: the summary it wrote stays when a second run is refused the lock.
        let own = folder + "/own.jsonl"
        let first = try await CLI.run(thumbnails + ["--results", own])
        #expect(first.status == 0, "\(first.stderr)")
        let summary = FileManager.default.contents(atPath: out + "/summary.json")
        #expect(summary != nil)
        // Another process holds the lock until the marker goes (however slow the machine).
        let marker = folder + "/hold"
        #expect(FileManager.default.createFile(atPath: marker, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let holder = try await offPool { () throws -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            process.arguments = [own, "/bin/sh", "-c", #"while [ -e "$0" ]; do sleep 0.05; done"#, marker]
            try process.run()
            return process
        }
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while !Self.isLocked(own), holder.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Self.isLocked(own), "flock never took the lock")
        let refused = try await CLI.run(thumbnails + ["--results", own, "--resume"])
        #expect(refused.status != 0 && refused.stderr.contains("--wait"), "\(refused.stderr)")
        #expect(FileManager.default.contents(atPath: out + "/summary.json") == summary, "a refused run rewrote the summary")
        // With --wait: it says it waits, and runs once the lock is let go.
        let executable = try CLI.binary()
        let waited = try await offPool { () throws -> (status: Int32, stderr: String) in
            let process = Process()
            process.executableURL = executable
            process.arguments = thumbnails + ["--results", own, "--resume", "--wait"]
            process.environment = CLI.environment(adding: [:])
            let err = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("waiting") {
                let chunk = err.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                said += chunk
            }
            try? FileManager.default.removeItem(atPath: marker)
            said += err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: said, as: UTF8.self))
        }
        #expect(waited.status == 0 && waited.stderr.contains("waiting"), "\(waited.stderr)")
        try await offPool { holder.waitUntilExit() }
    }

    /// Whether a process holds a `flock` on `path`, read from `/proc/locks` (taking the lock to
    /// see would race the run that is about to take it).
    static func isLocked(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return false }
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 5 && fields[1] == "FLOCK" && !line.contains("->") && fields[5].hasSuffix(":\(info.st_ino)")
        }
    }

    @Test(arguments: ["1e20", "-1", "0.001", "nan", "inf"])
    func absurdProgressIntervalsAreUsageErrors(interval: String) async throws {
        let run = try await CLI.run(["probe", "--manifest", "-", "--progress-interval", interval])
        #expect(run.status == 2, "--progress-interval \(interval): \(run.stderr)")
    }
}
