import Glibc

/// Where a ``Muxer`` writes: a ``SafeFile`` (a temporary name, renamed when complete), or a
/// stream that is already open, such as standard output (written as it comes; nothing to rename,
/// nothing to take back).
protocol MuxTarget: AnyObject {
    /// What errors call it.
    var path: String { get }
    func write(_ bytes: UnsafeRawBufferPointer) throws(PlayheadError)
    /// The new offset, or a negative errno (a stream cannot seek).
    func seek(_ offset: Int64, whence: Int32) -> Int64
    /// The size so far, or -1 when unknown.
    var size: Int64 { get }
    /// The output is complete; returns where it ended up.
    func complete() throws(PlayheadError) -> String
    /// The output is given up: what passes for complete is removed.
    func discard()
    /// Cuts what was written back to its first `length` bytes; false when it cannot (a stream).
    func truncate(to length: Int64) -> Bool
}

extension SafeFile: MuxTarget {
    func complete() throws(PlayheadError) -> String {
        if keepsBesideWhenTaken, !replacesExisting { return try commitBeside() }
        try commit(replacing: replacesExisting)
        return path
    }
    func truncate(to length: Int64) -> Bool { descriptor >= 0 && ftruncate(descriptor, off_t(length)) == 0 }
}

/// An open descriptor written as a stream (standard output, a pipe). Not owned: never closed.
final class StreamTarget: MuxTarget {
    let descriptor: Int32
    let path: String

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        path = name
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(PlayheadError) {
        let failure = DescriptorWrite.all(bytes, to: descriptor)
        guard failure != 0 else { return }
        let reason = failure == EPIPE ? "the reader went away" : String(cString: strerror(failure))
        throw PlayheadError(code: failure == ENOSPC ? .diskFull : .writeFailed, message: "could not write: \(reason)", file: path)
    }

    func seek(_ offset: Int64, whence: Int32) -> Int64 { -Int64(ESPIPE) }
    var size: Int64 { -1 }
    func complete() throws(PlayheadError) -> String { path }
    func discard() {}
    func truncate(to length: Int64) -> Bool { false }
}
