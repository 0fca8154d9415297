// Helpers shared by the integration tests, kept apart from the files holding @Test functions: on
// Swift 6.3.1 a non-Sendable class or `import Glibc` beside @Test fails to compile.
import Foundation
import Glibc
import Playhead
import Synchronization
import Testing

/// Runs blocking work (a child process, a socket wait) on a thread of its own, so that tests never
/// hold one of the few cooperative-pool threads other tests need.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// A bound on the child processes the tests run at once. Dozens of suites run in parallel in one
/// process; unbounded, they started over a hundred ffmpeg and playhead processes at once on a
/// two-core machine, and the test process itself then got so little of the CPU that seconds
/// passed between two of its steps (time bounds meant to catch hangs fired on work that was
/// merely starved). Waiting for a place is async: no thread is held.
final class ProcessGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let width: Int
    private let state = Locked(State())

    init(width: Int) { self.width = width }

    /// Runs `body` once fewer than `width` others run.
    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.running < width {
                    s.running += 1
                    return true
                }
                s.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        defer {
            // The place goes to the first waiter, or back to the pool.
            let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if s.waiting.isEmpty {
                    s.running -= 1
                    return nil
                }
                return s.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }

    /// Oracle runs (ffmpeg, ffprobe): self-contained, each reads its input and exits, and no test
    /// times one. (CLI runs are not gated: tests time them, and a place waited for would count.)
    static let reference = ProcessGate(width: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))
}

/// A loopback TCP server that accepts connections (through the kernel's backlog) and never sends
/// a byte: a source whose opening blocks until interrupted.
final class SilentServer: Sendable {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let listening = bound == 0 && listen(fd, 8) == 0
        if !listening { _ = Glibc.close(fd) }
        try #require(listening, "could not listen on a loopback port")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
    }

    func close() { _ = Glibc.close(fd) }

    /// Whether a client connected (left pending, not accepted) within `timeoutMilliseconds`: the
    /// open has really begun.
    func connectionPending(timeoutMilliseconds: Int32) -> Bool {
        var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pending, 1, timeoutMilliseconds) == 1
    }

    /// Accepts the pending connection and waits until the peer closes it. `true` when it closed
    /// within `timeoutMilliseconds`: proof that the client really gave up, not just its caller.
    func peerClosesConnection(timeoutMilliseconds: Int32) -> Bool {
        var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pending, 1, timeoutMilliseconds) == 1 else { return false }
        let connection = accept(fd, nil, nil)
        guard connection >= 0 else { return false }
        defer { _ = Glibc.close(connection) }
        var event = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&event, 1, timeoutMilliseconds) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(connection, &byte, 1, 0) == 0
    }
}

/// Calls `cancel` once `after` frames arrived; remembers whether it was aborted.
final class CancellingSink: FrameSink, Sendable {
    let pixelFormat = OutputPixelFormat.rgb24
    let after: Int
    let cancel: @Sendable () -> Void
    private let state = Locked((received: 0, aborted: false))

    init(after: Int, cancel: @escaping @Sendable () -> Void) {
        self.after = after
        self.cancel = cancel
    }

    var aborted: Bool { state.withLock { $0.aborted } }

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        let received = state.withLock { s -> Int in
            s.received += 1
            return s.received
        }
        if received == after { cancel() }
    }
    func finish() throws(PlayheadError) {}
    func abort() { state.withLock { $0.aborted = true } }
}

/// Takes a while per frame (20 ms by default), so a session is still running when a test looks.
final class SlowSink: FrameSink {
    let pixelFormat = OutputPixelFormat.rgb24
    let microseconds: UInt32
    init(microseconds: UInt32 = 20_000) { self.microseconds = microseconds }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) { usleep(microseconds) }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// Holds every write of the sinks made with it until the test opens it: sessions that must
/// overlap (or must not have ended) at a point of a test do so however loaded the machine is.
final class WriteGate: Sendable {
    private let opened = Locked(false)
    private let held = Locked(0)

    /// Lets every write through, now and later.
    func open() { opened.withLock { $0 = true } }

