import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Every file of the hostile corpus (made by scripts/hostile-corpus.sh) is probed and decoded:
/// nothing may crash or hang, and every failure is typed and names its file.
@Suite struct HostileCorpusTests {
    static func makeCorpus() async throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-corpus-\(UUID().uuidString)")
        let script = Fixtures.packageRoot.appendingPathComponent("scripts/hostile-corpus.sh").path
        _ = try await Reference.run("/bin/bash", [script, folder.path])
        return folder
    }

    @Test func everyHostileFileFailsCleanlyOrDecodesCompletely() async throws {
        let folder = try await Self.makeCorpus()
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        try #require(names.count >= 30, "the corpus script made only \(names.count) files")
        var failures = 0
        var damagedButComplete = 0
        for name in names + ["no-such-file.mp4"] {
            let path = folder.appendingPathComponent(name).path
            let start = ContinuousClock.now
            // Probe.
            do {
                _ = try await Asset(path: path).load(.tracks, .duration)
            } catch {
                #expect(error.file == path, "\(name): probe error must name the file")
                #expect(!error.message.isEmpty)
            }
            // Decode everything it has.
            let result = await DecodeSession(source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 64, height: 36)))
                .run(into: NullSink(pixelFormat: .rgb24), audio: NullAudioSink())
            switch result.status {
            case .failed(let error):
                failures += 1
                #expect(error.file == path, "\(name): \(error)")
                #expect(!error.message.isEmpty)
            case .completed:
                // A file completes with all 50 frames of the source clip, or with the damage it
                // decoded past counted (never as a silent short read).
                if result.framesDelivered != 50 {
                    damagedButComplete += 1
                    #expect(result.damagedPackets > 0, "\(name) completed with \(result.framesDelivered) frames and no damage counted")
                    #expect(result.firstDamage?.file == path)
                }
            case .cancelled:
                Issue.record("\(name) was cancelled")
            }
            #expect(ContinuousClock.now - start < Bound.seconds(30), "\(name) took too long")
        }
        #expect(
            failures + damagedButComplete >= names.count - 6,
            "nearly every hostile file must fail or report its damage: \(failures) failed, \(damagedButComplete) damaged of \(names.count + 1)")
    }
}
