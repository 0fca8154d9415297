internal import CPlayheadSystem
import Foundation
import Glibc

/// A file written safely: created under an unpredictable temporary name in its target's folder
/// with `O_CREAT | O_EXCL | O_NOFOLLOW` (so a name or a link planted there is never followed or
/// overwritten), written, synced to disk, and only then given its final name; the folder is synced
/// after the rename, so that a crash never leaves a final name pointing at missing data.
///
/// Not `Sendable`: used by the one thread that writes the output.
package final class SafeFile {
    /// Where the file ends up.
    let path: String
    /// Where it is while being written.
    let temporaryPath: String
    private(set) var descriptor: Int32
    private(set) var bytesWritten: Int64 = 0
    /// Whether completing it (as a ``MuxTarget``) may replace a file already at ``path``; when
    /// not, the name is taken atomically or the completion fails with `output.outputExists`.
    var replacesExisting = true
    /// Not replacing, whether a name taken by someone else is left to them and the file takes a
    /// free name beside it (``commitBeside()``) rather than being thrown away: a recording of
    /// hours is never lost for its name.
    var keepsBesideWhenTaken = false
    /// The file itself (it keeps its device and inode when renamed into place).
    let identity: FileIdentity

    /// Every file being written now, by its temporary name, for a process that must stop at once
    /// (``removeTemporaries()``): where it would go, and — for a file that stays valid when cut
    /// (a recording, an MP4 export) — how much of it to keep.
    /// A temporary file is created under this lock, and registered at once; once closed (by the
    /// stopping thread, `closedBy`), none is but that thread's own last records.
    private static let live = Locked<(files: [String: Salvage], closedBy: pthread_t?)>(([:], nil))

    /// What a file being written leaves if the process stops at once.
    private struct Salvage: Sendable {
        var path: String
        /// The length of its valid part given its size now (nil: none is valid): nil for a file
        /// that is removed.
        var validPrefix: (@Sendable (Int64) -> Int64?)?
        /// Its open descriptor (-1 once closed): pointed at `/dev/null` when the process stops at
        /// once, so that a writer still running cannot write past the cut.
        var descriptor: Int32 = -1
    }

    /// Stops the process's writing at once (a second signal): a file that stays valid when cut
    /// (``keepOnHardExit(validPrefix:)``) is cut to its valid part and takes its name (or, when
    /// that is taken, the first free name beside it) — a recording of hours is never thrown away
    /// — and every other file still being written is removed; no other file is created after, but
    /// by the calling thread (its last records: a run's summary saying that it stopped so).
    /// - Returns: the files kept.
    @discardableResult
    package static func removeTemporaries() -> [String] {
        live.withLock { state in
            // The first stopping thread keeps the right to write its last records.
            state.closedBy = state.closedBy ?? pthread_self()
            var kept: [String] = []
            // Writers still running write into nothing from here: a kept file stays as it is cut.
            let nothing = open("/dev/null", O_WRONLY | O_CLOEXEC)
            defer { if nothing >= 0 { close(nothing) } }
            for (_, salvage) in state.files where salvage.descriptor >= 0 && nothing >= 0 { dup2(nothing, salvage.descriptor) }
            for (temporary, salvage) in state.files {
                var info = stat()
                if let validPrefix = salvage.validPrefix, stat(temporary, &info) == 0, let length = validPrefix(Int64(info.st_size)), length > 0,
                    Glibc.truncate(temporary, off_t(length)) == 0, let name = linkBeside(temporary, to: salvage.path)
                {
                    kept.append(name)
                }
                unlink(temporary)
            }
            state.files = [:]
            return kept
        }
    }

    /// Links `temporary` to `path`, or to the first free `NAME-N.EXT` beside it; the name taken.
    private static func linkBeside(_ temporary: String, to path: String) -> String? {
        let (folder, full) = split(path)
        let dot = full.lastIndex(of: ".").flatMap { $0 == full.startIndex ? nil : $0 }
        let stem = dot.map { String(full[..<$0]) } ?? full
        let suffix = dot.map { String(full[$0...]) } ?? ""
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? path : folder + stem + "-\(attempt)" + suffix
            if link(temporary, candidate) == 0 { return candidate }
            guard errno == EEXIST else { return nil }
        }
        return nil
    }

    /// Told of every file just before it takes its final name: its open descriptor and that name.
    /// Set by the command-line tool (its run folders' written-file logs); the library sets none.
    private static let commitHook = Locked<(@Sendable (Int32, String) -> Void)?>(nil)

    /// Sets (or, with nil, removes) the hook every commit calls before a file takes its name.
    /// - Parameter hook: called on the committing thread with the file's descriptor (to `fstat`,
    ///   not to write) and its final path.
    package static func setCommitHook(_ hook: (@Sendable (Int32, String) -> Void)?) {
        commitHook.withLock { $0 = hook }
    }

    /// Marks this file as one to keep, cut to its valid part, if the process stops at once
    /// (``removeTemporaries()``).
    /// - Parameter validPrefix: the length of its valid part given its size (called on the
    ///   stopping thread; nil or 0: nothing valid).
    package func keepOnHardExit(validPrefix: @escaping @Sendable (Int64) -> Int64?) {
        Self.live.withLock { $0.files[temporaryPath]?.validPrefix = validPrefix }
    }

    private init(path: String, temporaryPath: String, descriptor: Int32) {
        self.path = path
        self.temporaryPath = temporaryPath
        self.descriptor = descriptor
        var info = stat()
        identity =
            fstat(descriptor, &info) == 0
            ? FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            : FileIdentity(device: 0, inode: 0)
    }

    deinit { discard() }

    /// Creates the temporary file for `path`: `.<name>.<random>.partial` beside it (a name too
    /// long to take the additions is cut, so any name the file system holds can be written).
    package static func create(for path: String) throws(PlayheadError) -> SafeFile {
        let (folder, full) = split(path)
        let name = full.utf8.count > 200 ? String(decoding: full.utf8.prefix(120), as: UTF8.self) + "~" : full
        for _ in 0..<16 {
            let candidate = folder + temporaryName(for: name, suffix: randomSuffix())
            // Created and registered in one step, so that a process stopping at once removes it.
            let (fd, code, closing) = live.withLock { state -> (Int32, Int32, Bool) in
                if let closer = state.closedBy, pthread_equal(closer, pthread_self()) == 0 { return (-1, 0, true) }
                let fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                let code = errno
                if fd >= 0, state.closedBy == nil { state.files[candidate] = Salvage(path: path, descriptor: fd) }
                return (fd, code, false)
            }
            if closing { throw PlayheadError(code: .cancelled, message: "the process is stopping", file: path) }
            if fd >= 0 { return SafeFile(path: path, temporaryPath: candidate, descriptor: fd) }
            errno = code
            // Taken (by chance, or planted): another name. Anything else is a real failure.
            guard errno == EEXIST || errno == ELOOP else { throw posixError("could not create", path: candidate, file: path) }
        }
        throw PlayheadError(code: .outputOpenFailed, message: "could not find a free temporary name beside \(path)", file: path)
    }

    /// Writes all of `bytes` at the current offset.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(PlayheadError) {
        let failure = DescriptorWrite.all(bytes, to: descriptor)
        if failure != 0 {
            errno = failure
            throw Self.posixError("could not write", path: temporaryPath, file: path)
        }
        bytesWritten += Int64(bytes.count)
    }

    /// Moves the write offset (`whence` as for `lseek`); the new offset, or a negative errno.
    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let result = lseek(descriptor, off_t(offset), whence)
        return result < 0 ? -Int64(errno) : Int64(result)
    }

    /// The file as it is now, stamped with its size and modification time (which renaming it
    /// keeps): what an ``OwnershipManifest`` records.
    package func stampedIdentity() -> FileIdentity {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return identity }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), stamp: Self.stamp(info))
    }

    /// A file's size and modification time, as a stamp.
    static func stamp(_ info: stat) -> String {
        stamp(size: Int64(info.st_size), seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }

    /// A file's size and modification time, as the stamp ownership records keep.
    /// - Parameters:
    ///   - size: the size in bytes.
    ///   - seconds: the modification time's seconds.
    ///   - nanoseconds: its nanoseconds.
    /// - Returns: `size:seconds.nanoseconds`.
    package static func stamp(size: Int64, seconds: Int, nanoseconds: Int) -> String { "\(size):\(seconds).\(nanoseconds)" }

    /// The file's size so far.
    var size: Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : -1
    }

    /// Syncs the data and gives the file its final name. With `replacing` false, an existing file
    /// at the final name is left alone and `output.outputExists`-style `writeFailed` is thrown.
    /// `syncFolder` false leaves syncing the folder to the caller (many files in one folder: one
    /// ``syncFolder(of:)`` at the end).
    package func commit(replacing: Bool = true, syncFolder: Bool = true) throws(PlayheadError) {
        guard descriptor >= 0 else { throw PlayheadError(code: .invalidState, message: "the file was already closed", file: path) }
        if fdatasync(descriptor) != 0 {
            let error = Self.posixError("could not write", path: temporaryPath, file: path)
            discard()
            throw error
        }
        // Whoever watches commits (the command-line tool notes the files of its own folders) is
        // told before the file takes its name.
        if let hook = Self.commitHook.withLock({ $0 }) { hook(descriptor, path) }
        closeDescriptor()
        defer { Self.live.withLock { _ = $0.files.removeValue(forKey: temporaryPath) } }
        if replacing {
            guard rename(temporaryPath, path) == 0 else {
                let error = Self.posixError("could not rename into place", path: path, file: path)
                unlink(temporaryPath)
                throw error
            }
        } else {
            // link() fails when the name exists: the final name is taken atomically or not at all.
            guard link(temporaryPath, path) == 0 else {
                let code = errno
                let error =
                    code == EEXIST
                    ? PlayheadError(code: .outputExists, message: "\(path) already exists and is not this run's: left alone", file: path)
                    : Self.posixError("could not put into place", path: path, file: path)
                unlink(temporaryPath)
                throw error
            }
            unlink(temporaryPath)
        }
        if syncFolder { Self.syncFolder(of: path) }
    }

    /// Commits without replacing: under ``path`` when it is free, else under the first free name
    /// of `NAME-2.EXT`, `NAME-3.EXT`, … beside it.
    /// - Returns: the name the file took.
    /// - Throws: as ``commit(replacing:syncFolder:)`` does, but for a name taken (after 1000 tries,
    ///   `output.outputExists`).
    func commitBeside() throws(PlayheadError) -> String {
        guard descriptor >= 0 else { throw PlayheadError(code: .invalidState, message: "the file was already closed", file: path) }
        if fdatasync(descriptor) != 0 {
            let error = Self.posixError("could not write", path: temporaryPath, file: path)
            discard()
            throw error
        }
        let (folder, full) = Self.split(path)
        let dot = full.lastIndex(of: ".").flatMap { $0 == full.startIndex ? nil : $0 }
        let stem = dot.map { String(full[..<$0]) } ?? full
        let suffix = dot.map { String(full[$0...]) } ?? ""
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? path : folder + stem + "-\(attempt)" + suffix
            if let hook = Self.commitHook.withLock({ $0 }) { hook(descriptor, candidate) }
            if link(temporaryPath, candidate) == 0 {
                closeDescriptor()
                unlink(temporaryPath)
                Self.live.withLock { _ = $0.files.removeValue(forKey: temporaryPath) }
                Self.syncFolder(of: candidate)
                return candidate
            }
            guard errno == EEXIST else {
                let error = Self.posixError("could not put into place", path: candidate, file: path)
                discard()
                throw error
            }
        }
        discard()
        throw PlayheadError(code: .outputExists, message: "\(path) and a thousand names beside it are taken", file: path)
    }

    /// Closes and removes the temporary file (nothing reaches the final name).
    package func discard() {
        guard descriptor >= 0 else { return }
        closeDescriptor()
        unlink(temporaryPath)
        Self.live.withLock { _ = $0.files.removeValue(forKey: temporaryPath) }
    }

    /// Closes the file's descriptor and says so in its entry, under the lock a process stopping at
    /// once holds (it never points a descriptor number that was reused at `/dev/null`).
    private func closeDescriptor() {
        Self.live.withLock { state in
            close(descriptor)
            state.files[temporaryPath]?.descriptor = -1
        }
        descriptor = -1
    }

    /// Reads what `descriptor` holds, up to about `limit` bytes (a small record of ours).
    package static func readAll(_ descriptor: Int32, limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    /// Writes `bytes` to `path` in one go, safely.
    package static func write(_ bytes: UnsafeRawBufferPointer, to path: String, replacing: Bool = true, syncFolder: Bool = true) throws(PlayheadError)
    {
        let file = try create(for: path)
        try file.write(bytes)
        try file.commit(replacing: replacing, syncFolder: syncFolder)
    }

    /// Writes `bytes` to `path` in one go, safely. `room`: see ``reserveRoom(_:)``.
    package static func write(
        _ bytes: [UInt8], to path: String, replacing: Bool = true, syncFolder: Bool = true, room: Int = 0
    )
        throws(PlayheadError)
    {
        do throws(PlayheadError) {
            let file = try create(for: path)
            try file.write(bytes)
            file.reserveRoom(room)
            try file.commit(replacing: replacing, syncFolder: syncFolder)
        } catch {
            guard error.code == .diskFull, replacing, rewriteInPlace(bytes, at: path) != nil else { throw error }
        }
    }

    /// Sets aside room for the file to grow to `bytes` without taking space from the disk (the
    /// blocks are allocated; the size stays as written), so that a later version of a record can
    /// be written in place when the disk is full (``rewriteInPlace(_:at:)``). A disk that has no
    /// such room already gets none: nothing else changes.
    package func reserveRoom(_ bytes: Int) {
        if bytes > 0, descriptor >= 0 { _ = playhead_reserve_room(descriptor, Int64(bytes)) }
    }

    /// The last resort for a small record (a summary, a folder's manifest) on a full disk, where
    /// no new copy can be made: `bytes` written over the regular file already at `path`, when the
    /// space that file holds takes them (no block is added, so the disk's being full does not
    /// matter). Not atomic as a rename is: a crash during it can leave the record torn, which is
    /// still better than a summary that says `running` for good. Returns the file as written, or
    /// nil when it cannot be done (no such file, a link or a file with other names, another
    /// user's, too little room in it).
    package static func rewriteInPlace(_ bytes: [UInt8], at path: String) -> FileIdentity? {
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        // Only a file of this user's with no other name (a hard link planted at the name would
        // have the bytes written into someone else's file), holding room enough.
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1, info.st_uid == geteuid(),
            Int(info.st_blocks) * 512 >= bytes.count
        else { return nil }
        let written = bytes.withUnsafeBytes { raw in DescriptorWrite.all(raw, to: fd) }
        guard written == 0, ftruncate(fd, off_t(bytes.count)) == 0, fdatasync(fd) == 0, fstat(fd, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), stamp: stamp(info))
    }

    /// Writes all of `bytes` at the current offset.
    package func write(_ bytes: [UInt8]) throws(PlayheadError) {
        let failure: PlayheadError? = bytes.withUnsafeBytes { raw in
            do throws(PlayheadError) {
                try write(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Syncs the folder holding `path`, so that renames in it survive a crash.
    package static func syncFolder(of path: String) {
        let (folder, _) = split(path)
        syncFolder(folder)
    }

    /// Syncs `folder` itself (its names).
    package static func syncFolder(_ folder: String) {
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// `("dir/", "name")` for `dir/name`; `("", name)` without a slash.
    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }

    /// The temporary name of a file named `name`: `.<name>.<suffix>.partial`.
    /// - Parameters:
    ///   - name: the final name, without a folder.
    ///   - suffix: what makes it unique (``randomSuffix()``: digits and lowercase letters).
    /// - Returns: the temporary name, without a folder.
    package static func temporaryName(for name: String, suffix: String) -> String {
        "." + name + "." + suffix + ".partial"
    }

    /// The final name a temporary name of ``temporaryName(for:suffix:)`` stands for
    /// (`.audio.wav.1x2y3z.partial` → `audio.wav`): nil for any other name.
    /// - Parameter name: a file's name, without a folder.
    /// - Returns: the final name.
    package static func finalName(ofTemporaryName name: String) -> String? {
        guard name.hasPrefix("."), name.hasSuffix(".partial") else { return nil }
        let inner = name.dropFirst().dropLast(".partial".count)
        guard let dot = inner.lastIndex(of: "."), dot > inner.startIndex else { return nil }
        let suffix = inner[inner.index(after: dot)...]
        guard !suffix.isEmpty, suffix.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLowercase) }) else { return nil }
        return String(inner[..<dot])
    }

    package static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36)
    }

    package static func posixError(_ what: String, path: String, file: String) -> PlayheadError {
        let code = errno
        let text = String(cString: strerror(code))
        return PlayheadError(code: errorCode(for: code, otherwise: .writeFailed), message: "\(what) \(path): \(text)", file: file)
    }

    /// The code for a failed write's or creation's error number: a full disk, a name too long, a
    /// place not writable (a read-only file system, no permission), else `otherwise`.
    package static func errorCode(for number: Int32, otherwise: PlayheadError.Code) -> PlayheadError.Code {
        switch number {
        case ENOSPC, EDQUOT: return .diskFull
        case ENAMETOOLONG: return .nameTooLong
        case EROFS, EACCES, EPERM: return .permissionDenied
        default: return otherwise
        }
    }
}
