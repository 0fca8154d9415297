import Glibc

/// A value guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux intercepts pthread
/// mutexes but not the futex-based `Mutex`, and reports every access inside `Mutex.withLock` as a
/// race; with this lock the sanitizer's reports mean something.
///
/// `@unchecked Sendable` is safe: `value` is only read or written inside `withLock`, between
/// `pthread_mutex_lock` and `pthread_mutex_unlock` on the same mutex, which orders every access;
/// `withLock` takes and returns only `sending`-free values that the closure copied out.
package final class Locked<Value>: @unchecked Sendable {
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
