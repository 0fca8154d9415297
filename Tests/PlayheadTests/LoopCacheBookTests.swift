import Testing

@testable import Playhead

/// Which of a layer's items the loop cache records, keeps and gives up, alone: the cases the
/// layer's bugs were fixed for (a recording made part way in, one cut off by an edit, one that gave
/// up, a new version of the layer) without a decoder or a render.
@Suite struct LoopCacheBookTests {
    /// A recording that does what it is told and remembers it.
    final class Tape: LoopCacheRecording {
        var isSealed = false
        var isAbandoned = false
        var coversItemStart: Bool
        /// `seal` refuses (an empty recording, as ``LoopRecording`` refuses one).
        var empty = false

        init(coversItemStart: Bool = true) { self.coversItemStart = coversItemStart }

        func seal(reachedEnd: Bool) {
            guard !isAbandoned, !empty else { return abandon() }
            isSealed = true
        }

        func abandon() {
            isAbandoned = true
            isSealed = false
        }
    }

    typealias Book = LoopCacheBook<Tape>

    @Test func onlyALayerThatRepeatsRecords() {
        let book = Book()
        #expect(book.wants(0, repeats: true))
        #expect(!book.wants(0, repeats: false), "a layer that plays once gains nothing from a recording")
    }

    @Test func aWholePassIsKeptAndDrawnFromThen() {
        var book = Book()
        let tape = Tape()
        book.began(tape, for: 2)
        #expect(book.feeding?.item == 2 && book.recording(of: 2) == nil, "not drawn from while it records")
        let detached = book.passEnded(whole: true, reachedEnd: true)
        #expect(detached === tape, "the reader lets the recorder go")
        #expect(book.feeding == nil)
        #expect(book.recording(of: 2) === tape && tape.isSealed)
        #expect(!book.wants(2, repeats: true), "a kept item is not recorded again")
        #expect(book.wants(3, repeats: true), "the others still are")
    }

    @Test func aDamagedPassIsGivenUpAndTheItemNotTriedAgain() {
        var book = Book()
        let tape = Tape()
        book.began(tape, for: 1)
        #expect(book.passEnded(whole: false, reachedEnd: true) === tape)
        #expect(tape.isAbandoned && !tape.isSealed && book.recording(of: 1) == nil)
        #expect(!book.wants(1, repeats: true), "an item that could not be recorded is decoded on every pass")
    }

    @Test func aRecordingThatCannotBeSealedMakesItsItemUnrecordable() {
        var book = Book()
        let tape = Tape()
        tape.empty = true
        book.began(tape, for: 0)
        _ = book.passEnded(whole: true, reachedEnd: true)
        #expect(book.recording(of: 0) == nil && tape.isAbandoned)
        #expect(!book.wants(0, repeats: true))
    }

    @Test func aPassEndedWithNothingRecordingChangesNothing() {
        var book = Book()
        #expect(book.passEnded(whole: true, reachedEnd: true) == nil)
        #expect(book.kept.isEmpty && book.unrecordable.isEmpty)
    }

    @Test func aRecordingThatGaveUpIsDroppedAtOnceAndNotTriedAgain() {
        var book = Book()
        let tape = Tape()
        book.began(tape, for: 4)
        #expect(book.dropIfGivenUp() == nil, "one still recording goes on")
        #expect(book.feeding?.recording === tape)
        tape.abandon()  // Its budget was spent, or a frame came out of order.
        #expect(book.dropIfGivenUp() === tape, "the decoder stops feeding it")
        #expect(book.feeding == nil && !book.wants(4, repeats: true))
    }

    @Test func aRecordingCutOffWithItsReaderIsRecordedAgainAtTheNextOpen() {
        var book = Book()
        let tape = Tape()
        book.began(tape, for: 0)
        let cut = book.cutOff()
        #expect(cut === tape, "the caller detaches it and gives it up once the reader is its own")
        #expect(!tape.isAbandoned, "a decode still out may write to it: the caller gives it up")
        #expect(book.feeding == nil)
        #expect(book.wants(0, repeats: true), "cut off by an edit or a seek is no verdict on the item")
        #expect(book.cutOff() == nil)
    }

    @Test func aRecordingMadePartWayInIsMadeAgainFromAPassStartOnce() {
        var book = Book()
        let partWay = Tape(coversItemStart: false)
        book.began(partWay, for: 0)
        _ = book.passEnded(whole: true, reachedEnd: true)
        #expect(book.recording(of: 0) === partWay)
        book.passBegins(0)
        #expect(partWay.isAbandoned && book.recording(of: 0) == nil, "given up: this pass records it whole")
        #expect(book.wants(0, repeats: true))
        // Recorded again — and part way in again (a seek): kept this time, not recorded a third time.
        let again = Tape(coversItemStart: false)
        book.began(again, for: 0)
        _ = book.passEnded(whole: true, reachedEnd: true)
        book.passBegins(0)
        #expect(book.recording(of: 0) === again && !again.isAbandoned)
    }

    @Test func aRecordingFromTheStartIsKeptAtEveryPass() {
        var book = Book()
        let tape = Tape()
        book.began(tape, for: 0)
        _ = book.passEnded(whole: true, reachedEnd: true)
        for _ in 0..<3 { book.passBegins(0) }
        #expect(book.recording(of: 0) === tape && !tape.isAbandoned)
        #expect(book.rerecorded.isEmpty)
    }

    @Test func aNewVersionForgetsEveryRecordingAndEveryVerdict() {
        var book = Book()
        let kept = Tape()
        book.began(kept, for: 0)
        _ = book.passEnded(whole: true, reachedEnd: true)
        let damaged = Tape()
        book.began(damaged, for: 1)
        _ = book.passEnded(whole: false, reachedEnd: true)
        let partWay = Tape(coversItemStart: false)
        book.began(partWay, for: 2)
        _ = book.passEnded(whole: true, reachedEnd: true)
        book.passBegins(2)
        let feeding = Tape()
        book.began(feeding, for: 3)
        #expect(book.forget() === feeding, "the open reader lets its recorder go")
        #expect(kept.isAbandoned && feeding.isAbandoned, "their pictures go back to the budget")
        #expect(book.kept.isEmpty && book.feeding == nil && book.unrecordable.isEmpty && book.rerecorded.isEmpty)
        for item in 0..<4 { #expect(book.wants(item, repeats: true), "item \(item) is tried again") }
    }

    @Test func aSecondRecordingGivesUpTheFirst() {
        var book = Book()
        let first = Tape()
        let second = Tape()
        book.began(first, for: 0)
        book.began(second, for: 1)
        #expect(first.isAbandoned, "its budget is given back")
        #expect(book.feeding?.item == 1 && book.feeding?.recording === second)
    }

    @Test func anItemTooLongForTheRoomLeftIsNotBegun() {
        #expect(Book.fits(frames: 100, pictureBytes: 10, room: 1000))
        #expect(!Book.fits(frames: 101, pictureBytes: 10, room: 1000))
        #expect(!Book.fits(frames: 1, pictureBytes: 10, room: -5), "a budget spent past its limit has no room")
        #expect(Book.fits(frames: .nan, pictureBytes: 10, room: 0), "an unknown length is tried (the recording gives up if it fills)")
        #expect(!Book.fits(frames: .infinity, pictureBytes: 10, room: 1 << 40))
        var book = Book()
        book.refuse(5)
        #expect(!book.wants(5, repeats: true))
    }
}
