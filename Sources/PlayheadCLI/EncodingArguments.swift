import ArgumentParser
import Playhead

/// How a composition is encoded and how much of its layers' pictures it may keep: the options
/// `compose` and `playout` share, checked by one rule (``X264Settings``'s).
struct EncodingArguments: ParsableArguments {
    @Option(help: "x264 preset of the H.264 output (ultrafast … placebo).")
    var preset = "veryfast"

    @Option(parsing: .unconditional, help: "x264 constant rate factor of the H.264 output (0 … 51).")
    var crf = 23

    @Option(
        name: .customLong("loop-cache"), parsing: .unconditional,
        help: "MiB that layers playing their items more than once may keep decoded pictures in, so that later passes are not decoded again (0: none)."
    )
    var loopCache = 1024

    func validate() throws {
        if !(0...65_536).contains(loopCache) { throw ValidationError("--loop-cache must be 0 … 65536 MiB") }
        if !X264Settings.presets.contains(preset) { throw ValidationError("--preset must be one of \(X264Settings.presets.joined(separator: ", "))") }
        if !X264Settings.crfRange.contains(crf) { throw ValidationError("--crf must be 0 … 51") }
    }

    /// The loop cache's budget in bytes.
    var loopCacheBytes: Int { loopCache << 20 }
}
