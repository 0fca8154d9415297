import Foundation
import Testing

@testable import Playhead

/// Choosing the sound that plays (`--audio-track`, `audioTrack` in a layout, ``MediaSelection``),
/// with ffmpeg as the oracle: the film of ``TrackFactsTests`` has three sounds (English at
/// 440 Hz, the default; French at 880 Hz; an English commentary at 660 Hz), so which one played
/// can be heard in its samples.
@Suite struct TrackSelectionTests {
    /// The film's sound at stream `index`, as ffmpeg decodes it (mono, 16 bits, at its own rate).
    static func sound(_ path: String, stream index: Int) async throws -> [Int16] {
        let bytes = try await Reference.run(
            try Reference.ffmpeg(), ["-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:\(index)", "-f", "s16le", "-ac", "1", "-"])
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The pitch of a sine in `path`'s sound (any WAV, MPEG-TS or MP4), as ffmpeg decodes it:
    /// its zero crossings per second, halved, over its middle (so its fade in and out count not).
    static func pitch(_ path: String) async throws -> Double {
        let rate = 48_000
        let bytes = try await Reference.run(
            try Reference.ffmpeg(),
            ["-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "\(rate)", "-"])
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let middle = samples.dropFirst(samples.count / 4).dropLast(samples.count / 4)
        guard middle.count > rate / 4 else { return 0 }
        var crossings = 0
        var previous = middle.first ?? 0
        for sample in middle.dropFirst() {
            if (previous < 0) != (sample < 0) { crossings += 1 }
            previous = sample
        }
        return Double(crossings) / 2 / (Double(middle.count) / Double(rate))
    }

    /// `play --audio-track SPEC` writes the sound SPEC names, sample for sample as ffmpeg decodes
    /// that stream (and not another's): by index, by language (two- and three-letter codes, both
    /// forms of French), the default, English (two tracks: the default one, not the commentary).
    @Test(arguments: ["mkv", "mp4"])
    func playWritesTheChosenSound(container: String) async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film(container, in: folder)
        let sounds = [1: try await Self.sound(path, stream: 1), 2: try await Self.sound(path, stream: 2), 3: try await Self.sound(path, stream: 3)]
        let cases: [(spec: String, stream: Int)] = [
            ("default", 1), ("lang:fra", 2), ("lang:fr", 2), ("lang:FRE", 2), ("3", 3), ("lang:eng", 1), ("2", 2),
        ]
        for (number, (spec, stream)) in cases.enumerated() {
            let out = folder + "/out\(number)"
            let run = try await CLI.run(["play", "--out", out, "--format", "ppm", "--size", "16x8", "--audio-track", spec, path])
            #expect(run.status == 0, "\(container) \(spec): \(run.stderr)")
            let ours = try await Reference.wavSamples(out + "/01-film.\(container)/audio.wav")
            for (index, theirs) in sounds {
                let correlation = AudioTests.correlation(ours, theirs)
                if index == stream {
                    #expect(correlation > 0.999 && abs(ours.count - theirs.count) <= 2048, "\(container) \(spec): #\(index) \(correlation)")
                } else {
                    #expect(correlation < 0.5, "\(container) \(spec) plays #\(stream), yet is like #\(index): \(correlation)")
                }
            }
        }
        // `none`: the picture without its sound.
        let silent = try await CLI.run(["play", "--out", folder + "/none", "--format", "ppm", "--size", "16x8", "--audio-track", "none", path])
        #expect(silent.status == 0, "\(silent.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/none/01-film.\(container)/frame-000001.ppm"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/none/01-film.\(container)/audio.wav"))
    }

    /// A sound the file does not have fails with `demux.trackNotFound`, naming the file and what
    /// it holds — never another sound played in its place; an index that is no sound says what
    /// it is; a spec that is no spec is a usage error.
    @Test func aSoundTheFileLacksIsATypedError() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film("mkv", in: folder)
        let run = try await CLI.run(["play", "--out", folder + "/o", "--format", "ppm", "--size", "16x8", "--audio-track", "lang:deu", path])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("demux.trackNotFound") && run.stderr.contains("film.mkv"), "\(run.stderr)")
        #expect(run.stderr.contains("audio #2 aac fra \"Français\""), "what it holds: \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/o/01-film.mkv/audio.wav"))
        let video = try await CLI.run(["probe", "--audio-track", "0", path])
        #expect(video.status == 1 && video.stdout.contains("(#0 is video)"), "\(video.stdout)")
        let typo = try await CLI.run(["probe", "--audio-track", "french", path])
        #expect(typo.status == 2 && typo.stderr.contains("lang:CODE"), "\(typo.stderr)")
        // Through the library: the asset says so, and what needs the sound fails with it…
        let german = Asset(path: path, options: AssetOptions(selection: MediaSelection(audio: .language("de"))))
        let unmet = try await german.load(.unmetSelection)
        #expect(unmet?.code == .trackNotFound && unmet?.file == path, "\(String(describing: unmet))")
        let sound = await AudioSession(asset: german).run(into: InMemoryAudioSink())
        guard case .failed(let error) = sound.status else {
            Issue.record("a German sound played: \(sound.status)")
            return
        }
        #expect(error.code == .trackNotFound, "\(error)")
        // …while what needs only the picture plays: an image, `play --no-audio`, thumbnails.
        let image = try await AssetImageGenerator(asset: german).image(at: MediaTime(value: 1, timescale: 1))
        #expect(image.image.size.width == 64, "\(image)")
        let pictureOnly = try await CLI.run([
            "play", "--no-audio", "--out", folder + "/p", "--format", "ppm", "--size", "16x8", "--audio-track", "lang:deu", path,
        ])
        #expect(pictureOnly.status == 0, "\(pictureOnly.stderr)")
        let thumbnails = try await CLI.run(["thumbnails", "--out", folder + "/t", "--count", "2", "--audio-track", "lang:deu", path])
        #expect(thumbnails.status == 0, "\(thumbnails.stderr)")
        // The sound turned off on a file that is only sound: said so.
        let song = folder + "/song.m4a"
        _ = try await Reference.run(try Reference.ffmpeg(), ["-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1", "-c:a", "aac", song])
        let off = try await CLI.run(["play", "--out", folder + "/s", "--format", "none", "--audio-track", "none", song])
        #expect(off.status == 1 && off.stderr.contains("turned the sound off"), "\(off.stderr)")
    }

