import Testing

@testable import PlayheadMedia

/// A codec this build does not know is named by its container's tag, not FFmpeg's `none`.
@Suite struct CodecNameTests {
    /// `vvc1` as a container stores it: the first character in the lowest byte.
    static func tag(_ text: String) -> UInt32 {
        text.utf8.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    @Test func namesAsAPersonReadsThem() {
        #expect(CodecName.shown(ffmpegName: "h264", tag: Self.tag("avc1")) == "h264")
        #expect(CodecName.shown(ffmpegName: "none", tag: Self.tag("vvc1")) == "unknown (vvc1)")
        #expect(CodecName.shown(ffmpegName: "none", tag: Self.tag("iamf")) == "unknown (iamf)")
        #expect(CodecName.shown(ffmpegName: "none", tag: 0) == "unknown")
        #expect(CodecName.shown(ffmpegName: "none", tag: 0x0000_1B01) == "unknown", "a tag that does not print")
    }
}
