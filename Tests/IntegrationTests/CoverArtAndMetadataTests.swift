import Foundation
import Testing

@testable import Playhead

/// A file's common metadata (`.commonMetadata`: title, artist, album, date, track…, whichever
/// container wrote them) and its cover picture (`.coverArt`, ``Asset/coverArtImage()``), with
/// ffprobe and ffmpeg as the oracle; `probe` shows both.
@Suite struct CoverArtAndMetadataTests {
    static let tags = ["title": "Song Ü", "artist": "Band", "album": "Disc", "date": "2024", "genre": "Jazz"]

    /// A 2 s song with `tags` in `container` (mp3, m4a with a cover; opus, whose tags are its sound's).
    static func song(_ container: String, in folder: String) async throws -> String {
        let path = folder + "/song." + container
        let metadata = tags.sorted { $0.key < $1.key }.flatMap { ["-metadata", "\($0.key)=\($0.value)"] }
        var arguments = ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=2"]
        switch container {
        case "opus":
            arguments += ["-c:a", "libopus"]
        default:
            arguments += ["-f", "lavfi", "-i", "testsrc2=s=48x32:d=1", "-map", "0:a", "-map", "1:v", "-frames:v", "1"]
            arguments += container == "mp3" ? ["-c:a", "libmp3lame", "-c:v", "mjpeg", "-id3v2_version", "3"] : ["-c:a", "aac", "-c:v", "png"]
            arguments += ["-disposition:v", "attached_pic"]
        }
        _ = try await Reference.run(try Reference.ffmpeg(), arguments + metadata + [path])
        return path
    }

    @Test(arguments: ["mp3", "m4a", "opus"])
    func metadataAndCoverAgreeWithFFmpeg(container: String) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.song(container, in: folder)
        // ffprobe's tags: the container's, and the streams' (Opus keeps them on its sound).
        let json = try await Reference.run("/usr/bin/ffprobe", ["-v", "error", "-show_format", "-show_streams", "-of", "json", path])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        var theirs = ((document["format"] as? [String: Any])?["tags"] as? [String: String]) ?? [:]
        for stream in document["streams"] as? [[String: Any]] ?? [] {
            for (key, value) in stream["tags"] as? [String: String] ?? [:] where theirs[key] == nil { theirs[key] = value }
        }
        let lowered = Dictionary(theirs.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        let (metadata, cover) = try await Asset(path: path).load(.commonMetadata, .coverArt)
        #expect(metadata.title == lowered["title"] && metadata.title == Self.tags["title"], "\(container): \(metadata) against \(lowered)")
        #expect(metadata.artist == lowered["artist"] && metadata.album == lowered["album"] && metadata.genre == lowered["genre"], "\(metadata)")
        #expect(metadata.date == (lowered["date"] ?? lowered["year"]) && metadata.date?.hasPrefix("2024") == true, "\(metadata)")
        let image = try await Asset(path: path).coverArtImage()
        if container == "opus" {
            #expect(cover == nil && image == nil)
            return
        }
        let art = try #require(cover, "\(container) has its cover")
        #expect(art.size == PixelSize(width: 48, height: 32) && art.codecName == (container == "mp3" ? "mjpeg" : "png"), "\(art)")
        let picture = try #require(image)
        let reference = try await Reference.run(
            try Reference.ffmpeg(), ["-v", "error", "-i", path, "-map", "0:v", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        #expect(picture.size == art.size && picture.pixels.count == reference.count, "\(picture)")
        if picture.pixels.count == reference.count {
            #expect(Reference.psnr(picture.pixels, reference) > 40, "\(container): the cover against ffmpeg's decode")
        }
        // probe: the table and the JSON.
        let table = try await CLI.run(["probe", path])
        #expect(
            table.stdout.contains("title \"Song Ü\", artist \"Band\", album \"Disc\"") && table.stdout.contains("cover picture"), "\(table.stdout)")
        let probe = try await CLI.run(["probe", "--json", path])
        let asset = try #require(
            ((try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])?["assets"] as? [[String: Any]])?.first)
        #expect((asset["metadata"] as? [String: Any])?["artist"] as? String == "Band", "\(asset)")
        #expect((asset["coverArt"] as? [String: Any])?["width"] as? Int == 48, "\(asset)")
    }

    /// A file that says nothing and has no cover: no keys in JSON, nil in the library.
    @Test func aPlainClipSaysNothing() async throws {
        let clip = try Fixtures.clip("h264-aac.mp4")
        let (metadata, cover) = try await Asset(path: clip).load(.commonMetadata, .coverArt)
        #expect(metadata.title == nil && metadata.artist == nil && cover == nil, "\(metadata)")
        #expect(try await Asset(path: clip).coverArtImage() == nil)
        let probe = try await CLI.run(["probe", "--json", clip])
        #expect(!probe.stdout.contains("\"coverArt\""), "\(probe.stdout)")
    }
}
