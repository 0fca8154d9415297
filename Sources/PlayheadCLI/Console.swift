import Glibc
import Playhead

/// Standard output and standard error, written with `write(2)` and checked: a closed descriptor,
/// a full disk or a reader gone away (EBADF, ENOSPC, EPIPE — SIGPIPE is ignored) is noted, never
/// a crash. A command whose standard output failed exits 1 (with a message, where standard error
/// still works); so does one whose standard error failed (silently: nothing can be said there).
enum Console {
    private static let failures = Locked((out: Int32?.none, err: Int32?.none))

    /// Makes sure descriptors 0, 1 and 2 are open, first thing: a closed one would otherwise be
    /// the next file opened (an output, the lock), and printing would write into it. A closed one
    /// becomes `/dev/null` opened read-only, so writing to it fails (EBADF) and is reported.
    static func guardStandardDescriptors() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", O_RDONLY)
            if opened >= 0, opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }

    /// Writes `text` to standard output as it is (JSON, results lines — whose encoder escapes what
    /// it must); text for people goes through ``escaped(_:)`` first.
    static func out(_ text: String) {
        if let failure = write(text, to: STDOUT_FILENO) { failures.withLock { $0.out = $0.out ?? failure } }
    }

    /// Writes `text` to standard error, its control characters escaped (``escaped(_:)``).
    static func err(_ text: String) {
        errControlling("", text)
    }

    /// Writes the terminal's own control sequence `controls` (a progress display's cursor moves)
    /// as it is, then `text` escaped.
    static func errControlling(_ controls: String, _ text: String) {
        if let failure = write(controls + escaped(text), to: STDERR_FILENO) { failures.withLock { $0.err = $0.err ?? failure } }
    }

    /// `text` with every control character but newline and tab shown as `\u{XX}`: a file name's
    /// escape sequences, carriage returns or bells never reach the terminal as themselves.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A name (a path, a URL) for a line of text: every control character shown as `\u{XX}`,
    /// newlines and tabs too, so a name cannot start a line of its own (and pass for another
    /// file's status line).
    static func name(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\t" || isControl($0) }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" || isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\n" && scalar != "\t" && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value))
    }

    /// The error number of the first failed write to standard output, if any.
    static var outputFailure: Int32? { failures.withLock { $0.out } }

    /// The error number of the first failed write to standard error, if any.
    static var errorFailure: Int32? { failures.withLock { $0.err } }

    /// Writes all of `text`; the error number on failure.
    private static func write(_ text: String, to descriptor: Int32) -> Int32? {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        return bytes.withUnsafeMutableBytes { raw -> Int32? in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(descriptor, base + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                    continue
                }
                let code = n < 0 ? errno : EIO
                if code == EINTR { continue }
                if code == EAGAIN {
                    // A non-blocking descriptor that is full: wait until it takes more.
                    var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, 1000)
                    continue
                }
                return code
            }
            return nil
        }
    }
}
