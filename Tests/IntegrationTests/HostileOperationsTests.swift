import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Ordinary operations used in unkind ways: signals at random moments, closed, full and broken
/// standard streams, a shared output folder with a user's files, links planted where a run
/// writes, two runs at once, absurd arguments. Every way out leaves a true summary, no temporary
/// file, and nothing of the user's touched.
@Suite(.serialized) struct HostileOperationsTests {
    // MARK: Signals

    /// `play` (concurrent, PNG and Y4M), `play --queue` and `thumbnails`, each stopped by SIGINT,
    /// SIGTERM and SIGHUP at random moments (the seed is printed): the exit status is 128 + the
    /// signal (or 0 when the run was already over), the summary is there and agrees with the disk,
    /// and no temporary file is left.
    @Test(arguments: ["play-png", "play-y4m", "queue", "thumbnails"])
    func signalsAtRandomMomentsLeaveATrueSummary(command: String) async throws {
        let long = try await Self.longClip()
        let short = try Fixtures.clip("h264-aac.mp4")
        var generator = SeededGenerator()
        print("signals test \(command): seed \(generator.seed) (PLAYHEAD_SEED repeats it)")
        for signal in [HostileRun.interrupt, HostileRun.terminate, HostileRun.hangUp] {
            let out = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: out) }
            let arguments: [String]
            switch command {
            case "play-png": arguments = ["play", "--realtime", "--out", out, long, short]
            case "play-y4m": arguments = ["play", "--realtime", "--format", "y4m", "--out", out, long, short]
            case "queue": arguments = ["play", "--queue", "--realtime", "--format", "y4m", "--out", out, short, long]
            default: arguments = ["thumbnails", "--count", "150", "--size", "320x180", "--sheet", "--overview", "--out", out, long, short]
            }
            let delay = Duration.milliseconds(Int.random(in: 50...1500, using: &generator))
            let outcome = try await HostileRun.signalled(arguments, signal: signal, after: delay)
            if !FileManager.default.fileExists(atPath: out + "/summary.json") {
                // Only a signal that came before the run began (while the process was still
                // starting, checking its arguments or taking the folder's lock) may leave no
                // summary — and then nothing else but the (empty) lock file.
                let stopped = outcome.killedBySignal ? outcome.status == signal : outcome.status == 128 + signal
                #expect(stopped, "\(command) after \(delay): status \(outcome.status), no summary, \(outcome.stderr)")
                let left = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0 != ".playhead.lock" }
                #expect(left.isEmpty, "\(command) after \(delay) wrote without a summary: \(left)")
                continue
            }
            #expect(!outcome.killedBySignal, "\(command) died of signal \(signal) after \(delay): \(outcome.stderr)")
            let summary = try Self.summary(out)
            if outcome.status == 128 + signal {
                #expect(summary["state"] as? String == "cancelled", "\(command) after \(delay)")
                #expect(summary["signal"] != nil)
            } else {
                #expect(outcome.status == 0, "\(command) after \(delay): status \(outcome.status), \(outcome.stderr)")
                #expect(summary["state"] as? String == "finished")
            }
            #expect(leftoverTemporaryFiles(in: out).isEmpty, "\(command) after \(delay): \(leftoverTemporaryFiles(in: out))")
            let problems = try await Self.disagreements(summary, out: out)
            #expect(problems.isEmpty, "\(command), signal \(signal) after \(delay): \(problems)")
        }
    }

    // MARK: Standard streams

    /// Every command with the stream it writes to closed, full, or read by nobody: exit status 1
    /// (saying why on standard error when that still works), never a crash; `play` and
    /// `thumbnails` still write their summary.
    @Test(arguments: ["probe", "play", "thumbnails"])
    func closedFullAndBrokenStreamsExitOne(command: String) async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let cases: [(redirections: String, broken: Bool, what: String)] = [
            (">&-", false, "stdout closed"), ("2>&-", false, "stderr closed"), (">/dev/full", false, "stdout full"),
            ("2>/dev/full", false, "stderr full"), ("", true, "stdout a broken pipe"),
        ]
        for (redirections, broken, what) in cases {
            let out = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: out) }
            let onStderr = redirections.hasPrefix("2")
            // Each run writes to the stream under test: JSON on standard output, or (without
            // --json) the per-file lines on standard error; probe has nothing for standard error.
            let json = onStderr ? [] : ["--json"]
            let arguments: [String]
            switch command {
            case "probe": arguments = ["probe"] + json + [clip]
            case "play": arguments = ["play"] + json + ["--out", out, clip]
            default: arguments = ["thumbnails"] + json + ["--count", "3", "--out", out, clip]
            }
            let outcome = try await HostileRun.shell(arguments, redirections: redirections, brokenPipe: broken)
            let expected: Int32 = command == "probe" && onStderr ? 0 : 1
            #expect(!outcome.killedBySignal && outcome.status == expected, "\(command) with \(what): status \(outcome.status), \(outcome.stderr)")
            if !onStderr {
                #expect(outcome.stderr.contains("standard output"), "\(command) with \(what) says why: \(outcome.stderr)")
            }
            if command != "probe" {
                let summary = try Self.summary(out)
                #expect(summary["state"] as? String == "finished")
                #expect(leftoverTemporaryFiles(in: out).isEmpty)
            }
        }
    }

    // MARK: The output folder

    /// A user's folder and file named like outputs, and an input, inside `--out`: left exactly as
    /// they were; the files whose names they took fail with `output.exists`; the others play.
    @Test func whatIsNotOursIsNeverTouched() async throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        // The user's folder named like the first file's output, with a file named like a frame.
        try FileManager.default.createDirectory(atPath: out + "/01-a.mp4", withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: out + "/01-a.mp4/frame-000001.png"))
        try FileManager.default.copyItem(atPath: clip, toPath: out + "/a.mp4")
        // An input inside a folder named like its own output.
        try FileManager.default.createDirectory(atPath: out + "/02-b.mp4", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: clip, toPath: out + "/02-b.mp4/b.mp4")
        let before = try Self.snapshot(out)
        let run = try await CLI.run(["play", "--out", out, out + "/a.mp4", out + "/02-b.mp4/b.mp4", clip])
        #expect(run.status == 1)
        for (path, bytes) in before {
            #expect(FileManager.default.contents(atPath: path) == bytes, "\(path) was changed")
        }
        let files = try #require(try Self.summary(out)["files"] as? [[String: Any]])
        #expect(files.map { $0["status"] as? String } == ["failed", "failed", "completed"])
        #expect(files.prefix(2).allSatisfy { ($0["error"] as? [String: Any])?["code"] as? String == "output.outputExists" })
        // The message names the folder in the way, not only the file whose output it would be.
        #expect(run.stderr.contains(out + "/01-a.mp4 exists and is not an output of playhead"), "\(run.stderr)")
        // A rerun takes back its own output (the third file's) and still leaves the rest alone.
        let rerun = try await CLI.run(["play", "--format", "y4m", "--out", out, out + "/a.mp4", out + "/02-b.mp4/b.mp4", clip])
        #expect(rerun.status == 1)
        for (path, bytes) in before {
            #expect(FileManager.default.contents(atPath: path) == bytes, "\(path) was changed by the rerun")
        }
        let third = try FileManager.default.contentsOfDirectory(atPath: out + "/03-h264-aac.mp4")
        #expect(!third.contains { $0.hasPrefix("frame-") }, "the earlier run's frames were replaced")
        #expect(third.contains("frames.y4m"))
        // A user's own summary.json: the run refuses at once and writes nothing.
        let other = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: other) }
        try Data("mine".utf8).write(to: URL(fileURLWithPath: other + "/summary.json"))
        let refused = try await CLI.run(["play", "--out", other, clip])
        #expect(refused.status == 1)
        #expect(FileManager.default.contents(atPath: other + "/summary.json") == Data("mine".utf8))
        #expect(!FileManager.default.fileExists(atPath: other + "/01-h264-aac.mp4"))
    }

    /// A file someone saved into one of playhead's own folders under an output name (over an
    /// earlier run's `video.mp4`, as an extra `frame-000003.png`), or an earlier output edited
    /// since, is not the earlier run's any more: a rerun leaves it byte for byte and the output
    /// that wanted the name fails with `output.outputExists`; what is unchanged is taken back.
    @Test func aFileSavedIntoOurFolderUnderAnOutputNameIsLeftAlone() async throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let first = try await CLI.run(["play", "--out", out, clip])
        #expect(first.status == 0, "\(first.stderr)")
        let folder = out + "/01-h264-aac.mp4"
        let mine = Data("the user's own file".utf8)
        // Saved over a frame of the earlier run (same name, new content), and one frame edited in place.
        try FileManager.default.removeItem(atPath: folder + "/frame-000003.png")
        try mine.write(to: URL(fileURLWithPath: folder + "/frame-000003.png"))
        let handle = try #require(FileHandle(forWritingAtPath: folder + "/frame-000007.png"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("edited".utf8))
        try handle.close()
        let edited = try #require(FileManager.default.contents(atPath: folder + "/frame-000007.png"))
        let rerun = try await CLI.run(["play", "--json", "--out", out, clip])
        #expect(rerun.status == 1, "\(rerun.stderr)")
        #expect(FileManager.default.contents(atPath: folder + "/frame-000003.png") == mine)
        #expect(FileManager.default.contents(atPath: folder + "/frame-000007.png") == edited)
        let files = try #require(try Self.summary(out)["files"] as? [[String: Any]])
        #expect((files.first?["error"] as? [String: Any])?["code"] as? String == "output.outputExists", "\(files)")
        // The summary counts what this run wrote (what got past the user's frame 3 before the run
        // stopped), not the user's files beside them.
        let present = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("frame-") }
        let users = ["frame-000003.png", "frame-000007.png"].filter { present.contains($0) }.count
        #expect(users == 2 && files.first?["framesWritten"] as? Int == present.count - users, "\(present.sorted()), \(files)")
        // An MP4 export whose file was replaced by the user's: refused at once, the file kept.
        let compose = out + "/c"
        let made = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--format", "mp4", "--out", compose, "--layer", "x=0,y=0,w=64,h=36,source=\(clip)",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        try FileManager.default.removeItem(atPath: compose + "/composition/video.mp4")
        try mine.write(to: URL(fileURLWithPath: compose + "/composition/video.mp4"))
        let again = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--format", "mp4", "--out", compose, "--layer", "x=0,y=0,w=64,h=36,source=\(clip)",
        ])
        #expect(again.status == 1 && again.stderr.contains("not this run's"), "\(again.stderr)")
        #expect(FileManager.default.contents(atPath: compose + "/composition/video.mp4") == mine)
        // Once the user's file is gone, the folder is the runs' again.
        try FileManager.default.removeItem(atPath: compose + "/composition/video.mp4")
        let last = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--format", "mp4", "--out", compose, "--layer", "x=0,y=0,w=64,h=36,source=\(clip)",
        ])
        #expect(last.status == 0, "\(last.stderr)")
        let rerunOfRerun = try await CLI.run([
            "compose", "--size", "64x36", "--duration", "1", "--format", "mp4", "--out", compose, "--layer", "x=0,y=0,w=64,h=36,source=\(clip)",
        ])
        #expect(rerunOfRerun.status == 0, "an unchanged output is taken back: \(rerunOfRerun.stderr)")
        // The log removed, or a link or a FIFO in its place: nothing is known to be ours, so a
        // user's files under output names stay — and nothing waits on the FIFO.
        for planted in ["removed", "link", "fifo"] {
            let folder = out + "/\(planted)"
            let made = try await CLI.run(["play", "--frames", "2", "--out", folder, clip])
            #expect(made.status == 0, "\(made.stderr)")
            let inner = folder + "/01-h264-aac.mp4", log = inner + "/.playhead-written"
            try FileManager.default.removeItem(atPath: log)
            switch planted {
            case "link": try FileManager.default.createSymbolicLink(atPath: log, withDestinationPath: out + "/elsewhere")
            case "fifo": #expect(mkfifo(log, 0o600) == 0)
            default: break
            }
            try FileManager.default.removeItem(atPath: inner + "/frame-000001.png")
            try mine.write(to: URL(fileURLWithPath: inner + "/frame-000001.png"))
            try mine.write(to: URL(fileURLWithPath: inner + "/frame-000099.png"))
            let start = ContinuousClock.now
            let again = try await CLI.run(["play", "--frames", "2", "--out", folder, clip])
            #expect(ContinuousClock.now - start < .seconds(10), "\(planted): \(ContinuousClock.now - start)")
            #expect(again.status == 1, "\(planted): \(again.stderr)")
            #expect(FileManager.default.contents(atPath: inner + "/frame-000001.png") == mine, "\(planted)")
            #expect(FileManager.default.contents(atPath: inner + "/frame-000099.png") == mine, "\(planted)")
        }
    }

    /// Links planted at every name a run writes (its record, its lock, its summary and overview, an
    /// output folder, the queue folder, and temporary names of the kind earlier versions used),
    /// pointing at a victim file and folder: the victims are unchanged afterwards.
    @Test func plantedLinksAreNeverFollowed() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let victims = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: victims) }
        let victimFile = victims + "/victim.txt", victimFolder = victims + "/folder"
        try Data("victim".utf8).write(to: URL(fileURLWithPath: victimFile))
        try FileManager.default.createDirectory(atPath: victimFolder, withIntermediateDirectories: true)
        for name in [
            ".playhead.json", ".playhead.lock", "summary.json", "sheet.png", "overview.png", "01-h264-aac.mp4", "queue",
            ".summary.json.partial", ".sheet.png.partial", ".overview.png.partial", ".playhead.json.partial",
        ] {
            for target in [victimFile, victimFolder] {
                let out = try Self.temporaryFolder()
                defer { try? FileManager.default.removeItem(atPath: out) }
                try FileManager.default.createSymbolicLink(atPath: out + "/" + name, withDestinationPath: target)
                let play = try await CLI.run(["play", "--format", "y4m", "--out", out, clip])
                let queue = try await CLI.run(["play", "--queue", "--out", out, clip])
                let thumbs = try await CLI.run(["thumbnails", "--count", "2", "--sheet", "--overview", "--out", out, clip])
                for run in [play, queue, thumbs] { #expect(run.status == 0 || run.status == 1, "\(name): \(run.stderr)") }
                #expect(FileManager.default.contents(atPath: victimFile) == Data("victim".utf8), "followed \(name)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: victimFolder).isEmpty, "wrote through \(name)")
                #expect(leftoverTemporaryFiles(in: out).filter { !$0.hasSuffix(name) }.isEmpty)
            }
        }
    }

    /// Two runs into one folder: the second fails at once (exit 1, saying why) while the first
    /// holds it; with `--wait` it runs once the first is done; nothing of either is mixed.
    @Test func oneRunPerFolder() async throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        // 8 s in real time, counted from when it holds the folder.
        async let first = CLI.run(["play", "--realtime", "--loop", "4", "--format", "none", "--out", out, clip])
        try await Self.waitUntilHeld(out)
        let second = try await CLI.run(["play", "--format", "none", "--out", out, clip])
        #expect(second.status == 1)
        #expect(second.stderr.contains("output.outputBusy"), "\(second.stderr)")
        // A run waiting its turn that is stopped by a signal stops at once, and leaves the
        // folder as the first run leaves it (it never took it: nothing cleaned, no summary).
        let stopped = try await HostileRun.signalled(
            ["play", "--wait", "--format", "png", "--out", out, clip], signal: HostileRun.interrupt, after: .milliseconds(400))
        #expect(stopped.status == 128 + HostileRun.interrupt && !stopped.killedBySignal, "\(stopped)")
        #expect(stopped.stoppedIn < .seconds(2), "a waiting run took \(stopped.stoppedIn) to stop")
        let waited = try await CLI.run(["play", "--wait", "--format", "none", "--out", out, clip])
        #expect(try await first.status == 0)
        #expect(waited.status == 0)
        #expect(try Self.summary(out)["state"] as? String == "finished")
    }

    /// Two signals in quick succession at random moments (the second stops the process at once):
    /// never a temporary file left, whatever was being written (frames, a Y4M, an MP4, a WAV).
    @Test func aSecondSignalLeavesNoTemporaryFile() async throws {
        let long = try await Self.longClip()
        var generator = SeededGenerator()
        print("second-signal test: seed \(generator.seed) (PLAYHEAD_SEED repeats it)")
        for format in ["png", "y4m", "mp4", "png", "y4m", "mp4"] {
            let out = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: out) }
            let delay = Duration.milliseconds(Int.random(in: 300...1500, using: &generator))
            let gap = Duration.milliseconds(Int.random(in: 0...30, using: &generator))
            let outcome = try await HostileRun.signalled(
                ["play", "--realtime", "--format", format, "--out", out, long], signal: HostileRun.interrupt,
                after: delay, again: gap)
            #expect(!outcome.killedBySignal && (outcome.status == 130 || outcome.status == 0), "\(format) after \(delay) + \(gap): \(outcome)")
            #expect(leftoverTemporaryFiles(in: out).isEmpty, "\(format) after \(delay) + \(gap): \(leftoverTemporaryFiles(in: out))")
        }
    }

    /// A run that waited for the folder and is then stopped before it began leaves the first
    /// run's outputs (frames and summary) as they were.
    @Test func aStoppedWaitingRunLeavesTheOtherRunsOutput() async throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let clip = try Fixtures.clip("h264-aac.mp4")
        // 6 s in real time, counted from when it holds the folder.
        async let first = CLI.run(["play", "--realtime", "--loop", "3", "--format", "png", "--out", out, clip])
        try await Self.waitUntilHeld(out)
        // Signalled while it waits; it must not clean the folder once the first run lets go.
        let stopped = try await HostileRun.signalled(
            ["play", "--wait", "--format", "png", "--out", out, clip], signal: HostileRun.terminate, after: .milliseconds(300))
        #expect(stopped.status == 128 + HostileRun.terminate, "\(stopped)")
        #expect(try await first.status == 0)
        let summary = try Self.summary(out)
        #expect(summary["state"] as? String == "finished", "\(summary)")
        let frames = try FileManager.default.contentsOfDirectory(atPath: out + "/01-h264-aac.mp4").filter { $0.hasPrefix("frame-") }
        // Every frame the first run says it wrote: a realtime run on a loaded machine drops the
        // frames it shows late (a newcomer's first run beside two busy loops wrote 147 of 150).
        let file = try #require((summary["files"] as? [[String: Any]])?.first, "\(summary)")
        let written = try #require(file["framesWritten"] as? Int, "\(file)")
        #expect(written > 100 && frames.count == written, "\(frames.count) frames left of the first run's \(written) (\(file))")
    }

    /// A file whose output name is longer than the file system allows fails alone
    /// (`output.nameTooLong`, exit 1); the files around it play.
    @Test func aNameTooLongFailsOnlyItsFile() async throws {
        let out = try Self.temporaryFolder(), inputs = try Self.temporaryFolder()
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: inputs)
        }
        let clip = try Fixtures.clip("h264-aac.mp4")
        let long = inputs + "/" + String(repeating: "a", count: 250) + ".mp4"
        try FileManager.default.copyItem(atPath: clip, toPath: long)
        for command in [["play"], ["thumbnails", "--count", "2"]] {
            let run = try await CLI.run(command + ["--out", out, clip, long, clip])
            #expect(run.status == 1, "\(command): \(run.stderr)")
            let files = try #require(try Self.summary(out)["files"] as? [[String: Any]])
            #expect(files.map { $0["status"] as? String } == ["completed", "failed", "completed"])
            #expect((files[1]["error"] as? [String: Any])?["code"] as? String == "output.nameTooLong")
        }
    }

    // MARK: Absurd requests

    /// Requests that cannot be met are refused before any work or any write: exit 2, a message.
    @Test func absurdRequestsAreRefusedUpFront() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let requests: [[String]] = [
            ["thumbnails", "--every", "1e-9"], ["thumbnails", "--every", "0.0001"], ["thumbnails", "--every", "nan"],
            ["thumbnails", "--count", "10000", "--size", "320x180", "--sheet"],
            ["thumbnails", "--at", Array(repeating: "1", count: 10_001).joined(separator: ",")],
            ["thumbnails", "--count", "3", "--size", "100000x100000"], ["play", "--size", "20000x20000"],
        ]
        for request in requests {
            let out = try Self.temporaryFolder() + "/not-made"
            let start = ContinuousClock.now
            let run = try await CLI.run(Array(request.prefix(1)) + ["--out", out] + request.dropFirst() + [clip])
            #expect(run.status == 2, "\(request.prefix(4)): status \(run.status) \(run.stderr)")
            #expect(!run.stderr.isEmpty)
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(!FileManager.default.fileExists(atPath: out), "\(request.prefix(4)) wrote \(out)")
        }
    }

    /// A 74-byte PNG declaring 16000×16000 pixels fails with a clear error, without allocating
    /// the picture.
    @Test func aHugePictureHeaderIsRefusedWithoutAllocatingIt() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let png = folder + "/huge.png"
        try Data(Self.hugePNG(width: 16000, height: 16000)).write(to: URL(fileURLWithPath: png))
        for command in [["play", "--out", folder + "/play"], ["thumbnails", "--at", "0", "--out", folder + "/thumbs"], ["probe"]] {
            let (status, kilobytes) = try await HostileRun.peakMemory(command + [png])
            #expect(status == 1 || (command == ["probe"] && status == 0), "\(command[0]): \(status)")
            #expect(kilobytes > 0 && kilobytes < 300_000, "\(command[0]) peaked at \(kilobytes) KB")
        }
        let run = try await CLI.run(["play", "--out", folder + "/again", png])
        #expect(run.stderr.contains("decode.decodeFailed"), "\(run.stderr)")
    }

    // MARK: Helpers

    /// A 20 s 640×360 clip with audio, made once.
    /// Waits (up to 30 s, scaled) until a run holds the output folder `folder` (its lock taken).
    static func waitUntilHeld(_ folder: String) async throws {
        let deadline = ContinuousClock.now + Bound.seconds(30)
        while !BatchOperationsTests.isLocked(folder + "/.playhead.lock"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(BatchOperationsTests.isLocked(folder + "/.playhead.lock"), "no run took \(folder)")
    }

    static func longClip() async throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-hostile-long.mp4").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let partial = path + ".making.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=20",
                "-f", "lavfi", "-i", "sine=d=20", "-c:v", "libx264", "-preset", "ultrafast",
                "-c:a", "aac", partial,
            ])
        try? FileManager.default.moveItem(atPath: partial, toPath: path)
        return path
    }

    static func temporaryFolder() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    static func summary(_ out: String) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: out + "/summary.json"), "no summary.json in \(out)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every regular file under `folder` and its bytes.
    static func snapshot(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: folder))
        for case let name as String in walker {
            let path = folder + "/" + name
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                files[path] = FileManager.default.contents(atPath: path)
            }
        }
        return files
    }

    /// Where the summary and the disk disagree, checked with ffprobe: frames and samples counted
    /// in each output, paths that must exist, images listed.
    static func disagreements(_ summary: [String: Any], out: String) async throws -> [String] {
        var problems: [String] = []
        let files = summary["files"] as? [[String: Any]] ?? []
        if let queue = summary["queue"] as? [String: Any] {
            if let folder = queue["output"] as? String {
                let frames = try await Self.y4mFrames(folder + "/frames.y4m")
                if frames != queue["framesWritten"] as? Int {
                    problems.append("queue framesWritten \(queue["framesWritten"] ?? "nil"), on disk \(frames)")
                }
                let written = files.compactMap { $0["framesWritten"] as? Int }.reduce(0, +)
                if written != frames { problems.append("the files' framesWritten add up to \(written), on disk \(frames)") }
            }
            if let wav = queue["audioPath"] as? String {
                let samples = try await Self.wavSamples(wav)
                if samples != queue["audioFrames"] as? Int {
                    problems.append("queue audioFrames \(queue["audioFrames"] ?? "nil"), on disk \(samples)")
                }
            }
            return problems
        }
        for file in files {
            if let images = file["images"] as? [[String: Any]] {
                let listed = Set(images.compactMap { $0["path"] as? String })
                for path in listed where !FileManager.default.fileExists(atPath: path) { problems.append("\(path) listed, missing") }
                if let folder = listed.first.map({ ($0 as NSString).deletingLastPathComponent }) {
                    let onDisk = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("thumb-") }.count
                    if onDisk != listed.count { problems.append("\(folder): \(onDisk) images on disk, \(listed.count) listed") }
                }
                continue
            }
            let written = file["framesWritten"] as? Int ?? -1
            if let folder = file["output"] as? String {
                let names = try FileManager.default.contentsOfDirectory(atPath: folder)
                let frames =
                    names.contains("frames.y4m")
                    ? try await Self.y4mFrames(folder + "/frames.y4m")
                    : names.filter { $0.hasPrefix("frame-") }.count
                if frames != written { problems.append("\(folder): framesWritten \(written), on disk \(frames)") }
                let wav = folder + "/audio.wav"
                if (file["audioPath"] as? String) != nil, !FileManager.default.fileExists(atPath: wav) { problems.append("\(wav) listed, missing") }
                if FileManager.default.fileExists(atPath: wav) {
                    let samples = try await Self.wavSamples(wav)
                    if samples != file["audioFrames"] as? Int {
                        problems.append("\(wav): audioFrames \(file["audioFrames"] ?? "nil"), on disk \(samples)")
                    }
                }
            } else if written != 0 {
                problems.append("\(file["path"] ?? "?"): framesWritten \(written) without an output")
            }
        }
        return problems
    }

    static func y4mFrames(_ path: String) async throws -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        let text = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v:0",
                "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path,
            ])
        return Int(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    static func wavSamples(_ path: String) async throws -> Int {
        let text = try await Reference.run(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts",
                "-of", "csv=p=0", path,
            ])
        return Int(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// A PNG whose header declares `width`×`height` over a few bytes of data.
    static func hugePNG(width: UInt32, height: UInt32) -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be(UInt32(data.count)) + body + be(crc32(body))
        }
        let header = be(width) + be(height) + [8, 2, 0, 0, 0]
        // A stored (uncompressed) zlib stream of 16 zero bytes.
        let zeros = [UInt8](repeating: 0, count: 16)
        var adler = (a: UInt32(1), b: UInt32(0))
        for byte in zeros {
            adler.a = (adler.a + UInt32(byte)) % 65521
            adler.b = (adler.b + adler.a) % 65521
        }
        let zlib: [UInt8] = [0x78, 0x01, 0x01, 0x10, 0x00, 0xEF, 0xFF] + zeros + be(adler.b << 16 | adler.a)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
