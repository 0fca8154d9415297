import Foundation
import PlayheadMedia

/// A measure of each source, taken once per version of it (an asset made after its file was
/// replaced is measured again) on a worker thread: asked for ahead (``prefetch(_:)``, when a layer
/// starts or is edited) and waited for when needed — by the render thread of a channel no longer
/// than it may wait (``value(of:until:)``). One table per measure: the sound-only items' extents
/// (``SoundExtentTable``), the items' lengths for a schedule (``ItemLengthTable``).
final class MeasureTable<Value: Sendable>: Sendable {
    private enum Entry: Sendable {
        case pending(SourceVersion)
        case done(SourceVersion, Result<Value, PlayheadError>)
    }

    private let entries = Locked<[String: Entry]>([:])
    private let done = NSCondition()
    /// The worker thread's name while measuring.
    private let name: String
    private let measure: @Sendable (Asset, InterruptFlag) throws(PlayheadError) -> Value

    /// - Parameters:
    ///   - name: the worker thread's name while measuring.
    ///   - measure: takes the measure of an asset on the calling thread (`interrupt` stops it).
    init(name: String, measure: @escaping @Sendable (Asset, InterruptFlag) throws(PlayheadError) -> Value) {
        self.name = name
        self.measure = measure
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

    /// `asset`'s measure, waiting for a worker's (started now if none was) until `deadline`: nil
    /// when it is not taken by then. For a thread that must not wait longer (a channel's render).
    func value(of asset: Asset, until deadline: Date, interrupt: InterruptFlag) -> Result<Value, PlayheadError>? {
        start(asset)
        done.lock()
        defer { done.unlock() }
        while true {
            if let known = result(for: asset) { return known }
            guard !interrupt.isRaised, Date() < deadline else { return nil }
            _ = done.wait(until: min(deadline, Date().addingTimeInterval(0.05)))
        }
    }

    /// `asset`'s measure, taking it now (on this thread) if no worker has begun, else waiting for
    /// the worker. Throws what the measurement threw.
    func value(of asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> Value {
        let signature = SourceVersion(asset)
        let step = entries.withLock { table -> Step in
            switch table[asset.source] {
            case .done(let known, let result)? where known == signature: return .result(result)
            case .pending(let known)? where known == signature: return .wait
            default:
                table[asset.source] = .pending(signature)
                return .measure
            }
        }
        switch step {
        case .result(let result): return try result.get()
        case .measure:
            let result = Result { () throws(PlayheadError) -> Value in try measure(asset, interrupt) }
            // A cancelled measure is not kept: the next asks again.
            finish(asset.source, signature, result, keep: !interrupt.isRaised)
            return try result.get()
        case .wait:
            done.lock()
            defer { done.unlock() }
            while true {
                if interrupt.isRaised { throw .cancelled(file: asset.source) }
                let state = entries.withLock { $0[asset.source] }
                switch state {
                case .done(let known, let result)? where known == signature: return try result.get()
                case .pending(let known)? where known == signature: _ = done.wait(until: Date().addingTimeInterval(0.05))
                default: return try measure(asset, interrupt)
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
        let signature = SourceVersion(asset)
        return entries.withLock { table -> Result<Value, PlayheadError>? in
            if case .done(let version, let result)? = table[asset.source], version == signature { return result }
            return nil
        }
    }

    private func start(_ asset: Asset) {
        let signature = SourceVersion(asset)
        let fresh = entries.withLock { table -> Bool in
            switch table[asset.source] {
            case .done(let known, _)? where known == signature: return false
            case .pending(let known)? where known == signature: return false
            default:
                table[asset.source] = .pending(signature)
                return true
            }
        }
        guard fresh else { return }
        WorkerPool.shared.run(name) { [self] in
            let result = Result { () throws(PlayheadError) -> Value in try measure(asset, InterruptFlag()) }
            finish(asset.source, signature, result, keep: true)
        }
    }

    private func finish(_ source: String, _ signature: SourceVersion, _ result: Result<Value, PlayheadError>, keep: Bool) {
        entries.withLock { table in
            if keep { table[source] = .done(signature, result) } else { table[source] = nil }
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
