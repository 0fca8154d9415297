import Playhead

/// Runs blocking work — reading a layout, stat'ing and opening what a run wrote, FFmpeg's opens —
/// on a thread of the library's one budget, never on Swift's cooperative pool, and returns its
/// result (or rethrows its error) to the awaiting task.
/// - Parameters:
///   - name: the thread's name while it runs.
///   - body: the work.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws.
func blocking<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await WorkerPool.shared.value(name) { Result { try body() } }
    return try result.get()
}

/// Runs blocking work that cannot fail on a thread of the library's budget.
/// - Parameters:
///   - name: the thread's name while it runs.
///   - body: the work.
/// - Returns: what `body` returns.
func blocking<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await WorkerPool.shared.value(name, body)
}
