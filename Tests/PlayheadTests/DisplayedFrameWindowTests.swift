import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The one rule for which frame is displayed at a time (the last frame at or before it), as the
/// window applies it to frames offered in presentation order, and the frames it hands back.
@Suite struct DisplayedFrameWindowTests {
    typealias Window = DisplayedFrameWindow<String>

    /// An answer in words: `frame a`, `before a`, `need`, `none`.
    static func describe(_ answer: Window.Answer) -> String {
        switch answer {
        case .frame(let held): return "frame \(held.frame)"
        case .beforeFirstFrame(let held): return "before \(held.frame)"
        case .needFrames: return "need"
        case .noFrames: return "none"
        }
    }

    /// The window's answer at `target`, in words.
    static func ask(_ window: inout Window, _ target: Int64, released: inout [String]) -> String {
        describe(window.answer(at: target, releasing: &released))
    }

    static func ask(_ window: inout Window, _ target: Int64) -> String {
        var released: [String] = []
        return ask(&window, target, released: &released)
    }

    /// An empty window needs frames; once the stream ended it has none. A reset forgets the end.
    @Test func anEmptyWindowNeedsFramesThenHasNone() {
        var window = Window()
        #expect(Self.ask(&window, 0) == "need")
        #expect(window.newestPTS == nil && window.candidate == nil && window.following.isEmpty && !window.ended)
        window.end()
        #expect(Self.ask(&window, 0) == "none")
        #expect(Self.ask(&window, .max) == "none")
        #expect(window.reset().isEmpty)
        #expect(!window.ended)
        #expect(Self.ask(&window, 0) == "need", "after a reset the stream has not ended")
    }

    /// A frame before the target may not be the last one at or before it: the window needs the next
    /// frame or the end to tell.
    @Test func aFrameBeforeTheTargetWaitsForTheNextFrameOrTheEnd() {
        var window = Window()
        #expect(window.offer("a", pts: 10, duration: 5, target: 20) == nil)
        #expect(Self.ask(&window, 20) == "need")
        window.end()
        #expect(Self.ask(&window, 20) == "frame a")
        var next = Window()
        _ = next.offer("a", pts: 10, duration: 5, target: 20)
        _ = next.offer("b", pts: 30, duration: 5, target: 20)
        #expect(Self.ask(&next, 20) == "frame a", "a frame after the target tells")
    }

    /// A frame exactly at the target is displayed then: no need to wait.
    @Test func aFrameExactlyAtTheTargetIsDisplayedAtOnce() {
        var window = Window()
        _ = window.offer("a", pts: 20, duration: 5, target: 20)
        #expect(Self.ask(&window, 20) == "frame a")
    }

    /// Of frames 0, 10, 20 and 30 offered for 15, 10 is displayed; 0, replaced as the candidate,
    /// is handed back by the offer; the frames after the target are held in order.
    @Test func theLastFrameAtOrBeforeTheTargetIsDisplayed() {
        var window = Window()
        #expect(window.offer("a", pts: 0, duration: 10, target: 15) == nil)
        #expect(window.offer("b", pts: 10, duration: 10, target: 15) == "a")
        #expect(window.offer("c", pts: 20, duration: 10, target: 15) == nil)
        #expect(window.offer("d", pts: 30, duration: 7, target: 15) == nil)
        #expect(window.candidate?.frame == "b")
        #expect(window.following.map(\.frame) == ["c", "d"])
        #expect(window.following.map(\.pts) == [20, 30])
        #expect(window.following.map(\.duration) == [10, 7])
        #expect(window.newestPTS == 30)
        var released: [String] = []
        #expect(Self.ask(&window, 15, released: &released) == "frame b")
        #expect(released.isEmpty)
    }

    /// Ascending targets walk through the held frames without decoding any twice; frames passed
    /// are added to the released list (after what it held); after the last frame, it stays displayed.
    @Test func ascendingTargetsWalkThroughTheHeldFrames() {
        var window = Window()
        for (name, pts) in [("a", Int64(0)), ("b", 10), ("c", 20), ("d", 30)] { _ = window.offer(name, pts: pts, duration: 10, target: 15) }
        var released = ["earlier"]
        #expect(Self.ask(&window, 15, released: &released) == "frame b")
        #expect(Self.ask(&window, 25, released: &released) == "frame c")
        #expect(released == ["earlier", "b"])
        #expect(Self.ask(&window, 25, released: &released) == "frame c", "the same target again")
        #expect(released == ["earlier", "b"])
        #expect(Self.ask(&window, 30, released: &released) == "frame d", "exactly at the last frame held")
        #expect(released == ["earlier", "b", "c"])
        #expect(window.following.isEmpty && window.newestPTS == 30)
        #expect(Self.ask(&window, 35, released: &released) == "need", "a frame may come before 35")
        window.end()
        #expect(Self.ask(&window, 35, released: &released) == "frame d")
        #expect(Self.ask(&window, .max, released: &released) == "frame d")
        #expect(released == ["earlier", "b", "c"])
    }

