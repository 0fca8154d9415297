import Synchronization

/// What an open that failed had done to its source: whether it read any of its bytes. For a
/// source read once (a pipe, a FIFO, a stream byte source) those bytes are gone, and another open
/// would read from where this one stopped.
package final class OpenAttempt: Sendable {
    private let read = Atomic<Bool>(false)

    package init() {}

    /// Whether the open read a byte of its source (I/O's count, `AVIOContext.bytes_read`).
    package var readBytes: Bool { read.load(ordering: .acquiring) }

    /// Notes a count of bytes the open's I/O read.
    /// - Parameter count: the count.
    func note(bytesRead count: Int64) {
        if count > 0 { read.store(true, ordering: .releasing) }
    }
}
