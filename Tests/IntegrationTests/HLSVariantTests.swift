import Foundation
import Testing

@testable import Playhead

/// Which variant of an HLS master playlist plays (`--variant`, `--max-bitrate`,
/// `--max-resolution`, ``VariantPreference``), served by the tests' HTTP server, which counts
/// the segments each variant's playlist had fetched: only the chosen one's are, past the first
/// segment of each that the open analyses (as ffprobe does). The picture is ffmpeg's decode of
/// that variant's own playlist.
@Suite struct HLSVariantTests {
    /// A 4 s master playlist of three variants (320x180 at 800 kb/s, 160x90 at 300 kb/s, 96x54
    /// at 100 kb/s), each with its sound, in 1 s segments: `v0/`, `v1/`, `v2/` beside `master.m3u8`.
    static func master(in folder: String) async throws {
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=4", "-f", "lavfi", "-i", "sine=f=440:d=4",
                "-filter_complex", "[0:v]split=3[a][b][c];[b]scale=160:90[b2];[c]scale=96:54[c2]",
                "-map", "[a]", "-map", "[b2]", "-map", "[c2]", "-map", "1:a", "-map", "1:a", "-map", "1:a",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-b:v:0", "800k", "-b:v:1", "300k", "-b:v:2", "100k",
                "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0", "-hls_playlist_type", "vod",
                "-master_pl_name", "master.m3u8", "-var_stream_map", "v:0,a:0 v:1,a:1 v:2,a:2",
                "-hls_segment_filename", folder + "/v%v/seg%d.ts", folder + "/v%v/index.m3u8",
            ])
    }

    /// What the master playlist declares of each variant: its `BANDWIDTH` and `RESOLUTION`.
    static func declared(_ folder: String) throws -> [(bandwidth: Int, width: Int, height: Int)] {
        let text = try String(contentsOfFile: folder + "/master.m3u8", encoding: .utf8)
        return text.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }.compactMap { line in
            func value(_ key: String) -> String? {
                line.split(separator: ",").first { $0.contains(key + "=") }.map { String($0.split(separator: "=")[1]) }
            }
            guard let bandwidth = value("BANDWIDTH").flatMap({ Int($0) }), let size = value("RESOLUTION")?.split(separator: "x"),
                size.count == 2, let width = Int(size[0]), let height = Int(size[1])
            else { return nil }
            return (bandwidth, width, height)
        }
    }

    /// Segments fetched of each variant (`v0`, `v1`, `v2`) since the server's count was reset.
    static func segments(_ server: TestHTTPServer) -> [String: Int] {
        var counts: [String: Int] = [:]
        for path in server.requestedPaths where path.hasSuffix(".ts") {
            let parts = path.split(separator: "/")
            if parts.count >= 2 { counts[String(parts[parts.count - 2]), default: 0] += 1 }
        }
        return counts
    }

    @Test func onlyTheChosenVariantIsFetchedAndItsPictureIsShown() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.master(in: root)
        let declared = try Self.declared(root)
        try #require(declared.count == 3, "ffmpeg's master playlist: \(declared)")
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let url = server.url("ok", "master.m3u8")
        // What ffprobe fetches of each variant to tell what they hold: the most an open may.
        server.resetCount()
        _ = try await Reference.run("/usr/bin/ffprobe", ["-v", "error", url])
        let analysed = Self.segments(server)
        #expect(analysed.count == 3, "ffprobe fetched \(analysed)")
        let cases: [(arguments: [String], variant: Int)] = [
            ([], 0), (["--max-bitrate", "500k"], 1), (["--max-resolution", "100x60"], 2), (["--variant", "lowest"], 2),
            (["--max-bitrate", "1000"], 2), (["--max-bitrate", "2M", "--max-resolution", "200x200"], 1),
        ]
        for (number, (arguments, variant)) in cases.enumerated() {
            server.resetCount()
            let out = root + "/out\(number)"
            let run = try await CLI.run(["play", "--json", "--format", "ppm", "--out", out] + arguments + [url])
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            let fetched = Self.segments(server)
            // Its four segments; of each other, what the open's analysis reads (as ffprobe's), no more.
            #expect(fetched["v\(variant)"] == 4, "\(arguments): \(fetched)")
            for other in [0, 1, 2] where other != variant {
                #expect(
                    (fetched["v\(other)"] ?? 0) <= (analysed["v\(other)"] ?? 0),
                    "\(arguments) plays v\(variant), yet fetched \(fetched) (ffprobe: \(analysed)): \(server.requestedPaths)")
            }
            // Its picture, as ffmpeg decodes that variant's own playlist.
            let frame = try Data(contentsOf: URL(fileURLWithPath: out + "/01-master.m3u8/frame-000010.ppm"))
            let size = declared[variant]
            let header = Data("P6\n\(size.width) \(size.height)\n255\n".utf8)
            #expect(frame.starts(with: header), "\(arguments): \(String(decoding: frame.prefix(14), as: UTF8.self))")
            let theirs = try await Reference.run(
                try Reference.ffmpeg(),
                [
                    "-v", "error", "-i", root + "/v\(variant)/index.m3u8", "-vf", "select=eq(n\\,9)", "-frames:v", "1", "-f", "rawvideo",
                    "-pix_fmt", "rgb24", "-",
                ])
            let ours = [UInt8](frame.dropFirst(header.count))
            if ours.count == theirs.count, !ours.isEmpty {
                #expect(Reference.psnr(ours, theirs) > 40, "\(arguments): frame 10 against ffmpeg's decode of v\(variant)")
            } else {
                Issue.record("\(arguments): \(ours.count) bytes against ffmpeg's \(theirs.count)")
            }
        }
    }

    /// `probe` lists the variants as the master playlist declares them (bandwidth, size) with
    /// their codecs and streams, and names the one that plays, with the limits given; the
    /// library's `.variants` key says the same.
    @Test func probeListsTheVariantsAndNamesTheOneThatPlays() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.master(in: root)
        let declared = try Self.declared(root)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let url = server.url("ok", "master.m3u8")
        let run = try await CLI.run(["probe", "--json", "--max-resolution", "200x100", url])
        #expect(run.status == 0, "\(run.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let asset = try #require((document["assets"] as? [[String: Any]])?.first)
        let variants = try #require(asset["variants"] as? [[String: Any]], "\(asset)")
        #expect(variants.count == 3)
        for (variant, expected) in zip(variants, declared) {
            #expect(variant["bandwidth"] as? Int == expected.bandwidth, "\(variant)")
            #expect(variant["width"] as? Int == expected.width && variant["height"] as? Int == expected.height, "\(variant)")
            #expect(variant["codecs"] as? [String] == ["h264", "aac"], "\(variant)")
        }
        #expect(variants.map { $0["selected"] as? Bool } == [false, true, false], "\(variants)")
        // The tracks that play are that variant's.
        let tracks = try #require(asset["tracks"] as? [[String: Any]])
        let playing = tracks.filter { $0["selected"] as? Bool == true }.compactMap { $0["index"] as? Int }
        #expect(playing == variants[1]["tracks"] as? [Int], "\(playing)")

        let library = try await Asset(source: url).load(.variants)
        #expect(library.map(\.bandwidth) == declared.map(\.bandwidth) && library.map(\.isSelected) == [true, false, false], "\(library)")
        // A file is no playlist: no variants, none in its JSON.
        #expect(try await Asset(path: try Fixtures.clip("h264-aac.mp4")).load(.variants).isEmpty)
        let plain = try await CLI.run(["probe", "--json", try Fixtures.clip("h264-aac.mp4")])
        #expect(!plain.stdout.contains("\"variants\""))
        let bad = try await CLI.run(["probe", "--max-bitrate", "fast", url])
        #expect(bad.status == 2 && bad.stderr.contains("--max-bitrate"), "\(bad.stderr)")
    }

    /// A playlist from a server that takes no ranges cannot seek once open, yet it is a URL,
    /// asked again for each asset: another selection of it (the lowest variant) opens and plays
    /// that variant after the asset's own probe read the playlist, and the asset plays from the
    /// demuxer its probe left.
    @Test func anotherVariantOfAPlaylistThatCannotSeekIsOpenedAgain() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.master(in: root)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        let asset = Asset(source: server.url("norange", "master.m3u8"))
        #expect(try await asset.load(.variants).map(\.isSelected) == [true, false, false])
        let lowest = asset.selecting(MediaSelection(variant: VariantPreference(lowest: true)))
        let variants = try await lowest.load(.variants)
        #expect(variants.map(\.isSelected) == [false, false, true], "\(variants)")
        let (result, frames) = await ByteSourceTests.frames(lowest)
        #expect(result.status == .completed, "\(result.status)")
        #expect(!frames.isEmpty && frames.allSatisfy { $0.size == variants[2].size }, "\(frames.map(\.size))")
        // The asset's own probe left its demuxer too, which the other selection's did not replace
        // (before, one kept demuxer per source: the asset's session found its playlist read).
        let (own, ownFrames) = await ByteSourceTests.frames(asset)
        #expect(own.status == .completed && !ownFrames.isEmpty, "\(own.status)")
    }

    /// A channel layer plays the variant its layout names (`"maxResolution"`), fetching no other's
    /// segments past the open.
    @Test func aChannelLayerPlaysItsLayoutsVariant() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await Self.master(in: root)
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        try Data(
            #"[{"name": "tv", "source": "\#(server.url("ok", "master.m3u8"))", "rect": [0, 0, 64, 36], "maxResolution": "100x60", "audio": true}]"#
                .utf8
        ).write(to: URL(fileURLWithPath: root + "/layout.json"))
        server.resetCount()
        _ = try await Reference.run("/usr/bin/ffprobe", ["-v", "error", server.url("ok", "master.m3u8")])
        let analysed = Self.segments(server)
        server.resetCount()
        let channel = try await CLI.run([
            "playout", "--layout", root + "/layout.json", "--size", "64x36", "--clock", "virtual", "--duration", "3", "--out", root + "/rec.ts",
        ])
        #expect(channel.status == 0, "\(channel.stderr)")
        let fetched = Self.segments(server)
        // (A layer with sound reads its picture and its sound through two opens of the source.)
        let opens = server.requestedPaths.filter { $0.hasSuffix("/master.m3u8") }.count
        #expect(
            (fetched["v2"] ?? 0) >= 3 && (fetched["v0"] ?? 0) <= opens * (analysed["v0"] ?? 0)
                && (fetched["v1"] ?? 0) <= opens * (analysed["v1"] ?? 0),
            "\(opens) opens: \(fetched) (ffprobe: \(analysed)): \(server.requestedPaths)")
        #expect((1...2).contains(opens), "\(server.requestedPaths)")
    }

    /// A master with alternate sounds (`EXT-X-MEDIA` groups: English in one, English and French
    /// in the other) and sound-only rungs, as ffmpeg's HLS muxer writes one: a language is looked
    /// for in the variants that hold it (French: the smaller picture's), a sound-only rung never
    /// plays while a variant has a picture, and a variant whose playlist is missing is never chosen.
    @Test func languagesSoundOnlyRungsAndMissingVariants() async throws {
        let root = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x90:r=25:d=3", "-f", "lavfi", "-i", "sine=f=440:d=3", "-f", "lavfi",
                "-i", "sine=f=880:d=3", "-filter_complex", "[0:v]split=2[a][b];[b]scale=96:54[b2]", "-map", "[a]", "-map", "[b2]",
                "-map", "1:a", "-map", "1:a", "-map", "2:a", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-b:v:0", "400k",
                "-b:v:1", "100k", "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
                "-hls_playlist_type", "vod", "-master_pl_name", "groups.m3u8", "-var_stream_map",
                "a:0,agroup:hi,language:eng a:1,agroup:lo,language:eng a:2,agroup:lo,language:fra v:0,agroup:hi v:1,agroup:lo",
                "-hls_segment_filename", root + "/s%v/seg%d.ts", root + "/s%v/index.m3u8",
            ])
        let server = try TestHTTPServer(root: root)
        defer { server.stop() }
        func probe(_ arguments: [String], _ name: String = "groups.m3u8") async throws -> (variant: Int?, tracks: [Int]) {
            let run = try await CLI.run(["probe", "--json"] + arguments + [server.url("ok", name)])
            #expect(run.status == 0, "\(arguments): \(run.stdout) \(run.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let asset = try #require((document["assets"] as? [[String: Any]])?.first)
            let variants = asset["variants"] as? [[String: Any]] ?? []
            let tracks = (asset["tracks"] as? [[String: Any]] ?? []).filter { $0["selected"] as? Bool == true }.compactMap { $0["index"] as? Int }
            return (variants.firstIndex { $0["selected"] as? Bool == true }, tracks)
        }
        let declared = try String(contentsOfFile: root + "/groups.m3u8", encoding: .utf8).split(separator: "\n").filter {
            $0.hasPrefix("#EXT-X-STREAM-INF")
        }
        let pictured = declared.indices.filter { declared[$0].contains("RESOLUTION") }
        try #require(declared.count == 5 && pictured.count == 2, "ffmpeg's master: \(declared)")
        // The highest plays, with its own sound (English).
        #expect(try await probe([]).variant == pictured[0])
        // French is only in the smaller picture's group.
        let french = try await probe(["--audio-track", "lang:fra"])
        #expect(french.variant == pictured[1], "\(french)")
        // The lowest is the smaller picture, not a sound-only rung (70 kb/s).
        #expect(try await probe(["--variant", "lowest"]).variant == pictured[1])
        #expect(try await probe(["--max-bitrate", "100k"]).variant == pictured[1], "none with a picture fits: the lowest with one")

        // Played: the French sound (880 Hz), only the French rendition's and that picture's
        // segments past what the open analyses (as ffprobe's: this master makes it read all of
        // the sound-only rungs).
        server.resetCount()
        _ = try await Reference.run("/usr/bin/ffprobe", ["-v", "error", server.url("ok", "groups.m3u8")])
        let analysed = Self.segments(server)
        server.resetCount()
        let run = try await CLI.run([
            "play", "--format", "ppm", "--size", "16x8", "--out", root + "/o", "--audio-track", "lang:fra", server.url("ok", "groups.m3u8"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let pitch = try await TrackSelectionTests.pitch(root + "/o/01-groups.m3u8/audio.wav")
        #expect(abs(pitch - 880) < 30, "\(pitch) Hz")
        let fetched = Self.segments(server)
        #expect((fetched["s2"] ?? 0) >= 3 && (fetched["s4"] ?? 0) >= 3, "\(fetched)")
        for other in ["s0", "s1", "s3"] {
            #expect((fetched[other] ?? 0) <= (analysed[other] ?? 0), "\(other): \(fetched) (ffprobe: \(analysed))")
        }

        // A variant whose playlist is missing (the highest) is listed but never plays.
        var broken = try String(contentsOfFile: root + "/groups.m3u8", encoding: .utf8)
        broken += "\n#EXT-X-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=1920x1080,CODECS=\"avc1.640028\"\nmissing/index.m3u8\n"
        try broken.write(toFile: root + "/broken.m3u8", atomically: true, encoding: .utf8)
        let chosen = try await probe([], "broken.m3u8")
        #expect(chosen.variant == pictured[0] && chosen.tracks.count == 2, "\(chosen)")
        let played = try await CLI.run(["play", "--json", "--format", "none", "--out", root + "/b", server.url("ok", "broken.m3u8")])
        #expect(played.status == 0 && played.stdout.contains("\"framesDecoded\" : 75"), "\(played.stdout) \(played.stderr)")
    }
}
