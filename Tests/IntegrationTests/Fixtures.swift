import Foundation
import Playhead
import Testing

/// The sample clips and their recorded ffprobe descriptions. A missing clip fails the test that
/// asked for it; nothing is skipped.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sampleMedia = packageRoot.appendingPathComponent("SampleMedia")

    /// Every good clip `SampleMedia/generate.sh` makes.
    static let goodClips = [
        "h264-aac.mp4", "hevc-aac.mkv", "vp9-opus.webm", "4x3.mp4", "portrait.mp4", "anamorphic.mp4",
        "rotated-90.mp4", "odd-size.mp4", "video-only.mp4", "stereo-44k.mp4", "audio-only.m4a", "audio-only.mp3",
    ]
    /// The good clips with a video track.
    static let videoClips = goodClips.filter { !$0.hasPrefix("audio-only") }
    /// Openable clips with damaged media data.
    static let damagedClips = ["damaged-cut.mp4", "damaged-zeroed.mp4"]
    /// Every bad file it makes.
    static let badFiles = ["bad-empty.mp4", "bad-truncated.mp4", "bad-random.mp4", "bad-text.mp4"]

    /// The path of a sample clip, which must exist.
    static func clip(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = sampleMedia.appendingPathComponent(name).path
        try #require(
            FileManager.default.fileExists(atPath: path), "missing fixture \(path): run SampleMedia/generate.sh", sourceLocation: sourceLocation)
        return path
    }

    /// The path of a clip of `SampleMedia/reader/` (made by `generate-reader.sh`), which must exist.
    static func reader(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = sampleMedia.appendingPathComponent("reader/\(name)").path
        try #require(
            FileManager.default.fileExists(atPath: path), "missing fixture \(path): run SampleMedia/generate-reader.sh",
            sourceLocation: sourceLocation)
        return path
    }

    /// The video keyframe times `generate-reader.sh` recorded (from ffprobe) for a reader clip.
    static func readerKeyframes(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [MediaTime] {
        let path = sampleMedia.appendingPathComponent("reader/expected.json").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)", sourceLocation: sourceLocation)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], sourceLocation: sourceLocation)
        let video = try #require(
            (document[name] as? [String: Any])?["video"] as? [String: Any], "no \(name) in expected.json", sourceLocation: sourceLocation)
        let base = try #require((video["time_base"] as? String)?.split(separator: "/").compactMap { Int32($0) }, sourceLocation: sourceLocation)
        let ticks = try #require(video["keyframe_packet_pts"] as? [Int], sourceLocation: sourceLocation)
        return ticks.map { MediaTime(value: Int64($0) * Int64(base[0]), timescale: base[1]) }
    }

    /// ffprobe's description of a clip, recorded by `generate.sh` into `SampleMedia/expected/`.
    static func ffprobe(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> FFprobeDocument {
        let path = sampleMedia.appendingPathComponent("expected/\(name).ffprobe.json").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing recorded ffprobe output \(path)", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(FFprobeDocument.self, from: data)
    }
}

/// Wall-time bounds of the no-hang checks, scaled by `PLAYHEAD_TIME_SCALE` (the sanitizer runs of
/// scripts/reliability.sh set it, since sanitizers slow everything down several times). Three
/// times the figure written by default: the parallel batch starts every suite at once, so a probe
/// or a first frame waits for one of the few worker threads, and on a 2-core machine with two
/// busy loops beside it such waits took 23–30 s where alone they take under one. A hang still
/// fails; what a test times as a target is measured by `benchmarks/`, not here.
enum Bound {
    static let scale: Int = declared ?? 3
    /// How much slower the run says it is (sanitizers); 1 when it says nothing. For a bound that
    /// is a timing check of its own (a realtime run's length), not a no-hang bound.
    static let slowdown: Int = declared ?? 1
    private static let declared = ProcessInfo.processInfo.environment["PLAYHEAD_TIME_SCALE"].flatMap(Int.init)

    static func seconds(_ n: Int) -> Duration { .seconds(n * scale) }
}

/// The parts of `ffprobe -show_format -show_streams -of json` the tests compare against (in
/// ffprobe's own field names).
// swift-format-ignore: AlwaysUseLowerCamelCase
struct FFprobeDocument: Decodable {
    struct Stream: Decodable {
        struct SideData: Decodable {
            var side_data_type: String?
            var rotation: Int?
        }
        var index: Int
        var codec_name: String?
        var codec_type: String
        var width: Int?
        var height: Int?
        var sample_aspect_ratio: String?
        var avg_frame_rate: String?
        var sample_rate: String?
        var channels: Int?
        var nb_read_frames: String?
        var start_time: String?
        var side_data_list: [SideData]?

        /// ffprobe's `rotation` is the display matrix's counter-clockwise angle.
        var counterClockwiseRotation: Int {
            side_data_list?.first { $0.side_data_type == "Display Matrix" }?.rotation ?? 0
        }

        var frameRate: Double? {
            guard let parts = avg_frame_rate?.split(separator: "/"), parts.count == 2,
                let n = Double(parts[0]), let d = Double(parts[1]), d > 0, n > 0
            else { return nil }
            return n / d
        }

        var pixelAspect: (Int, Int) {
            guard let parts = sample_aspect_ratio?.split(separator: ":"), parts.count == 2,
                let h = Int(parts[0]), let v = Int(parts[1]), h > 0, v > 0
            else { return (1, 1) }
            return (h, v)
        }
    }
    struct Format: Decodable {
        var format_name: String
        var duration: String?
    }
    var streams: [Stream]
    var format: Format
}
