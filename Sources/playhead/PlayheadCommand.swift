import ArgumentParser
import Foundation

/// `playhead`: look inside media files and play them into frame dumps.
struct PlayheadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playhead",
        abstract: "A headless media engine: probe files, play them into frame dumps, take thumbnails.",
        subcommands: [ProbeCommand.self, PlayCommand.self, ThumbnailsCommand.self]
    )
}

@main
enum Main {
    /// Parses and runs, with the exit codes the commands promise: 0 success, 1 some file failed,
    /// 2 usage error.
    static func main() async {
        do {
            var command = try PlayheadCommand.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = PlayheadCommand.exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((PlayheadCommand.fullMessage(for: error) + "\n").utf8))
                exit(2)
            }
            PlayheadCommand.exit(withError: error)
        }
    }
}

/// Exit status 1: the command ran but some file failed (every file is still reported).
struct SomeFilesFailed: Error, CustomStringConvertible {
    var description: String { "" }
}

extension ExitCode {
    static let someFilesFailed = ExitCode(1)
}
