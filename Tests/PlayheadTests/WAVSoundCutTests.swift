import Foundation
import Testing

@testable import PlayheadMedia

/// A WAV given up keeps its sound to where the picture stopped — counted in the latest stream (a
/// queued item, a loop) from that stream's first buffer — and nothing is cut for a time before
/// that stream began (the picture ended with an earlier item; this sound is the file's own).
@Suite struct WAVSoundCutTests {
    /// Writes one second (100 buffers of 10 ms at 8 kHz, mono) placed from `place` seconds on.
    private func writeSecond(_ sink: WAVSink, from place: Double) throws {
        let samples = [Int16](repeating: 1000, count: 80)
        for buffer in 0..<100 {
            try samples.withUnsafeBufferPointer { pointer in
                var audio = AudioBuffer(
                    samples: pointer, frameCount: 80, channelCount: 1, sampleRate: 8000,
                    presentationTime: MediaTime(value: Int64(buffer) * 80, timescale: 8000))
                audio.timelinePosition = place + Double(buffer) / 100
                try sink.write(audio)
            }
        }
    }

    /// Sample frames of a 16-bit mono WAV: its `data` chunk's size over 2.
    private func frames(_ path: String) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let tag = Array("data".utf8)
        let at = try #require((0..<(bytes.count - 8)).first { Array(bytes[$0..<($0 + 4)]) == tag })
        let size = (0..<4).reduce(0) { $0 | Int(bytes[at + 4 + $1]) << (8 * $1) }
        #expect(bytes.count >= at + 8 + size, "the data chunk is all there")
        return size / 2
    }

    @Test(arguments: [0.5, 1.0, 1.25, 1.5, 3.0])
    func theSoundKeptEndsWhereThePictureStoppedInItsOwnStream(until: Double) throws {
        let folder = NSTemporaryDirectory() + "playhead-wavcut-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = WAVSink(path: folder + "/sound.wav")
        let info = AudioStreamInfo(source: "test", sampleRate: 8000, channelCount: 1)
        // The first item's second, then the next item's, which begins at 1 s.
        try sink.begin(info)
        try writeSecond(sink, from: 0)
        try sink.begin(info)
        try writeSecond(sink, from: 1)
        sink.keepSound(until: until)
        sink.abort()
        #expect(sink.isPartial)
        // At or before the second item's start (1 s) nothing is cut (16,000 frames); 1.25 s keeps
        // a quarter second of it (10,000); 3 s is past the end (16,000).
        let kept = try frames(folder + "/sound.wav")
        let want = until <= 1 ? 16_000 : min(16_000, 8000 + Int((until - 1) * 8000))
        #expect(kept == want, "kept \(kept) frames for a picture that stopped at \(until) s")
    }
}
