import Foundation
import Testing

/// Manifests, shards and resumable JSON Lines: every source of a manifest done exactly once across
/// shards, processes, SIGKILLs and reruns; shards from the batch systems' variables; memory that
/// does not grow with the manifest.
@Suite(.serialized) struct ManifestTests {
    /// 2,000 sources: the sample clips under many names (symlinks), bad files, missing paths, with
    /// comments and blank lines between; the sources, in order.
    static func library(_ folder: String, lines: Int = 2000) throws -> (manifest: String, sources: [String]) {
        let clips = try ["h264-aac.mp4", "4x3.mp4", "video-only.mp4", "audio-only.mp3", "portrait.mp4", "hevc-aac.mkv"].map { try Fixtures.clip($0) }
        let bad = try Fixtures.badFiles.map { try Fixtures.clip($0) }
        try FileManager.default.createDirectory(atPath: folder + "/library", withIntermediateDirectories: true)
        var sources: [String] = []
        var text = "# a library of \(lines) sources\n\n"
        for i in 0..<lines {
            let source: String
            switch i % 100 {
            case 7:
                source = folder + "/library/bad \(i).mp4"
                try FileManager.default.createSymbolicLink(atPath: source, withDestinationPath: bad[(i / 100) % bad.count])
            case 13: source = folder + "/library/missing-\(i).mp4"
            default:
                let clip = clips[i % clips.count]
                source = folder + "/library/clip \(i)" + (clip as NSString).pathExtension.prefixed(".")
                try FileManager.default.createSymbolicLink(atPath: source, withDestinationPath: clip)
            }
            sources.append(source)
            text += source + "\n"
            if i % 250 == 0 { text += "# part \(i / 250)\n\n" }
        }
        let manifest = folder + "/manifest.txt"
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        return (manifest, sources)
    }

