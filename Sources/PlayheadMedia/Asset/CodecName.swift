/// How a codec is named to a person (in a track, in an error): FFmpeg's short name, or the
/// container's four-character tag when the build does not know the codec.
enum CodecName {
    /// - Parameters:
    ///   - ffmpegName: FFmpeg's name for the codec's id (`none` for one it does not know).
    ///   - tag: the container's tag for the codec (`vvc1` as a little-endian four-character code), 0 if none.
    /// - Returns: `ffmpegName`, or `unknown (vvc1)` for an unknown codec with a printable tag, `unknown` without one.
    static func shown(ffmpegName: String, tag: UInt32) -> String {
        guard ffmpegName == "none" else { return ffmpegName }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        guard tag != 0, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "unknown" }
        return "unknown (\(String(decoding: bytes, as: UTF8.self)))"
    }
}
