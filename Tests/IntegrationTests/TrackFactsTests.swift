import Foundation
import Testing

@testable import Playhead

/// What a file says of its tracks' roles and of its chapters, read as ffprobe reads them: each
/// track's title and dispositions (`default`, `comment`, `forced`, `attached_pic`…), the chapters'
/// titles and times; and a cover picture, which FFmpeg takes for a video stream, never plays as one.
@Suite struct TrackFactsTests {
    /// A 3 s file with a picture, three sounds (English, the default; French; an English
    /// commentary), English subtitles (forced) and two chapters, in `container` (`mkv`, `mp4`).
    static func film(_ container: String, in folder: String) async throws -> String {
        let chapters = folder + "/chapters.txt"
        try Data(
            """
            ;FFMETADATA1
            title=Two Languages

            [CHAPTER]
            TIMEBASE=1/1000
            START=0
            END=1200
            title=Opening

            [CHAPTER]
            TIMEBASE=1/1000
            START=1200
            END=3000
            title=The End

            """.utf8
        ).write(to: URL(fileURLWithPath: chapters))
        let subtitles = folder + "/en.srt"
        try Data("1\n00:00:00,500 --> 00:00:01,500\nHello\n\n2\n00:00:02,000 --> 00:00:02,800\nBye\n".utf8)
            .write(to: URL(fileURLWithPath: subtitles))
        let path = folder + "/film." + container
        _ = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x36:r=25:d=3", "-f", "lavfi", "-i", "sine=f=440:d=3",
                "-f", "lavfi", "-i", "sine=f=880:d=3", "-f", "lavfi", "-i", "sine=f=660:d=3", "-i", subtitles, "-i", chapters,
                "-map", "0:v", "-map", "1:a", "-map", "2:a", "-map", "3:a", "-map", "4:s", "-map_metadata", "5", "-map_chapters", "5",
                "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-c:s", container == "mp4" ? "mov_text" : "srt",
                "-metadata:s:a:0", "language=eng", "-metadata:s:a:0", "title=English",
                "-metadata:s:a:1", "language=fra", "-metadata:s:a:1", "title=Français",
                "-metadata:s:a:2", "language=eng", "-metadata:s:a:2", "title=Director's commentary",
                "-metadata:s:s:0", "language=eng", "-metadata:s:s:0", "title=English (forced)",
                "-disposition:a:0", "default", "-disposition:a:1", "0", "-disposition:a:2", "comment", "-disposition:s:0", "forced",
                path,
            ])
        return path
    }

    /// ffprobe's account of `path`: its streams (index, dispositions set, tags) and chapters.
    static func ffprobe(_ path: String) async throws -> (streams: [[String: Any]], chapters: [[String: Any]]) {
        let json = try await Reference.run("/usr/bin/ffprobe", ["-v", "error", "-show_streams", "-show_chapters", "-of", "json", path])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        return (document["streams"] as? [[String: Any]] ?? [], document["chapters"] as? [[String: Any]] ?? [])
    }

    @Test(arguments: ["mkv", "mp4"])
    func tracksAndChaptersAgreeWithFFprobe(container: String) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.film(container, in: folder)
        let expected = try await Self.ffprobe(path)
        let (tracks, chapters) = try await Asset(path: path).load(.tracks, .chapters)
        // (An MP4 keeps its chapters' names in a text track of its own too: six.)
        #expect(tracks.count == expected.streams.count && tracks.count >= 5)
        for (track, stream) in zip(tracks, expected.streams) {
            let dispositions = stream["disposition"] as? [String: Int] ?? [:]
            let set = Set(dispositions.filter { $0.value == 1 }.keys)
            #expect(Set(track.flags.names) == set, "\(container) #\(track.index): \(track.flags.names) against ffprobe's \(set.sorted())")
            let tags = stream["tags"] as? [String: String] ?? [:]
            #expect(track.title == tags["title"], "\(container) #\(track.index)")
        }
        // What the file was made with, as the library names it (an MP4 keeps no track titles).
        let audio = tracks.filter { $0.mediaType == .audio }
        if container == "mkv" { #expect(audio.map(\.title) == ["English", "Français", "Director's commentary"]) }
        #expect(audio[0].flags.contains(.default) && !audio[1].flags.contains(.default), "\(container): \(audio.map(\.flags.names))")
        #expect(audio[2].flags.contains(.comment), "\(container): \(audio.map(\.flags.names))")
        #expect(chapters.count == expected.chapters.count && chapters.count == 2, "\(container): \(chapters)")
        for (chapter, theirs) in zip(chapters, expected.chapters) {
            let start = try #require((theirs["start_time"] as? String).flatMap(Double.init))
            let end = try #require((theirs["end_time"] as? String).flatMap(Double.init))
            #expect(abs(chapter.timeRange.start.seconds - start) < 0.001 && abs(chapter.timeRange.end.seconds - end) < 0.001, "\(chapter)")
            #expect(chapter.title == (theirs["tags"] as? [String: String])?["title"], "\(chapter)")
        }
        #expect(chapters.map(\.title) == ["Opening", "The End"])
        #expect(abs(chapters[1].timeRange.start.seconds - 1.2) < 0.001)
    }

    /// `probe --json` gives each track its `title` and `flags`, and the file its `chapters`; the
    /// table names them too.
    @Test func probeShowsTitlesFlagsAndChapters() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await Self.film("mkv", in: folder)
        let run = try await CLI.run(["probe", "--json", path])
        #expect(run.status == 0, "\(run.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let asset = try #require((document["assets"] as? [[String: Any]])?.first)
        let tracks = try #require(asset["tracks"] as? [[String: Any]])
        #expect(tracks[3]["title"] as? String == "Director's commentary")
        #expect(tracks[3]["flags"] as? [String] == ["comment"], "\(tracks[3])")
        #expect(tracks[4]["flags"] as? [String] == ["forced"], "\(tracks[4])")
        #expect(tracks[0]["title"] == nil, "no title, no key: \(tracks[0])")
        let chapters = try #require(asset["chapters"] as? [[String: Any]])
        #expect(chapters.map { $0["title"] as? String } == ["Opening", "The End"])
        #expect(chapters.map { $0["start"] as? Double } == [0, 1.2] && chapters.map { $0["end"] as? Double } == [1.2, 3])
        let table = try await CLI.run(["probe", path])
        #expect(table.stdout.contains("\"Director's commentary\", comment"), "\(table.stdout)")
        #expect(table.stdout.contains("chapter 2 1.200s–3.000s \"The End\""), "\(table.stdout)")
        // A file without chapters has no chapters key.
        let plain = try await CLI.run(["probe", "--json", try Fixtures.clip("h264-aac.mp4")])
        #expect(!plain.stdout.contains("\"chapters\""), "\(plain.stdout)")
    }

    /// A cover picture is a track flagged `attached_pic`, never the video that plays: an MP3 with
    /// its cover is sound alone (no image can be made of it), and a video with a cover plays its
    /// video. (FFmpeg's `av_find_best_stream` takes a lone cover for the video stream: `play`
    /// showed the cover as a one-frame video, `thumbnails` made images of it.)
    @Test func aCoverPictureNeverPlaysAsVideo() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try Reference.ffmpeg()
        let song = folder + "/song.mp3"
        _ = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=2", "-f", "lavfi", "-i", "color=c=red:s=32x32:d=1", "-map", "0:a",
                "-map", "1:v", "-frames:v", "1", "-c:a", "libmp3lame", "-c:v", "mjpeg", "-disposition:v", "attached_pic", "-id3v2_version", "3",
                song,
            ])
        let tracks = try await Asset(path: song).load(.tracks)
        let cover = try #require(tracks.first { $0.mediaType == .video }, "ffmpeg lists the cover as a video stream")
        #expect(cover.flags.contains(.attachedPicture) && cover.flags.names == ["attached_pic"], "\(cover.flags.names)")
        for time in [MediaTime.zero, MediaTime(value: 1, timescale: 1)] {
            do {
                _ = try await AssetImageGenerator(asset: Asset(path: song)).image(at: time)
                Issue.record("an image was made of the cover at \(time.seconds) s")
            } catch {
                #expect(error.code == .noVideoTrack && error.message.contains("cover picture #1 mjpeg"), "\(error)")
            }
        }
        // Nothing else takes the cover for the picture: an item of it has no picture size, a
        // contact sheet's header names no video, the probe's table no picture that cannot play.
        let item = PlayerItem(asset: Asset(path: song))
        await item.prepare()
        #expect(item.status == .readyToPlay && item.presentationSize == nil, "\(item.status) \(String(describing: item.presentationSize))")
        let table = try await CLI.run(["probe", song])
        #expect(table.stdout.contains("playable\n") && table.stdout.contains("attached_pic"), "\(table.stdout)")
        // `play` plays its sound alone: no picture written.
        let out = folder + "/out"
        let played = try await CLI.run(["play", "--format", "png", "--out", out, song])
        #expect(played.status == 0, "\(played.stderr)")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: out + "/01-song.mp3")) ?? []
        #expect(written.contains("audio.wav") && !written.contains { $0.hasSuffix(".png") }, "\(written)")
        // A video with a cover beside it: the video plays (64x36), not the cover (32x32).
        let picture = folder + "/cover.png", film = folder + "/film.mp4"
        _ = try await Reference.run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=32x32", "-frames:v", "1", picture])
        _ = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x36:r=25:d=2", "-i", picture, "-map", "0:v", "-map", "1:v",
                "-c:v:0", "libx264", "-preset", "ultrafast", "-c:v:1", "png", "-disposition:v:1", "attached_pic", film,
            ])
        let filmTracks = try await Asset(path: film).load(.tracks)
        #expect(filmTracks.map(\.flags.names).contains(["attached_pic"]), "\(filmTracks.map(\.flags.names))")
        let (image, _) = try await AssetImageGenerator(asset: Asset(path: film)).image(at: MediaTime(value: 1, timescale: 1))
        #expect(image.size == PixelSize(width: 64, height: 36), "the image is of the video: \(image.size)")
    }
}
