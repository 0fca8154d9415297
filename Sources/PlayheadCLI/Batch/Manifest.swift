import Foundation
import Glibc
import Playhead

/// One source of a manifest: a line with a path or URL, or a JSON object with `source` and
/// per-file options.
struct ManifestEntry: Sendable {
    var source: String
    /// The line's number in the manifest (from 1).
    var line: Int
    /// Per-file thumbnail times (`"at": [1, 2.5]`, exact decimals), overriding the command's.
    var at: [MediaTime]?
    /// Why the line could not be read (the entry is then reported failed, with the line as its
    /// source).
    var problem: String?
}

/// Reads a manifest (a file, or `-` for standard input) a block at a time. Blank lines and `#`
/// comments are skipped; a line starting with `{` is JSON. It keeps one block and the current
/// line: memory does not grow with the manifest.
///
/// `@unchecked Sendable`: a reader is used by one worker job at a time — the batch loop awaits
/// each chunk it reads before it asks for the next — so its buffers are never touched at once.
final class ManifestReader: @unchecked Sendable {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    let path: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var lineNumber = 0
    /// A regular file, which can be read twice (once to count its sources for progress); a pipe,
    /// a FIFO or standard input is read once.
    let isRegularFile: Bool
    /// The longest line taken (a longer one is reported as a problem and skipped).
    static let maximumLineBytes = 64 * 1024

    init(path: String) throws {
        self.path = path
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
        } else {
            // Non-blocking: opening a FIFO with no writer yet must not block (a signal could not
            // end it); reads wait in `poll`, which a signal ends.
            descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { throw CommandFailure(description: "cannot read the manifest \(path): \(String(cString: strerror(errno)))") }
            ownsDescriptor = true
        }
        var info = stat()
        isRegularFile = fstat(descriptor, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// The next entry, or nil at the end of the manifest.
    func next() throws -> ManifestEntry? {
        while let read = try nextLine() {
            lineNumber += 1
            guard case .line(var line) = read else {
                // Fails alone: a record says why; the shard goes on with the next line.
                return ManifestEntry(
                    source: "line \(lineNumber)", line: lineNumber,
                    problem: "line \(lineNumber) of \(path) is longer than \(Self.maximumLineBytes) bytes: skipped")
            }
            // A byte-order mark that an editor put before the first line is not part of the path.
            if lineNumber == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
            guard let text = String(validating: line, as: UTF8.self) else {
                // A path whose name is not UTF-8: named by a `file:` URL of its exact bytes.
                let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
                let trimmed = line.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
                if trimmed.first == UInt8(ascii: "#") { continue }
                return ManifestEntry(source: RawArguments.fileURL(of: Array(trimmed)), line: lineNumber)
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard trimmed.hasPrefix("{") else { return ManifestEntry(source: trimmed, line: lineNumber) }
            return Self.parseObject(trimmed, line: lineNumber, path: path)
        }
        return nil
    }

    private static func parseObject(_ text: String, line: Int, path: String) -> ManifestEntry {
        struct Object: Decodable {
            var source: String
            /// Decimal keeps the digits written (a Double would round 6.4731334).
            var at: [Decimal]?
        }
        guard let object = try? JSONDecoder().decode(Object.self, from: Data(text.utf8)), !object.source.isEmpty else {
            return ManifestEntry(
                source: "line \(line)", line: line,
                problem: "line \(line) of \(path) is not a JSON object with a \"source\" string (and optional \"at\" seconds)")
        }
        let times = object.at.map { $0.map { MediaTime(decimal: NSDecimalNumber(decimal: $0).stringValue) } }
        if let times, times.isEmpty || times.count > Limits.timesPerFile || !times.allSatisfy({ $0 != nil }) {
            return ManifestEntry(
                source: object.source, line: line,
                problem: "line \(line) of \(path): \"at\" must hold 1 … \(Limits.timesPerFile) finite seconds")
        }
        return ManifestEntry(source: object.source, line: line, at: times?.compactMap { $0 })
    }

    enum Line {
        case line([UInt8])
        /// A line longer than `maximumLineBytes`, read past and dropped.
        case tooLong
    }

    /// The next line's bytes without its newline; a line longer than `maximumLineBytes` is read
    /// past (never held whole: memory stays bounded whatever its length) and told as too long.
    private func nextLine() throws -> Line? {
        var overlong = false
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return overlong || line.count > Self.maximumLineBytes ? .tooLong : .line(line)
            }
            if atEnd {
                guard start < buffer.count || overlong else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return overlong || line.count > Self.maximumLineBytes ? .tooLong : .line(line)
            }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            if buffer.count > Self.maximumLineBytes {
                // Too long already: drop what is held and read on to its newline.
                overlong = true
                buffer.removeAll(keepingCapacity: true)
            }
            // A pipe or terminal may stay silent: wait in short steps, so that a signal ends the
            // reading (the run then stops taking sources) instead of leaving it blocked.
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            if ready == 0 || (ready < 0 && errno == EINTR) {
                if SignalWatcher.shared.received != nil {
                    // Stopped: a line not yet whole is not taken.
                    atEnd = true
                    buffer.removeAll()
                    start = 0
                }
                continue
            }
            var block = [UInt8](repeating: 0, count: 65536)
            let n = block.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw CommandFailure(description: "cannot read the manifest \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { atEnd = true } else { buffer.append(contentsOf: block[0..<n]) }
        }
    }
}