    /// How many writes have waited at the gate (counted when each arrives).
    var arrivals: Int { held.withLock { $0 } }

    /// A frame sink whose writes wait at this gate.
    func sink() -> some FrameSink { GatedSink(gate: self) }

    fileprivate func pass() {
        held.withLock { $0 += 1 }
        while !opened.withLock({ $0 }) { usleep(1000) }
    }
}

private final class GatedSink: FrameSink {
    let pixelFormat = OutputPixelFormat.rgb24
    let gate: WriteGate
    init(gate: WriteGate) { self.gate = gate }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) { gate.pass() }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// Records a player item's events, and how many callbacks ever ran at once.
final class RecordingObserver: PlayerItemObserver, Sendable {
    private let state = Locked((events: [PlayerItemEvent](), active: 0, maximum: 0))
    private let onEvent: (@Sendable (PlayerItem, PlayerItemEvent) -> Void)?

    init(onEvent: (@Sendable (PlayerItem, PlayerItemEvent) -> Void)? = nil) {
        self.onEvent = onEvent
    }

    var events: [PlayerItemEvent] { state.withLock { $0.events } }
    var maximumConcurrentCallbacks: Int { state.withLock { $0.maximum } }

    func playerItem(_ item: PlayerItem, didReceive event: PlayerItemEvent) {
        state.withLock { s in
            s.active += 1
            s.maximum = max(s.maximum, s.active)
            s.events.append(event)
        }
        onEvent?(item, event)
        state.withLock { $0.active -= 1 }
    }
}

/// Clock times at which frames reached the output.
final class TimeLog: Sendable {
    struct Entry: Sendable {
        var clock: Duration
        var presentationTime: MediaTime
    }
    let clock: any PlaybackClock
    private let log = Locked([Entry]())
    init(clock: any PlaybackClock) { self.clock = clock }
    func record(_ time: MediaTime) { log.withLock { $0.append(Entry(clock: clock.now(), presentationTime: time)) } }
    var entries: [Entry] { log.withLock { $0 } }
}

/// Records when each frame arrives; optionally "takes" `cost` of clock time per frame, or stalls
/// once, on frame number `stallAt`, for `stall` of real time (a slow disk or display).
final class TimestampSink: FrameSink, Sendable {
    let pixelFormat = OutputPixelFormat.rgb24
    let log: TimeLog
    let cost: Duration
    let clock: ManualPlaybackClock?
    let stallAt: Int?
    let stall: Duration
    private let count = Locked(0)
    init(log: TimeLog, cost: Duration = .zero, clock: ManualPlaybackClock? = nil, stallAt: Int? = nil, for stall: Duration = .zero) {
        self.log = log
        self.cost = cost
        self.clock = clock
        self.stallAt = stallAt
        self.stall = stall
    }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    func write(_ frame: VideoFrame) throws(PlayheadError) {
        log.record(frame.presentationTime)
        if cost > .zero { clock?.advance(by: cost) }
        let n = count.withLock {
            $0 += 1
            return $0
        }
        if n == stallAt { SystemPlaybackClock().sleep(for: stall) }
    }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// Times passed to a periodic observer, in seconds.
final class TickLog: Sendable {
    private let log = Locked([Double]())
    func add(_ time: MediaTime) { log.withLock { $0.append(time.seconds) } }
    var times: [Double] { log.withLock { $0 } }
}

/// Keeps every sample and when each buffer arrived; optionally stalls once, on buffer number
/// `stallAt`, for `stall` of real time (an audio output that fell behind).
final class TimedAudioSink: AudioSink {
    let log: TimeLog
    let stallAt: Int?
    let stall: Duration
    private let state = Locked((samples: [Int16](), info: AudioStreamInfo?.none, writes: 0, begins: 0))
    init(log: TimeLog, stallAt: Int? = nil, for stall: Duration = .zero) {
        self.log = log
        self.stallAt = stallAt
        self.stall = stall
    }
    var samples: [Int16] { state.withLock { $0.samples } }
    var info: AudioStreamInfo? { state.withLock { $0.info } }
    var begins: Int { state.withLock { $0.begins } }
    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {
        state.withLock {
            $0.info = info
            $0.begins += 1
        }
    }
    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        log.record(buffer.presentationTime)
        let n = state.withLock { s -> Int in
            s.samples.append(contentsOf: buffer.samples)
            s.writes += 1
            return s.writes
        }
        if n == stallAt { SystemPlaybackClock().sleep(for: stall) }
    }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// Takes `after` buffers, then fails every write (a full disk, a lost device).
final class FailingAudioSink: AudioSink {
    let after: Int
    private let writes = Locked(0)
    init(after: Int) { self.after = after }
    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}
    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        let n = writes.withLock {
            $0 += 1
            return $0
        }
        if n > after { throw PlayheadError(code: .writeFailed, message: "the audio output is gone", file: "audio-out") }
    }
    func finish() throws(PlayheadError) {}
    func abort() {}
}

