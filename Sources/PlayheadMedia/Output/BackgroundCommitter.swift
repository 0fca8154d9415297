internal import CFFmpeg
import Dispatch

/// Puts written files in place off the thread that writes them: each file's data is synced, then
/// it takes its final name — only if that name is free, never replacing anything — (``SafeFile/commit(replacing:syncFolder:)``), on a worker thread, in
/// order. Waiting for the disk then overlaps encoding the next file. At most `capacity` files wait;
/// `drain()` returns once all are in place, with the first failure.
final class BackgroundCommitter: Sendable {
    /// A file handed over for committing.
    ///
    /// `@unchecked Sendable` is safe: the writer gives the file up when it hands it over (it keeps
    /// no reference), and only the committing thread touches it afterwards.
    private struct Handed: @unchecked Sendable { let file: SafeFile }

    private struct State {
        var files: [Handed] = []
        var running = false
        var failure: PlayheadError?
        var committed = 0
    }

    private let state = Locked(State())
    private let room: DispatchSemaphore
    private let idle = DispatchSemaphore(value: 1)

    init(capacity: Int = 8) {
        room = DispatchSemaphore(value: capacity)
    }

    /// Files put in place so far.
    var committed: Int { state.withLock { $0.committed } }

    /// Queues `file` (written, not yet synced or named); waits while `capacity` files wait already.
    /// Throws the first failure of an earlier file.
    func commit(_ file: SafeFile) throws(PlayheadError) {
        if let failure = state.withLock({ $0.failure }) {
            file.discard()
            throw failure
        }
        room.wait()
        let start = state.withLock { s -> Bool in
            s.files.append(Handed(file: file))
            guard !s.running else { return false }
            s.running = true
            return true
        }
        if start {
            idle.wait()
            WorkerPool.shared.run("playhead.commit") { [self] in work() }
        }
    }

    private func work() {
        while true {
            guard
                let next = state.withLock({ s -> Handed? in
                    guard !s.files.isEmpty else {
                        s.running = false
                        return nil
                    }
                    return s.files.removeFirst()
                })
            else { break }
            do throws(PlayheadError) {
                try next.file.commit(replacing: false, syncFolder: false)
                state.withLock { $0.committed += 1 }
            } catch {
                state.withLock { $0.failure = $0.failure ?? error }
            }
            room.signal()
        }
        idle.signal()
    }

    /// Waits until every queued file is in place; throws the first failure.
    func drain() throws(PlayheadError) {
        idle.wait()
        idle.signal()
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }
}
