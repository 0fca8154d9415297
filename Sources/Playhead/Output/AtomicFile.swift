import Foundation

/// Writes a file under a temporary name in the same folder and renames it into place, so a
/// reader never sees a half-written file under the final name.
enum AtomicFile {
    /// `folder/.name.partial` for `folder/name`.
    static func temporaryPath(for path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return ".\(path).partial" }
        return String(path[...slash]) + "." + String(path[path.index(after: slash)...]) + ".partial"
    }

    static func write(_ bytes: UnsafeRawBufferPointer, to path: String) throws(PlayheadError) {
        let temporary = temporaryPath(for: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError("could not create", path: temporary) }
        var offset = 0
        while offset < bytes.count {
            let n = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                let error = posixError("could not write", path: temporary)
                close(fd)
                unlink(temporary)
                throw error
            }
            offset += n
        }
        guard close(fd) == 0 else {
            let error = posixError("could not write", path: temporary)
            unlink(temporary)
            throw error
        }
        try commit(temporary, to: path)
    }

    static func commit(_ temporary: String, to path: String) throws(PlayheadError) {
        guard rename(temporary, path) == 0 else {
            let error = posixError("could not rename into place", path: path)
            unlink(temporary)
            throw error
        }
    }

    static func posixError(_ what: String, path: String) -> PlayheadError {
        let code = errno
        let text = String(cString: strerror(code))
        return PlayheadError(code: .writeFailed, message: "\(what) \(path): \(text)", file: path)
    }
}
