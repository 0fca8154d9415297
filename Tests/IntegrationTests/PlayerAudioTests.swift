import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Audio through players, loops and the coordinator: one format, sample-for-sample concatenation,
/// and the audio as the master clock in realtime mode.
@Suite struct PlayerAudioTests {
    /// A clip's audio decoded on its own, converted to `format`.
    static func audio(_ path: String, _ format: AudioFormat, configuration: DecodeConfiguration = DecodeConfiguration()) async -> [Int16] {
        var configuration = configuration
        configuration.audioFormat = format
        let sink = InMemoryAudioSink()
        _ = await DecodeSession(source: path, configuration: configuration).run(into: NullSink(), audio: sink)
        return sink.samples
    }

    @Test func queueConcatenatesEveryItemsAudioInTheFirstItemsFormat() async throws {
        // 44.1 kHz stereo first (it fixes the format), then 48 kHz mono with video, audio alone, video alone.
        let names = ["stereo-44k.mp4", "h264-aac.mp4", "audio-only.mp3", "video-only.mp4"]
        let paths = try names.map { try Fixtures.clip($0) }
        let sink = InMemoryAudioSink()
        let frames = TimeLog(clock: SystemPlaybackClock())
        let player = QueuePlayer(items: paths.map { PlayerItem(asset: Asset(path: $0)) }, output: TimestampSink(log: frames), audioOutput: sink)
        player.play()
        await player.waitUntilIdle()
        try await player.finishOutput()

        let format = AudioFormat(sampleRate: 44100, channelCount: 2)
        #expect(sink.info?.sampleRate == 44100)
        #expect(sink.info?.channelCount == 2)
        var expected: [Int16] = []
        for path in paths { expected += await Self.audio(path, format) }
        #expect(expected.count > 3 * 2 * 44100, "three clips of 2 s have audio")
        // Nothing added, lost or moved at the transitions: exactly the items' audio, one after another.
        #expect(sink.samples.count == expected.count)
        #expect(sink.samples == expected)
        #expect(sink.isFinished)
        #expect(player.statistics.audioFramesPresented * 2 == expected.count)
        #expect(frames.entries.count == 150, "three clips of 50 frames have video")
    }

    @Test func configuredFormatWinsOverTheFirstItems() async throws {
        let path = try Fixtures.clip("stereo-44k.mp4")
        let sink = InMemoryAudioSink()
        let player = QueuePlayer(
            items: [PlayerItem(asset: Asset(path: path))], output: NullSink(), audioOutput: sink,
            configuration: PlayerConfiguration(audioFormat: AudioFormat(sampleRate: 16000, channelCount: 1)))
        player.play()
        await player.waitUntilIdle()
        #expect(sink.info?.sampleRate == 16000)
        #expect(sink.info?.channelCount == 1)
        #expect(sink.samples == (await Self.audio(path, AudioFormat(sampleRate: 16000, channelCount: 1))))
    }

    @Test(arguments: ["h264-aac.mp4", "audio-only.m4a"])
    func loopsAppendExactlyLoopCountTimesTheAudio(clip: String) async throws {
        let path = try Fixtures.clip(clip)
        let once = await Self.audio(path, AudioFormat())
        let coordinator = PlaybackCoordinator()
        let sink = InMemoryAudioSink()
        let id = await coordinator.submit(PlaybackRequest(source: path, loop: .count(3)), output: { NullSink() }, audioOutput: { sink })
        let outcome = try await coordinator.outcome(of: id)
        #expect(outcome.status == .completed)
        #expect(outcome.loopsCompleted == 3)
        #expect(sink.samples == once + once + once)
        #expect(outcome.audioFramesPresented == 3 * once.count)
    }

    @Test func loopingATimeRangeRepeatsItsAudioToTheSample() async throws {
        let path = try Fixtures.clip("h264-aac.mp4")
        let range = TimeRange(start: MediaTime(value: 1, timescale: 2), end: MediaTime(value: 3, timescale: 2))
        let coordinator = PlaybackCoordinator()
        let sink = InMemoryAudioSink()
        let id = await coordinator.submit(
            PlaybackRequest(source: path, loop: .count(2), timeRange: range), output: { NullSink() },
            audioOutput: { sink })
        #expect(try await coordinator.outcome(of: id).status == .completed)
        // 0.5 s to 1.5 s at 48 kHz, twice: the source's own samples 24000..<72000 each time.
        let full = await Self.audio(path, AudioFormat())
        #expect(sink.samples.count == 2 * 48000)
        #expect(Array(sink.samples[0..<48000]) == Array(full[24000..<72000]))
        #expect(Array(sink.samples[48000...]) == Array(full[24000..<72000]))
    }

