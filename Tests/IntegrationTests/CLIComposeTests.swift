import Foundation
import Testing

/// `playhead compose` end to end: a grid and layers into a Y4M that ffprobe reads with exactly
/// duration × rate frames, a summary that accounts for every layer (a failed one included), and
/// bad layer descriptions refused before anything is written.
@Suite struct CLIComposeTests {
    @Test func gridAndLayersIntoY4M() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let a = try Fixtures.clip("h264-aac.mp4"), b = try Fixtures.clip("4x3.mp4"), c = try Fixtures.clip("anamorphic.mp4")
        let run = try await CLI.run(["compose", "--size", "320x180", "--rate", "29.97", "--duration", "3", "--background", "#103050",
                                     "--layer", "x=0,y=0,w=320,h=180,gravity=aspect-fill,loop=forever,source=\(a)",
                                     "--grid", "2x2", "--out", out, "--json", b, c, "/nonexistent/missing.mp4"])
        #expect(run.status == 1, "a failed layer fails the run: \(run.stderr)")
        let summary = try HostileOperationsTests.summary(out)
        #expect(summary["state"] as? String == "finished" && summary["framesWritten"] as? Int == 89, "\(summary)")
        let layers = try #require(summary["layers"] as? [[String: Any]])
        #expect(layers.map { $0["framesShown"] as? Int } == [89, 89, 89, 0])
        #expect(layers[0]["loopsCompleted"] as? Int == 1)
        #expect((layers[3]["error"] as? [String: Any])?["code"] as? String == "io.fileNotFound")
        let y4m = out + "/composition/frames.y4m"
        let probe = try await Reference.run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=width,height,r_frame_rate,nb_read_frames",
                                                                 "-of", "default=nw=1", y4m])
        let text = String(decoding: probe, as: UTF8.self)
        #expect(text.contains("width=320") && text.contains("height=180") && text.contains("r_frame_rate=30000/1001") && text.contains("nb_read_frames=89"), "\(text)")
    }

    @Test(arguments: [
        ["--layer", "x=0,y=0,w=64,h=36"],
        ["--layer", "x=0,y=0,w=64,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,gravity=sideways,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,loop=0,source=a.mp4"],
        ["--layer", "x=0,y=0,w=64,h=36,colour=red,source=a.mp4"],
        ["--grid", "0x2", "a.mp4"],
        ["--grid", "1x1", "a.mp4", "b.mp4"],
        ["--rate", "0", "--grid", "1x1", "a.mp4"],
        ["--background", "teal-ish", "--grid", "1x1", "a.mp4"],
    ])
    func badDescriptionsAreUsageErrors(arguments: [String]) async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await CLI.run(["compose", "--size", "64x36", "--duration", "1", "--out", out + "/o"] + arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"), "nothing written for a usage error")
    }

    /// A layer outside the canvas is refused, naming it.
    @Test func aLayerOutsideTheCanvasIsRefused() async throws {
        let out = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await CLI.run(["compose", "--size", "64x36", "--duration", "1", "--out", out + "/o",
                                     "--layer", "x=40,y=0,w=64,h=36,source=\(try Fixtures.clip("h264-aac.mp4"))"])
        #expect(run.status == 2 && run.stderr.contains("inside the 64x36 canvas"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/o"), "refused before the output folder is made")
    }
}
