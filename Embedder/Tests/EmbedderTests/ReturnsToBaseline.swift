import Foundation
import Testing

/// What an app can see of the library's use of the process: open descriptors, and the threads at
/// work for it. Every thread the library starts is a pool thread named `playhead.<job>` while it
/// works and `playhead.worker` while it waits for the next job (kept for reuse, not at work);
/// FFmpeg's own threads (a decoder's frame threads) take the name of the thread that made them.
/// So the threads at work are those named `playhead.` something other than `playhead.worker`.
///
/// The runtime's own event descriptors are not counted: libdispatch opens a timerfd for each kind
/// of clock a wait first uses, and Foundation a run loop (an epoll, an eventfd, a timerfd) for each
/// thread that first runs one; each stays for the process's (or the thread's) life. The library
/// opens none of these itself.
struct ProcessResources: Equatable, CustomStringConvertible {
    /// What each open descriptor names (a path, `socket:[…]`, `pipe:[…]`, …).
    var openFiles: [String]
    var workingThreads: [String]
    var descriptors: Int { openFiles.count }

    /// What the process holds now (Linux: `/proc/self`).
    static func now() -> ProcessResources {
        let files = FileManager.default
        let runtime: Set = ["anon_inode:[timerfd]", "anon_inode:[eventfd]", "anon_inode:[eventpoll]"]
        let open = ((try? files.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).map { fd in
            (try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "(closed while listed)"
        }
        .filter { !runtime.contains($0) }
        let tasks = (try? files.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let names = tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return ProcessResources(
            openFiles: open.sorted(), workingThreads: names.filter { $0.hasPrefix("playhead.") && $0 != "playhead.worker" }.sorted())
    }

    /// Whether nothing more is held than in `baseline`.
    func isWithin(_ baseline: ProcessResources) -> Bool {
        descriptors <= baseline.descriptors && workingThreads.count <= baseline.workingThreads.count
    }

    var description: String { "\(descriptors) descriptors, threads at work: \(workingThreads)" }

    /// What is open now and was not in `baseline`.
    func opened(since baseline: ProcessResources) -> [String] {
        var left = baseline.openFiles
        return openFiles.filter { name in
            guard let index = left.firstIndex(of: name) else { return true }
            left.remove(at: index)
            return false
        }
    }
}

/// Each test of a suite must give back what it took: once it returns, the process's open
/// descriptors and the library's threads at work come back to what they were before it (within
/// `patience`: a session's threads end as its last job does). A suite that has it must run alone
/// (`.serialized`, and by itself in `scripts/test.sh`): the counts are the process's.
struct ReturnsToBaseline: SuiteTrait, TestTrait, TestScoping {
    var patience: Duration = .seconds(15)
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        let before = ProcessResources.now()
        try await function()
        let until = ContinuousClock.now + patience
        var after = ProcessResources.now()
        while !after.isWithin(before), ContinuousClock.now < until {
            try await Task.sleep(for: .milliseconds(50))
            after = ProcessResources.now()
        }
        #expect(
            after.isWithin(before),
            "\(test.name) kept what it took: before \(before); after \(patience): \(after); opened: \(after.opened(since: before))")
    }
}

extension Trait where Self == ReturnsToBaseline {
    /// Each test gives back the descriptors and threads it took (``ReturnsToBaseline``).
    static var returnsToBaseline: Self { ReturnsToBaseline() }
}
