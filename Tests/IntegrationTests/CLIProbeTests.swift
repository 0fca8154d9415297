import Foundation
import Testing

/// `playhead probe` run as a person runs it: the built binary, its output and its exit status.
@Suite struct CLIProbeTests {
    @Test func jsonReportsEveryGoodClipAsLoaded() async throws {
        let paths = try Fixtures.goodClips.map { try Fixtures.clip($0) }
        let run = try await CLI.run(["probe", "--json"] + paths)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let assets = try CLI.assets(run.stdout)
        #expect(assets.map { $0["path"] as? String } == paths)
        for (asset, clip) in zip(assets, Fixtures.goodClips) {
            #expect(asset["status"] as? String == "loaded")
            #expect(asset["isPlayable"] as? Bool == true)
            let expected = try Fixtures.ffprobe(clip)
            let tracks = try #require(asset["tracks"] as? [[String: Any]])
            #expect(tracks.map { $0["mediaType"] as? String } == expected.streams.map(\.codec_type))
            #expect(tracks.map { $0["codec"] as? String } == expected.streams.map(\.codec_name))
            #expect(asset["error"] == nil)
            for (track, stream) in zip(tracks, expected.streams) where stream.codec_type == "video" {
                let size = try #require(track["naturalSize"] as? [String: Int])
                #expect(size["width"] == stream.width && size["height"] == stream.height)
                #expect(track["presentationSize"] is [String: Int])
                #expect(track["sampleRate"] == nil)
            }
            for (track, stream) in zip(tracks, expected.streams) where stream.codec_type == "audio" {
                #expect(track["sampleRate"] as? Int == Int(stream.sample_rate ?? ""))
                #expect(track["naturalSize"] == nil)
            }
        }
    }

    @Test func badFilesAreReportedFailedWithExitStatusOne() async throws {
        let good = try Fixtures.clip("h264-aac.mp4")
        let bad = try Fixtures.badFiles.map { try Fixtures.clip($0) }
        let missing = Fixtures.sampleMedia.appendingPathComponent("missing.mp4").path
        let directory = Fixtures.sampleMedia.path
        let paths = [bad[0], good] + bad.dropFirst() + [missing, directory]
        let start = ContinuousClock.now
        let run = try await CLI.run(["probe", "--json"] + paths)
        // A bound against hanging on a bad file, not a speed target (the suite runs in parallel).
        #expect(ContinuousClock.now - start < Bound.seconds(30))
        #expect(run.status == 1)
        let assets = try CLI.assets(run.stdout)
        #expect(assets.map { $0["path"] as? String } == paths)
        for asset in assets {
            let path = try #require(asset["path"] as? String)
            if path == good {
                #expect(asset["status"] as? String == "loaded")
                continue
            }
            #expect(asset["status"] as? String == "failed", "\(path)")
            let error = try #require(asset["error"] as? [String: Any], "\(path) has no error")
            let code = try #require(error["code"] as? String)
            #expect(code.hasPrefix("io.") || code.hasPrefix("demux."))
            #expect((error["message"] as? String)?.contains(path) == true)
            #expect(asset["tracks"] == nil)
        }
    }

    @Test func tableNamesEveryFile() async throws {
        let paths = [try Fixtures.clip("anamorphic.mp4"), try Fixtures.clip("bad-text.mp4")]
        let run = try await CLI.run(["probe"] + paths)
        #expect(run.status == 1)
        #expect(run.stdout.contains("\(paths[0])  mov,mp4"))
        #expect(run.stdout.contains("shown 320x180"))
        #expect(run.stdout.contains("\(paths[1])  FAILED  [demux.unrecognizedFormat]"))
    }

    @Test func usageErrorsExitWithTwo() async throws {
        #expect(try await CLI.run(["probe"]).status == 2)
        #expect(try await CLI.run(["probe", "--no-such-flag", "x.mp4"]).status == 2)
    }
}

/// Runs the `playhead` binary built beside the test bundle.
enum CLI {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func binary(sourceLocation: SourceLocation = #_sourceLocation) throws -> URL {
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [buildDirectory.appendingPathComponent("playhead")]
        if let explicit = ProcessInfo.processInfo.environment["PLAYHEAD_BIN"] {
            candidates.insert(URL(fileURLWithPath: explicit), at: 0)
        }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "no playhead binary at \(candidates.map(\.path)): run swift build first", sourceLocation: sourceLocation)
    }

    /// Runs the CLI. The shard variables of a batch system this test may itself run under are
    /// never passed on; `environment` adds variables of the test's own.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) async throws -> Result {
        let executable = try binary()
        return try await offPool { try runBlocking(executable, arguments, in: directory, environment: environment) }
    }

    static func environment(adding extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SLURM_") && $0.key != "JOB_COMPLETION_INDEX" }
        environment.merge(extra) { $1 }
        return environment
    }

    private static func runBlocking(_ executable: URL, _ arguments: [String], in directory: URL?, environment: [String: String]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = Self.environment(adding: environment)
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe cannot stall the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    static func assets(_ json: String) throws -> [[String: Any]] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return try #require(document["assets"] as? [[String: Any]])
    }

    /// The `files` of a `play --json` summary.
    static func files(_ json: String) throws -> [[String: Any]] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return try #require(document["files"] as? [[String: Any]])
    }
}
