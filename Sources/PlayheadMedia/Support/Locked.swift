import Glibc

/// A value guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux intercepts pthread
/// mutexes but not the futex-based `Mutex`, and reports every access inside `Mutex.withLock` as a
/// race; with this lock the sanitizer's reports mean something.
///
/// Sendable (for a `Sendable` value) is safe: `value` is only read or written inside `withLock`, between
/// `pthread_mutex_lock` and `pthread_mutex_unlock` on the same mutex, which orders every access;
/// `withLock` takes and returns only `sending`-free values that the closure copied out.
package final class Locked<Value> {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// `@unchecked` for the reason above; only for a value that may itself cross threads (as NIO's
/// locked box): a lock makes access exclusive, it does not make a non-`Sendable` value safe to
/// share.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// A value that is not `Sendable` (a muxer, FFmpeg objects) owned by one lock for good: it comes
/// in as `sending` (nothing else holds it) and every access is inside ``withLock``, whose result
/// must be `Sendable` — so no reference into the value can leave the lock, which is what makes
/// sharing the box between threads safe (`@unchecked` for that reason, checked by the compiler at
/// every use rather than promised in a comment).
package final class LockedExclusive<Value>: @unchecked Sendable {
    private let locked: Locked<Value>

    package init(_ value: sending Value) { locked = Locked(value) }

    /// Runs `body` with exclusive access to the value; only a `Sendable` result comes out.
    @discardableResult
    package func withLock<Result: Sendable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try locked.withLock(body)
    }
}
