import ArgumentParser
import Playhead

/// How sources are opened, shared by every command.
struct SourceArguments: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Give up on a source that does not open, or sends nothing, for SECONDS (io.timedOut).", valueName: "seconds"))
    var timeout: Double = 15

    func validate() throws {
        if !(timeout > 0 && timeout <= 86_400) { throw ValidationError("--timeout must be more than 0 and at most 86400 seconds") }
    }

    var assetOptions: AssetOptions {
        let limit = Duration.milliseconds(Int64((timeout * 1000).rounded()))
        return AssetOptions(openTimeout: limit, stallTimeout: limit)
    }
}