    /// Passing several held frames at once keeps the last of them and releases the others in order;
    /// whether it is displayed still takes the next frame or the end.
    @Test func passingAStretchReleasesAllButItsLastFrame() {
        var window = Window()
        _ = window.offer("a", pts: 0, duration: 10, target: 0)
        for (name, pts) in [("b", Int64(10)), ("c", 20), ("d", 30)] { _ = window.offer(name, pts: pts, duration: 10, target: 0) }
        var released: [String] = []
        #expect(Self.ask(&window, 100, released: &released) == "need")
        #expect(released == ["a", "b", "c"])
        #expect(window.candidate?.frame == "d")
        window.end()
        #expect(Self.ask(&window, 100, released: &released) == "frame d")
    }

    /// When every frame lies after the target, the first is the best there is, even at the end;
    /// asked at its own time, it is displayed.
    @Test func aTargetBeforeEveryFrameAnswersTheFirst() {
        var window = Window()
        _ = window.offer("a", pts: 10, duration: 10, target: 5)
        _ = window.offer("b", pts: 20, duration: 10, target: 5)
        #expect(window.candidate == nil)
        #expect(Self.ask(&window, 5) == "before a")
        window.end()
        #expect(Self.ask(&window, 5) == "before a")
        var released: [String] = []
        #expect(Self.ask(&window, 10, released: &released) == "frame a")
        #expect(released.isEmpty, "no candidate was replaced")
        #expect(Self.ask(&window, 20, released: &released) == "frame b")
        #expect(released == ["a"])
    }

    /// A frame at or before the target queues behind frames already following (the order of the
    /// stream is kept), and is taken once the target reaches it.
    @Test func aFrameQueuesBehindFramesAlreadyFollowing() {
        var window = Window()
        _ = window.offer("a", pts: 20, duration: 5, target: 10)
        #expect(window.offer("b", pts: 25, duration: 5, target: 30) == nil)
        #expect(window.candidate == nil && window.following.map(\.frame) == ["a", "b"])
        var released: [String] = []
        #expect(Self.ask(&window, 30, released: &released) == "need", "b is the last so far, not known to be the last")
        #expect(released == ["a"])
        window.end()
        #expect(Self.ask(&window, 30, released: &released) == "frame b")
    }

    /// Of two frames at the same time, the later one is displayed (the last at or before the
    /// target), whether they are offered as candidates or held as following frames.
    @Test func ofTwoFramesAtTheSameTimeTheLaterIsDisplayed() {
        var candidates = Window()
        _ = candidates.offer("a", pts: 10, duration: 5, target: 10)
        #expect(candidates.offer("b", pts: 10, duration: 5, target: 10) == "a")
        #expect(Self.ask(&candidates, 10) == "frame b")
        var following = Window()
        _ = following.offer("a", pts: 10, duration: 5, target: 5)
        _ = following.offer("b", pts: 10, duration: 5, target: 5)
        var released: [String] = []
        #expect(Self.ask(&following, 10, released: &released) == "frame b")
        #expect(released == ["a"])
    }

    /// Once a frame was answered as displayed at a time, a frame of that same time offered later
    /// would be the last one at or before it: the first answer was given too early.
    @Test func anAnswerAtAFramesOwnTimeStaysTrueWhenAnotherFrameOfThatTimeFollows() {
        var window = Window()
        _ = window.offer("a", pts: 10, duration: 5, target: 10)
        let first = Self.ask(&window, 10)
        _ = window.offer("b", pts: 10, duration: 5, target: 10)
        let second = Self.ask(&window, 10)
        #expect(second == "frame b", "the later of the two")
        withKnownIssue("answer(at:) answers a frame exactly at the target before a frame of the same time can be seen") {
            #expect(first == second, "the answer for a time changed with a frame of that same time")
        }
    }

    /// A reset hands back every held frame in order, forgets them and the end.
    @Test func resetHandsBackEveryHeldFrame() {
        var window = Window()
        _ = window.offer("a", pts: 0, duration: 10, target: 5)
        _ = window.offer("b", pts: 10, duration: 10, target: 5)
        _ = window.offer("c", pts: 20, duration: 10, target: 5)
        window.end()
        #expect(window.reset() == ["a", "b", "c"])
        #expect(window.candidate == nil && window.following.isEmpty && !window.ended && window.newestPTS == nil)
        #expect(window.reset().isEmpty, "nothing twice")
        #expect(Self.ask(&window, 5) == "need")
    }

