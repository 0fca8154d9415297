import Testing

@testable import Playhead
@testable import PlayheadMedia

/// The rule of ``SourceReading`` alone (no source opened): a source read once is held by the
/// first asset of it to open it; one that only turned out unable to seek (an HLS playlist from a
/// server that takes no ranges, a live stream) stops only the asset that read it.
@Suite struct SourceReadingTests {
    @Test func aSourceReadOnceIsHeldByTheFirstAssetToOpenIt() throws {
        let reading = SourceReading()
        try reading.claim(token: 1, readOnce: true, file: "-")
        let other = #expect(throws: PlayheadError.self) { try reading.claim(token: 2, readOnce: true, file: "-") }
        #expect(other?.code == .invalidArgument && other?.file == "-", "\(String(describing: other))")
        // Its holder may open it (once): then it is used up for it too.
        try reading.claim(token: 1, readOnce: true, file: "-")
        reading.openedUnseekable(token: 1)
        let again = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "-") }
        #expect(again?.code == .seekFailed, "\(String(describing: again))")
        #expect(throws: PlayheadError.self) { try reading.claim(token: 2, readOnce: true, file: "-") }
    }

    @Test func aFailedOpenLetsAnotherAssetTry() throws {
        let reading = SourceReading()
        try reading.claim(token: 1, readOnce: true, file: "fifo")
        reading.openFailed(token: 1)
        try reading.claim(token: 2, readOnce: true, file: "fifo")
        #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: true, file: "fifo") }
    }

    @Test func aSourceThatOnlyCannotSeekStopsOnlyTheAssetThatReadIt() throws {
        let reading = SourceReading()
        try reading.claim(token: 1, readOnce: false, file: "https://example.com/master.m3u8")
        reading.openedUnseekable(token: 1)
        // Another selection (another variant's playlist) asks the server again.
        try reading.claim(token: 2, readOnce: false, file: "https://example.com/master.m3u8")
        reading.openedUnseekable(token: 2)
        let used = #expect(throws: PlayheadError.self) { try reading.claim(token: 1, readOnce: false, file: "https://example.com/master.m3u8") }
        #expect(used?.code == .seekFailed, "\(String(describing: used))")
    }
}
