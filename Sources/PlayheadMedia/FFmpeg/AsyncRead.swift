import Dispatch
import Foundation

/// One read of a caller's byte source, bounded: the source's `read` runs apart from the I/O
/// thread FFmpeg called (an ``AsyncByteSource``'s as a task of its own, a ``ByteSource``'s on a
/// worker thread, into a buffer of its own) while that thread waits for it in slices, asking
/// between slices whether the reader was cancelled, the open timeout passed, or the read has run
/// past the stall timeout. Either ends the wait at once (and cancels the task); the read's
/// result, if it ever comes, goes to a box no one reads, never into FFmpeg's buffer (which may be
/// gone by then). A blocking read that never returns keeps its one worker thread until it does;
/// the session that asked for it goes on to its end.
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
        return wait(for: pending, relay: relay, stallNanos: stallNanos) { task.cancel() }
    }

    /// Blocking; called on the I/O thread that owns the reader. The read runs on a worker thread
    /// into a buffer of its own, copied out when it returns in time.
    static func perform(_ source: any ByteSource, at offset: Int64, maxLength: Int, relay: InterruptRelay, stallNanos: UInt64?) -> Outcome {
        let pending = PendingRead()
        WorkerPool.shared.run("playhead.byte-source") {
            var buffer = Data(count: maxLength)
            do {
                let count = try buffer.withUnsafeMutableBytes { try source.read(at: offset, into: $0) }
                guard count >= 0, count <= maxLength else {
                    pending.complete(.failure(BadCount(count: count, asked: maxLength)))
                    return
                }
                buffer.count = count
                pending.complete(.success(buffer))
            } catch {
                pending.complete(.failure(error))
            }
        }
        return wait(for: pending, relay: relay, stallNanos: stallNanos) {}
    }

    /// A read that said it copied more than it was given room for, or less than nothing.
    struct BadCount: Error, CustomStringConvertible {
        var count: Int
        var asked: Int
        var description: String { "the byte source returned \(count) bytes for a buffer of \(asked)" }
    }

    private static func wait(for pending: PendingRead, relay: InterruptRelay, stallNanos: UInt64?, cancel: () -> Void) -> Outcome {
        let started = DispatchTimeNanos.now()
        while true {
            if let result = pending.wait(for: slice) {
                switch result {
                case .success(let data): return .bytes(data)
                case .failure(let error): return .failed(error)
                }
            }
            if relay.shouldInterrupt {
                cancel()
                return .interrupted
            }
            if let stallNanos, DispatchTimeNanos.now() - started >= stallNanos {
                cancel()
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
