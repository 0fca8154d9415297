import Dispatch
import Foundation

/// One read of an ``AsyncByteSource``: the source's `read` runs as a task of its own while the
/// I/O thread that FFmpeg called waits for it in slices, asking between slices whether the reader
/// was cancelled or the read has run past the stall timeout. Either ends the wait at once and
/// cancels the task; the task's result, if it ever comes, goes to a box no one reads, never into
/// FFmpeg's buffer (which may be gone by then).
enum AsyncRead {
    enum Outcome {
        case bytes(Data)
        case failed(any Error)
        /// The reader's owner cancelled, or the open timeout passed.
        case interrupted
        /// Nothing came for the stall timeout.
        case stalled
    }

    /// How often the wait asks: a cancellation is seen within this.
    static let slice = DispatchTimeInterval.milliseconds(50)

    /// Blocking; called on the I/O thread that owns the reader.
    static func perform(_ source: any AsyncByteSource, at offset: Int64, maxLength: Int, relay: InterruptRelay, stallNanos: UInt64?) -> Outcome {
        let pending = PendingRead()
        let task = Task.detached {
            do {
                pending.complete(.success(try await source.read(at: offset, maxLength: maxLength)))
            } catch {
                pending.complete(.failure(error))
            }
        }
        let started = DispatchTimeNanos.now()
        while true {
            if let result = pending.wait(for: slice) {
                switch result {
                case .success(let data): return .bytes(data)
                case .failure(let error): return .failed(error)
                }
            }
            if relay.shouldInterrupt {
                task.cancel()
                return .interrupted
            }
            if let stallNanos, DispatchTimeNanos.now() - started >= stallNanos {
                task.cancel()
                return .stalled
            }
        }
    }
}

/// Where a read's task leaves its result, once.
private final class PendingRead: Sendable {
    private let signal = DispatchSemaphore(value: 0)
    private let result = Locked<Result<Data, any Error>?>(nil)

    func complete(_ value: Result<Data, any Error>) {
        result.withLock { $0 = value }
        signal.signal()
    }

    /// The result, if it came within `slice`.
    func wait(for slice: DispatchTimeInterval) -> Result<Data, any Error>? {
        guard signal.wait(timeout: .now() + slice) == .success else { return nil }
        return result.withLock { $0 }
    }
}
