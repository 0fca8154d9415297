import Foundation
import Logging
import Synchronization

/// A media file or URL whose properties load asynchronously.
///
/// ```swift
/// let asset = Asset(url: URL(filePath: "clip.mp4"))
/// let (tracks, duration) = try await asset.load(.tracks, .duration)
/// ```
///
/// One probe of the file (open + stream analysis, on a dedicated I/O thread, never on Swift's
/// cooperative pool) serves every key. Concurrent callers share it. A successful or failed load is
/// kept; a cancelled one can be started again by the next `load`.
public actor Asset {
    /// The asset's location.
    public nonisolated let url: URL
    /// The path (for file URLs) or the URL string handed to FFmpeg.
    public nonisolated let source: String
    private nonisolated let options: AssetOptions
    private let logger: Logger

    /// Identifies this asset's idle demuxers (see ``IdleDemuxers``).
    nonisolated let token = Asset.tokens.wrappingAdd(1, ordering: .relaxed).newValue
    private static let tokens = Atomic<Int>(0)
    /// A demuxer the probe opened on a source that cannot be opened again, kept for its first user.
    private nonisolated let oneShot = Locked<DemuxerBox?>(nil)

    private var machine = AssetLoadingStateMachine()
    private var continuations: [Int: CheckedContinuation<Result<AssetDescription, PlayheadError>, Never>] = [:]
    private var nextWaiter = 0
    private var interrupt: InterruptFlag?

    /// An asset for `url` (a file URL or any URL FFmpeg can open). Nothing is read until a key is loaded.
    public init(url: URL, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.url = url
        self.source = url.isFileURL ? url.path : url.absoluteString
        self.options = options
        self.logger = logger ?? Logger(label: "playhead.asset", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// An asset for a local path.
    public init(path: String, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.init(url: URL(fileURLWithPath: path), options: options, logger: logger)
    }

    /// Loads the given properties (once; later calls answer from what was loaded) and returns
    /// their values. Throws ``PlayheadError`` naming the file and the stage that failed, or with
    /// code ``PlayheadError/Code/cancelled`` when the calling task or ``cancelLoading()`` cancels.
    public nonisolated func load<each Value: Sendable>(_ property: repeat AssetProperty<each Value>) async throws(PlayheadError) -> (repeat each Value) {
        var keys: Set<AssetKey> = []
        repeat keys.insert((each property).key)
        let description = try await loadDescription(keys)
        return (repeat (each property).read(description))
    }

    /// Where the loading of `key` stands.
    public func status(of key: AssetKey) -> AssetKeyStatus {
        machine.status(of: key)
    }

    /// Cancels a running load: the file's opening is interrupted, and every waiting caller gets a
    /// ``PlayheadError/Code/cancelled`` error. Keys already loaded stay loaded.
    public func cancelLoading() {
        perform(machine.cancelAll(file: source))
    }

    func loadDescription(_ keys: Set<AssetKey>) async throws(PlayheadError) -> AssetDescription {
        if Task.isCancelled { throw .cancelled(file: source) }
        let waiter = nextWaiter
        nextWaiter += 1
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<AssetDescription, PlayheadError>, Never>) in
                switch machine.load(keys, waiter: waiter) {
                case .succeed(let description):
                    continuation.resume(returning: .success(description))
                case .fail(let error):
                    continuation.resume(returning: .failure(error))
                case .wait:
                    continuations[waiter] = continuation
                case .startProbe(let generation):
                    continuations[waiter] = continuation
                    startProbe(generation: generation)
                }
            }
        } onCancel: {
            Task { await self.waiterCancelled(waiter) }
        }
        return try result.get()
    }

    private func startProbe(generation: Int) {
        let flag = InterruptFlag(timeout: options.openTimeout)
        interrupt = flag
        logger.debug("probing", metadata: ["file": "\(source)"])
        Task {
            let result: Result<AssetDescription, PlayheadError>
            do throws(PlayheadError) {
                result = .success(try await WorkerPool.shared.value("playhead.probe") { () throws(PlayheadError) in
                    let demuxer = try Demuxer.open(self.source, interrupt: flag)
                    let description = demuxer.describe()
                    // Kept open for the first player or generator: a pipe cannot be opened twice,
                    // and a file need not be.
                    self.giveBack(demuxer)
                    return description
                })
            } catch {
                result = .failure(error)
            }
            await self.probeFinished(generation: generation, result: result)
        }
    }

    /// An opened demuxer of this asset's source, for a session or a generator: the one its probe
    /// left, an idle one, or a newly opened one. Blocking (call on a worker thread). It is then
    /// `interrupt`'s to stop.
    nonisolated func openDemuxer(interrupt: InterruptFlag) throws(PlayheadError) -> Demuxer {
        let kept = oneShot.withLock { box -> DemuxerBox? in
            defer { box = nil }
            return box
        } ?? IdleDemuxers.shared.take(token: token)
        if let demuxer = kept?.take() {
            demuxer.attach(interrupt)
            return demuxer
        }
        return try Demuxer.open(source, interrupt: interrupt)
    }

    /// Takes back a demuxer after use, to be used again. A source that cannot seek was read once
    /// and is used up, unless nothing was read from it yet.
    nonisolated func giveBack(_ demuxer: Demuxer) {
        demuxer.attach(nil)
        let box = DemuxerBox(demuxer, token: token)
        if box.isOneShot {
            if demuxer.isFresh { oneShot.withLock { $0 = box } }
            return
        }
        IdleDemuxers.shared.put(box)
    }

    private func probeFinished(generation: Int, result: Result<AssetDescription, PlayheadError>) {
        if case .failure(let error) = result {
            logger.debug("probe failed", metadata: ["file": "\(source)", "error": "\(error)"])
        }
        perform(machine.probeFinished(generation: generation, result: result))
    }

    private func waiterCancelled(_ waiter: Int) {
        perform(machine.waiterCancelled(waiter, file: source))
    }

    private func perform(_ action: AssetLoadingStateMachine.ResumeAction) {
        if action.interruptProbe {
            interrupt?.raise()
            interrupt = nil
        }
        for id in action.waiters {
            continuations.removeValue(forKey: id)?.resume(returning: action.result)
        }
    }
}

/// How an ``Asset`` opens its source.
public struct AssetOptions: Sendable, Hashable {
    /// Give up opening and probing after this long (useful for network URLs); nil waits as long as it takes.
    public var openTimeout: Duration?

    public init(openTimeout: Duration? = nil) {
        self.openTimeout = openTimeout
    }
}
