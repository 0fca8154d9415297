import Synchronization

/// Continuations waiting for something, each under its own key, so that a waiting task's
/// cancellation can take out its own continuation (and only it) and resume it.
package struct Waiters<Value: Sendable>: Sendable {
    private var waiting: [UInt64: CheckedContinuation<Value, Never>] = [:]

    package init() {}

    package var isEmpty: Bool { waiting.isEmpty }

    package mutating func insert(_ continuation: CheckedContinuation<Value, Never>, key: UInt64) { waiting[key] = continuation }

    package mutating func remove(_ key: UInt64) -> CheckedContinuation<Value, Never>? { waiting.removeValue(forKey: key) }

    /// Every waiter, taken out (to be resumed outside the lock).
    package mutating func takeAll() -> [CheckedContinuation<Value, Never>] {
        defer { waiting.removeAll() }
        return Array(waiting.values)
    }
}

private let waitKeys = Atomic<UInt64>(0)

/// Waits under `lock` until resumed, or until the calling task is cancelled, which resumes the
/// wait with `cancelled`. `register` (under the lock) either answers at once — returns the value
/// when what is waited for is already there — or keeps the continuation under the key and returns
/// nil; `unregister` (under the lock) takes it back out. Every exit resumes exactly once: a
/// cancellation that comes before the registration is seen by it (the task's flag is read under
/// the same lock), one that comes after finds the continuation and resumes it.
package func cancellableWait<State: Sendable, Value: Sendable>(
    _ lock: Locked<State>, cancelled: Value,
    register: @escaping @Sendable (inout State, UInt64, CheckedContinuation<Value, Never>) -> Value?,
    unregister: @escaping @Sendable (inout State, UInt64) -> CheckedContinuation<Value, Never>?
) async -> Value {
    let key = waitKeys.wrappingAdd(1, ordering: .relaxed).newValue
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            let now = lock.withLock { state -> Value? in
                if Task.isCancelled { return cancelled }
                return register(&state, key, continuation)
            }
            if let now { continuation.resume(returning: now) }
        }
    } onCancel: {
        lock.withLock { unregister(&$0, key) }?.resume(returning: cancelled)
    }
}
