import ArgumentParser
import Foundation
import Glibc

/// Command-line sources whose bytes are not UTF-8. The argument parser hands out Strings, in which
/// such a name arrives with U+FFFD in place of its bytes (and two different names can arrive as
/// the same String). Each is replaced by a `file:` URL of its exact bytes, percent-encoded, which
/// `Asset(source:)` opens byte for byte and which summaries print without loss.
enum RawArguments {
    /// `sources` with every entry that stands for a non-UTF-8 argument replaced by its `file:`
    /// URL. Matched in order against the process's own arguments, so repeated names pair up.
    static func restoring(_ sources: [String]) -> [String] {
        var raw = nonUTF8Arguments()[...]
        guard !raw.isEmpty else { return sources }
        return sources.map { source in
            guard source.contains("\u{FFFD}"),
                let match = raw.firstIndex(where: { String(decoding: $0, as: UTF8.self) == source })
            else { return source }
            let bytes = raw[match]
            raw.remove(at: match)
            return fileURL(of: bytes)
        }
    }

    /// A `file:` URL naming `path` exactly (relative paths made absolute against the working
    /// folder): every byte outside the unreserved set and `/` is percent-encoded.
    static func fileURL(of path: [UInt8]) -> String {
        var absolute = path
        if path.first != UInt8(ascii: "/") {
            // The working folder's own bytes (its name need not be UTF-8 either).
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let folder: [UInt8] =
                getcwd(&buffer, buffer.count) == nil
                ? Array(FileManager.default.currentDirectoryPath.utf8)
                : buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            absolute = folder + (folder.last == UInt8(ascii: "/") ? [] : [UInt8(ascii: "/")]) + path
        }
        var text = "file://"
        for byte in absolute {
            if isUnreserved(byte) {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return text
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"): return true
        default: return false
        }
    }

    /// The process's arguments (after the program's name) that are not valid UTF-8, as bytes.
    private static func nonUTF8Arguments() -> [[UInt8]] {
        var result: [[UInt8]] = []
        guard CommandLine.argc > 1 else { return result }
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
            if String(validating: bytes, as: UTF8.self) == nil { result.append(bytes) }
        }
        return result
    }
}

/// Standard input is one stream: read by two readers, each gets part of it and would report its
/// part as the whole. Every name that reads it counts.
enum StandardInput {
    static let names: Set<String> = ["-", "pipe:", "pipe:0", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "fd:", "fd:0"]

    /// Whether reading `source` reads standard input: its names (`-`, `/dev/stdin`, …); any
    /// `pipe:` URL that FFmpeg's pipe protocol opens as descriptor 0 (`pipe:00`, `pipe:0 `,
    /// `pipe:x`: what is not a whole number is 0); and, when standard input is a stream (a pipe,
    /// a FIFO, a device), any path — `file:` URLs too — that is it (a link to `/dev/stdin`).
    static func reads(_ source: String) -> Bool {
        if names.contains(source) { return true }
        if source.hasPrefix("pipe:") { return pipeDescriptor(String(source.dropFirst(5))) == 0 }
        let path = source.hasPrefix("file:") ? String(source.dropFirst(5)) : source
        var input = stat(), named = stat()
        guard fstat(STDIN_FILENO, &input) == 0, input.st_mode & S_IFMT != S_IFREG, stat(path, &named) == 0 else { return false }
        return named.st_dev == input.st_dev && named.st_ino == input.st_ino
    }

    /// The descriptor FFmpeg's pipe protocol opens for what follows `pipe:`: a whole number as
    /// `strtol` reads it (white space, a sign, digits, nothing after), else 0.
    static func pipeDescriptor(_ rest: String) -> Int {
        let number = rest.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0B}" || $0 == "\u{0C}" }
        let digits = number.first == "+" || number.first == "-" ? number.dropFirst() : number[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(number) else { return 0 }
        return value
    }

    /// Refuses (a usage error) a run that would read standard input more than once: `sources`
    /// and, when it is read from there, the file the run reads them from (a manifest, a layout).
    static func checkReadOnce(_ sources: [String], alsoReading file: String? = nil) throws {
        let readers = sources.filter(reads).count + (file.map { reads($0) ? 1 : 0 } ?? 0)
        guard readers <= 1 else {
            throw ValidationError("standard input is named \(readers) times (-, /dev/stdin, pipe:0 …): a stream can be read only once")
        }
    }
}
