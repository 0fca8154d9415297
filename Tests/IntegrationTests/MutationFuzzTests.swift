import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A deterministic mutation fuzzer: sample clips with bytes flipped, runs zeroed, chunks repeated
/// or cut, each probed and decoded for its first frames. Nothing may crash or hang, and every
/// failure must be typed and name its file. Seeded, so a failing case can be replayed by its index.
/// `PLAYHEAD_FUZZ_ITERATIONS` sets the count (scripts/reliability.sh fuzz runs many more).
@Suite struct MutationFuzzTests {
    @Test func mutatedClipsFailCleanly() async throws {
        let iterations = ProcessInfo.processInfo.environment["PLAYHEAD_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 60
        let sources = try ["h264-aac.mp4", "vp9-opus.webm", "hevc-aac.mkv", "4x3.mp4"].map {
            try Data(contentsOf: URL(fileURLWithPath: try Fixtures.clip($0)))
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = SeededGenerator(seed: 0x504C_4159_4845_4144)
        var failed = 0
        for i in 0..<iterations {
            let source = sources[Int(random.next() % UInt64(sources.count))]
            let bytes = Self.mutate(source, &random)
            let path = folder.appendingPathComponent("case-\(i).bin").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let start = ContinuousClock.now
            do {
                _ = try await Asset(path: path).load(.tracks)
            } catch {
                #expect(error.file == path, "case \(i): \(error)")
            }
            let result = await DecodeSession(
                source: path, configuration: DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18), frameLimit: 10)
            )
            .run(into: NullSink(pixelFormat: .rgb24), audio: NullAudioSink())
            if case .failed(let error) = result.status {
                failed += 1
                #expect(error.file == path, "case \(i): \(error)")
                #expect(!error.message.isEmpty)
            }
            #expect(ContinuousClock.now - start < Bound.seconds(20), "case \(i) took too long (a bound against hanging, not a speed target)")
        }
        // The mutations must actually hurt: a fuzzer whose cases all pass tests nothing.
        #expect(failed > iterations / 10, "only \(failed) of \(iterations) mutated files failed")
    }

    static func mutate(_ source: Data, _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = [UInt8](source)
        for _ in 0..<(1 + Int(random.next() % 8)) {
            guard !bytes.isEmpty else { break }
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 5 {
            case 0:  // flip bits in a few bytes
                for k in 0..<min(8, bytes.count - at) { bytes[at + k] ^= UInt8(truncatingIfNeeded: random.next()) }
            case 1:  // zero a run
                let count = min(bytes.count - at, 1 + Int(random.next() % 512))
                bytes.replaceSubrange(at..<(at + count), with: repeatElement(0, count: count))
            case 2:  // cut the file short
                bytes.removeSubrange(at...)
            case 3:  // repeat a chunk
                let count = min(bytes.count - at, 1 + Int(random.next() % 256))
                bytes.insert(contentsOf: bytes[at..<(at + count)], at: at)
            default:  // a boundary value where a size or count may be
                let value = [0, 0xFF, 0x7F, 0x80][Int(random.next() % 4)]
                for k in 0..<min(4, bytes.count - at) { bytes[at + k] = UInt8(value) }
            }
        }
        return bytes
    }
}