    /// Dropping the candidate hands it back and keeps the frames after it; a second drop has nothing.
    @Test func droppingTheCandidateKeepsTheFramesAfterIt() {
        var window = Window()
        _ = window.offer("a", pts: 0, duration: 10, target: 5)
        _ = window.offer("b", pts: 10, duration: 10, target: 5)
        _ = window.offer("c", pts: 20, duration: 10, target: 5)
        #expect(window.dropCandidate() == "a")
        #expect(window.dropCandidate() == nil)
        #expect(window.candidate == nil && window.following.map(\.frame) == ["b", "c"] && window.newestPTS == 20)
        #expect(window.drain().map(\.frame) == ["b", "c"])
    }

    /// Draining hands every held frame over in order, with its time and duration, and empties the
    /// window.
    @Test func drainingHandsEveryFrameOverInOrder() {
        var window = Window()
        #expect(window.drain().isEmpty)
        _ = window.offer("a", pts: 0, duration: 4, target: 5)
        _ = window.offer("b", pts: 10, duration: 6, target: 5)
        _ = window.offer("c", pts: 20, duration: 8, target: 5)
        let held = window.drain()
        #expect(held.map(\.frame) == ["a", "b", "c"])
        #expect(held.map(\.pts) == [0, 10, 20])
        #expect(held.map(\.duration) == [4, 6, 8])
        #expect(window.candidate == nil && window.following.isEmpty && window.newestPTS == nil)
        #expect(window.drain().isEmpty && window.reset().isEmpty)
    }

    /// The extreme targets: at `Int64.min` (past the start, everything queues) every frame is
    /// held in order; at `Int64.max` each frame replaces the one before and the last is displayed
    /// once the stream ends.
    @Test func theExtremeTargets() {
        var queued = Window()
        for (name, pts) in [("a", Int64(0)), ("b", 5), ("c", 9)] { #expect(queued.offer(name, pts: pts, duration: 1, target: .min) == nil) }
        #expect(queued.candidate == nil && queued.following.map(\.frame) == ["a", "b", "c"])
        #expect(Self.ask(&queued, .min) == "before a")
        var latest = Window()
        #expect(latest.offer("a", pts: 0, duration: 1, target: .max) == nil)
        #expect(latest.offer("b", pts: 5, duration: 1, target: .max) == "a")
        #expect(latest.offer("c", pts: 9, duration: 1, target: .max) == "b")
        #expect(Self.ask(&latest, .max) == "need")
        latest.end()
        #expect(Self.ask(&latest, .max) == "frame c")
    }

    /// The frame an answer holds: the displayed one, or the first when all are after the target.
    @Test func anAnswerNamesTheFrameItHolds() {
        let held = Window.Held(frame: "a", pts: 3, duration: 1)
        #expect(Window.Answer.frame(held).heldFrame?.frame == "a")
        #expect(Window.Answer.beforeFirstFrame(held).heldFrame?.pts == 3)
        #expect(Window.Answer.needFrames.heldFrame == nil)
        #expect(Window.Answer.noFrames.heldFrame == nil)
    }

    /// Whatever the times (in order, equal, out of order) and ascending targets, every frame
    /// offered comes back exactly once: from `offer`, through `released`, or from the final reset.
    @Test func noFrameIsLostOrHandedBackTwice() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ bound: Int64) -> Int64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int64((seed >> 33) % UInt64(bound))
        }
        var lost: [String] = [], twice: [String] = []
        for round in 0..<50 {
            var window = Window()
            var back: [String] = []
            var offered: [String] = []
            var pts: Int64 = 0, target: Int64 = 0
            for i in 0..<40 {
                // Mostly forward, sometimes the same time, sometimes back.
                pts += random(4) - 1
                target += random(3)
                let name = "\(round).\(i)"
                offered.append(name)
                if let old = window.offer(name, pts: pts, duration: 1, target: target) { back.append(old) }
                if random(3) == 0 { _ = window.answer(at: target, releasing: &back) }
                if random(20) == 0, let dropped = window.dropCandidate() { back.append(dropped) }
                if random(25) == 0 { back += window.drain().map(\.frame) }
            }
            if round % 2 == 0 { window.end() }
            _ = window.answer(at: target + random(10), releasing: &back)
            back += window.reset()
            lost += offered.filter { !back.contains($0) }
            twice += Dictionary(grouping: back, by: { $0 }).filter { $0.value.count > 1 }.keys
        }
        #expect(lost.isEmpty, "never handed back: \(lost.prefix(8))")
        #expect(twice.isEmpty, "handed back twice: \(twice.prefix(8))")
    }
}
