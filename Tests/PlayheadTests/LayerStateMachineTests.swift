import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A composition layer's playlist rules, alone: passes and their ends, loops, failed items passed
/// over or filled, live edits taken at the next boundary (or at once once the content ended), a
/// schedule rejoined, what the as-run log is told.
@Suite struct LayerStateMachineTests {
    typealias Machine = LayerStateMachine
    static let id = CompositionLayer.ID(value: 1)
    static let now = Date(timeIntervalSince1970: 1_000_000)
    static func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1000) }

    static func layer(_ names: [String], loop: LayerLoop = .once, range: TimeRange? = nil, scheduled: Date? = nil) -> CompositionLayer {
        CompositionLayer(
            assets: names.map { Asset(path: "/clips/\($0).mp4") }, rect: PixelRect(x: 0, y: 0, width: 2, height: 2), loop: loop, timeRange: range,
            scheduledStart: scheduled)
    }

    static func machine(
        _ layer: CompositionLayer, policy: LayerFailurePolicy = .passOver, start: MediaTime = .zero, retry: Duration? = nil
    ) -> Machine {
        Machine(id: id, layer: layer, failurePolicy: policy, start: start, now: now, retryFailedItemsAfter: retry, lengths: { _ in nil })
    }

    /// The records among `effects`.
    static func records(_ effects: [Machine.Effect]) -> [LayerItemRecord] {
        effects.compactMap { if case .record(let record) = $0 { record } else { nil } }
    }

    static func has(_ effects: [Machine.Effect], _ kind: String) -> Bool {
        effects.contains { "\($0)".hasPrefix(kind) }
    }

    /// A version with a schedule, taken at a boundary, is placed by its own items' lengths — not
    /// those of the version ending (three items of 10 s there; its one item of 4 s here: 9 s
    /// into its schedule it is in its third loop, 1 s in).
    @Test func aScheduledVersionTakenAtABoundaryIsPlacedByItsOwnLengths() {
        var machine = Self.machine(Self.layer(["a", "b", "c"], loop: .forever))
        let next = Self.layer(["d"], loop: .forever, scheduled: Self.now.addingTimeInterval(-9))
        _ = machine.update(to: next, at: Self.seconds(1), now: Self.now, lengths: { _ in nil })
        let lengths: (CompositionLayer) -> [MediaTime]? = { layer in
            layer.assets.map { $0.source.hasSuffix("d.mp4") ? Self.seconds(4) : Self.seconds(10) }
        }
        _ = machine.passEnded(length: Self.seconds(2), status: .played, error: nil, now: Self.now, lengths: lengths)
        #expect(machine.layer.assets.count == 1 && machine.timeline.item == 0 && machine.timeline.loopsCompleted == 2, "\(machine.timeline)")
        #expect(machine.timeline.passStart == Self.seconds(1), "joined 1 s into its pass at the boundary (2 s): \(machine.timeline.passStart)")
    }

    @Test func aPlaylistPlaysEachItemThenEnds() {
        var machine = Self.machine(Self.layer(["a", "b"]))
        #expect(machine.phase == .playing && machine.timeline.item == 0)
        #expect(Self.has(machine.effectsAtStart, "passBegan") && Self.has(machine.effectsAtStart, "prefetch"), "\(machine.effectsAtStart)")
        var effects = machine.passEnded(length: Self.seconds(2), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(Self.records(effects).map(\.item) == [0] && Self.records(effects).first?.end == Self.seconds(2))
        #expect(machine.timeline.item == 1 && machine.timeline.passStart == Self.seconds(2) && machine.phase == .playing)
        #expect(effects.contains { if case .passBegan(1, false) = $0 { true } else { false } })
        effects = machine.passEnded(length: Self.seconds(3), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .ended && machine.timeline.hasEnded)
        #expect(Self.has(effects, "closeItem") && Self.has(effects, "forgetRecordings"))
        #expect(machine.passes.map(\.layerStart) == [.zero, Self.seconds(2)] && machine.passes.allSatisfy { $0.length != nil })
    }

    @Test func aLoopGoesBackToItsFirstItemAndASingleItemContinues() {
        var machine = Self.machine(Self.layer(["a"], loop: .times(3)))
        var effects = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(machine.timeline.loopsCompleted == 1 && machine.timeline.item == 0)
        #expect(effects.contains { if case .passBegan(0, true) = $0 { true } else { false } }, "the same item goes on: \(effects)")
        _ = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        effects = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .ended && machine.timeline.loopsCompleted == 2)
        #expect(Self.records(effects).count == 1)
    }

    @Test func aFailedItemIsPassedOverAndTheLayerFailsWhenEveryItemHas() {
        var machine = Self.machine(Self.layer(["a", "b"], loop: .forever))
        let broken = PlayheadError(code: .decodeFailed, message: "broken a")
        var effects = machine.itemFailed(broken, at: Self.seconds(0.5), now: Self.now, lengths: { _ in nil })
        #expect(Self.has(effects, "closeItem"))
        let failed = Self.records(effects).first
        #expect(failed?.status == .failed && failed?.end == Self.seconds(0.5) && failed?.error == broken)
        #expect(machine.phase == .playing && machine.timeline.item == 1 && machine.timeline.passStart == Self.seconds(0.5))
        effects = machine.itemFailed(
            PlayheadError(code: .decodeFailed, message: "broken b"), at: Self.seconds(1), now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .failed(PlayheadError(code: .decodeFailed, message: "broken b")), "\(machine.phase)")
        #expect(machine.timeline.hasEnded && Self.records(effects).last?.status == .failed)
        #expect(machine.itemFailures.count == 2)
    }

    /// In a channel a failure stands for a while, then the item is opened again (a source down
    /// for a moment is not lost for the run); every item failing within that while makes the
    /// layer wait for the first to lapse. An export's failure stands for good.
    @Test func aChannelsFailedItemIsTriedAgainOnceItsFailureIsOld() {
        var machine = Self.machine(Self.layer(["a", "b"], loop: .forever), retry: .seconds(30))
        let down = PlayheadError(code: .timedOut, message: "a down")
        _ = machine.itemFailed(down, at: Self.seconds(1), now: Self.now, lengths: { _ in nil })
        #expect(machine.standingFailure(of: 0, now: Self.now.addingTimeInterval(29)) == down)
        #expect(machine.failureLapsed(of: 0) == Self.now.addingTimeInterval(30))
        #expect(machine.standingFailure(of: 0, now: Self.now.addingTimeInterval(31)) == nil, "tried again after 30 s")
        #expect(machine.standingFailure(of: 1, now: Self.now) == nil)
        // b fails 40 s later: a's failure no longer stands, so b is passed over (not the layer failed).
        _ = machine.itemFailed(
            PlayheadError(code: .timedOut, message: "b down"), at: Self.seconds(41), now: Self.now.addingTimeInterval(40), lengths: { _ in nil })
        #expect(machine.phase == .playing && machine.timeline.item == 0, "\(machine.phase), item \(machine.timeline.item)")
        // a fails again at once: both stand now, the layer waits until the first lapses (both at 70 s).
        _ = machine.itemFailed(down, at: Self.seconds(41), now: Self.now.addingTimeInterval(40), lengths: { _ in nil })
        #expect(machine.phase == .waiting(until: Self.now.addingTimeInterval(70), error: down), "\(machine.phase)")

        var export = Self.machine(Self.layer(["a", "b"], loop: .forever))
        _ = export.itemFailed(down, at: Self.seconds(1), now: Self.now, lengths: { _ in nil })
        #expect(export.standingFailure(of: 0, now: Self.now.addingTimeInterval(3600)) == down, "an export's failure stands for good")
    }

    /// In a channel every item failing within the retry time makes the layer wait (the
    /// background) instead of failing it for the run: the failed pass is recorded once, nothing
    /// happens before the first failure lapses, then the playlist goes on there with the item
    /// after the one that failed last (it failed the layer for good before).
    @Test func aChannelLayerWhoseEveryItemFailedWaitsThenGoesOn() {
        var machine = Self.machine(Self.layer(["a", "b"], loop: .forever), retry: .seconds(30))
        let (down, gone) = (PlayheadError(code: .timedOut, message: "a down"), PlayheadError(code: .timedOut, message: "b down"))
        var effects = machine.itemFailed(down, at: Self.seconds(1), now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .playing && machine.timeline.item == 1, "a passed over: \(machine.phase)")
        effects = machine.itemFailed(gone, at: Self.seconds(3), now: Self.now.addingTimeInterval(2), lengths: { _ in nil })
        #expect(machine.phase == .waiting(until: Self.now.addingTimeInterval(30), error: gone), "\(machine.phase)")
        #expect(Self.records(effects).map(\.status) == [.failed] && Self.records(effects).first?.item == 1, "\(Self.records(effects))")
        #expect(Self.has(effects, "closeItem") && !machine.timeline.hasEnded)
        // Before a's failure lapses: nothing.
        effects = machine.retryIfDue(at: Self.seconds(20), now: Self.now.addingTimeInterval(19), lengths: { _ in nil })
        #expect(effects.isEmpty && machine.phase == .waiting(until: Self.now.addingTimeInterval(30), error: gone))
        // At 30 s: the item after b (a, whose failure lapsed) begins where the layer is, nothing recorded.
        effects = machine.retryIfDue(at: Self.seconds(31), now: Self.now.addingTimeInterval(30), lengths: { _ in nil })
        #expect(machine.phase == .playing && machine.timeline.item == 0 && machine.timeline.passStart == Self.seconds(31), "\(machine.timeline)")
        #expect(Self.records(effects).isEmpty && effects.contains { if case .passBegan(0, false) = $0 { true } else { false } }, "\(effects)")
        #expect(machine.standingFailure(of: 0, now: Self.now.addingTimeInterval(30)) == nil)
        #expect(machine.passes.last?.layerStart == Self.seconds(31) && machine.passes.last?.item == 0)
        // a fails again: b still stands (until 32 s), so the layer waits for b.
        _ = machine.itemFailed(down, at: Self.seconds(31), now: Self.now.addingTimeInterval(30), lengths: { _ in nil })
        #expect(machine.phase == .waiting(until: Self.now.addingTimeInterval(32), error: down), "\(machine.phase)")
        _ = machine.retryIfDue(at: Self.seconds(33), now: Self.now.addingTimeInterval(32), lengths: { _ in nil })
        #expect(machine.phase == .playing && machine.timeline.item == 1, "b tried again: \(machine.timeline)")
    }

    /// A single-item channel layer that loops waits for its item; one that plays once has no
    /// pass to come, and fails as an export's does.
    @Test func aSingleItemChannelLayerWaitsOnlyWhenItLoops() {
        let down = PlayheadError(code: .timedOut, message: "down")
        var looping = Self.machine(Self.layer(["a"], loop: .forever), retry: .seconds(30))
        _ = looping.itemFailed(down, at: Self.seconds(5), now: Self.now, lengths: { _ in nil })
        #expect(looping.phase == .waiting(until: Self.now.addingTimeInterval(30), error: down), "\(looping.phase)")
        _ = looping.retryIfDue(at: Self.seconds(35), now: Self.now.addingTimeInterval(30), lengths: { _ in nil })
        #expect(looping.phase == .playing && looping.timeline.loopsCompleted == 1 && looping.timeline.passStart == Self.seconds(35))

        var once = Self.machine(Self.layer(["a"]), retry: .seconds(30))
        _ = once.itemFailed(down, at: Self.seconds(5), now: Self.now, lengths: { _ in nil })
        #expect(once.phase == .failed(down) && once.timeline.hasEnded, "\(once.phase)")
        var export = Self.machine(Self.layer(["a"], loop: .forever))
        _ = export.itemFailed(down, at: Self.seconds(5), now: Self.now, lengths: { _ in nil })
        #expect(export.phase == .failed(down), "an export's layer fails: \(export.phase)")
    }

    /// A version waiting for the next boundary when the layer's last standing item fails is taken
    /// there and then — not after the retry time (a channel), nor lost with a layer that fails
    /// (an item that plays once) — and entering the wait lets the held picture go (it showed
    /// again, stale, when the playlist went on).
    @Test func aVersionWaitingWhenTheLastItemFailsIsTakenThen() {
        let down = PlayheadError(code: .timedOut, message: "down")
        for loop in [LayerLoop.forever, .once] {
            var machine = Self.machine(Self.layer(["a"], loop: loop), retry: .seconds(30))
            _ = machine.update(to: Self.layer(["b"], loop: .forever), at: Self.seconds(2), now: Self.now, lengths: { _ in nil })
            #expect(machine.pending != nil, "playing: the edit waits for the boundary")
            let effects = machine.itemFailed(down, at: Self.seconds(3), now: Self.now, lengths: { _ in nil })
            #expect(machine.phase == .playing && machine.pending == nil, "\(loop): \(machine.phase)")
            #expect(machine.layer.assets.first?.source == "/clips/b.mp4" && machine.timeline.passStart == Self.seconds(3), "\(loop)")
            #expect(Self.has(effects, "tookVersion") && Self.records(effects).map(\.status) == [.failed], "\(loop): \(effects)")
        }
        var waiting = Self.machine(Self.layer(["a"], loop: .forever), retry: .seconds(30))
        let effects = waiting.itemFailed(down, at: Self.seconds(3), now: Self.now, lengths: { _ in nil })
        #expect(Self.has(effects, "letPictureGo"), "\(effects)")
    }

    /// A new version of a waiting layer is taken at once (it has no boundary to come), its
    /// failures let go.
    @Test func aWaitingLayerTakesANewVersionAtOnce() {
        var machine = Self.machine(Self.layer(["a"], loop: .forever), retry: .seconds(30))
        _ = machine.itemFailed(PlayheadError(code: .timedOut, message: "down"), at: Self.seconds(5), now: Self.now, lengths: { _ in nil })
        let effects = machine.update(to: Self.layer(["b", "c"], loop: .forever), at: Self.seconds(8), now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .playing && machine.pending == nil && machine.layer.assets.count == 2, "\(machine.phase)")
        #expect(machine.timeline.item == 0 && machine.timeline.passStart == Self.seconds(8) && machine.itemFailures.isEmpty)
        #expect(Self.has(effects, "tookVersion") && Self.has(effects, "passBegan"), "\(effects)")
    }

    /// An item whose failure still stands is failed again at once when its pass comes round; that
    /// does not move when the failure lapses (among short items it would never be tried again).
    @Test func aStandingFailureFailedAgainLapsesWhenItWould() {
        var machine = Self.machine(Self.layer(["a", "b"], loop: .forever), retry: .seconds(30))
        let down = PlayheadError(code: .timedOut, message: "a down")
        _ = machine.itemFailed(down, at: Self.seconds(1), now: Self.now, lengths: { _ in nil })
        _ = machine.passEnded(length: Self.seconds(10), status: .played, error: nil, now: Self.now.addingTimeInterval(10), lengths: { _ in nil })
        #expect(machine.timeline.item == 0)
        _ = machine.itemFailed(down, at: Self.seconds(11), now: Self.now.addingTimeInterval(10), lengths: { _ in nil })
        #expect(machine.phase == .playing && machine.timeline.item == 1, "\(machine.phase)")
        #expect(machine.failureLapsed(of: 0) == Self.now.addingTimeInterval(30), "\(String(describing: machine.failureLapsed(of: 0)))")
    }

    @Test func aFailedItemWithAFillerPlaysTheFillerForItsSlotThenGoesOn() {
        let filler = Asset(path: "/clips/filler.mp4")
        var machine = Self.machine(Self.layer(["a", "b"]), policy: .filler(filler, slot: Self.seconds(10)))
        var effects = machine.itemFailed(
            PlayheadError(code: .decodeFailed, message: "x"), at: Self.seconds(1.5), now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .filler(start: Self.seconds(1.5), length: Self.seconds(10), asset: filler), "\(machine.phase)")
        #expect(effects.contains { if case .filler(let asset, _, let length) = $0 { asset === filler && length == Self.seconds(10) } else { false } })
        #expect(machine.passes.last?.filler == true && machine.passes.last?.layerStart == Self.seconds(1.5))
        effects = machine.fillerEnded(now: Self.now, lengths: { _ in nil })
        #expect(Self.has(effects, "stopFiller"))
        #expect(Self.records(effects).map(\.status) == [.filler], "\(Self.records(effects))")
        #expect(machine.phase == .playing && machine.timeline.item == 1 && machine.timeline.passStart == Self.seconds(11.5))
    }

    @Test func aFillersSlotIsTheRangesLengthWhenTheLayerHasOne() {
        let range = TimeRange(start: .zero, duration: Self.seconds(4))
        var machine = Self.machine(Self.layer(["a", "b"], range: range), policy: .filler(nil, slot: Self.seconds(10)))
        _ = machine.itemFailed(PlayheadError(code: .decodeFailed, message: "x"), at: .zero, now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .filler(start: .zero, length: Self.seconds(4), asset: nil))
    }

    @Test func anEditOfTheSamePlaylistGoesOnWithTheNextItem() {
        var machine = Self.machine(Self.layer(["a", "b", "c"], loop: .forever))
        var moved = Self.layer(["a", "b", "c"], loop: .forever)
        moved.rect = PixelRect(x: 2, y: 0, width: 2, height: 2)
        #expect(machine.update(to: moved, at: Self.seconds(0.5), now: Self.now, lengths: { _ in nil }).isEmpty, "taken at the boundary")
        #expect(machine.intended.rect == moved.rect && machine.layer.rect != moved.rect)
        let effects = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(Self.has(effects, "tookVersion"))
        #expect(machine.layer.rect == moved.rect && machine.timeline.item == 1 && machine.timeline.passStart == Self.seconds(1))
        #expect(machine.pending == nil)
    }

    @Test func anotherPlaylistStartsFromItsFirstItemAtTheBoundary() {
        var machine = Self.machine(Self.layer(["a", "b", "c"], loop: .forever))
        _ = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        _ = machine.update(to: Self.layer(["c", "b"], loop: .forever), at: Self.seconds(1.5), now: Self.now, lengths: { _ in nil })
        _ = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(machine.timeline.item == 0 && machine.layer.assets.map(\.source) == ["/clips/c.mp4", "/clips/b.mp4"])
        #expect(machine.timeline.passStart == Self.seconds(2) && machine.timeline.loopsCompleted == 0)
    }

    @Test func aLayerThatEndedTakesItsNewVersionAtOnce() {
        var machine = Self.machine(Self.layer(["a"]))
        _ = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil })
        #expect(machine.phase == .ended)
        let effects = machine.update(to: Self.layer(["b"]), at: Self.seconds(5), now: Self.now, lengths: { _ in nil })
        #expect(Self.has(effects, "tookVersion") && Self.has(effects, "passBegan"))
        #expect(machine.phase == .playing && machine.timeline.passStart == Self.seconds(5) && machine.pending == nil)
        // A failed layer too.
        var failed = Self.machine(Self.layer(["a"]))
        _ = failed.itemFailed(PlayheadError(code: .decodeFailed, message: "x"), at: .zero, now: Self.now, lengths: { _ in nil })
        #expect(failed.phase != .playing)
        _ = failed.update(to: Self.layer(["b"]), at: Self.seconds(2), now: Self.now, lengths: { _ in nil })
        #expect(failed.phase == .playing && failed.itemFailures.isEmpty)
    }

    @Test func aScheduledLayerJoinsWhereItsScheduleIs() {
        // Begun 7.3 s before now: a 2 s and a 3 s item looping: the second item, 0.3 s in... of its second pass: 7.3 = 5 + 2.3.
        let layer = Self.layer(["two", "three"], loop: .forever, scheduled: Self.now.addingTimeInterval(-7.3))
        let machine = Machine(
            id: Self.id, layer: layer, failurePolicy: .passOver, start: .zero, now: Self.now, lengths: { _ in [Self.seconds(2), Self.seconds(3)] })
        #expect(machine.timeline.item == 1 && machine.timeline.loopsCompleted == 1)
        #expect(abs(machine.timeline.passStart.seconds - -0.3) < 0.001, "\(machine.timeline.passStart.seconds)")
        // An edit of a scheduled layer rejoins its schedule at the boundary.
        var running = Self.machine(Self.layer(["a"], loop: .forever))
        _ = running.update(to: layer, at: .zero, now: Self.now, lengths: { _ in nil })
        _ = running.passEnded(
            length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in [Self.seconds(2), Self.seconds(3)] })
        #expect(running.timeline.item == 1 && abs(running.timeline.passStart.seconds - (1 - 0.3)) < 0.001, "\(running.timeline)")
        // A schedule already over: the layer has ended.
        let over = Machine(
            id: Self.id, layer: Self.layer(["two"], scheduled: Self.now.addingTimeInterval(-60)), failurePolicy: .passOver, start: .zero,
            now: Self.now, lengths: { _ in [Self.seconds(2)] })
        #expect(over.phase == .ended)
    }

    @Test func aMoveIsReportedOnlyWhenTheRectangleChanges() {
        var machine = Self.machine(Self.layer(["a"], loop: .forever))
        let unmoved = machine.move(rect: machine.layer.rect, zIndex: 3)
        #expect(!unmoved)
        #expect(machine.layer.zIndex == 3)
        _ = machine.update(to: Self.layer(["b"]), at: .zero, now: Self.now, lengths: { _ in nil })
        let moved = machine.move(rect: PixelRect(x: 4, y: 4, width: 2, height: 2), zIndex: 0)
        #expect(moved)
        #expect(machine.pending?.rect == PixelRect(x: 4, y: 4, width: 2, height: 2), "the version waiting moves too")
    }

    @Test func anEndedPassIsRecordedOnceAndAnEmptyOneNotAtAll() {
        var machine = Self.machine(Self.layer(["a"], loop: .forever))
        #expect(Self.records(machine.endPass(at: .zero)).isEmpty, "a pass that had not begun is no record")
        var other = Self.machine(Self.layer(["a"], loop: .forever))
        #expect(Self.records(other.endPass(at: Self.seconds(1))).count == 1)
        #expect(Self.records(other.endPass(at: Self.seconds(2))).isEmpty, "once")
        _ = machine
    }

    @Test func passesThatEndedAreForgottenButTheLast() {
        var machine = Self.machine(Self.layer(["a"], loop: .forever))
        for _ in 0..<5 { _ = machine.passEnded(length: Self.seconds(1), status: .played, error: nil, now: Self.now, lengths: { _ in nil }) }
        #expect(machine.passes.count == 6)
        machine.forgetPasses(endedBy: Self.seconds(10))
        #expect(machine.passes.count == 1 && machine.passes[0].layerStart == Self.seconds(5))
    }

    /// A pass ends by its range at the range's length, not a tick before, whatever the item is
    /// (one rule for decoded, recorded, sound-only and opening items); a range without a numeric
    /// length (to the end) ends nothing; and past the last frame's end, a pass is over there.
    @Test func aPassEndsAtItsRangeAndAtItsLastFrame() {
        let range = TimeRange(start: Self.seconds(3), duration: Self.seconds(2))
        #expect(Machine.rangeEnd(of: range, at: Self.seconds(1.999)) == nil)
        #expect(Machine.rangeEnd(of: range, at: Self.seconds(2)) == Self.seconds(2))
        #expect(Machine.rangeEnd(of: range, at: Self.seconds(7)) == Self.seconds(2))
        #expect(Machine.rangeEnd(of: nil, at: Self.seconds(1000)) == nil)
        #expect(Machine.rangeEnd(of: TimeRange(start: .zero, duration: .positiveInfinity), at: Self.seconds(1000)) == nil)
        let end = MediaTime(value: 100, timescale: 25)
        #expect(MediaReader.passEnd(lastFrameEnd: end, target: MediaTime(value: 99, timescale: 25)) == nil)
        #expect(MediaReader.passEnd(lastFrameEnd: end, target: end) == end)
        #expect(MediaReader.passEnd(lastFrameEnd: end, target: MediaTime(value: 5, timescale: 1)) == end)
    }
}
