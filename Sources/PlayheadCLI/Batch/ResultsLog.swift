import Foundation
import Glibc
import Playhead

/// `--results FILE.jsonl`: one JSON object per finished source, appended with a single `write(2)`
/// each (so a record is whole or, after a crash mid-write, a torn last line), synced at most once
/// a second and at the end. The file is locked (`flock`) for the run: two runs never append to
/// one file. With `--resume`, the records already there are read first — their sources are done
/// — and a torn last line is cut off so that the file stays valid JSON Lines.
final class ResultsLog: @unchecked Sendable {
    // @unchecked Sendable: `path`, `descriptor`, `done`, `recordsFound` and `tornBytes` are set
    // in init and only read afterwards; the time of the last sync is touched only inside
    // `state.withLock`; `write(2)` on one descriptor from several threads is safe, and with
    // O_APPEND each record lands whole at the end.
    let path: String
    private let descriptor: Int32
    private let state = Locked(ContinuousClock.Instant?.none)

    /// Sources with a final record, as sorted 128-bit fingerprints (16 bytes a record; their text
    /// is not kept).
    private var done: [Fingerprint] = []
    /// Records read back on resume.
    private(set) var recordsFound = 0
    /// Bytes of a torn last line cut off on resume.
    private(set) var tornBytes = 0
    /// Lines read back on resume that are not records (not JSON objects): reported, and their
    /// sources (if any) done again.
    private(set) var unreadableLines = 0
    /// Which run's records a resume may go on from.
    private let expected: Expectation?
    /// The first record that belongs to another command or shard, if any.
    private var foreign: String?

    /// The command and shard whose results a resumed run expects: a results file of another
    /// command or another shard would make it skip sources it has not done.
    struct Expectation: Sendable {
        var command: String
        var shard: String
    }

    /// Opens the results file; with `wait`, waits (until a signal) for another run to let go of it.
    static func open(path: String, resume: Bool, wait: Bool, expecting: Expectation) async throws -> ResultsLog {
        var announced = false
        while true {
            do {
                return try ResultsLog(path: path, resume: resume, expecting: expecting)
            } catch let busy as Busy where wait {
                if SignalWatcher.shared.received != nil { throw busy.failure }
                if !announced {
                    Console.err("playhead: waiting for another run to let go of the results file \(path)\n")
                    announced = true
                }
                try? await Task.sleep(for: .milliseconds(200))
            } catch let busy as Busy {
                throw busy.failure
            }
        }
    }

    /// Another run holds the file's lock.
    struct Busy: Error {
        var failure: CommandFailure
    }

    struct Fingerprint: Hashable, Comparable, Sendable {
        var a: UInt64, b: UInt64
        init(_ source: String) {
            a = StableHash.of(source)
            b = StableHash.second(source)
        }

        /// The fingerprint as a record's `sourceKey`: 32 hex digits.
        var key: String {
            func hex(_ value: UInt64) -> String {
                let digits = String(value, radix: 16)
                return String(repeating: "0", count: 16 - digits.utf8.count) + digits
            }
            return hex(a) + hex(b)
        }

        /// A record's `sourceKey`, read back.
        init?(key: String) {
            guard key.utf8.count == 32, let a = UInt64(key.prefix(16), radix: 16), let b = UInt64(key.suffix(16), radix: 16) else { return nil }
            self.a = a
            self.b = b
        }

        static func < (l: Fingerprint, r: Fingerprint) -> Bool { (l.a, l.b) < (r.a, r.b) }
    }

    init(path: String, resume: Bool, expecting: Expectation? = nil) throws {
        self.path = path
        expected = expecting
        descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CommandFailure(description: "cannot open the results file \(path): \(String(cString: strerror(errno)))") }
        do {
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw CommandFailure(description: "the results file \(path) is not a regular file")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw Busy(
                    failure: CommandFailure(description: "another run is writing the results file \(path) (output.outputBusy); --wait waits for it"))
            }
            if info.st_size > 0 {
                guard resume else {
                    throw CommandFailure(
                        description: "the results file \(path) already holds results: add --resume to go on from them, or give another file")
                }
                try readBack(size: Int(info.st_size))
                if let foreign {
                    throw CommandFailure(
                        description:
                            "the results file \(path) holds results of another run (\(foreign)): resume with the same command and shard, or give another file"
                    )
                }
                if unreadableLines > 0 {
                    Console.err("playhead: \(unreadableLines) line(s) of \(path) are not records; their sources are done again\n")
                }
            }
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit {
        fdatasync(descriptor)
        close(descriptor)
    }

    func isDone(_ source: String) -> Bool {
        let key = Fingerprint(source)
        var low = 0, high = done.count
        while low < high {
            let middle = (low + high) / 2
            if done[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < done.count && done[low] == key
    }

    /// Appends one record (one line), in one write.
    func append(_ line: [UInt8]) throws {
        var bytes = line
        bytes.append(UInt8(ascii: "\n"))
        let written = bytes.withUnsafeBytes { raw -> Int in
            guard let base = raw.baseAddress else { return -1 }
            var offset = 0
            while offset < raw.count {
                let n = write(descriptor, base + offset, raw.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return -1 }
                offset += n
            }
            return offset
        }
        guard written == bytes.count else {
            throw CommandFailure(description: "could not append to the results file \(path): \(String(cString: strerror(errno)))")
        }
        let now = ContinuousClock.now
        let due = state.withLock { last -> Bool in
            guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
            last = now
            return true
        }
        if due { fdatasync(descriptor) }
    }

    func sync() { fdatasync(descriptor) }

    /// Reads every record; cuts a torn last line.
    private func readBack(size: Int) throws {
        var offset = 0
        var pending: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var lastNewlineEnd = 0
        while offset < size {
            let n = block.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            var lineStart = 0
            for i in 0..<n where block[i] == UInt8(ascii: "\n") {
                pending.append(contentsOf: block[lineStart..<i])
                note(pending)
                pending.removeAll(keepingCapacity: true)
                lineStart = i + 1
                lastNewlineEnd = offset + i + 1
            }
            pending.append(contentsOf: block[lineStart..<n])
            offset += n
        }
        done.sort()
        if lastNewlineEnd < size {
            tornBytes = size - lastNewlineEnd
            guard ftruncate(descriptor, off_t(lastNewlineEnd)) == 0 else {
                throw CommandFailure(description: "could not cut the torn last line of \(path): \(String(cString: strerror(errno)))")
            }
            fdatasync(descriptor)
        }
    }

    private func note(_ line: [UInt8]) {
        struct Record: Decodable {
            var kind: String?
            var command: String?
            var source: String?
            var sourceKey: String?
            var shard: String?
        }
        guard !line.isEmpty else { return }
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(line)) else {
            unreadableLines += 1
            return
        }
        if let expected, foreign == nil {
            if let command = record.command, command != expected.command {
                foreign = "a record of `\(command)`, this is `\(expected.command)`"
            } else if let shard = record.shard, shard != expected.shard {
                foreign = "a record of shard \(shard), this is shard \(expected.shard)"
            }
        }
        guard record.kind == "file" else { return }
        // A record names its source by its key (its display form may have lost a URL's secrets);
        // records of earlier versions, by the source itself.
        if let key = record.sourceKey.flatMap(Fingerprint.init(key:)) {
            done.append(key)
        } else if let source = record.source {
            done.append(Fingerprint(source))
        } else {
            return
        }
        recordsFound += 1
    }
}
