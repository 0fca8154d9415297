internal import CPlayheadSystem
import Glibc
import Playhead

/// The files a run put into one of its own folders (one marked with ``OutputFolder/ownerMarkName``),
/// one line each — device, inode and stamp (size and modification time) — appended just before
/// the file takes its name. A later run removes a file with an output name from the folder only
/// if the log names it as it is now: a file someone saved there under such a name (`video.mp4`,
/// `frame-000001.png`), or one edited since, is not ours and is left alone.
///
/// The log is the command-line tool's folder policy, so only a run's ``OutputFolder`` turns it on:
/// a file is noted only when its folder lies directly in the output folder of a run of this
/// process. An app that writes with the library's sinks — even into a folder a run once made —
/// never has a log written for it.
package enum WrittenLog {
    static let name = ".playhead-written"

    private struct FolderKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The output folders of this process's runs, by device and inode, with how many opened them.
    private static let runFolders = Locked<[FolderKey: Int]>([:])

    private static func key(_ folder: String) -> FolderKey? {
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return FolderKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// A run's output folder opens: files committed into the folders it claims are noted.
    /// - Parameter folder: the output folder's path.
    static func beginRun(in folder: String) {
        guard let key = key(folder) else { return }
        runFolders.withLock { $0[key, default: 0] += 1 }
        // Every safe file's commit tells the log (installed once; it notes nothing outside a run's folders).
        _ = installed
    }

    private static let installed: Void = SafeFile.setCommitHook { descriptor, path in
        var info = stat()
        if fstat(descriptor, &info) == 0 { note(info, committingTo: path) }
    }

    /// The run's output folder closes.
    /// - Parameter folder: the output folder's path.
    static func endRun(in folder: String) {
        guard let key = key(folder) else { return }
        runFolders.withLock {
            if let count = $0[key], count > 1 { $0[key] = count - 1 } else { $0[key] = nil }
        }
    }

    /// Whether `folder` is one of a run's own folders now: directly in a run's output folder.
    private static func isClaimedByARun(_ folder: String) -> Bool {
        guard let parent = key(folderOf(folder)) else { return false }
        return runFolders.withLock { $0[parent] != nil }
    }

    /// Notes the file `info` describes, about to become `path`, when `path`'s folder is one of
    /// ours. A note that cannot be written leaves the file unclaimed (a later run leaves it too).
    static func note(_ info: stat, committingTo path: String) {
        let folder = folderOf(path)
        guard isClaimedByARun(folder) else { return }
        var mark = stat()
        guard lstat(OutputFolder.join(folder, OutputFolder.ownerMarkName), &mark) == 0, mark.st_mode & S_IFMT == S_IFREG else { return }
        // Non-blocking: a FIFO planted at the name must not hold the run (nor be written to).
        let fd = open(OutputFolder.join(folder, name), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var log = stat()
        guard fstat(fd, &log) == 0, log.st_mode & S_IFMT == S_IFREG, log.st_uid == geteuid() else { return }
        let line = Array((entry(info) + "\n").utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// The log's entries: none when the folder has no log, or one that is not a regular file of
    /// this user's (a link, a FIFO): then nothing in the folder is known to be ours.
    static func entries(in folder: String) -> Set<String> {
        let fd = open(OutputFolder.join(folder, name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { return [] }
        let bytes = SafeFile.readAll(fd, limit: 256 << 20)
        return Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    /// Empties the log (a folder just made or just cleaned: nothing in it is ours any more). What
    /// sits at the name and is not a regular file of this user's (a link, a FIFO) is removed (a
    /// link, not what it points at) and a new log made in its place.
    static func reset(in folder: String) {
        let path = OutputFolder.join(folder, name)
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG || info.st_uid != geteuid() {
            if info.st_mode & S_IFMT != S_IFDIR { unlink(path) }
        }
        let fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return }
        // Room for the first hundred notes set aside now (the log stays empty), so that the
        // outputs of a run that fills the disk are still noted as its own.
        _ = playhead_reserve_room(fd, 4 << 10)
        close(fd)
    }

    /// Whether the file at `path` counts as a run's output: in one of a run's own folders, only
    /// if the log names it as it is now (a user's file there under an output name does not);
    /// elsewhere (a single named file), whatever is there.
    package static func counts(_ path: String) -> Bool {
        let folder = folderOf(path)
        var mark = stat(), info = stat()
        guard lstat(OutputFolder.join(folder, OutputFolder.ownerMarkName), &mark) == 0, mark.st_mode & S_IFMT == S_IFREG else { return true }
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return entries(in: folder).contains(entry(info))
    }

    /// The files of one of a run's own folders that the log names as they are now.
    package static func ours(in folder: String) -> (String) -> Bool {
        let known = entries(in: folder)
        return { name in
            var info = stat()
            guard lstat(OutputFolder.join(folder, name), &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
            return known.contains(entry(info))
        }
    }

    static func entry(_ info: stat) -> String {
        "\(info.st_dev) \(info.st_ino) \(SafeFile.stamp(size: Int64(info.st_size), seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec)))"
    }

    private static func folderOf(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
