/// What x264 takes, said once for every H.264 encode (an MP4 export, a channel): its presets
/// and its constant rate factor's range.
public enum X264Settings {
    /// x264's presets, fastest first.
    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    /// The constant rate factors x264 takes (8-bit): lower is better and larger.
    public static let crfRange = 0...51

    /// Checks a preset and a constant rate factor.
    /// - Parameters:
    ///   - preset: one of ``presets``.
    ///   - crf: within ``crfRange``.
    ///   - file: what the error names.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` saying what x264 takes.
    public static func check(preset: String, crf: Int, file: String?) throws(PlayheadError) {
        guard presets.contains(preset), crfRange.contains(crf) else {
            throw PlayheadError(
                code: .invalidArgument,
                message: "x264 takes a preset of \(presets.joined(separator: ", ")) and a crf of \(crfRange.lowerBound) … \(crfRange.upperBound)",
                file: file)
        }
    }
}
