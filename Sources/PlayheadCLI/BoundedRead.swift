import ArgumentParser
import Foundation
import Glibc
import Playhead
import Synchronization

/// Reads a small file the command needs before it starts (a layout) on a thread of its own, so
/// that a FIFO nobody writes to, or a pipe that never ends, cannot hold the command: it gives up
/// after `timeout` (a usage error, exit status 2), and a signal ends it at once (128 + its number).
enum BoundedRead {
    static func contents(of path: String, limit: Int, timeout: Double, what: String) throws -> Data {
        let result = Locked<Result<Data, ValidationError>?>(nil)
        let thread = Thread {
            let read: Result<Data, ValidationError>
            if let handle = FileHandle(forReadingAtPath: path) {
                read = .success((try? handle.read(upToCount: limit + 1)) ?? Data())
                try? handle.close()
            } else {
                read = .failure(ValidationError("cannot read \(what) \(path)"))
            }
            result.withLock { $0 = read }
        }
        thread.name = "playhead.read"
        thread.start()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let done = result.withLock({ $0 }) { return try done.get() }
            if let status = SignalWatcher.shared.exitStatus { throw CommandExit(status: status) }
            if Date() >= deadline {
                throw ValidationError("\(what) \(path) was not read within \(timeout) s (a FIFO or pipe that nobody writes to, or that never ends?)")
            }
            usleep(20_000)
        }
    }
}
