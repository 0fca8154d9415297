import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Where decoding starts delivering after a start or a seek: the first frame that starts inside
/// `[low, high]`, or else the frame displayed at the target; and whether decoding began too late.
@Suite struct StartSelectionTests {
    typealias Window = DisplayedFrameWindow<String>

    static func held(_ pts: Int64) -> Window.Held { Window.Held(frame: "f\(pts)", pts: pts, duration: 10) }

    /// `choose` for a candidate at `candidate` (nil: every frame after the target) and the frames after it.
    static func choose(_ candidate: Int64?, following: [Int64], _ selection: StartSelection) -> (startAtCandidate: Bool, late: Bool)? {
        let after = following.map(held)
        let answer: Window.Answer
        if let candidate {
            answer = .frame(held(candidate))
        } else {
            answer = .beforeFirstFrame(after[0])
        }
        return StartSelection.choose(answer, following: after, selection: selection)
    }

    /// A window around 100: from 90 to 110.
    static let tolerant = StartSelection(low: 90, target: 100, high: 110)

    /// The named selections span the windows their documentation gives.
    @Test func theNamedSelectionsSpanTheirWindows() {
        #expect(StartSelection.displayed(at: 7) == StartSelection(low: 7, target: 7, high: 7))
        #expect(StartSelection.from(keyframe: 9) == StartSelection(low: 9, target: 9, high: .max))
        #expect(StartSelection.everything == StartSelection(low: .min, target: .min, high: .max))
    }

    /// Until the window can tell (more frames needed), or when there is no frame at all, nothing
    /// is chosen.
    @Test func undecidedAnswersChooseNothing() {
        for selection in [Self.tolerant, .displayed(at: 5), .from(keyframe: 5), .everything] {
            #expect(StartSelection.choose(Window.Answer.needFrames, following: [], selection: selection) == nil)
            #expect(StartSelection.choose(Window.Answer.noFrames, following: [], selection: selection) == nil)
        }
    }

    /// A candidate inside the window is the first frame that starts in it: it is the start, whatever
    /// follows — at the window's low edge too.
    @Test func aCandidateInsideTheWindowIsTheStart() {
        let inside = Self.choose(95, following: [105], Self.tolerant)
        #expect(inside?.startAtCandidate == true && inside?.late == false)
        let atLow = Self.choose(90, following: [100], Self.tolerant)
        #expect(atLow?.startAtCandidate == true && atLow?.late == false, "low is inside the window")
        let atTarget = Self.choose(100, following: [], Self.tolerant)
        #expect(atTarget?.startAtCandidate == true && atTarget?.late == false)
    }

    /// A candidate before the window gives way to the next frame when that one starts inside the
    /// window — at its high edge too.
    @Test func aCandidateBeforeTheWindowGivesWayToTheNextFrameInside() {
        let next = Self.choose(89, following: [105, 120], Self.tolerant)
        #expect(next?.startAtCandidate == false && next?.late == false)
        let atHigh = Self.choose(80, following: [110], Self.tolerant)
        #expect(atHigh?.startAtCandidate == false && atHigh?.late == false, "high is inside the window")
    }

    /// With no frame inside the window, the frame displayed at the target is the start: the next
    /// frame starts after the window, or there is none (the stream ended).
    @Test func withNoFrameInsideTheWindowTheFrameDisplayedAtTheTargetIsTheStart() {
        let after = Self.choose(80, following: [111], Self.tolerant)
        #expect(after?.startAtCandidate == true && after?.late == false, "111 is after the window")
        let ended = Self.choose(80, following: [], Self.tolerant)
        #expect(ended?.startAtCandidate == true && ended?.late == false, "the last frame of the stream")
    }

    /// Frame-exact: the frame displayed at the time, never the next one (the window is the time
    /// alone).
    @Test func anExactSelectionTakesTheFrameDisplayedAtTheTime() {
        let before = Self.choose(96, following: [104], .displayed(at: 100))
        #expect(before?.startAtCandidate == true && before?.late == false)
        let at = Self.choose(100, following: [104], .displayed(at: 100))
        #expect(at?.startAtCandidate == true && at?.late == false)
    }

    /// From a keyframe: the keyframe itself, or the first frame after a frame decoded before it,
    /// however far after (the window is open).
    @Test func aKeyframeSelectionStartsAtTheKeyframeOrAfterIt() {
        let at = Self.choose(50, following: [60], .from(keyframe: 50))
        #expect(at?.startAtCandidate == true && at?.late == false)
        let before = Self.choose(40, following: [1_000_000], .from(keyframe: 50))
        #expect(before?.startAtCandidate == false && before?.late == false)
    }

    /// Every frame after the target: start at the first of them, and say it may be late — frames
    /// between `low` and it may exist that decoding did not see (it began too late, or the stream
    /// starts after `low`), even when the first one lies inside the window.
    @Test func framesOnlyAfterTheTargetAreALateStart() {
        for selection in [StartSelection.displayed(at: 100), .from(keyframe: 100), Self.tolerant] {
            let late = Self.choose(nil, following: [120, 130], selection)
            #expect(late?.startAtCandidate == false && late?.late == true, "\(selection)")
        }
        let insideTheWindow = Self.choose(nil, following: [105], Self.tolerant)
        #expect(insideTheWindow?.startAtCandidate == false && insideTheWindow?.late == true)
    }

    /// Everything: the first frame, never late.
    @Test func everythingStartsAtTheFirstFrameAndIsNeverLate() {
        let first = Self.choose(nil, following: [0, 40], .everything)
        #expect(first?.startAtCandidate == false && first?.late == false)
        let atMin = Self.choose(.min, following: [0], .everything)
        #expect(atMin?.startAtCandidate == true && atMin?.late == false)
    }

    /// With the window as the stepper drives it (frames offered for the target, then asked), each
    /// selection picks the frame its rule names, from frames 0, 40, 80 and 120.
    @Test func withTheWindowEachSelectionPicksTheFrameItsRuleNames() {
        func start(_ selection: StartSelection) -> String? {
            var window = Window()
            var released: [String] = []
            for pts: Int64 in [0, 40, 80, 120] {
                if let old = window.offer("f\(pts)", pts: pts, duration: 40, target: selection.target) { released.append(old) }
            }
            window.end()
            let answer = window.answer(at: selection.target, releasing: &released)
            guard let choice = StartSelection.choose(answer, following: window.following, selection: selection) else { return nil }
            return choice.startAtCandidate ? window.candidate?.frame : window.following.first?.frame
        }
        #expect(start(.everything) == "f0")
        #expect(start(.displayed(at: 50)) == "f40", "displayed from 40 to 80")
        #expect(start(.displayed(at: 80)) == "f80")
        #expect(start(StartSelection(low: 45, target: 50, high: 90)) == "f80", "the first frame starting inside [45, 90]")
        #expect(start(StartSelection(low: 45, target: 50, high: 70)) == "f40", "none inside [45, 70]: the one displayed at 50")
        #expect(start(StartSelection(low: 30, target: 50, high: 90)) == "f40", "40 starts inside [30, 90]")
        #expect(start(.from(keyframe: 80)) == "f80")
        #expect(start(.from(keyframe: 100)) == "f120", "the first frame after the keyframe time")
        #expect(start(.displayed(at: 500)) == "f120", "after the last frame the last stays displayed")
    }
}
