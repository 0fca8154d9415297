import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The audio-master rule of the timeline, on a virtual clock, one call at a time.
@Suite struct PlaybackTimelineTests {
    func playing() -> (PlaybackTimeline, ManualPlaybackClock) {
        let clock = ManualPlaybackClock()
        let timeline = PlaybackTimeline(clock: clock, realtime: true)
        timeline.setRate(1)
        return (timeline, clock)
    }

    @Test func audioOnTimeLeavesTheTimelineAlone() {
        let (timeline, clock) = playing()
        #expect(timeline.due(0) == .zero)
        clock.advance(by: .milliseconds(20))
        timeline.audioPresented(position: 0, duration: 0.02, frames: 960)
        clock.advance(by: .milliseconds(30))  // 10 ms late: inside the slack
        timeline.audioPresented(position: 0.02, duration: 0.02, frames: 960)
        #expect(timeline.statistics.audioResyncs == 0)
        #expect(timeline.statistics.audioFrames == 1920)
        #expect(timeline.due(1.0) == .seconds(1))
        #expect(timeline.cursor == 0.04)
    }

    @Test func lateAudioMovesTheTimelineAndVideoFollows() {
        let (timeline, clock) = playing()
        _ = timeline.due(0)
        clock.advance(by: .milliseconds(520))  // the output took half a second too long
        timeline.audioPresented(position: 0, duration: 0.02, frames: 960)
        #expect(timeline.statistics.audioResyncs == 1)
        // 0.02 s of media is now at 0.52 s of clock: a frame at 1.0 s is due at 1.5 s, not 1.0 s.
        #expect(timeline.due(1.0) == .milliseconds(1500))
        // Video that is late never moves it.
        timeline.dropped(position: 0.04, duration: 0.04)
        #expect(timeline.due(1.0) == .milliseconds(1500))
    }

    @Test func asFastAsPossibleNeverResyncs() {
        let clock = ManualPlaybackClock()
        let timeline = PlaybackTimeline(clock: clock, realtime: false)
        timeline.setRate(1)
        clock.advance(by: .seconds(5))
        timeline.audioPresented(position: 0, duration: 0.02, frames: 960)
        #expect(timeline.statistics.audioResyncs == 0)
        #expect(timeline.cursor == 0.02)
    }

    @Test func pausedTimelineHasNoDueTimesAndResyncsNothing() {
        let (timeline, clock) = playing()
        _ = timeline.due(0)
        timeline.setRate(0)
        #expect(timeline.due(0.5) == nil)
        clock.advance(by: .seconds(2))
        timeline.audioPresented(position: 0, duration: 0.02, frames: 960)
        #expect(timeline.statistics.audioResyncs == 0)
    }
}