    /// Seeks a paused player to `time`, plays to the end, and compares its audio with a decode
    /// from the start: where the seek landed, the samples it played, the full decode, and the
    /// largest difference from `skip` samples on, against the full decode from `expectedStart`.
    static func seekAndPlay(
        _ name: String, to time: MediaTime, expectedStart: Int, skip: Int
    ) async throws
        -> (landed: MediaTime?, played: Int, expected: Int, worst: Int)
    {
        let path = try Fixtures.clip(name)
        let full = await Self.audio(path, AudioFormat())
        let sink = InMemoryAudioSink()
        let player = Player(item: PlayerItem(asset: Asset(path: path)), output: NullSink(), audioOutput: sink)
        let landed = await player.seek(to: time)
        player.play()
        await player.waitUntilIdle()
        let samples = sink.samples
        try #require(samples.count > skip + 1000)
        let worst = zip(samples.dropFirst(skip), full[(expectedStart + skip)...]).map { abs(Int($0) - Int($1)) }.max() ?? .max
        return (landed, samples.count, full.count - expectedStart, worst)
    }

    @Test func seekingMovesTheAudioToTheTargetSample() async throws {
        // From exactly 1 s (sample 48000) to the end: the signal of a decode from the start, in
        // place. (Not bit for bit: AAC decoded from a seek point differs by a few units; one
        // sample out of place would differ by about 250 on this tone.)
        let run = try await Self.seekAndPlay("h264-aac.mp4", to: MediaTime(value: 1, timescale: 1), expectedStart: 48000, skip: 0)
        #expect(run.landed == MediaTime(value: 1, timescale: 1))
        #expect(run.played == run.expected)
        #expect(run.worst <= 16, "largest difference \(run.worst)")
    }

    @Test func seekingAnAudioOnlyItemLandsOnTheTarget() async throws {
        // Times are the file's own: this MP3's first sample sits at its start time (0.023 s, the
        // encoder's delay), so 1.5 s is that many samples fewer into the full decode.
        let start = try #require(try Fixtures.ffprobe("audio-only.mp3").streams.first?.start_time.flatMap(Double.init))
        let first = Int((start * 48000).rounded())
        #expect(first == 1105)
        // MP3 frames after a seek lean on data (the bit reservoir) from before it: compare from the
        // fourth frame on, where a decode from the start and one from the seek agree.
        let run = try await Self.seekAndPlay("audio-only.mp3", to: MediaTime(value: 3, timescale: 2), expectedStart: 72000 - first, skip: 4608)
        // The audio tells the seek where it landed (there is no video to).
        #expect(run.landed == MediaTime(value: 3, timescale: 2))
        #expect(run.played == run.expected)
        #expect(run.worst <= 16, "largest difference \(run.worst)")
    }

    @Test func audioOnlyItemsPlayTheirAudioAndEnd() async throws {
        let path = try Fixtures.clip("audio-only.m4a")
        let sink = InMemoryAudioSink()
        let item = PlayerItem(asset: Asset(path: path))
        let player = Player(item: item, output: NullSink(), audioOutput: sink)
        let ticks = TickLog()
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 2)) { ticks.add($0) }
        player.play()
        await player.waitUntilIdle()
        player.removeTimeObserver(token)
        #expect(item.status == .readyToPlay)
        #expect(sink.samples == (await Self.audio(path, AudioFormat())))
        #expect(player.statistics.framesPresented == 0)
        // The audio drives the item's time: observers fire through the clip.
        #expect(ticks.times.count >= 4, "ticks at \(ticks.times)")
        #expect(item.currentTime.seconds > 1.9)
    }

}

/// The audio as the master clock, on the machine's clock. These pace in real time, so
/// `scripts/test.sh` runs them in a pass of their own, one at a time: under the parallel suite's
/// load on a small machine, frames are late because the CPU is busy, not because of the player.
@Suite(.serialized) struct RealtimeAudioTests {
    static func audio(_ path: String, _ format: AudioFormat) async -> [Int16] {
        await PlayerAudioTests.audio(path, format)
    }

    /// One realtime playback of `h264-aac.mp4` on the machine's clock: each frame and audio
    /// buffer's arrival logged; the video output stalls once at frame `videoStallAt`, or the audio
    /// output at buffer `audioStallAt`, for half a second.
    struct Run {
        var statistics: PlaybackStatistics
        var elapsed: Double
        var video: [TimeLog.Entry]
        var audio: [TimeLog.Entry]
        var samples: [Int16]
        var expectedSamples: [Int16]
    }

    static func play(videoStallAt: Int? = nil, audioStallAt: Int? = nil) async throws -> Run {
        let path = try Fixtures.clip("h264-aac.mp4")
        let clock = SystemPlaybackClock()
        let video = TimeLog(clock: clock), audio = TimeLog(clock: clock)
        let stall = Duration.milliseconds(500)
        let sink = TimedAudioSink(log: audio, stallAt: audioStallAt, for: stall)
        let player = QueuePlayer(
            items: [PlayerItem(asset: Asset(path: path))], output: TimestampSink(log: video, stallAt: videoStallAt, for: stall),
            audioOutput: sink, configuration: PlayerConfiguration(realtime: true), clock: clock)
        let start = clock.now()
        player.play()
        await player.waitUntilIdle()
        return Run(
            statistics: player.statistics, elapsed: (clock.now() - start).seconds, video: video.entries, audio: audio.entries,
            samples: sink.samples, expectedSamples: await Self.audio(path, AudioFormat()))
    }

