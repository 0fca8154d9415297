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

    /// An item that ended and stays current: its time stands at the end of what was presented
    /// at once and however far the clock moves; a seek or another item lets it move again.
    @Test func anEndedItemsTimeStandsAtItsEnd() {
        let (timeline, clock) = playing()
        _ = timeline.due(10)
        timeline.presented(position: 10, itemTime: 0, duration: 0.04, lateness: 0)
        timeline.presented(position: 10.04, itemTime: 0.04, duration: 0.04, lateness: 0)
        clock.advance(by: .milliseconds(60))
        func near(_ time: Double?, _ expected: Double) -> Bool { time.map { abs($0 - expected) < 1e-9 } ?? false }
        #expect(near(timeline.itemTime(atHostTime: clock.now()), 0.06))
        timeline.itemEnded()
        #expect(near(timeline.itemTime(atHostTime: clock.now() + .seconds(3600)), 0.08), "an hour later: still its end")
        #expect(near(timeline.itemTime(atHostTime: clock.now()), 0.08), "at once: nothing more is presented")
        timeline.setRate(0)
        #expect(near(timeline.itemTime(atHostTime: clock.now()), 0.08), "paused at the end: the end")
        timeline.setRate(1)
        timeline.reanchor(at: 10.02)
        timeline.presented(position: 10.02, itemTime: 0.02, duration: 0.04, lateness: 0)
        _ = timeline.due(10.02)
        #expect(near(timeline.itemTime(atHostTime: clock.now() + .seconds(1)), 1.02), "after a seek it moves again")
        timeline.itemEnded()
        timeline.itemChanged()
        _ = timeline.due(10.06)
        timeline.presented(position: 10.06, itemTime: 0, duration: 0.04, lateness: 0)
        #expect(timeline.itemTime(atHostTime: clock.now() + .seconds(2)).map { $0 > 1.9 } ?? false, "another item moves again")
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
