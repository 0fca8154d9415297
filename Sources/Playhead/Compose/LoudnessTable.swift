import Foundation
import PlayheadMedia

/// Items' measured loudness, each measured once on a worker thread when first asked for; until
/// a measurement is done its item plays at unity gain.
final class LoudnessTable: Sendable {
    /// The target, in LUFS (EBU R128 broadcast: −23).
    let target: Double
    /// The gain applied at most, either way, in dB (a near-silent item is not raised into noise).
    static let maximumGain = 20.0
    /// Keyed by the source's version: a file replaced in place is measured again.
    private let measured = Locked<[SourceVersion: Measure]>([:])

    enum Measure: Sendable {
        case pending
        case done(Double?)
    }

    init(target: Double) { self.target = target }

    /// The measured loudness of `asset` (nil: not measured yet, or no sound), starting the
    /// measurement if none is under way.
    func loudness(of asset: Asset) -> Double? {
        let version = SourceVersion(asset)
        let state = measured.withLock { table -> Measure? in
            if let known = table[version] { return known }
            table[version] = .pending
            return nil
        }
        switch state {
        case .done(let value)?: return value
        case .pending?: return nil
        case nil:
            WorkerPool.shared.run("playhead.loudness") { [measured] in
                let value = try? Self.integratedLoudness(of: asset)
                measured.withLock { $0[version] = .done(value ?? nil) }
            }
            return nil
        }
    }

    /// Measures `assets` now (those no one has begun measuring), on worker threads, and returns
    /// when they are measured: a channel's first items are brought to the target from their first
    /// sample. Cancelling the calling task ends the wait at once: measures not begun are dropped,
    /// those under way are interrupted, and none of them is kept (a later ask measures again).
    func measure(_ assets: [Asset]) async {
        let versions = assets.map(SourceVersion.init)
        let todo = measured.withLock { table -> [(Asset, SourceVersion)] in
            var fresh: [(Asset, SourceVersion)] = []
            for (asset, version) in zip(assets, versions) where table[version] == nil {
                table[version] = .pending
                fresh.append((asset, version))
            }
            return fresh
        }
        await withTaskGroup(of: Void.self) { group in
            for (asset, version) in todo {
                group.addTask { [measured] in
                    let interrupt = InterruptFlag()
                    do throws(PlayheadError) {
                        let value = try await WorkerPool.shared.value("playhead.loudness", onCancel: { interrupt.raise() }) {
                            () throws(PlayheadError) -> Double? in
                            try? Self.integratedLoudness(of: asset, interrupt: interrupt)
                        }
                        if interrupt.isRaised { throw .cancelled() }
                        measured.withLock { $0[version] = .done(value) }
                    } catch {
                        measured.withLock { $0[version] = nil }
                    }
                }
            }
        }
    }

    /// The linear gain that brings `asset` to the target (1 until it is measured).
    func gain(for asset: Asset) -> Float {
        guard let loudness = loudness(of: asset) else { return 1 }
        let decibels = max(-Self.maximumGain, min(Self.maximumGain, target - loudness))
        return Float(pow(10, decibels / 20))
    }

    /// `asset`'s loudness, measured on the calling (worker) thread.
    private static func integratedLoudness(of asset: Asset, interrupt: InterruptFlag = InterruptFlag()) throws(PlayheadError) -> Double? {
        let demuxer = try asset.openDemuxer(interrupt: interrupt)
        defer { asset.giveBack(demuxer) }
        return try LoudnessMeter.integratedLoudness(of: demuxer)
    }
}