/// A seeded random source (SplitMix64): random inputs that a failure can name and repeat. The
/// seed comes from PLAYHEAD_SEED when set, and from the clock otherwise.
struct SeededGenerator: RandomNumberGenerator {
    let seed: UInt64
    private var state: UInt64

    init() {
        let chosen =
            ProcessInfo.processInfo.environment["PLAYHEAD_SEED"].flatMap(UInt64.init)
            ?? UInt64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds)
        self.init(seed: chosen)
    }

    init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Threads of this process now (from /proc).
var processThreadCount: Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
    else { return 0 }
    return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
}

/// How late this process's tasks are woken now: a control sleep begun beside a wait under test.
/// The parallel batch on two busy cores can wake a task seconds late; a bound on a wait counted
/// past the control's lateness measures the code under test rather than that load (a cancelled
/// run's answer after its patience was 4.4 s late in one CI run, the control as late).
struct WakeLateness: Sendable {
    private let duration: Duration
    private let start: ContinuousClock.Instant
    private let woke: Task<ContinuousClock.Instant, Never>

    /// Begins a control sleep of `duration` now.
    /// - Parameter duration: how long the control sleeps (the wait's own patience, say).
    init(sleeping duration: Duration) {
        self.duration = duration
        start = ContinuousClock.now
        woke = Task {
            try? await Task.sleep(for: duration)
            return ContinuousClock.now
        }
    }

    /// Waits for the control to wake.
    /// - Returns: how far past its time it woke (zero at best).
    func measured() async -> Duration {
        max(.zero, await woke.value - start - duration)
    }
}

/// Runs `body` with a deadline: the test fails (instead of hanging) when `body` has not returned
/// in time. A body that never returns is left behind; the test goes on.
func withDeadline<T: Sendable>(_ limit: Duration, _ what: String, _ body: @escaping @Sendable () async -> T) async -> T? {
    let value: T? = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let resumed = Locked(false)
        let resume: @Sendable (T?) -> Void = { value in
            if resumed.withLock({ done in
                defer { done = true }
                return !done
            }) {
                continuation.resume(returning: value)
            }
        }
        Task { resume(await body()) }
        Task {
            try? await Task.sleep(for: limit)
            resume(nil)
        }
    }
    if value == nil { Issue.record("\(what) did not return within \(limit)") }
    return value
}

/// A new empty folder under the temporary directory.
func makeTemporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A JSON file's top-level object.
func readJSONObject(_ url: URL) throws -> [String: Any] {
    let data = try Data(contentsOf: url)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// A FIFO at `path` with one writer: a thread that opens it (blocking until a reader comes),
/// writes `contents` once, and closes it. `true` when the FIFO was made.
func makeFIFO(at path: String, writing contents: Data) -> Bool {
    guard mkfifo(path, 0o600) == 0 else { return false }
    Thread.detachNewThread {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { return }
        contents.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        close(fd)
    }
    return true
}

/// Temporary files (`….partial`) anywhere under `folder`: a run must leave none.
func leftoverTemporaryFiles(in folder: String) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
    return walker.compactMap { $0 as? String }.filter { ($0 as NSString).lastPathComponent.hasSuffix(".partial") }
}