    /// `asset.selecting(_:)`: the same file with another sound, the original untouched (the
    /// library's way to pick another option of an asset, as AVFoundation's item selection does).
    @Test func anAssetSelectingAnotherSound() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film("mkv", in: folder)
        let english = Asset(path: path)
        let french = english.selecting(MediaSelection(audio: .language("fra")))
        for (asset, stream) in [(french, 2), (english, 1)] {
            let sink = InMemoryAudioSink()
            let result = await AudioSession(asset: asset, format: AudioFormat(sampleRate: 44_100, channelCount: 1)).run(into: sink)
            #expect(result.status == .completed, "\(result.status)")
            let theirs = try await Self.sound(path, stream: stream)
            #expect(AudioTests.correlation(sink.samples, theirs) > 0.999, "stream \(stream)")
        }
        let tracks = try await french.load(.tracks)
        #expect(tracks.filter(\.isSelected).map(\.index) == [0, 2], "\(tracks.map(\.isSelected))")
    }

    /// A player item's selection (``PlayerItem/init(asset:timeRange:selection:)``): the item plays
    /// the sound it names, sample for sample as ffmpeg decodes that stream, while the asset it was
    /// given keeps its own; a looper's copies keep it; one the file cannot meet fails the item
    /// with `demux.trackNotFound` in a player with sound, and the player goes on to the next.
    @Test func aPlayerItemPlaysTheSoundItsSelectionNames() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film("mkv", in: folder)
        let film = Asset(path: path)
        let format = AudioFormat(sampleRate: 44_100, channelCount: 1)
        let (english, french) = (try await Self.sound(path, stream: 1), try await Self.sound(path, stream: 2))
        let item = PlayerItem(asset: film, selection: MediaSelection(audio: .language("fra")))
        #expect(item.asset === film && item.selection.audio == .language("fra"))
        // What it plays says so: its played asset has the French sound selected, the asset given its own.
        #expect(try await item.playedAsset.load(.tracks).filter(\.isSelected).map(\.index) == [0, 2])
        #expect(try await film.load(.tracks).filter(\.isSelected).map(\.index) == [0, 1])
        let sink = InMemoryAudioSink()
        let player = Player(item: item, output: NullSink(), audioOutput: sink, configuration: PlayerConfiguration(audioFormat: format))
        player.play()
        await player.waitUntilIdle()
        #expect(item.status == .readyToPlay && item.hasPlayedToEnd, "\(item.status)")
        #expect(AudioTests.correlation(sink.samples, french) > 0.999, "the item's French sound")
        #expect(AudioTests.correlation(sink.samples, english) < 0.5, "not the asset's default")
        // The asset itself still plays its default (an item without a selection takes the asset's).
        let plain = PlayerItem(asset: film)
        #expect(plain.selection == MediaSelection())
        let plainSink = InMemoryAudioSink()
        let plainPlayer = Player(item: plain, output: NullSink(), audioOutput: plainSink, configuration: PlayerConfiguration(audioFormat: format))
        plainPlayer.play()
        await plainPlayer.waitUntilIdle()
        #expect(AudioTests.correlation(plainSink.samples, english) > 0.999, "the default English sound")
        // A looper's copies play the template's selection, each pass.
        let loopSink = InMemoryAudioSink()
        let queue = QueuePlayer(items: [], output: NullSink(), audioOutput: loopSink, configuration: PlayerConfiguration(audioFormat: format))
        let looper = PlayerLooper(player: queue, templateItem: item, loopCount: 2)
        // Each copy reads the template's played asset (its keys and idle demuxers reused).
        #expect(queue.items().allSatisfy { $0.playedAsset === item.playedAsset && $0 !== item }, "\(queue.items().count) copies")
        queue.play()
        await looper.waitUntilFinished()
        let passes = loopSink.samples
        #expect(abs(passes.count - 2 * french.count) <= 4096, "\(passes.count) samples for two passes of \(french.count)")
        #expect(AudioTests.correlation(Array(passes.suffix(french.count)), french) > 0.99, "the second pass's French sound")
        // A sound the file lacks: in a player with sound the item fails, typed, and the queue
        // goes on to the next item; its picture alone can still play (prepared, it is ready).
        let german = PlayerItem(asset: film, selection: MediaSelection(audio: .language("deu")))
        await german.prepare()
        #expect(german.status == .readyToPlay, "\(german.status)")
        let unmet = try await german.playedAsset.load(.unmetSelection)
        #expect(unmet?.code == .trackNotFound, "\(String(describing: unmet))")
        let after = PlayerItem(asset: film)
        let onSink = InMemoryAudioSink()
        let onward = QueuePlayer(
            items: [german, after], output: NullSink(), audioOutput: onSink, configuration: PlayerConfiguration(audioFormat: format))
        onward.play()
        await onward.waitUntilIdle()
        guard case .failed(let error) = german.status else {
            Issue.record("a German selection of a film without German sound: \(german.status)")
            return
        }
        #expect(error.code == .trackNotFound && error.file == path, "\(error)")
        #expect(after.hasPlayedToEnd, "the next item played")
        #expect(AudioTests.correlation(onSink.samples, english) > 0.999, "only the next item's sound was written")
    }

    /// A source read once (a stream byte source, as a pipe or standard input is): another
    /// selection of it cannot read it again once the asset did (it would read from where the
    /// first read stands, or the whole source again from a store that cannot seek): the item
    /// fails with `state.invalidArgument` saying how to choose, without a read of its bytes, and
    /// the asset itself still plays its default sound whole from the demuxer its probe left.
    @Test func aSourceReadOnceIsNotReadAgainForAnotherSelection() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film("mkv", in: folder)
        let source = ByteSourceTests.StreamSource(try Data(contentsOf: URL(fileURLWithPath: path)))
        let film = Asset(byteSource: source, name: "film.mkv")
        #expect(try await film.load(.tracks).filter(\.isSelected).map(\.index) == [0, 1])
        let french = PlayerItem(asset: film, selection: MediaSelection(audio: .language("fra")))
        await french.prepare()
        guard case .failed(let error) = french.status else {
            Issue.record("another selection of a source read once: \(french.status)")
            return
        }
        #expect(error.code == .invalidArgument && error.file == "film.mkv" && error.message.contains("AssetOptions.selection"), "\(error)")
        let wentBack = source.wentBack.load(ordering: .relaxed)
        #expect(!wentBack, "the source was read again from its start")
        let format = AudioFormat(sampleRate: 44_100, channelCount: 1)
        let sink = InMemoryAudioSink()
        let result = await AudioSession(asset: film, format: format).run(into: sink)
        #expect(result.status == .completed, "\(result.status)")
        #expect(AudioTests.correlation(sink.samples, try await Self.sound(path, stream: 1)) > 0.999, "the asset's own sound, whole")
        // Chosen when the asset is made, the same source plays the French sound.
        let again = ByteSourceTests.StreamSource(try Data(contentsOf: URL(fileURLWithPath: path)))
        let chosen = Asset(byteSource: again, name: "film.mkv", options: AssetOptions(selection: MediaSelection(audio: .language("fra"))))
        let frenchSink = InMemoryAudioSink()
        #expect(await AudioSession(asset: chosen, format: format).run(into: frenchSink).status == .completed)
        #expect(AudioTests.correlation(frenchSink.samples, try await Self.sound(path, stream: 2)) > 0.999, "French, chosen up front")
    }

    /// `probe` names the tracks that play (`"selected"`, and `(plays)` in the table): the picture
    /// and the sound `--audio-track` chose; with `none`, the picture alone.
    @Test func probeNamesTheTracksThatPlay() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film("mkv", in: folder)
        for (spec, expected) in [("default", [0, 1]), ("lang:fra", [0, 2]), ("3", [0, 3]), ("none", [0])] {
            let run = try await CLI.run(["probe", "--json", "--audio-track", spec, path])
            #expect(run.status == 0, "\(run.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let tracks = try #require((document["assets"] as? [[String: Any]])?.first?["tracks"] as? [[String: Any]])
            let selected = tracks.filter { $0["selected"] as? Bool == true }.compactMap { $0["index"] as? Int }
            #expect(selected == expected, "\(spec): \(selected)")
        }
        let table = try await CLI.run(["probe", "--audio-track", "lang:fra", path])
        let playing = table.stdout.split(separator: "\n").filter { $0.hasSuffix("(plays)") }
        #expect(playing.count == 2 && playing[1].contains("#2 audio"), "\(table.stdout)")
    }

    /// A composition layer and a channel layer play the sound their layout names (`audio-track=`,
    /// `"audioTrack"`), or else the command's `--audio-track`: heard as its pitch in what they wrote.
    @Test func layersPlayTheSoundTheirLayoutNames() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try await TrackFactsTests.film("mkv", in: folder)
        func near(_ pitch: Double, _ hertz: Double) -> Bool { abs(pitch - hertz) < hertz * 0.03 }

        let composed = try await CLI.run([
            "compose", "--format", "ppm", "--out", folder + "/c", "--size", "16x16", "--rate", "25", "--duration", "2",
            "--layer", "x=0,y=0,w=16,h=16,audio=yes,audio-track=lang:fra,source=\(path)",
        ])
        #expect(composed.status == 0, "\(composed.stderr)")
        let french = try await Self.pitch(folder + "/c/composition/audio.wav")
        #expect(near(french, 880), "compose: \(french) Hz")
        let byCommand = try await CLI.run([
            "compose", "--format", "ppm", "--out", folder + "/d", "--size", "16x16", "--rate", "25", "--duration", "2", "--audio-track", "3",
            "--layer", "x=0,y=0,w=16,h=16,audio=yes,source=\(path)",
        ])
        #expect(byCommand.status == 0, "\(byCommand.stderr)")
        let commentary = try await Self.pitch(folder + "/d/composition/audio.wav")
        #expect(near(commentary, 660), "compose --audio-track 3: \(commentary) Hz")

        // Two layers of one channel play the same file, each its own sound: the French one heard.
        try Data(
            #"""
            [{"name": "fr", "source": "film.mkv", "rect": [0, 0, 32, 36], "audio": true, "audioTrack": "lang:fra", "loop": "forever"},
             {"name": "en", "source": "film.mkv", "rect": [32, 0, 32, 36], "audio": false, "loop": "forever"}]
            """#.utf8
        ).write(to: URL(fileURLWithPath: folder + "/layout.json"))
        let channel = try await CLI.run([
            "playout", "--layout", folder + "/layout.json", "--size", "64x36", "--clock", "virtual", "--duration", "2", "--out", folder + "/rec.ts",
        ])
        #expect(channel.status == 0, "\(channel.stderr)")
        let aired = try await Self.pitch(folder + "/rec.ts")
        #expect(near(aired, 880), "playout: \(aired) Hz")
    }

    /// Two layers of a channel playing two sounds of one file are measured apart (`--loudness`):
    /// each layer's measure in the as-run log is its own sound's, as ffmpeg's ebur128 measures
    /// that stream (a measure kept per source alone gave the French layer the English level).
    @Test func twoSoundsOfOneFileAreMeasuredApart() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try Reference.ffmpeg()
        let path = folder + "/two.mkv"
        _ = try await Reference.run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=25:duration=3", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000:duration=3,volume=0.5", "-f", "lavfi", "-i",
                "sine=frequency=880:sample_rate=48000:duration=3,volume=0.02", "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264",
                "-pix_fmt", "yuv420p", "-c:a", "aac", "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", path,
            ])
        func reference(_ stream: Int) async throws -> Double {
            let text = String(
                decoding: try await Reference.run(
                    ffmpeg,
                    [
                        "-v", "error", "-i", path, "-map", "0:\(stream)", "-af", "ebur128=metadata=1,ametadata=mode=print:key=lavfi.r128.I:file=-",
                        "-f", "null", "-",
                    ]), as: UTF8.self)
            return try #require(text.split(separator: "\n").last { $0.hasPrefix("lavfi.r128.I=") }.flatMap { Double($0.dropFirst(13)) })
        }
        try Data(
            #"""
            [{"name": "en", "source": "two.mkv", "rect": [0, 0, 32, 36], "audio": true, "loop": "forever"},
             {"name": "fr", "source": "two.mkv", "rect": [32, 0, 32, 36], "audio": true, "audioTrack": "lang:fra", "loop": "forever"}]
            """#.utf8
        ).write(to: URL(fileURLWithPath: folder + "/layout.json"))
        let run = try await CLI.run([
            "playout", "--layout", folder + "/layout.json", "--size", "64x36", "--clock", "virtual", "--duration", "4", "--loudness", "-23",
            "--out", folder + "/rec.ts", "--as-run", folder + "/as-run.jsonl",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try String(contentsOfFile: folder + "/as-run.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.filter { $0["kind"] as? String == "item" }
        let measured = Dictionary(
            records.compactMap { record in (record["layer"] as? String).flatMap { layer in (record["loudness"] as? Double).map { (layer, $0) } } },
            uniquingKeysWith: { a, _ in a })
        let (english, french) = (try await reference(1), try await reference(2))
        #expect(abs((measured["en"] ?? 0) - english) < 1 && abs((measured["fr"] ?? 0) - french) < 1, "\(measured): ffmpeg \(english), \(french)")
    }
}
