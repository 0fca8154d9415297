import Foundation
import Playhead

/// A file's `audio.wav`: its audio track decoded once per completed pass (loops append sample for
/// sample). An audio-only file, which the video path reports as having no video track, completes
/// here instead.
struct AudioDump {
    var path: String
    var frames: Int

    static func write(for source: String, into folder: URL, outcome: inout SessionOutcome, loop: LoopPolicy) async -> AudioDump? {
        let tracks: [AssetTrack]
        do {
            tracks = try await Asset(url: MediaLocation.url(for: source)).load(.tracks)
        } catch {
            return nil
        }
        guard tracks.contains(where: { $0.mediaType == .audio && $0.isPlayable }) else { return nil }
        let audioOnly = !tracks.contains { $0.mediaType == .video }
        var passes = outcome.loopsCompleted
        if audioOnly {
            switch loop {
            case .none: passes = 1
            case .count(let n): passes = n
            case .forever: passes = 1
            }
        }
        guard passes > 0 else { return nil }
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("audio.wav")
        let sink = WAVSink(path: url.path)
        for _ in 0..<passes {
            let result = await AudioSession(source: source).run(into: sink)
            if case .failed(let error) = result.status {
                sink.abort()
                outcome.status = .failed(error)
                return nil
            }
        }
        do {
            try sink.finish()
        } catch {
            outcome.status = .failed(error)
            return nil
        }
        if audioOnly, case .failed(let error) = outcome.status, error.code == .noVideoTrack {
            outcome.status = .completed
            outcome.loopsCompleted = passes
        }
        return AudioDump(path: url.path, frames: sink.framesWritten)
    }
}
