import Foundation
import Logging
import PlayheadMedia
import Synchronization

/// A media file or URL whose properties load asynchronously.
///
/// ```swift
/// let asset = Asset(url: URL(filePath: "clip.mp4"))
/// let (tracks, duration) = try await asset.load(.tracks, .duration)
/// ```
///
/// One probe of the file (open + stream analysis, on one of Playhead's worker threads, never on Swift's
/// cooperative pool) serves every key. Concurrent callers share it. A successful or failed load is
/// kept; a cancelled one can be started again by the next `load`.
public actor Asset {
    /// The asset's location.
    public nonisolated let url: URL
    /// The path (for file URLs) or the URL string handed to FFmpeg.
    public nonisolated let source: String
    /// What the demuxer opens.
    nonisolated let input: MediaInput
    /// A local file's version when the asset was made: what its measures (loudness, a sound's
    /// extent) belong to, even once the file at its path was replaced.
    nonisolated let fileStamp: FileStamp?
    private nonisolated let options: AssetOptions
    /// How long the source may send nothing before a read fails (``AssetOptions/stallTimeout``);
    /// nil: no limit.
    nonisolated var stallTimeout: Duration? { options.stallTimeout }
    /// Which tracks play (``AssetOptions/selection``).
    nonisolated var selection: MediaSelection { options.selection }
    /// How long an open may take (``AssetOptions/openTimeout``); nil: no limit.
    nonisolated var openTimeout: Duration? { options.openTimeout }
    /// Whether a read may wait on a writer or a network (a URL, a byte source, a FIFO, a device),
    /// not only on a disk (a regular file: looked at now).
    nonisolated var readsCanStall: Bool {
        guard url.isFileURL, input.bytes == nil else { return true }
        return FileStamp(path: url.path)?.isRegularFile != true
    }
    private let logger: Logger

    /// Identifies this asset's idle demuxers (see ``IdleDemuxers``).
    nonisolated let token = Asset.tokens.wrappingAdd(1, ordering: .relaxed).newValue
    private static let tokens = Atomic<Int>(0)
    /// How the source has been read, shared with the assets ``selecting(_:)`` makes of it (see
    /// ``SourceReading``): a source read once (a pipe, a FIFO, a stream byte source) is opened
    /// by one of them alone (its bytes are gone: a second open would read from the middle), one
    /// that only cannot seek once open is not opened again by the asset that read it, and the
    /// demuxer a probe left is kept for the asset whose selection chose its tracks.
    private nonisolated let reading: SourceReading

    private var machine = AssetLoadingStateMachine()
    private var continuations: [Int: CheckedContinuation<Result<AssetDescription, PlayheadError>, Never>] = [:]
    private var nextWaiter = 0
    private var interrupt: InterruptFlag?
    /// Ends a probe's wait at the open timeout when the probe cannot be interrupted (a byte
    /// source's read that does not return); cancelled when the probe ends.
    private var probeWatchdog: (generation: Int, task: Task<Void, Never>)?

    deinit {
        // Its idle demuxers go with it: nobody can take them any more (a file it named is closed,
        // an upload's memory freed).
        IdleDemuxers.shared.discard(token: token)
        reading.discard(token: token)
    }

    /// An asset for `url` (a file URL or any URL FFmpeg can open). Nothing is read until a key is loaded.
    ///
    /// A file URL's path is opened byte for byte after its percent escapes are decoded, so a name
    /// that is not UTF-8 can be given as `file:///dir/caf%E9.mp4` (``source`` is then that URL).
    /// - Parameters:
    ///   - url: a file URL, or any URL FFmpeg can open.
    ///   - options: how the source is opened (timeouts, reconnection).
    ///   - logger: where the asset logs its probe; nil logs nothing.
    public init(url: URL, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.url = url
        fileStamp = url.isFileURL ? FileStamp(path: url.path) : nil
        if url.isFileURL {
            var path = MediaInput.pathBytes(ofFileURLPath: url.path(percentEncoded: true))
            // As `URL.path` gives it: a folder's URL ends in `/`, its path does not.
            while path.count > 1, path.last == UInt8(ascii: "/") { path.removeLast() }
            // `file://host/path` names a file on that host, not this machine's `/path`.
            let otherHost = url.host(percentEncoded: false).flatMap { $0.isEmpty || $0.lowercased() == "localhost" ? nil : $0 }
            let source = otherHost == nil ? String(validating: path, as: UTF8.self) ?? url.absoluteString : url.absoluteString
            var input = MediaInput(path: path, name: source)
            if let otherHost {
                input.refusal =
                    "a file: URL naming another host (\(otherHost)): only this machine's files open (file:///path or file://localhost/path)"
            }
            self.source = source
            self.input = input
        } else {
            self.source = url.absoluteString
            self.input = MediaInput(source)
        }
        self.options = options
        self.logger = logger ?? Logger(label: "playhead.asset", factory: { _ in SwiftLogNoOpLogHandler() })
        reading = SourceReading()
    }

    /// An asset for a local path.
    /// - Parameters:
    ///   - path: the file's path, absolute or relative to the current directory.
    ///   - options: how the source is opened (timeouts, reconnection).
    ///   - logger: where the asset logs its probe; nil logs nothing.
    public init(path: String, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.init(url: URL(fileURLWithPath: path), options: options, logger: logger)
    }

    /// An asset for what a user typed: `-` (standard input, read once), a `file:` URL, a URL with
    /// a scheme FFmpeg opens (`http:`, `https:`, `pipe:`, `data:`, …), or else a path. The one
    /// rule every command and the coordinator use.
    /// - Parameters:
    ///   - source: `-`, a URL or a path, as a user typed it.
    ///   - options: how the source is opened (timeouts, reconnection).
    ///   - logger: where the asset logs its probe; nil logs nothing.
    public init(source: String, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.init(url: Self.location(of: source), options: options, logger: logger)
    }

    /// An asset whose bytes come from `byteSource` (held in memory, fetched by the caller's own
    /// client); `name` is what errors and logs call it, and ``url`` is `bytes:` + `name`.
    /// The open timeout applies between reads; a read itself is not interrupted (see ``ByteSource``).
    /// - Parameters:
    ///   - byteSource: the source of the bytes.
    ///   - name: what errors and logs call the asset; it is also its ``source``.
    ///   - options: how the source is opened (the open timeout).
    ///   - logger: where the asset logs its probe; nil logs nothing.
    public init(byteSource: any ByteSource, name: String, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.init(bytes: .blocking(byteSource), name: name, options: options, logger: logger)
    }

    /// An asset whose bytes the caller fetches asynchronously (an object store through the
    /// caller's HTTP client, a database); `name` is what errors and logs call it, and ``url`` is
    /// `bytes:` + `name`. Each read is bounded by the stall timeout, the opening by the open
    /// timeout, and a cancellation stops a read within 100 ms (see ``AsyncByteSource``).
    /// - Parameters:
    ///   - byteSource: the source of the bytes.
    ///   - name: what errors and logs call the asset; it is also its ``source``.
    ///   - options: how the source is opened (the open and stall timeouts).
    ///   - logger: where the asset logs its probe; nil logs nothing.
    public init(byteSource: any AsyncByteSource, name: String, options: AssetOptions = AssetOptions(), logger: Logger? = nil) {
        self.init(bytes: .async(byteSource), name: name, options: options, logger: logger)
    }

    private init(bytes: CustomBytes, name: String, options: AssetOptions, logger: Logger?) {
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "source"
        self.url = URL(string: "bytes:" + encoded) ?? URL(fileURLWithPath: "/")
        self.source = name
        self.input = MediaInput(bytes: bytes, name: name)
        fileStamp = nil
        self.options = options
        self.logger = logger ?? Logger(label: "playhead.asset", factory: { _ in SwiftLogNoOpLogHandler() })
        reading = SourceReading()
    }

    /// The same source with other tracks playing (the French sound, the lowest HLS variant): a new
    /// asset, as `AVPlayerItem.select(_:in:)` picks another option of the same asset — its keys
    /// loaded afresh, its demuxers its own (see ``AssetOptions/selection``). A byte source is
    /// shared: a source read once (a pipe, standard input, a FIFO, a stream byte source) is read
    /// by one of the asset and those made of it, the first to open it; the others fail with
    /// `state.invalidArgument` (give such a source its selection in ``AssetOptions/selection``
    /// when it is made). A URL is asked again for each (an HLS variant is another playlist).
    /// - Parameter selection: the tracks that play.
    /// - Returns: an asset of the same source, version and options but `selection`.
    public nonisolated func selecting(_ selection: MediaSelection) -> Asset {
        var options = self.options
        options.selection = selection
        return Asset(sameSourceAs: self, options: options)
    }

    private init(sameSourceAs other: Asset, options: AssetOptions) {
        url = other.url
        source = other.source
        input = other.input
        fileStamp = other.fileStamp
        self.options = options
        logger = other.logger
        reading = other.reading
    }

    static func location(of source: String) -> URL {
        if source == "-" { return URL(string: "pipe:0") ?? URL(fileURLWithPath: source) }
        // A name that is on disk is that file, even when it reads like a URL (`take:1.mp4`).
        var info = stat()
        if !source.contains("://"), lstat(source, &info) == 0 { return URL(fileURLWithPath: source) }
        if let url = URL(string: source), let scheme = url.scheme?.lowercased(), scheme.count > 1 {
            // Kept as written: its percent escapes may stand for bytes that are not UTF-8.
            if scheme == "file" { return url }
            return url
        }
        return URL(fileURLWithPath: source)
    }

    /// Loads the given properties (once; later calls answer from what was loaded) and returns
    /// their values. Throws ``PlayheadError`` naming the file and the stage that failed, or with
    /// code ``PlayheadError/Code/cancelled`` when the calling task or ``cancelLoading()`` cancels.
    /// - Parameter property: the properties to load, such as `.tracks` and `.duration`.
    /// - Returns: their values, in the order they were asked for.
    /// - Throws: ``PlayheadError`` from opening the source: an `io` code (`io.fileNotFound`, `io.permissionDenied`,
    ///   `io.emptyFile`, `io.timedOut`, …) or a `demux` code (`demux.unrecognizedFormat`, `demux.openFailed`,
    ///   `demux.noStreams`, …); `state.cancelled` when the calling task or ``cancelLoading()`` cancels the load.
    public nonisolated func load<each Value: Sendable>(
        _ property: repeat AssetProperty<each Value>
    ) async throws(PlayheadError) -> (repeat each Value) {
        var keys: Set<AssetKey> = []
        for property in repeat each property { keys.insert(property.key) }
        let description = try await loadDescription(keys)
        return (repeat (each property).read(description))
    }

    /// Loads one property (once; later calls answer from what was loaded) and returns its value:
    /// the same load as the variadic form, so that `for track in try await asset.load(.tracks)`
    /// and `asset.load(.chapters).first` read as they are written.
    /// - Parameter property: the property to load, such as `.tracks` or `.chapters`.
    /// - Returns: its value.
    /// - Throws: ``PlayheadError`` from opening the source, as the variadic form throws it.
    public nonisolated func load<Value: Sendable>(_ property: AssetProperty<Value>) async throws(PlayheadError) -> Value {
        property.read(try await loadDescription([property.key]))
    }

    /// Where the loading of `key` stands.
    /// - Parameter key: the key asked about.
    /// - Returns: whether it is not yet loaded, loading, loaded, failed (with the error) or cancelled.
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
        let flag = InterruptFlag()
        interrupt = flag
        logger.debug("probing", metadata: ["file": "\(SourceRedaction.redacted(source))"])
        Task {
            let result: Result<AssetDescription, PlayheadError>
            do throws(PlayheadError) {
                result = .success(
                    try await WorkerPool.shared.value("playhead.probe") { () throws(PlayheadError) in
                        try self.probeSource(interrupt: flag)
                    })
            } catch {
                result = .failure(error)
            }
            self.probeFinished(generation: generation, result: result)
        }
        if let limit = options.openTimeout, case .blocking? = input.bytes {
            // FFmpeg's interrupt callback bounds its own waits, and an async byte source's reads
            // are bounded by its own task; a blocking byte source's read runs the caller's code,
            // which nothing interrupts. Half a second after the limit the waiters are answered
            // anyway (the thread is left to end when the read returns; the raised flag then stops
            // FFmpeg at once). Only then: a sleeping task per probe would hold its memory until
            // its timer fired, cancelled or not.
            let source = self.source
            probeWatchdog?.task.cancel()
            let task = Task {
                guard (try? await Task.sleep(for: limit + .milliseconds(500))) != nil else { return }
                flag.raise()
                let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
                self.probeFinished(
                    generation: generation,
                    result: .failure(
                        PlayheadError(
                            code: .timedOut, message: "the source did not open within \(seconds) s (a read that does not return?)", file: source)))
            }
            probeWatchdog = (generation, task)
        }
    }

    /// An opened demuxer of this asset's source, for a session or a generator: the one its probe
    /// left, an idle one, or a newly opened one. Blocking (call on a worker thread). It is then
    /// `interrupt`'s to stop. A source read once that another open of this asset is opening is
    /// waited for (as long as the open timeout, and half a second): then the demuxer the probe
    /// left is taken, or the source was read (`demux.seekFailed`), or that open's failure is this one's.
    nonisolated func openDemuxer(interrupt: InterruptFlag) throws(PlayheadError) -> Demuxer {
        try oneOpenAtATime(interrupt: interrupt, handsBack: false, lookFirst: { keptDemuxer(interrupt: interrupt) }, use: { $0 })
    }

    /// What the probe finds: the source opened and described, its demuxer kept open for the
    /// first player or generator (a pipe cannot be opened twice, and a file need not be). A
    /// source that cannot seek which a session of this asset opened first is described by what
    /// that open found. Blocking (call on a worker thread).
    private nonisolated func probeSource(interrupt: InterruptFlag) throws(PlayheadError) -> AssetDescription {
        try oneOpenAtATime(interrupt: interrupt, handsBack: true, lookFirst: { reading.found(token: token) }) { demuxer in
            let description = demuxer.describe()
            giveBack(demuxer)
            reading.handedBack(token: token)
            return description
        }
    }

    /// The rule of ``SourceReading`` for one opener: looks at what is there first (`lookFirst`),
    /// else opens the source, or waits for the open of it under way and looks again. A claim
    /// refused as read (`demux.seekFailed`) looks once more: the open under way may have ended
    /// with what `lookFirst` finds between the look and the claim.
    /// - Parameters:
    ///   - interrupt: what stops the open and the waits.
    ///   - handsBack: whether `use` hands the demuxer back and calls `reading.handedBack`.
    ///   - lookFirst: what is there without an open (a kept demuxer, a recorded description).
    ///   - use: what becomes of a demuxer this opener opened.
    /// - Returns: what `lookFirst` found or `use` made.
    /// - Throws: the open's error, the error of the open waited for, `demux.seekFailed`, or
    ///   `io.timedOut` when the wait lasts the open timeout and half a second.
    private nonisolated func oneOpenAtATime<Value>(
        interrupt: InterruptFlag, handsBack: Bool, lookFirst: () -> Value?, use: (Demuxer) -> Value
    ) throws(PlayheadError) -> Value {
        var waiting = OpenWait(limit: options.openTimeout)
        while true {
            if let found = lookFirst() { return found }
            let opening: Opening
            do {
                opening = try openSource(interrupt: interrupt, handsBack: handsBack, waitedFor: waiting.open)
            } catch {
                if error.code == .seekFailed, let found = lookFirst() { return found }
                throw error
            }
            switch opening {
            case .opened(let demuxer): return use(demuxer)
            case .wait(let open): try wait(&waiting, for: open, interrupt: interrupt)
            }
        }
    }

    /// How long an open has waited for another one under way, and for which.
    private struct OpenWait {
        /// The open timeout and half a second (what the probe's watchdog allows), from the first
        /// wait on; nil: no limit.
        let limit: Duration?
        var since: ContinuousClock.Instant?
        /// The number of the open waited for.
        var open: Int?
    }

    /// Waits a little for the open of number `open`, under way; throws `io.timedOut` once the
    /// wait has lasted the open timeout and half a second.
    private nonisolated func wait(_ waiting: inout OpenWait, for open: Int, interrupt: InterruptFlag) throws(PlayheadError) {
        waiting.open = open
        let now = ContinuousClock.now
        let since = waiting.since ?? now
        waiting.since = since
        if let limit = waiting.limit, now - since >= limit + .milliseconds(500) {
            throw PlayheadError(code: .timedOut, message: "another open of this source read once did not end within the open timeout", file: source)
        }
        try reading.waitForTheOpenUnderWay(interrupt: interrupt, file: source)
    }

    /// A demuxer of this asset's source already open (the one its probe left, or an idle one),
    /// attached to `interrupt`; nil when there is none. Never blocks.
    nonisolated func keptDemuxer(interrupt: InterruptFlag) -> Demuxer? {
        let kept = reading.takeKept(token: token) ?? IdleDemuxers.shared.take(token: token)
        guard let demuxer = kept?.take() else { return nil }
        demuxer.attach(interrupt)
        return demuxer
    }

    /// Opens the source anew, unless it cannot seek and this asset read it already, or it is read
    /// once and another asset of it (another selection) holds it.
    /// - Parameters:
    ///   - interrupt: what stops the open.
    ///   - handsBack: whether the caller (the probe) hands the demuxer back for the next user and
    ///     then calls `reading.handedBack`.
    ///   - waitedFor: the number of the open under way the caller waited for, if it did: its
    ///     failure is the caller's.
    /// - Returns: the demuxer, or the number of the open of this source read once under way.
    private nonisolated func openSource(interrupt: InterruptFlag, handsBack: Bool, waitedFor: Int?) throws(PlayheadError) -> Opening {
        if case .wait(let open) = try reading.claim(token: token, readOnce: input.isReadOnce, file: source, waitedFor: waitedFor) {
            return .wait(open)
        }
        let attempt = OpenAttempt()
        do {
            let demuxer = try Demuxer.open(input, interrupt: interrupt, options: options, attempt: attempt)
            reading.opened(token: token, canSeek: demuxer.canSeek, found: { demuxer.describe() }, handsBack: handsBack)
            return .opened(demuxer)
        } catch {
            reading.openFailed(token: token, error: error, readBytes: attempt.readBytes)
            throw error
        }
    }

    /// What an open of the source gave.
    private enum Opening {
        case opened(Demuxer)
        /// Another open of this source read once is under way: the one of this number.
        case wait(Int)
    }

    /// Takes back a demuxer after use, to be used again. A source that cannot seek was read once
    /// and is used up, unless nothing was read from it yet; one whose source stalled or failed is
    /// closed (the next user opens the source anew).
    nonisolated func giveBack(_ demuxer: Demuxer) {
        demuxer.attach(nil)
        guard demuxer.isReusable else { return }
        let box = DemuxerBox(demuxer, token: token)
        if box.isOneShot {
            if demuxer.isFresh { reading.keep(box) }
            return
        }
        IdleDemuxers.shared.put(box)
    }

    private func probeFinished(generation: Int, result: Result<AssetDescription, PlayheadError>) {
        if let watchdog = probeWatchdog, watchdog.generation == generation {
            watchdog.task.cancel()
            probeWatchdog = nil
        }
        if case .failure(let error) = result {
            logger.debug("probe failed", metadata: ["file": "\(SourceRedaction.redacted(source))", "error": "\(error)"])
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