    /// Every line of a results file, parsed; a line that is not JSON fails the test.
    static func records(_ path: String) throws -> [[String: Any]] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            Issue.record("no results at \(path): \(error)")
            throw error
        }
        #expect(data.isEmpty || data.last == UInt8(ascii: "\n"), "\(path) ends inside a line")
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], "not a JSON object: \(String(decoding: line, as: UTF8.self))")
        }
    }

    /// The file records among the whole lines of a results file that may end inside a line.
    static func wholeFileRecords(_ path: String) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        return data.split(separator: UInt8(ascii: "\n")).filter { line in
            (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["kind"] as? String == "file"
        }.count
    }

    static func fileRecords(_ path: String) throws -> [[String: Any]] {
        try records(path).filter { $0["kind"] as? String == "file" }
    }

    @Test func fourShardsInFourProcessesDoEverySourceExactlyOnce() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (manifest, sources) = try await offPool { try Self.library(folder) }
        let runs = try await withThrowingTaskGroup(of: (Int, CLI.Result).self) { group in
            for k in 0..<4 {
                group.addTask {
                    (
                        k,
                        try await CLI.run([
                            "probe", "--manifest", manifest, "--shard", "\(k)/4", "--results", folder + "/results-\(k).jsonl",
                            "--progress-interval", "0",
                        ])
                    )
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        var seen: [String: Int] = [:]
        for k in 0..<4 {
            let run = try #require(runs[k])
            #expect(run.status == 1, "bad and missing files make the exit status 1: \(run.stderr)")
            #expect(run.stderr.contains("shard \(k)/4 (from --shard)"), "\(run.stderr)")
            let all = try Self.records(folder + "/results-\(k).jsonl")
            let files = all.filter { $0["kind"] as? String == "file" }
            let shardRecord = try #require(all.last)
            #expect(
                shardRecord["kind"] as? String == "shard" && shardRecord["done"] as? Int == files.count
                    && shardRecord["state"] as? String == "finished")
            // Balanced: each shard near a quarter.
            #expect(abs(files.count - 500) < 75, "shard \(k) took \(files.count) of 2000")
            for record in files {
                let source = try #require(record["source"] as? String)
                seen[source, default: 0] += 1
                #expect(record["shard"] as? String == "\(k)/4")
                let missing = source.contains("/missing-"), bad = source.contains("/bad ")
                #expect(record["status"] as? String == (missing || bad ? "failed" : "loaded"), "\(source): \(record["status"] ?? "nil")")
                if missing { #expect((record["error"] as? [String: Any])?["code"] as? String == "io.fileNotFound") }
            }
        }
        #expect(Set(seen.keys) == Set(sources), "the shards' union is the manifest")
        #expect(seen.values.allSatisfy { $0 == 1 }, "every source exactly once: \(Array(seen.filter { $0.value != 1 }.keys.prefix(5)))")
    }

    /// A shard killed with SIGKILL at random moments and rerun with --resume, several times: in the
    /// end every source of the shard is recorded once, no line is torn, and every image a record
    /// lists is there.
    @Test func killedAndResumedShardsLoseAndRepeatNothing() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (manifest, _) = try await offPool { try Self.library(folder, lines: 1200) }
        let results = folder + "/results.jsonl", out = folder + "/thumbs"
        let arguments = [
            "thumbnails", "--count", "4", "--max-sessions", "2", "--size", "32x18", "--manifest", manifest, "--shard", "1/2", "--results", results,
            "--out", out, "--progress-interval", "0",
        ]
        // The shard's sources, from a run of its own.
        let reference = try await CLI.run(["probe", "--manifest", manifest, "--shard", "1/2", "--progress-interval", "0"])
        let expected = Set(
            reference.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["kind"] as? String == "file"
                else { return nil }
                return object["source"] as? String
            })
        #expect(expected.count > 450)
        var generator = SeededGenerator()
        print("resume test: seed \(generator.seed) (PLAYHEAD_SEED repeats it)")
        var first = true
        var killedMidway = 0
        for round in 0..<5 {
            let delay = Duration.milliseconds(Int.random(in: 0...600, using: &generator))
            // SIGKILL (no chance to say anything) and SIGTERM/SIGINT (a clean stop): either way
            // a source stopped part way must get no record.
            let signal = [SIGKILL, SIGTERM, SIGKILL, SIGINT, SIGTERM][round]
            // The delay counts from this run's first record of its own, so the kill lands part
            // way through however slowly a loaded machine starts the run.
            let before = Self.wholeFileRecords(results)
            let started: @Sendable () -> Bool = { Self.wholeFileRecords(results) > before }
            _ = try await HostileRun.signalled(
                arguments + (first ? [] : ["--resume"]), signal: signal, after: delay, startedWhen: before < expected.count ? started : nil)
            first = first && (FileManager.default.contents(atPath: results) ?? Data()).isEmpty
            // A run killed before it cut round 2's torn line leaves it: count whole records only.
            let sofar = Self.wholeFileRecords(results)
            if sofar > 0, sofar < expected.count { killedMidway += 1 }
            if round == 2, let handle = FileHandle(forWritingAtPath: results) {
                // A crash in the middle of a write: a torn last line.
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(#"{"kind":"file","source":"/torn"#.utf8))
                try handle.close()
            }
        }
        let last = try await CLI.run(arguments + ["--resume"])
        // 1 when a source this run did failed, else 0 (earlier runs' failures are in the records).
        #expect(last.status == 0 || last.status == 1, "\(last.stderr)")
        try #require(
            FileManager.default.fileExists(atPath: results),
            "the last run (status \(last.status)) left no results file; its standard error: \(last.stderr.suffix(3000))")
        let files = try Self.fileRecords(results)
        var count: [String: Int] = [:]
        for record in files { count[record["source"] as? String ?? "", default: 0] += 1 }
        #expect(
            Set(count.keys) == expected,
            "missing \(expected.subtracting(count.keys).prefix(3)), extra \(Set(count.keys).subtracting(expected).prefix(3))")
        #expect(count.values.allSatisfy { $0 == 1 }, "recorded twice: \(Array(count.filter { $0.value > 1 }.keys.prefix(3)))")
        for record in files where (record["source"] as? String)?.contains("/bad ") == true { #expect(record["status"] as? String == "failed") }
        for record in files {
            #expect((record["error"] as? [String: Any])?["code"] as? String != "state.cancelled", "a stopped source was recorded: \(record)")
        }
        #expect(killedMidway > 0, "no kill landed while the shard was part done: the test proved nothing")
        for record in files {
            for image in record["images"] as? [[String: Any]] ?? [] {
                if let path = image["path"] as? String { #expect(FileManager.default.fileExists(atPath: path), "\(path) listed, missing") }
            }
        }
    }

    /// The shard from a Kubernetes Indexed Job's or a Slurm array's variables is the one --shard
    /// names; variables that make no sense are a usage error.
    @Test func shardsFromTheEnvironmentEqualTheOption() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var text = ""
        for i in 0..<90 { text += "\(folder)/missing-\(i).mp4\n" }
        let manifest = folder + "/manifest.txt"
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        func sources(_ run: CLI.Result) throws -> Set<String> {
            Set(
                run.stdout.split(separator: "\n").compactMap { line -> String? in
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["kind"] as? String == "file"
                    else { return nil }
                    return object["source"] as? String
                })
        }
        var union = Set<String>()
        for k in 0..<3 {
            let option = try await CLI.run(["probe", "--manifest", manifest, "--shard", "\(k)/3"])
            let kubernetes = try await CLI.run(["probe", "--manifest", manifest, "--shards", "3"], environment: ["JOB_COMPLETION_INDEX": "\(k)"])
            let slurm = try await CLI.run(
                ["probe", "--manifest", manifest],
                environment: ["SLURM_ARRAY_TASK_ID": "\(k + 5)", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3"])
            #expect(!(try sources(option)).isEmpty)
            #expect(try sources(option) == sources(kubernetes))
            #expect(try sources(option) == sources(slurm))
            #expect(kubernetes.stderr.contains("shard \(k)/3 (from JOB_COMPLETION_INDEX)"), "\(kubernetes.stderr)")
            #expect(slurm.stderr.contains("shard \(k)/3 (from SLURM_ARRAY_TASK_ID)"), "\(slurm.stderr)")
            #expect(slurm.stdout.contains("\"shardFrom\":\"SLURM_ARRAY_TASK_ID\""))
            // One task of the array run again alone (`sbatch --array=K`): with --shards its ID is
            // the shard number.
            let rerun = try await CLI.run(
                ["probe", "--manifest", manifest, "--shards", "3"],
                environment: [
                    "SLURM_ARRAY_TASK_ID": "\(k)", "SLURM_ARRAY_TASK_MIN": "\(k)", "SLURM_ARRAY_TASK_MAX": "\(k)",
                    "SLURM_ARRAY_TASK_COUNT": "1",
                ])
            #expect(try sources(option) == sources(rerun))
            union.formUnion(try sources(option))
        }
        #expect(union.count == 90)
        for (arguments, environment) in [
            (["--shards", "3"], ["JOB_COMPLETION_INDEX": "3"]), ([], ["JOB_COMPLETION_INDEX": "0"]),
            ([], ["SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "3"]),
            (["--shard", "3/3"], [:]), (["--shard", "1/2", "--shards", "3"], [:]),
            // A stepped array and a list leave shards no task takes.
            (
                [],
                [
                    "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "6",
                    "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4",
                ]
            ),
            (
                [],
                [
                    "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "5",
                    "SLURM_ARRAY_TASK_COUNT": "3",
                ]
            ),
            (["--shards", "3"], ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_COUNT": "1"]),
        ] {
            let run = try await CLI.run(["probe", "--manifest", manifest] + arguments, environment: environment)
            #expect(run.status == 2, "\(arguments) \(environment): \(run.status) \(run.stderr)")
        }
    }

    /// Without a terminal, a progress line every --progress-interval seconds: done / total of the
    /// shard, failures, rate and time left, the counts rising.
    @Test func progressLinesWithoutATerminal() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var text = ""
        for i in 0..<30_000 { text += "\(folder)/missing-\(i).mp4\n" }
        try text.write(toFile: folder + "/m.txt", atomically: true, encoding: .utf8)
        let run = try await CLI.run(["probe", "--manifest", folder + "/m.txt", "--results", folder + "/r.jsonl", "--progress-interval", "0.2"])
        let pattern = #/shard 0/1: (\d+)/30000 done, (\d+) failed, [0-9.]+/s/#
        let counts = run.stderr.split(separator: "\n").compactMap { line in (try? pattern.firstMatch(in: String(line))).map { Int($0.1) ?? -1 } }
        #expect(counts.count >= 2, "progress lines: \(run.stderr.prefix(500))")
        #expect(counts == counts.sorted() && counts.allSatisfy { $0 >= 0 && $0 <= 30_000 })
        #expect(run.stderr.contains("shard 0/1: 30000 done (30000 failed)"), "the last word: \(run.stderr.suffix(300))")
    }

    /// A million lines of missing paths: the manifest is streamed, so the peak memory of a shard
    /// of it stays that of a manifest a tenth as long.
    @Test func aMillionLinesRunInFlatMemory() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await offPool {
            for lines in [100_000, 1_000_000] {
                var text = ""
                text.reserveCapacity(lines * 40)
                for i in 0..<lines { text += "/nonexistent/library/file-\(i).mp4\n" }
                try text.write(toFile: folder + "/m\(lines).txt", atomically: false, encoding: .utf8)
            }
        }
        var peaks: [Int: Int] = [:]
        for lines in [100_000, 1_000_000] {
            let results = folder + "/r\(lines).jsonl"
            let (status, kilobytes) = try await HostileRun.peakMemory([
                "probe", "--manifest", folder + "/m\(lines).txt", "--shard", "0/25",
                "--results", results, "--progress-interval", "0",
            ])
            #expect(status == 1)
            let records = try Self.records(results)
            let files = records.filter { $0["kind"] as? String == "file" }
            #expect(abs(files.count - lines / 25) < lines / 25 / 10, "\(files.count) records of \(lines) lines in shard 0/25")
            #expect(records.last?["done"] as? Int == files.count)
            peaks[lines] = kilobytes
        }
        let small = try #require(peaks[100_000]), large = try #require(peaks[1_000_000])
        #expect(large < small + 16_000, "1,000,000 lines peaked at \(large) KB, 100,000 at \(small) KB")
    }

    /// JSON Lines manifests with per-file times, comments, blank and broken lines; `play` and
    /// `thumbnails` write to folders named from the source, and the records agree with the disk.
    /// A line too long for a manifest (70 KiB, 200 KiB, 2 MiB) fails alone with a record saying
    /// why; the lines around it are done, the shard record and summary are written, and a resume
    /// takes up where it was.
    @Test func anOverlongLineFailsAlone() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try Fixtures.clip("h264-aac.mp4"), other = try Fixtures.clip("4x3.mp4")
        let manifest = folder + "/m.txt"
        let lines = [
            clip, "/" + String(repeating: "a", count: 70_000), other, String(repeating: "b", count: 200_000),
            "{\"source\": \"" + String(repeating: "c", count: 2_000_000) + "\"}", clip + " ",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let results = folder + "/t.jsonl"
        let run = try await CLI.run([
            "thumbnails", "--count", "1", "--size", "32x18", "--manifest", manifest, "--results", results, "--out", folder + "/t",
        ])
        #expect(run.status == 1, "the long lines fail: \(run.stderr)")
        let records = try Self.fileRecords(results)
        #expect(Set(records.compactMap { $0["line"] as? Int }) == [1, 2, 3, 4, 5], "\(records.map { $0["line"] ?? "" })")
        for line in [2, 4, 5] {
            let record = try #require(records.first { $0["line"] as? Int == line })
            let message = (record["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("line \(line)") && message.contains("longer than"), "\(message)")
        }
        #expect(try Self.records(results).contains { $0["kind"] as? String == "shard" }, "a shard record")
        let summary = try readJSONObject(URL(fileURLWithPath: folder + "/t/summary.json"))
        #expect(summary["state"] as? String != "running", "\(summary)")
        let resumed = try await CLI.run([
            "thumbnails", "--count", "1", "--size", "32x18", "--manifest", manifest, "--results", results, "--out", folder + "/t", "--resume",
        ])
        #expect(resumed.status != 2, "\(resumed.stderr)")
    }

    @Test func jsonLinesManifestsAndOutputFolders() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = try Fixtures.clip("h264-aac.mp4"), other = try Fixtures.clip("4x3.mp4")
        let manifest = folder + "/manifest.jsonl"
        try """
        # thumbnails at times of their own
        {"source": "\(clip)", "at": [0.5, 1.25]}

        \(other)
        {"source": 3}
        \(clip)
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let thumbs = try await CLI.run([
            "thumbnails", "--count", "3", "--manifest", manifest, "--results", folder + "/t.jsonl", "--out", folder + "/t",
        ])
        #expect(thumbs.status == 1, "the broken line fails: \(thumbs.stderr)")
        let records = try Self.fileRecords(folder + "/t.jsonl")
        #expect(records.count == 3, "the repeated source is taken once: \(records.map { $0["source"] ?? "" })")
        let first = try #require(records.first { $0["source"] as? String == clip })
        #expect((first["images"] as? [[String: Any]])?.compactMap { $0["requestedTime"] as? Double } == [0.5, 1.25])
        #expect(first["line"] as? Int == 2)
        let broken = try #require(records.first { $0["line"] as? Int == 5 })
        let message = (broken["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("line 5"), "\(message)")
        let otherRecord = try #require(records.first { $0["source"] as? String == other })
        #expect((otherRecord["images"] as? [[String: Any]])?.count == 3)
        let folders = try FileManager.default.contentsOfDirectory(atPath: folder + "/t").filter { !$0.hasPrefix(".") && $0 != "summary.json" }
        #expect(folders.count == 2 && folders.allSatisfy { $0.range(of: #"^[0-9a-f]{16}-"#, options: .regularExpression) != nil }, "\(folders)")

        let play = try await CLI.run([
            "play", "--format", "ppm", "--size", "32x18", "--manifest", manifest, "--results", folder + "/p.jsonl", "--out", folder + "/p",
        ])
        #expect(play.status == 1)
        for record in try Self.fileRecords(folder + "/p.jsonl") where record["status"] as? String == "completed" {
            let output = try #require(record["output"] as? String)
            let frames = try FileManager.default.contentsOfDirectory(atPath: output).filter { $0.hasSuffix(".ppm") }.count
            #expect(frames == record["framesWritten"] as? Int && frames > 0)
            let source = try #require(record["source"] as? String)
            #expect(try await Reference.frameTimes(source).count == frames, "\(source)")
        }
    }
}

private extension String {
    func prefixed(_ prefix: String) -> String { isEmpty ? self : prefix + self }
}
