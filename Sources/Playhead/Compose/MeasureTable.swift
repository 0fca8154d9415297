import Foundation
import PlayheadMedia

/// A measure of each source, taken once per version of it (an asset made after its file was
/// replaced is measured again) on a worker thread: asked for ahead (``prefetch(_:)``, when a layer
/// starts or is edited) and waited for when needed — never by the render thread of a channel,
/// which takes what is measured (``measured(_:)``). One table per measure: the sound-only items' extents
/// (``SoundExtentTable``), the items' lengths for a schedule (``ItemLengthTable``).
///
/// A measure that failed (a source down for a moment) is kept ``failureLifetime`` only: asked
/// for after that, it is taken again — a channel running for days is not left with a failure
/// of its first minute.
final class MeasureTable<Value: Sendable>: Sendable {
    private enum Entry: Sendable {
        case pending
        /// Taken (`at`, on the monotonic clock).
        case done(Result<Value, PlayheadError>, at: ContinuousClock.Instant)
    }

    /// How long a failed measure stands before it is taken again.
    let failureLifetime: Duration

    /// By version: two versions of one source (a file replaced, a recording that grows) are
    /// measured apart; at most ``versionsKept`` of a source are kept.
    private let entries = Locked<[SourceVersion: Entry]>([:])
    static var versionsKept: Int { 4 }
    private let done = NSCondition()
    /// The worker thread's name while measuring.
    private let name: String
    private let measure: @Sendable (Asset, InterruptFlag) throws(PlayheadError) -> Value

    /// - Parameters:
    ///   - name: the worker thread's name while measuring.
    ///   - failureLifetime: how long a failed measure stands before it is taken again.
    ///   - measure: takes the measure of an asset on the calling thread (`interrupt` stops it).
    init(
        name: String, failureLifetime: Duration = .seconds(30),
        measure: @escaping @Sendable (Asset, InterruptFlag) throws(PlayheadError) -> Value
    ) {
        self.name = name
        self.failureLifetime = failureLifetime
        self.measure = measure
    }

    /// The entry of `version` as it stands now: a failure older than ``failureLifetime`` is gone.
    private func current(_ version: SourceVersion, in table: inout [SourceVersion: Entry]) -> Entry? {
        if case .done(.failure, let at)? = table[version], ContinuousClock.now - at >= failureLifetime { table[version] = nil }
        return table[version]
    }

    /// Starts measuring those of `assets` not measured yet, on worker threads.
    func prefetch(_ assets: [Asset]) {
        for asset in assets { start(asset) }
    }

    /// `asset`'s measure if it is taken; nil while it is not (its measuring is started if it was
    /// not). Never blocks.
    func measured(_ asset: Asset) -> Result<Value, PlayheadError>? {
        let known = result(for: asset)
        if known == nil { start(asset) }
        return known
    }

    /// `asset`'s measure, taking it now (on this thread) if no worker has begun, else waiting for
    /// the worker. Throws what the measurement threw.
    func value(of asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> Value {
        let version = SourceVersion(asset)
        let step = entries.withLock { table -> Step in
            switch current(version, in: &table) {
            case .done(let result, _)?: return .result(result)
            case .pending?: return .wait
            case nil:
                insert(.pending, for: version, into: &table)
                return .measure
            }
        }
        switch step {
        case .result(let result): return try result.get()
        case .measure:
            let result = Result { () throws(PlayheadError) -> Value in try measure(asset, interrupt) }
            // A cancelled measure is not kept: the next asks again.
            finish(version, result, keep: !interrupt.isRaised)
            return try result.get()
        case .wait:
            done.lock()
            defer { done.unlock() }
            while true {
                if interrupt.isRaised { throw .cancelled(file: asset.source) }
                switch entries.withLock({ $0[version] }) {
                case .done(let result, _)?: return try result.get()
                case .pending?: _ = done.wait(until: Date().addingTimeInterval(0.05))
                case nil: return try measure(asset, interrupt)
                }
            }
        }
    }

    /// What ``value(of:interrupt:)`` does: take the measure, wait for a worker's, or return it.
    private enum Step {
        case measure, wait
        case result(Result<Value, PlayheadError>)
    }

    /// The measure of this version of `asset`, when taken.
    private func result(for asset: Asset) -> Result<Value, PlayheadError>? {
        let version = SourceVersion(asset)
        return entries.withLock { table -> Result<Value, PlayheadError>? in
            if case .done(let result, _)? = current(version, in: &table) { return result }
            return nil
        }
    }

    private func start(_ asset: Asset) {
        let version = SourceVersion(asset)
        let fresh = entries.withLock { table -> Bool in
            guard current(version, in: &table) == nil else { return false }
            insert(.pending, for: version, into: &table)
            return true
        }
        guard fresh else { return }
        WorkerPool.shared.run(name) { [self] in
            let result = Result { () throws(PlayheadError) -> Value in try measure(asset, InterruptFlag()) }
            finish(version, result, keep: true)
        }
    }

    /// Adds `entry`, letting go of measures taken of older versions of its source beyond the
    /// ``versionsKept`` latest (pending ones stay: they are being waited for).
    private func insert(_ entry: Entry, for version: SourceVersion, into table: inout [SourceVersion: Entry]) {
        table[version] = entry
        let others = table.filter { $0.key.source == version.source && $0.key != version }
        guard others.count >= Self.versionsKept else { return }
        for (key, value) in others.prefix(others.count - Self.versionsKept + 1) {
            if case .done = value { table[key] = nil }
        }
    }

    private func finish(_ version: SourceVersion, _ result: Result<Value, PlayheadError>, keep: Bool) {
        entries.withLock { table in
            if keep { table[version] = .done(result, at: .now) } else { table[version] = nil }
        }
        done.lock()
        done.broadcast()
        done.unlock()
    }
}

/// Sound-only items' extents (``SoundExtent``: where the decoded sound starts and ends), shared by
/// a compositor's layers.
typealias SoundExtentTable = MeasureTable<SoundExtent?>

extension MeasureTable where Value == SoundExtent? {
    /// A table measuring each asset's sound over a demuxer of its own.
    convenience init() {
        self.init(name: "playhead.sound-extent") { (asset, interrupt) throws(PlayheadError) -> SoundExtent? in
            let demuxer = try asset.openDemuxer(interrupt: interrupt)
            defer { asset.giveBack(demuxer) }
            return try SoundExtent.measure(demuxer)
        }
    }

    /// `asset`'s sound extent (``value(of:interrupt:)``).
    func extent(of asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> SoundExtent? {
        try value(of: asset, interrupt: interrupt)
    }
}

/// How long each item's pass lasts when no time range says (its picture's declared duration, else
/// its decoded sound's extent), for a layer that joins its schedule part way: measured ahead, off
/// the render thread, when the layer is added or edited.
typealias ItemLengthTable = MeasureTable<MediaTime?>

extension MeasureTable where Value == MediaTime? {
    /// A table of items' lengths, the sound-only ones' taken from `soundExtents`.
    convenience init(soundExtents: SoundExtentTable) {
        self.init(name: "playhead.item-length") { (asset, interrupt) throws(PlayheadError) -> MediaTime? in
            let demuxer = try asset.openDemuxer(interrupt: interrupt)
            let declared = demuxer.video?.duration
            asset.giveBack(demuxer)
            if let declared, declared.isNumeric, declared > .zero { return declared }
            guard let extent = try soundExtents.extent(of: asset, interrupt: interrupt), extent.end > extent.start else { return nil }
            return extent.end - extent.start
        }
    }
}
