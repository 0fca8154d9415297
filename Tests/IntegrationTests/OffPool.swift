import Foundation

/// Runs blocking work (a child process, a socket wait) on a thread of its own, so that tests never
/// hold one of the few cooperative-pool threads other tests need.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
