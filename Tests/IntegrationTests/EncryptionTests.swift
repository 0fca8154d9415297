import Foundation
import Playhead
import Testing

/// Encrypted tracks (ISO Common Encryption) are refused with `decode.encrypted`, naming the
/// scheme, by every path (a session, images, a composition), and `probe` marks them encrypted
/// and not playable — never decoded into garbage frames and silence reported `completed`.
@Suite struct EncryptionTests {
    /// A cenc file as FFmpeg's own muxer writes one (its IVs are random: made for each run), and
    /// the committed cbcs (fragmented) and cens fixtures (SampleMedia/generate-encrypted.sh).
    static func fixtures(in folder: String) async throws -> [(path: String, scheme: String)] {
        let cenc = folder + "/cenc.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=2",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2",
                "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                "-encryption_scheme", "cenc-aes-ctr", "-encryption_key", "00112233445566778899aabbccddeeff",
                "-encryption_kid", "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", cenc,
            ])
        return [(cenc, "cenc"), (try Fixtures.reader("encrypted-cbcs.mp4"), "cbcs"), (try Fixtures.reader("encrypted-cens.mp4"), "cens")]
    }

    @Test func everyPathRefusesEncryptedTracks() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (path, scheme) in try await Self.fixtures(in: folder) {
            // The library: the asset's tracks, a session, an image.
            let tracks = try await Asset(path: path).load(.tracks)
            #expect(tracks.count == 2 && tracks.allSatisfy { $0.encryptionScheme == scheme && !$0.isPlayable }, "\(scheme): \(tracks)")
            let result = await DecodeSession(source: path).run(into: NullSink(), audio: NullAudioSink())
            guard case .failed(let error) = result.status else {
                Issue.record("\(scheme): a session gave \(result.status) with \(result.framesDelivered) frames")
                continue
            }
            #expect(error.code == .encrypted && error.message.contains(scheme) && result.framesDelivered == 0, "\(scheme): \(error)")
            do {
                _ = try await AssetImageGenerator(asset: Asset(path: path)).image(at: MediaTime(value: 1, timescale: 1))
                Issue.record("\(scheme): an image was made")
            } catch {
                #expect(error.code == .encrypted && error.message.contains(scheme), "\(scheme): \(error)")
            }
            // The CLI: probe, play, thumbnails, compose.
            let probe = try await CLI.run(["probe", "--json", path])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
            let asset = try #require((document["assets"] as? [[String: Any]])?.first)
            let reported = try #require(asset["tracks"] as? [[String: Any]])
            #expect(
                asset["isPlayable"] as? Bool == false
                    && reported.allSatisfy { $0["encryption"] as? String == scheme && $0["isPlayable"] as? Bool == false },
                "\(scheme): \(asset)")
            let play = try await CLI.run(["play", "--json", "--format", "y4m", "--out", folder + "/p-\(scheme)", path])
            #expect(play.status == 1 && play.stdout.contains("decode.encrypted"), "\(scheme): \(play.stdout) \(play.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/p-\(scheme)/01-\(URL(fileURLWithPath: path).lastPathComponent)/frames.y4m"))
            let thumbnails = try await CLI.run(["thumbnails", "--json", "--count", "2", "--out", folder + "/t-\(scheme)", path])
            #expect(thumbnails.status == 1 && thumbnails.stdout.contains("decode.encrypted"), "\(scheme): \(thumbnails.stdout)")
            let compose = try await CLI.run([
                "compose", "--json", "--size", "160x90", "--duration", "1", "--format", "none", "--out", folder + "/c-\(scheme)",
                "--layer", "x=0,y=0,w=160,h=90,source=\(path)",
            ])
            #expect(compose.status == 1 && compose.stdout.contains("decode.encrypted"), "\(scheme): \(compose.stdout)")
        }
    }
}
