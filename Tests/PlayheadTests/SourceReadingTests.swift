import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The rule of ``SourceReading`` alone (no source opened): a source read once is held by the
/// first asset of it to open it, and opened by one open at a time (a second one waits, then takes
/// what the first left or finds it read); one that only turned out unable to seek (an HLS playlist
/// from a server that takes no ranges, a live stream) stops only the asset that read it.
@Suite struct SourceReadingTests {
    static let described = AssetDescription(
        formatName: "mpegts", formatLongName: nil, duration: .zero, startTime: .zero, bitRate: nil, tracks: [], metadata: [:])
    static let late = PlayheadError(code: .timedOut, message: "did not open within the open timeout", file: "fifo")

    @Test func aSourceReadOnceIsHeldByTheFirstAssetToOpenIt() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "-") == .open)
        let other = #expect(throws: PlayheadError.self) { try reading.claim(token: 2, readOnce: true, file: "-") }
        #expect(other?.code == .invalidArgument && other?.file == "-", "\(String(describing: other))")
        // Once open it cannot be opened again, by its holder either.
        reading.opened(token: 1, canSeek: false, found: { Self.described }, handsBack: false)
        let again = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "-") }
        #expect(again?.code == .seekFailed, "\(String(describing: again))")
        #expect(throws: PlayheadError.self) { try reading.claim(token: 2, readOnce: true, file: "-") }
    }

    @Test func aFailedOpenLetsAnotherAssetTry() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .open)
        reading.openFailed(token: 1, error: Self.late)
        #expect(try reading.claim(token: 2, readOnce: true, file: "fifo") == .open)
        #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "fifo") }
    }

    /// A FIFO's probe and an item's preparation open it at once: before, both opened it and the
    /// writer's bytes were split between two readers.
    @Test func aSecondOpenWaitsForTheOneUnderWayAndThenFindsItRead() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .open)
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .wait(1))
        // A session's open: once it has opened, the waiter finds the source read.
        reading.opened(token: 1, canSeek: false, found: { Self.described }, handsBack: false)
        let read = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "fifo") }
        #expect(read?.code == .seekFailed, "\(String(describing: read))")
        // The probe that waited answers from what that open found.
        #expect(reading.found(token: 1) == Self.described)
    }

    /// A FIFO without a writer: its waiters time out with the open they waited for, not one after
    /// another (a channel's picture, sound and probe each waiting the open timeout in turn).
    @Test func theOpensWaitingForOneThatFailsFailWithIt() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .open)
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .wait(1))
        reading.openFailed(token: 1, error: Self.late)
        let shared = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "fifo", waitedFor: 1) }
        #expect(shared == Self.late, "\(String(describing: shared))")
        // A later open (one that did not wait for it) tries again.
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .open)
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .wait(2))
    }

    /// An open cancelled by its opener (a probe's cancelLoading) leaves the waiter to open.
    @Test func anOpenCancelledLetsTheWaiterOpen() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .open)
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo") == .wait(1))
        reading.openFailed(token: 1, error: .cancelled(file: "fifo"))
        #expect(try reading.claim(token: 1, readOnce: true, file: "fifo", waitedFor: 1) == .open)
    }

    /// An open that failed after reading (a probe cancelled mid-analysis, a stream that turned
    /// out not to be media): another open would read from where it stopped.
    @Test func anOpenThatFailedAfterReadingUsesTheSourceUp() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "-") == .open)
        #expect(try reading.claim(token: 1, readOnce: true, file: "-") == .wait(1))
        reading.openFailed(token: 1, error: .cancelled(file: "-"), readBytes: true)
        let waiter = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "-", waitedFor: 1) }
        #expect(waiter?.code == .seekFailed, "\(String(describing: waiter))")
        #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "-") }
        // Still held: another selection of it cannot read it either.
        let other = #expect(throws: PlayheadError.self) { try reading.claim(token: 2, readOnce: true, file: "-") }
        #expect(other?.code == .invalidArgument, "\(String(describing: other))")
    }

    /// The probe hands its fresh demuxer back for the first user: the waiter waits until it has
    /// (not only until the open returned), then takes it.
    @Test func aProbesOpenIsUnderWayUntilItHandsItsDemuxerBack() throws {
        let reading = SourceReading()
        #expect(try reading.claim(token: 1, readOnce: true, file: "-") == .open)
        reading.opened(token: 1, canSeek: false, found: { Self.described }, handsBack: true)
        #expect(try reading.claim(token: 1, readOnce: true, file: "-") == .wait(1))
        reading.handedBack(token: 1)
        // Its demuxer is the kept one (the asset takes it before claiming); nothing opens again.
        #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "-") }
    }

    @Test func aWaitEndsOnTheWaitersFlag() throws {
        let reading = SourceReading()
        let flag = InterruptFlag()
        try reading.waitForTheOpenUnderWay(interrupt: flag, file: "fifo")
        flag.raise()
        let cancelled = #expect(throws: PlayheadError.self) { try reading.waitForTheOpenUnderWay(interrupt: flag, file: "fifo") }
        #expect(cancelled?.code == .cancelled && cancelled?.file == "fifo", "\(String(describing: cancelled))")
        let late = #expect(throws: PlayheadError.self) {
            try reading.waitForTheOpenUnderWay(interrupt: InterruptFlag(timeout: .zero), file: "fifo")
        }
        #expect(late?.code == .timedOut, "\(String(describing: late))")
    }

    @Test func aSourceThatOnlyCannotSeekStopsOnlyTheAssetThatReadIt() throws {
        let reading = SourceReading()
        let master = "https://example.com/master.m3u8"
        #expect(try reading.claim(token: 1, readOnce: false, file: master) == .open)
        // Not read once: two opens at once are two requests to the server.
        #expect(try reading.claim(token: 1, readOnce: false, file: master) == .open)
        reading.opened(token: 1, canSeek: false, found: { Self.described }, handsBack: false)
        // Another selection (another variant's playlist) asks the server again.
        #expect(try reading.claim(token: 2, readOnce: false, file: master) == .open)
        reading.opened(token: 2, canSeek: false, found: { Self.described }, handsBack: false)
        let used = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: false, file: master) }
        #expect(used?.code == .seekFailed, "\(String(describing: used))")
        // A gone asset's marks go with it.
        reading.discard(token: 1)
        #expect(reading.found(token: 1) == nil)
        #expect(try reading.claim(token: 1, readOnce: false, file: master) == .open)
    }
}
