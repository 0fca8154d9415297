internal import CPlayheadSystem
import Foundation
import Glibc
import Playhead

/// A folder that a run writes its outputs into, shared safely with whatever else lives there.
///
/// - **One run at a time.** Opening takes an advisory lock (`flock`) on `.playhead.lock` in the
///   folder; a second run fails at once with `output.outputBusy`, or waits for the first.
/// - **Only what is ours.** `.playhead.json` (an ``OwnershipManifest``) records every folder and
///   file runs created here, by device and inode. A name that is not recorded, or no longer points
///   at what was recorded, is someone else's: it is never removed, replaced or written into, and
///   the output that wanted the name fails with `output.outputExists`. Folders of earlier runs are taken
///   back: only files with playhead's output names (``OutputNames``) are removed from them, never
///   anything else, never a file owned by another user, never one of the run's inputs.
/// - **Safe names.** Folders are made under a temporary name, marked inside (`.playhead-owner`,
///   a random token the manifest keeps), recorded, then renamed into place only if the name is
///   still free (`RENAME_NOREPLACE`); files go through ``SafeFile``. Nothing is created by
///   following a link.
///
/// Every method blocks on the file system, so the async ones run on worker threads.
package final class OutputFolder: Sendable {
    /// The folder, as given.
    package let path: String
    private let lockDescriptor: Int32
    private struct State {
        var manifest: OwnershipManifest
        /// Folders this run claimed (a name asked for again is a source listed twice).
        var claimed: Set<String> = []
        /// The run's inputs: never removed while cleaning.
        var inputs: Set<FileIdentity>
    }
    private let state: Locked<State>
    /// What opening made: folders that were not there (from the top) and the lock file.
    private let made: Made

    /// What ``open(_:wait:protecting:)`` made, so that a run that stops before writing anything
    /// leaves no folder behind that holds only its lock.
    private struct Made: Sendable {
        var folders: [String] = []
        var lock = false

        /// Removes the lock file and the folders, deepest first, while they are empty: never
        /// anything another run or a user put there.
        func undo(in path: String) {
            if lock { unlink(OutputFolder.join(path, OutputFolder.lockName)) }
            for folder in folders.reversed() where rmdir(folder) != 0 { break }
        }
    }

    package static let lockName = ".playhead.lock"
    package static let manifestName = ".playhead.json"
    /// The mark inside each folder a run made: its token tells it from a folder someone else made
    /// later under the same name (and perhaps the same reused inode).
    package static let ownerMarkName = ".playhead-owner"

    private init(path: String, lockDescriptor: Int32, manifest: OwnershipManifest, inputs: Set<FileIdentity>, made: Made) {
        self.path = path
        self.lockDescriptor = lockDescriptor
        self.made = made
        state = Locked(State(manifest: manifest, inputs: inputs))
        WrittenLog.beginRun(in: path)
    }

    deinit {
        WrittenLog.endRun(in: path)
        close(lockDescriptor)
    }

    /// Opens `path` (creating it and its parents if needed) for one run: takes its lock — waiting
    /// for another run to let go when `wait` is true, else failing with `output.outputBusy` — and reads
    /// what earlier runs wrote. `inputs` are never removed while cleaning up earlier outputs.
    /// A folder (or lock file) that opening made is removed again when it fails or is cancelled
    /// before the folder is the run's.
    package static func open(_ path: String, wait: Bool, protecting inputs: [String]) async throws(PlayheadError) -> OutputFolder {
        // A lock taken on a lock file that an earlier holder removed meanwhile (it stopped as it
        // opened, and undid what it made) locks nothing: the folder is opened again.
        for _ in 0..<16 {
            if let folder = try await openOnce(path, wait: wait, protecting: inputs) { return folder }
        }
        throw PlayheadError(code: .outputBusy, message: "the folder's lock file keeps being replaced: another run is opening it", file: path)
    }

    /// One attempt of ``open(_:wait:protecting:)``: nil when the lock file it locked is no longer
    /// the folder's.
    private static func openOnce(_ path: String, wait: Bool, protecting inputs: [String]) async throws(PlayheadError) -> OutputFolder? {
        let (descriptor, made) = try await WorkerPool.shared.value("playhead.output") { () throws(PlayheadError) -> (Int32, Made) in
            var made = Made(folders: try makeFolder(path))
            do throws(PlayheadError) {
                let (descriptor, created) = try openLock(path)
                made.lock = created
                return (descriptor, made)
            } catch {
                made.undo(in: path)
                throw error
            }
        }
        do throws(PlayheadError) {
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR else {
                    throw SafeFile.posixError("could not lock", path: join(path, lockName), file: path)
                }
                guard wait else {
                    throw PlayheadError(
                        code: .outputBusy,
                        message: "another run is writing into this folder (it holds \(lockName)): wait for it to finish, or pass --wait",
                        file: path)
                }
                do {
                    try await Task.sleep(for: .milliseconds(100))
                } catch {
                    throw PlayheadError.cancelled(file: path)
                }
            }
            guard isTheFolder(lock: descriptor, in: path) else {
                close(descriptor)
                return nil
            }
            let folder = path
            let (manifest, identities) = try await WorkerPool.shared.value("playhead.output") {
                () throws(PlayheadError) -> (OwnershipManifest, Set<FileIdentity>) in
                (try readManifest(folder), Set(inputs.compactMap { identity(following: $0) }))
            }
            return OutputFolder(path: path, lockDescriptor: descriptor, manifest: manifest, inputs: identities, made: made)
        } catch {
            // Ours only once the lock is held: an unlocked lock file may be another run's now.
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { made.undo(in: path) }
            close(descriptor)
            throw error
        }
    }

    /// Whether the lock file open at `descriptor` is still the one named in `path`.
    private static func isTheFolder(lock descriptor: Int32, in path: String) -> Bool {
        var held = stat(), named = stat()
        guard fstat(descriptor, &held) == 0, lstat(join(path, lockName), &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// Leaves the folder as it was before this run opened it, when the run stops before writing
    /// anything there (a signal as it opened): the lock file and folders opening made are
    /// removed, while nothing else is in them. A folder that was there before is left as it is.
    package func abandonUnused() {
        made.undo(in: path)
    }

    // MARK: Folders

    /// Whether this run has claimed `name` already (its folder is this run's work: claiming it
    /// again would clean it).
    package func claimedInThisRun(_ name: String) -> Bool {
        state.withLock { $0.claimed.contains(name) }
    }

    /// Makes (or takes back from an earlier run) a folder for each name, in one go; each name
    /// succeeds or fails alone: `output.outputExists` when the name is someone else's,
    /// `output.nameTooLong` when the file system cannot hold it.
    package func claimFolders(_ names: [String]) async -> [Result<String, PlayheadError>] {
        await WorkerPool.shared.value("playhead.output") { [self] in claimFoldersNow(names) }
    }

    private func claimFoldersNow(_ names: [String]) -> [Result<String, PlayheadError>] {
        var results = [Result<String, PlayheadError>?](repeating: nil, count: names.count)
        // New folders are made under temporary names first, recorded, and only then named.
        var made: [(index: Int, temporary: String, identity: FileIdentity)] = []
        for (i, name) in names.enumerated() {
            let target = Self.join(path, name)
            if let problem = Self.nameProblem(name, in: path) {
                results[i] = .failure(problem)
                continue
            }
            if let found = Self.lookUp(target) {
                if state.withLock({ $0.manifest.owns(name, found: found) }) {
                    clean(target)
                    results[i] = .success(target)
                    state.withLock { _ = $0.claimed.insert(name) }
                } else {
                    results[i] = .failure(Self.notOurs(target))
                }
                continue
            }
            let temporary = Self.join(path, ".playhead-" + SafeFile.randomSuffix() + ".partial")
            guard mkdir(temporary, 0o755) == 0 else {
                results[i] = .failure(SafeFile.posixError("could not create", path: target, file: target))
                continue
            }
            WrittenLog.reset(in: temporary)
            guard Self.mark(temporary), let found = Self.lookUp(temporary) else {
                let error = SafeFile.posixError("could not create", path: target, file: target)
                Self.removeMarkedFolder(temporary)
                results[i] = .failure(error)
                continue
            }
            made.append((i, temporary, found.identity))
            state.withLock { $0.manifest.record(name, kind: .folder, identity: found.identity) }
        }
        guard !made.isEmpty else { return results.map { $0 ?? .failure(Self.notOurs(path)) } }
        if let error = saveManifest() {
            for entry in made {
                Self.removeMarkedFolder(entry.temporary)
                state.withLock { $0.manifest.forget(names[entry.index]) }
                results[entry.index] = .failure(error)
            }
            return results.map { $0 ?? .failure(error) }
        }
        var forgotten = false
        for entry in made {
            let name = names[entry.index], target = Self.join(path, name)
            if playhead_rename_noreplace(entry.temporary, target) == 0 {
                results[entry.index] = .success(target)
                state.withLock { _ = $0.claimed.insert(name) }
                continue
            }
            let code = errno
            Self.removeMarkedFolder(entry.temporary)
            if code == EINVAL || code == ENOSYS, mkdir(target, 0o755) == 0, Self.mark(target), let found = Self.lookUp(target) {
                WrittenLog.reset(in: target)
                // A file system without RENAME_NOREPLACE: mkdir takes a free name atomically too.
                state.withLock {
                    $0.manifest.record(name, kind: .folder, identity: found.identity)
                    $0.claimed.insert(name)
                }
                results[entry.index] = .success(target)
                forgotten = true
                continue
            }
            errno = code
            results[entry.index] = .failure(
                code == EEXIST || code == ENOTEMPTY
                    ? Self.notOurs(target)
                    : SafeFile.posixError("could not create", path: target, file: target))
            state.withLock { $0.manifest.forget(name) }
            forgotten = true
        }
        if forgotten { _ = saveManifest() }
        SafeFile.syncFolder(path)
        return results.map { $0 ?? .failure(Self.notOurs(path)) }
    }

    /// Removes what earlier runs wrote in one of our folders: regular files (or links) with
    /// playhead's output names, owned by this user, that are not inputs of this run, and that the
    /// folder's ``WrittenLog`` names as they are now (a file saved there by someone else under
    /// such a name, or edited since, stays); temporary files of ours go whatever they hold.
    private func clean(_ folder: String) {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let inputs = state.withLock { $0.inputs }
        // Only what the log names, as it is now: a folder without a log (or with a link or a
        // FIFO in its place) holds nothing known to be ours but our temporary files.
        let written = WrittenLog.entries(in: folder)
        defer { WrittenLog.reset(in: folder) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if OutputNames.isOutputFile(name) { names.append(name) }
        }
        for name in names {
            let file = Self.join(folder, name)
            var info = stat()
            guard lstat(file, &info) == 0, info.st_uid == geteuid() else { continue }
            let kind = info.st_mode & S_IFMT
            guard kind == S_IFREG || kind == S_IFLNK else { continue }
            guard !inputs.contains(FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))) else { continue }
            if OutputNames.temporaryTarget(of: name) == nil, kind != S_IFREG || !written.contains(WrittenLog.entry(info)) { continue }
            unlink(file)
        }
    }

    /// Removes a folder of ours that holds nothing but its mark (an output that wrote nothing),
    /// and forgets it. Returns whether it went.
    @discardableResult
    package func removeIfEmpty(_ name: String) async -> Bool {
        await WorkerPool.shared.value("playhead.output") { [self] in
            let target = Self.join(path, name)
            guard let found = Self.lookUp(target), state.withLock({ $0.manifest.owns(name, found: found) }) else { return false }
            guard let directory = opendir(target) else { return false }
            var others = false
            while let entry = readdir(directory) {
                let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if ![".", "..", Self.ownerMarkName, WrittenLog.name].contains(entryName) { others = true }
            }
            closedir(directory)
            guard !others else { return false }
            unlink(Self.join(target, WrittenLog.name))
            unlink(Self.join(target, Self.ownerMarkName))
            guard rmdir(target) == 0 else { return false }
            state.withLock { $0.manifest.forget(name) }
            _ = saveManifest()
            return true
        }
    }

    // MARK: Files

    /// Writes `bytes` as the file `name` directly in the folder (a summary, a sheet), replacing an
    /// earlier run's file of that name but nothing else: safely (``SafeFile``), recorded before
    /// it takes the name.
    @discardableResult
    package func writeFile(_ name: String, bytes: [UInt8]) async throws(PlayheadError) -> String {
        try await WorkerPool.shared.value("playhead.output") { [self] () throws(PlayheadError) -> String in
            try writeFileNow(name, bytes: bytes)
        }
    }

    /// As ``writeFile(_:bytes:)``, on the calling thread.
    package func writeFileNow(_ name: String, bytes: [UInt8]) throws(PlayheadError) -> String {
        let target = Self.join(path, name)
        if let problem = Self.nameProblem(name, in: path) { throw problem }
        let found = Self.lookUp(target)
        if let found, !state.withLock({ $0.manifest.owns(name, found: found) }) { throw Self.notOurs(target) }
        let identity: FileIdentity
        do throws(PlayheadError) {
            identity = try writeNewCopy(name, at: target, bytes: bytes, replacing: found != nil)
        } catch {
            // A full disk: an earlier version of this file of ours (the summary written as
            // `running`) takes the new bytes in place when they fit in the room it holds.
            guard error.code == .diskFull, found != nil, let rewritten = SafeFile.rewriteInPlace(bytes, at: target) else { throw error }
            identity = rewritten
        }
        state.withLock { $0.manifest.record(name, kind: .file, identity: identity) }
        _ = saveManifest()
        return target
    }

    /// Writes `bytes` as a new file that takes the name `name` (at `target`) once recorded.
    private func writeNewCopy(_ name: String, at target: String, bytes: [UInt8], replacing: Bool) throws(PlayheadError) -> FileIdentity {
        let file = try SafeFile.create(for: target)
        do throws(PlayheadError) {
            try file.write(bytes)
            // Room for a later version of it to be written in place on a full disk (the summary
            // written as `running` grows as files end).
            file.reserveRoom(2 * bytes.count + (16 << 10))
            let identity = file.stampedIdentity()
            state.withLock { $0.manifest.recordPending(name, kind: .file, identity: identity) }
            if let error = saveManifest() { throw error }
            try file.commit(replacing: replacing)
            return identity
        } catch {
            file.discard()
            throw error
        }
    }

    /// Whether `name` in the folder is free or an earlier run's (so ``writeFile(_:bytes:)`` may
    /// take it).
    package func mayWrite(_ name: String) async -> Bool {
        await WorkerPool.shared.value("playhead.output") { [self] in
            guard Self.nameProblem(name, in: path) == nil else { return false }
            guard let found = Self.lookUp(Self.join(path, name)) else { return true }
            return state.withLock { $0.manifest.owns(name, found: found) }
        }
    }

    /// Syncs a folder's names to disk (after many files were put in place in it).
    package func sync(_ folder: String) async {
        await WorkerPool.shared.value("playhead.output") { SafeFile.syncFolder(folder) }
    }

    // MARK: The manifest

    private func saveManifest() -> PlayheadError? {
        let manifest = state.withLock { $0.manifest }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(manifest) else {
            return PlayheadError(code: .writeFailed, message: "could not encode \(Self.manifestName)", file: path)
        }
        do throws(PlayheadError) {
            try SafeFile.write(
                [UInt8](data), to: Self.join(path, Self.manifestName), replacing: true, syncFolder: true, room: 2 * data.count + (16 << 10))
            return nil
        } catch {
            return error
        }
    }

    /// The manifest of earlier runs: none yet, or a file of this user's that only this user can
    /// write. One planted by someone else makes the folder unusable (it would be taken as proof of
    /// what is ours); one that cannot be read leaves nothing ours.
    private static func readManifest(_ folder: String) throws(PlayheadError) -> OwnershipManifest {
        let file = join(folder, manifestName)
        let fd = Glibc.open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return OwnershipManifest() }
            throw PlayheadError(
                code: .outputExists,
                message:
                    "cannot be read (\(String(cString: strerror(errno)))): it is not this user's record of outputs; remove it or choose another folder",
                file: file)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw PlayheadError(
                code: .outputExists,
                message: "is not a private file of this user's, so it cannot be the record of outputs: remove it or choose another folder",
                file: file)
        }
        let bytes = SafeFile.readAll(fd, limit: 64 << 20)
        return (try? JSONDecoder().decode(OwnershipManifest.self, from: Data(bytes))) ?? OwnershipManifest()
    }

    // MARK: Helpers

    /// Makes `path` and the folders on the way to it that are missing; returns those it made,
    /// from the top.
    private static func makeFolder(_ path: String) throws(PlayheadError) -> [String] {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw PlayheadError(code: .outputOpenFailed, message: "exists and is not a folder", file: path)
            }
            return []
        }
        var made: [String] = []
        // Each missing folder on the way, from the top: a failure names the folder it happened in.
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var current = path.hasPrefix("/") ? "" : "."
        for part in parts {
            current += "/" + part
            if stat(current, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw PlayheadError(
                        code: .outputOpenFailed, message: "cannot create the output folder: \(current) is a file, not a folder", file: path)
                }
                continue
            }
            guard mkdir(current, 0o755) != 0 else {
                made.append(current)
                continue
            }
            let failure = errno
            if failure == EEXIST { continue }
            let parent = String(current.dropLast(part.count + 1))
            let reason = String(cString: strerror(failure))
            // The folders made on the way are not left behind.
            for folder in made.reversed() where rmdir(folder) != 0 { break }
            switch failure {
            case EACCES, EPERM, EROFS:
                throw PlayheadError(
                    code: .permissionDenied, message: "cannot create the output folder: \(parent.isEmpty ? "/" : parent) is not writable (\(reason))",
                    file: path)
            case ENAMETOOLONG:
                throw PlayheadError(code: .nameTooLong, message: "cannot create the output folder: a name on its path is too long", file: path)
            default:
                let code = SafeFile.errorCode(for: failure, otherwise: .outputOpenFailed)
                throw PlayheadError(
                    code: code,
                    message: code == .diskFull
                        ? "cannot create the output folder: \(reason)" : "cannot create the output folder \(current): \(reason)", file: path)
            }
        }
        return made
    }

    /// Opens (making it when missing) the folder's lock file; returns it and whether it was made.
    private static func openLock(_ folder: String) throws(PlayheadError) -> (Int32, Bool) {
        let file = join(folder, lockName)
        var created = true
        var fd = Glibc.open(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o644)
        if fd < 0, errno == EEXIST {
            created = false
            fd = Glibc.open(file, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            // Someone else's lock file in a shared folder: a read-only descriptor locks as well.
            if fd < 0, errno == EACCES { fd = Glibc.open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) }
        }
        guard fd >= 0 else { throw SafeFile.posixError("could not open the lock", path: file, file: folder) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw PlayheadError(code: .outputOpenFailed, message: "is not a regular file", file: file)
        }
        return (fd, created)
    }

    /// What is at `path`, without following a link: a file stamped with its size and time, a
    /// folder with the token of its owner mark (none: no mark of ours).
    static func lookUp(_ path: String) -> FoundEntry? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        let kind: FoundEntry.Kind
        var stamp: String?
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            kind = .folder
            stamp = readMark(path)
        case S_IFREG:
            kind = .file
            stamp = SafeFile.stamp(size: Int64(info.st_size), seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
        default:
            kind = .other
        }
        return FoundEntry(
            kind: kind, identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), stamp: stamp),
            ownedByUs: info.st_uid == geteuid())
    }

    /// Puts an owner mark with a new random token in a folder just made.
    private static func mark(_ folder: String) -> Bool {
        let token = SafeFile.randomSuffix() + SafeFile.randomSuffix()
        let fd = Glibc.open(join(folder, ownerMarkName), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(token.utf8)
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// The token of a folder's owner mark: a small regular file of this user's.
    private static func readMark(_ folder: String) -> String? {
        let fd = Glibc.open(join(folder, ownerMarkName), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_size <= 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 64) }
        guard n > 0 else { return nil }
        return String(decoding: bytes[0..<n], as: UTF8.self)
    }

    /// Removes a temporary folder this run just made (its mark and log, then itself).
    private static func removeMarkedFolder(_ folder: String) {
        unlink(join(folder, WrittenLog.name))
        unlink(join(folder, ownerMarkName))
        rmdir(folder)
    }

    private static func identity(following path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Why `name` cannot be an entry of the folder, if it cannot.
    static func nameProblem(_ name: String, in folder: String) -> PlayheadError? {
        let target = join(folder, name)
        if name.isEmpty || name == "." || name == ".." || name.contains("/") || name.utf8.contains(0) {
            return PlayheadError(code: .invalidArgument, message: "\"\(name)\" cannot name an output", file: target)
        }
        if name.utf8.count > Int(NAME_MAX) || target.utf8.count >= Int(PATH_MAX) {
            return PlayheadError(
                code: .nameTooLong,
                message: "the output name \(name) is \(name.utf8.count) bytes: longer than the file system allows (\(NAME_MAX))",
                file: target)
        }
        return nil
    }

    private static func notOurs(_ target: String) -> PlayheadError {
        PlayheadError(code: .outputExists, message: "\(target) exists and is not an output of playhead: left alone", file: target)
    }

    static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
