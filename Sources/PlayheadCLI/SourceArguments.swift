import ArgumentParser
import Playhead

/// How sources are opened, shared by every command.
struct SourceArguments: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Give up on a source that does not open, or sends nothing, for SECONDS (io.timedOut).", valueName: "seconds"))
    var timeout: Double = 15

    @Option(
        name: .customLong("audio-track"), parsing: .unconditional,
        help: ArgumentHelp(
            "The sound that plays when a file holds several: a stream index as probe prints it, lang:CODE (lang:fra), default or none (demux.trackNotFound when the file has no such track).",
            valueName: "spec"),
        transform: SourceArguments.parseTrack)
    var audioTrack: TrackChoice = .default

    static func parseTrack(_ text: String) throws -> TrackChoice {
        do throws(PlayheadError) { return try TrackChoice(parsing: text) } catch { throw ValidationError(error.message) }
    }

    func validate() throws {
        if !(timeout > 0 && timeout <= 86_400) { throw ValidationError("--timeout must be more than 0 and at most 86400 seconds") }
    }

    var assetOptions: AssetOptions {
        let limit = Duration.milliseconds(Int64((timeout * 1000).rounded()))
        return AssetOptions(openTimeout: limit, stallTimeout: limit, selection: MediaSelection(audio: audioTrack))
    }
}
