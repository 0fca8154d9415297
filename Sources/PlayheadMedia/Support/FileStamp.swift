import Glibc

/// A version of a local file: its identity (device and inode), size and modification time, to
/// the nanosecond. Two stamps differ when the file was replaced (a rename over it, even one that
/// keeps its size and time) or written to. One rule for every part that asks whether a source
/// changed: the sound extents and loudness measured per file, and a channel's watch of its layout
/// and sources.
package struct FileStamp: Sendable, Hashable {
    package var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    /// A regular file (not a FIFO, a device, a folder): its reads never wait for a writer.
    package var isRegularFile: Bool

    /// The stamp of the file at `path` now; nil when there is none (or it cannot be read).
    /// - Parameter path: the file's path.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        isRegularFile = info.st_mode & S_IFMT == S_IFREG
    }
}
