import ArgumentParser
import Glibc
import Playhead

/// What `--subtitles` asks for: subtitles drawn in, or none.
struct SubtitleOption: Sendable {
    var burnIn: SubtitleBurnIn?
}

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

    enum VariantRule: String, ExpressibleByArgument, CaseIterable { case highest, lowest }

    @Option(help: "Which variant of an HLS master playlist plays: highest (within --max-bitrate and --max-resolution) or lowest.")
    var variant: VariantRule = .highest

    @Option(
        name: .customLong("max-bitrate"), parsing: .unconditional,
        help: ArgumentHelp(
            "HLS: play the highest variant declaring at most N bits per second (800000, 800k, 2.5M); the lowest if none does.", valueName: "n"),
        transform: SourceArguments.parseBitRate)
    var maxBitRate: Int?

    @Option(
        name: .customLong("max-resolution"), parsing: .unconditional,
        help: ArgumentHelp("HLS: play the highest variant whose picture fits in WxH; the lowest if none does.", valueName: "WxH"),
        transform: PlayCommand.parseSize)
    var maxResolution: PixelSize?

    static func parseBitRate(_ text: String) throws -> Int {
        let lower = text.lowercased()
        let scale: Double = lower.hasSuffix("k") ? 1e3 : lower.hasSuffix("m") ? 1e6 : 1
        let digits = scale == 1 ? lower : String(lower.dropLast())
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let number = Double(digits), number.isFinite,
            number * scale >= 1, number * scale <= 1e12
        else {
            throw ValidationError("a bit rate is bits per second, 1 … 10^12 (800000, 800k, 2.5M), not \(text)")
        }
        return Int((number * scale).rounded())
    }

    /// `--subtitles`: `none`, a track of the file (an index, `lang:CODE`, `default`), or a
    /// subtitle file (a path that exists).
    static func parseSubtitles(_ text: String) throws -> SubtitleOption {
        if text == "none" || text == "off" { return SubtitleOption(burnIn: nil) }
        var info = stat()
        if stat(text, &info) == 0 { return SubtitleOption(burnIn: .file(text)) }
        do throws(PlayheadError) {
            return SubtitleOption(burnIn: .track(try TrackChoice(parsing: text)))
        } catch {
            throw ValidationError(
                "--subtitles takes a track (an index as probe prints it, lang:CODE, default), a subtitle file that exists, or none: not \(text)")
        }
    }

    static func parseTrack(_ text: String) throws -> TrackChoice {
        do throws(PlayheadError) { return try TrackChoice(parsing: text) } catch { throw ValidationError(error.message) }
    }

    func validate() throws {
        if !(timeout > 0 && timeout <= 86_400) { throw ValidationError("--timeout must be more than 0 and at most 86400 seconds") }
    }

    var assetOptions: AssetOptions {
        let limit = Duration.milliseconds(Int64((timeout * 1000).rounded()))
        return AssetOptions(openTimeout: limit, stallTimeout: limit, selection: selection)
    }

    /// What plays of each source: `--audio-track`, and for an HLS master `--variant`, `--max-bitrate`, `--max-resolution`.
    var selection: MediaSelection {
        MediaSelection(
            audio: audioTrack, variant: VariantPreference(lowest: variant == .lowest, maximumBitRate: maxBitRate, maximumSize: maxResolution))
    }
}
