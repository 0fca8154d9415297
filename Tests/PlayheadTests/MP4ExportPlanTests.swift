import Testing

@testable import Playhead
@testable import PlayheadMedia

/// When an MP4 fed from two threads writes its header and completes, in every order the two
/// sides can take.
@Suite struct MP4ExportPlanTests {
    @Test func theHeaderWaitsForTheSoundThenTheFileWaitsForBothToFinish() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.videoBegan() == .none, "the sound may still come")
        #expect(try plan.soundBegan() == .writeHeader)
        #expect(try plan.soundBegan() == .none, "a following item's sound in the same format")
        #expect(plan.videoEnded() == .none, "the sound is still being written")
        #expect(plan.soundEnded() == .complete)
        #expect(plan.ended)
        let afterwards = (plan.soundEnded(), plan.videoEnded())
        #expect(afterwards == (.none, .none))
    }

    @Test func theSoundMayBeginFirst() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.soundBegan() == .none)
        #expect(try plan.videoBegan() == .writeHeader)
        #expect(plan.soundEnded() == .none)
        #expect(plan.videoEnded() == .complete)
    }

    @Test func aSourceWithoutSoundWritesThePictureAloneWhenTheSoundFinishes() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.videoBegan() == .none)
        #expect(plan.soundEnded() == .writeHeader, "finished without beginning: no sound")
        #expect(plan.sound == .absent)
        #expect(plan.videoEnded() == .complete)
    }

    @Test func aSourceWithoutPictureWritesTheSoundAlone() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.soundBegan() == .none)
        #expect(plan.videoEnded() == .writeHeader)
        #expect(plan.soundEnded() == .complete)
    }

    @Test func theLastFinishWritesTheHeaderAndCompletesAtOnce() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.videoBegan() == .none)
        #expect(plan.videoEnded() == .none)
        #expect(plan.soundEnded() == .writeHeaderAndComplete)
    }

    @Test func nothingBegunCompletesWithoutAHeader() {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(plan.videoEnded() == .none)
        #expect(plan.soundEnded() == .complete)
        #expect(!plan.headerWritten)
    }

    @Test func holdingTooMuchLeavesOutTheSideNotBegunAndRefusesItLater() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.videoBegan() == .none)
        #expect(plan.holdingTooMuch() == .writeHeader)
        #expect(plan.holdingTooMuch() == .none)
        let refused1 = Self.refusal { () throws(MP4ExportPlan.Refusal) in _ = try plan.soundBegan() }
        #expect(refused1 == .tooLate)
        #expect(plan.videoEnded() == .none)
        #expect(plan.soundEnded() == .complete, "the refused sound still finishes its side")
    }

    @Test func withoutASeparateSoundThePictureAloneDecides() throws {
        var plan = MP4ExportPlan(separateSound: false)
        #expect(try plan.videoBegan() == .writeHeader)
        let refused2 = Self.refusal { () throws(MP4ExportPlan.Refusal) in _ = try plan.soundBegan() }
        #expect(refused2 == .tooLate)
        let refused3 = Self.refusal { () throws(MP4ExportPlan.Refusal) in _ = try plan.videoBegan() }
        #expect(refused3 == .alreadyBegun)
        #expect(plan.videoEnded() == .complete)

        var prepared = MP4ExportPlan(separateSound: false)
        try prepared.soundPrepared()
        #expect(try prepared.videoBegan() == .writeHeader)
        #expect(prepared.sound == .began)
        let refused4 = Self.refusal { () throws(MP4ExportPlan.Refusal) in try prepared.soundPrepared() }
        #expect(refused4 == .tooLate)
        #expect(prepared.videoEnded() == .complete)
    }

    @Test func givingUpHappensOnceAndEndsEverything() throws {
        var plan = MP4ExportPlan(separateSound: true)
        #expect(try plan.videoBegan() == .none)
        let first = plan.abort(), second = plan.abort()
        #expect(first && !second)
        let refused5 = Self.refusal { () throws(MP4ExportPlan.Refusal) in _ = try plan.soundBegan() }
        #expect(refused5 == .ended)
        let afterwards = (plan.videoEnded(), plan.soundEnded())
        #expect(afterwards == (.none, .none))
    }

    /// What a step refused with (nil: it was taken).
    static func refusal(_ step: () throws(MP4ExportPlan.Refusal) -> Void) -> MP4ExportPlan.Refusal? {
        do throws(MP4ExportPlan.Refusal) {
            try step()
            return nil
        } catch {
            return error
        }
    }
}