/// Ways to run the CLI that ordinary use does not try: signals at chosen moments, standard streams
/// closed, full or broken, through a shell.
enum HostileRun {
    static let interrupt = SIGINT, terminate = SIGTERM, hangUp = SIGHUP

    struct Outcome: Sendable {
        var status: Int32
        /// Ended by a signal it did not handle (a crash, or a signal that killed it).
        var killedBySignal: Bool
        var stdout: String
        var stderr: String
        /// From the last signal sent to the process's end (zero when none was sent).
        var stoppedIn: Duration = .zero
    }

    /// Starts the CLI with `arguments`, sends `signal` after `delay` (and again `again` later, if
    /// given), and waits for the end.
    static func signalled(
        _ arguments: [String], signal: Int32, after delay: Duration, again: Duration? = nil, startedWhen started: (@Sendable () -> Bool)? = nil
    ) async throws -> Outcome {
        let executable = try CLI.binary()
        return try await offPool {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.environment = CLI.environment(adding: [:])
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let reader = Thread { _ = out.fileHandleForReading.readDataToEndOfFile() }
            reader.start()
            // A signal the run can catch waits until it catches it (before that, a loaded machine's
            // slow start would see the default action end the process).
            if signal != SIGKILL { waitUntilCaught(signal, by: process) }
            // The delay counts from when the run has started its work, when the caller can tell
            // (a loaded machine may take seconds to get there), up to a minute.
            if let started {
                let deadline = Date(timeIntervalSinceNow: 60)
                while !started(), Date() < deadline, process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
            }
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            kill(process.processIdentifier, signal)
            if let again {
                Thread.sleep(forTimeInterval: Double(again.components.seconds) + Double(again.components.attoseconds) / 1e18)
                kill(process.processIdentifier, signal)
            }
            let signalled = ContinuousClock.now
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(
                status: process.terminationStatus, killedBySignal: process.terminationReason == .uncaughtSignal, stdout: "",
                stderr: String(decoding: errData, as: UTF8.self), stoppedIn: ContinuousClock.now - signalled)
        }
    }

    /// Waits (up to a minute, or until it exits) until `process` has a handler for `signal`: its
    /// bit in the `SigCgt` mask of `/proc/PID/status`.
    static func waitUntilCaught(_ signal: Int32, by process: Process) {
        let deadline = Date(timeIntervalSinceNow: 60)
        while process.isRunning, Date() < deadline {
            let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let mask = status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }.flatMap {
                UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
            }
            if let mask, mask & (1 << UInt64(signal - 1)) != 0 { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Runs `/bin/sh -c "exec <playhead> <arguments> <redirections>"`: the redirections close,
    /// fill or redirect its streams (`>&-`, `2>/dev/full`, …). `brokenPipe` gives it a standard
    /// output nobody reads.
    /// `before` runs first, in the background (`before & exec …`): a writer into a FIFO.
    static func shell(_ arguments: [String], redirections: String = "", before: String? = nil, brokenPipe: Bool = false) async throws -> Outcome {
        let executable = try CLI.binary()
        return try await offPool {
            let quoted = ([executable.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", (before.map { "\($0) & " } ?? "") + "exec \(quoted) \(redirections)"]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            if brokenPipe { try out.fileHandleForReading.close() }
            try process.run()
            if brokenPipe { try out.fileHandleForWriting.close() }
            let outData = brokenPipe ? Data() : out.fileHandleForReading.readDataToEndOfFile()
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(
                status: process.terminationStatus, killedBySignal: process.terminationReason == .uncaughtSignal,
                stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
        }
    }

    /// The peak resident size (KB) of the CLI running `arguments`, measured by /usr/bin/time.
    static func peakMemory(_ arguments: [String]) async throws -> (status: Int32, kilobytes: Int) {
        let executable = try CLI.binary()
        return try await offPool {
            let report = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-rss-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: report) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            process.arguments = ["-f", "%M", "-o", report.path, executable.path] + arguments
            process.environment = CLI.environment(adding: [:])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            let text = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
            let kilobytes = text.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.last ?? -1
            return (process.terminationStatus, kilobytes)
        }
    }
}