    /// On the machine's clock (a virtual clock cannot stand in here: the audio thread's sleeps
    /// would move virtual time as fast as audio decodes, leaving every frame late).
    @Test func realtimeWithAudioPacesBothAndKeepsThemTogether() async throws {
        let run = try await Self.play()
        #expect(run.statistics.framesPresented + run.statistics.framesDropped == 50)
        #expect(run.statistics.framesDropped <= 2, "dropped \(run.statistics.framesDropped)")
        #expect(run.elapsed > 1.9 && run.elapsed < 3.0 * Double(Bound.slowdown), "two seconds of media took \(run.elapsed) s")
        #expect(run.samples == run.expectedSamples)
        let skew = Self.worstSkew(video: run.video, audio: run.audio, after: 0)
        #expect(skew < 0.1, "video and audio drifted apart by \(skew) s")
    }

    /// The audio output falls half a second behind: the video waits for it (no frame is dropped,
    /// and each frame still comes with its audio) instead of running ahead on the wall clock.
    @Test func videoFollowsAudioThatFellBehind() async throws {
        let run = try await Self.play(audioStallAt: 20)
        #expect(run.statistics.audioResyncs >= 1)
        #expect(run.statistics.framesDropped <= 2, "dropped \(run.statistics.framesDropped)")
        #expect(run.elapsed >= 2.3, "the half-second stall lengthened the playback")
        #expect(run.samples == run.expectedSamples, "audio is never dropped")
        // The stall hits at 0.43 s of media; frames shown while it lasts cannot know yet. From the
        // recovery on, each frame comes with its audio (on the wall clock alone they would stay 0.5 s ahead).
        let skew = Self.worstSkew(video: run.video, audio: run.audio, after: 1.0)
        #expect(skew < 0.12, "video and audio drifted apart by \(skew) s")
    }

    /// The video output falls half a second behind: the frames that missed their time against the
    /// audio are dropped, and the rest are shown with their audio.
    @Test func lateVideoIsDroppedAgainstTheAudioClock() async throws {
        let run = try await Self.play(videoStallAt: 10)
        #expect(run.statistics.framesDropped >= 6, "about 12 frames missed their time; dropped \(run.statistics.framesDropped)")
        #expect(run.statistics.framesPresented + run.statistics.framesDropped == 50)
        #expect(run.samples == run.expectedSamples)
        let skew = Self.worstSkew(video: run.video, audio: run.audio, after: 1.0)
        #expect(skew < 0.12, "video and audio drifted apart by \(skew) s")
    }

    /// A picture that ends six seconds before its sound (more than the sound's packet route
    /// holds): every frame is shown at its time, the last ones too — the decoder holding them is
    /// told the data ended long before the sound is played.
    @Test func aPictureEndingLongBeforeItsSoundShowsEveryFrameAtItsTime() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/short-picture.mp4"
        try await Reference.pictureShorterThanSound(
            at: path, picture: "1", sound: "sine=frequency=440:sample_rate=48000:duration=7", video: ["-bf", "3"])
        let clock = SystemPlaybackClock()
        let video = TimeLog(clock: clock), audio = TimeLog(clock: clock)
        let player = QueuePlayer(
            items: [PlayerItem(asset: Asset(path: path))], output: TimestampSink(log: video), audioOutput: TimedAudioSink(log: audio),
            configuration: PlayerConfiguration(realtime: true), clock: clock)
        player.play()
        await player.waitUntilIdle()
        #expect(player.statistics.framesPresented == 25, "\(player.statistics.framesPresented) shown, \(player.statistics.framesDropped) dropped")
        let skew = Self.worstSkew(video: video.entries, audio: audio.entries, after: 0.5)
        #expect(skew < 0.1, "the last frames came \(skew) s away from their sound")
    }

    /// For each video frame presented after `after` seconds of media, how far its arrival was from
    /// the arrival of the audio at the same media time (interpolated between buffers); the worst.
    static func worstSkew(video: [TimeLog.Entry], audio: [TimeLog.Entry], after: Double) -> Double {
        var worst = 0.0
        for frame in video where frame.presentationTime.seconds >= after {
            let t = frame.presentationTime.seconds
            guard let i = audio.lastIndex(where: { $0.presentationTime.seconds <= t }) else { continue }
            let buffer = audio[i]
            let audioClock = buffer.clock.seconds + (t - buffer.presentationTime.seconds)
            worst = max(worst, abs(frame.clock.seconds - audioClock))
        }
        return worst
    }
}
