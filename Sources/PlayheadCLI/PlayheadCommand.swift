import ArgumentParser
import Foundation
import Glibc
import Playhead

/// `playhead`: look inside media files and play them into frame dumps.
struct PlayheadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playhead",
        abstract: "A headless media engine: probe files, play them into frame dumps, take thumbnails.",
        subcommands: [
            ProbeCommand.self, PlayCommand.self, ThumbnailsCommand.self, SubtitlesCommand.self, ComposeCommand.self, PlayoutCommand.self,
        ]
    )
}

@main
enum Main {
    /// Parses and runs, with the exit statuses the commands promise: 0 success, 1 some file (or
    /// the output) failed, 2 usage error, 128 + N after signal N. Everything printed goes through
    /// ``Console``: a closed or full standard output is an exit status of 1, never a crash.
    static func main() async {
        Console.guardStandardDescriptors()
        SignalWatcher.shared.install()
        // One malloc arena per core (at least two): a long loop's resident memory stays flat.
        ProcessTuning.limitMallocArenas(to: max(2, ProcessInfo.processInfo.activeProcessorCount))
        var status: Int32 = 0
        var parsed: ParsableCommand.Type?
        do {
            var command = try PlayheadCommand.parseAsRoot()
            parsed = type(of: command)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as CommandExit {
            status = exit.status
        } catch let usage as UsageFailure {
            Console.err("playhead: \(usage.description)\n")
            status = 2
        } catch let failure as CommandFailure {
            Console.err("playhead: \(failure.description)\n")
            status = 1
        } catch {
            let code = PlayheadCommand.exitCode(for: error)
            let message = PlayheadCommand.errorMessage(for: error, in: parsed)
            if code == .success {
                // --help, --version: on standard output.
                if !message.isEmpty { Console.out(message + "\n") }
            } else {
                if !message.isEmpty { Console.err(message + "\n") }
                status = code == .validationFailure ? 2 : code.rawValue
            }
        }
        // What standard output lost is said on standard error, after a signal too (its status wins).
        let lostOutput = status != 2 ? Console.outputFailure : nil
        if let lostOutput { Console.err("playhead: could not write to standard output: \(String(cString: strerror(lostOutput)))\n") }
        if let signal = SignalWatcher.shared.exitStatus {
            status = signal
        } else if lostOutput != nil {
            status = 1
        } else if Console.errorFailure != nil, status == 0 {
            status = 1
        }
        exit(status)
    }
}

extension PlayheadCommand {
    /// What to print for `error`: ArgumentParser's own message — with the usage of the command
    /// that was running when a usage error came from its run (a layout file that does not parse),
    /// not the top level's.
    /// - Parameters:
    ///   - error: the error thrown.
    ///   - command: the command that was parsed, if parsing got that far.
    /// - Returns: the message, possibly empty.
    static func errorMessage(for error: Error, in command: ParsableCommand.Type?) -> String {
        guard let command, command != PlayheadCommand.self, exitCode(for: error) == .validationFailure else { return fullMessage(for: error) }
        let name = command.configuration.commandName ?? "\(command)"
        return "Error: \(message(for: error))\nUsage: \(usageString(for: command))\n  See 'playhead \(name) --help' for more information."
    }
}
