import Foundation
import PlayheadMedia

/// Sound-only items' extents, each measured once per version of a source (an asset made after its
/// file was replaced is measured again) on a worker thread: asked for ahead (``prefetch(_:)``, when a layer starts or is edited), waited for
/// when an item opens.
final class SoundExtentTable: Sendable {
    private enum Entry: Sendable {
        case pending(Signature)
        case done(Signature, Result<SoundExtent?, PlayheadError>)
    }

    private typealias Signature = SourceVersion

    private let entries = Locked<[String: Entry]>([:])
    private let done = NSCondition()

    init() {}

    /// Starts measuring those of `assets` not measured yet, on worker threads.
    func prefetch(_ assets: [Asset]) {
        for asset in assets { start(asset) }
    }

    /// `asset`'s extent if it is measured; nil while it is not (its measuring is started if it
    /// was not). Never blocks.
    func measured(_ asset: Asset) -> Result<SoundExtent?, PlayheadError>? {
        let signature = Signature(asset)
        let known = entries.withLock { table -> Result<SoundExtent?, PlayheadError>? in
            if case .done(let version, let result)? = table[asset.source], version == signature { return result }
            return nil
        }
        if known == nil { start(asset) }
        return known
    }

    /// `asset`'s extent, measuring it now (on this thread) if no worker has begun, else waiting
    /// for the worker. Throws what the measurement threw.
    func extent(of asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> SoundExtent? {
        let signature = Signature(asset)
        enum Step { case measure, wait, result(Result<SoundExtent?, PlayheadError>) }
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
            let result = Result { () throws(PlayheadError) -> SoundExtent? in try Self.measure(asset, interrupt: interrupt) }
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
                default: return try Self.measure(asset, interrupt: interrupt)
                }
            }
        }
    }

    private func start(_ asset: Asset) {
        let signature = Signature(asset)
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
        WorkerPool.shared.run("playhead.sound-extent") { [self] in
            let result = Result { () throws(PlayheadError) -> SoundExtent? in try Self.measure(asset, interrupt: InterruptFlag()) }
            finish(asset.source, signature, result, keep: true)
        }
    }

    private func finish(_ source: String, _ signature: Signature, _ result: Result<SoundExtent?, PlayheadError>, keep: Bool) {
        entries.withLock { table in
            if keep { table[source] = .done(signature, result) } else { table[source] = nil }
        }
        done.lock()
        done.broadcast()
        done.unlock()
    }

    /// `asset`'s extent, measured on this thread over a demuxer of its own (`interrupt` stops it).
    private static func measure(_ asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> SoundExtent? {
        let demuxer = try asset.openDemuxer(interrupt: interrupt)
        defer { asset.giveBack(demuxer) }
        return try SoundExtent.measure(demuxer)
    }
}
