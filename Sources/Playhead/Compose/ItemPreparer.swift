import Foundation
import PlayheadMedia

/// A composition's items opened ahead of their turn, on worker threads, so that the render thread
/// of a channel never waits for a source: a layer asks for its current and next items when a
/// pass begins, and takes an opened demuxer when the item's turn comes; what it is done with
/// comes back here for the next pass.
///
/// A render paced on a clock (a channel) does not wait: an item not opened yet is not ready (the
/// layer holds its last picture and its sound is silent until it is, keeping its own time), and
/// one whose source does not answer fails when its open times out, on the worker. A render as
/// fast as it can waits for each item, so its output does not depend on how fast a source
/// answered.
///
/// One per render, shared by its layers and its sound. `Sendable`: its table is under a lock and
/// each opened demuxer is handed over whole (``DemuxerBox``).
final class ItemPreparer: Sendable {
    /// Whether a turn waits for its item (a render not paced on a clock).
    let waits: Bool
    /// Whether the render writes sound (a layer giving sound then needs a second demuxer).
    let soundPlays: Bool
    private let interrupt = InterruptFlag()
    private let table = Locked(Table())
    private let changed = ChangeSignal()
    /// Opened demuxers kept at most, over every asset: past it, the oldest are given back to
    /// their assets.
    static let capacity = 12

    private struct Entry {
        let asset: Asset
        var ready: [DemuxerBox] = []
        var opening = 0
        /// The last opening's failure, and when it came.
        var failure: PlayheadError?
        var failedAt = Date.distantPast
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Assets in the order their demuxers became ready, for the capacity.
        var order: [ObjectIdentifier] = []
        var closed = false
    }

    /// - Parameters:
    ///   - waits: whether a turn waits for its item (true for a render not paced on a clock).
    ///   - soundPlays: whether the render writes sound.
    init(waits: Bool, soundPlays: Bool = false) {
        self.waits = waits
        self.soundPlays = soundPlays
    }

    /// Demuxers of one item a layer needs for a pass: its picture's (unless its pictures were
    /// recorded) and its sound's (when the layer gives the render's sound).
    func copies(for layer: CompositionLayer, pictures: Bool = true) -> Int {
        (pictures ? 1 : 0) + (soundPlays && layer.providesAudio ? 1 : 0)
    }

    /// Starts opening `asset` on worker threads unless `copies` demuxers of it are opened or
    /// being opened. A source that can be read once is opened once; one whose open failed is not
    /// opened again until the failure is taken.
    func prepare(_ asset: Asset, copies: Int = 1) {
        let key = ObjectIdentifier(asset)
        let starts = table.withLock { table -> Int in
            guard !table.closed else { return 0 }
            var entry = table.entries[key] ?? Entry(asset: asset)
            guard entry.failure == nil, !entry.ready.contains(where: \.isOneShot) else { return 0 }
            let wanted = max(0, copies - entry.ready.count - entry.opening)
            entry.opening += wanted
            table.entries[key] = entry
            return wanted
        }
        for _ in 0..<starts { startOpening(asset, key: key) }
    }

    /// An opened demuxer of `asset`, attached to `interrupt`: one opened ahead or given back, or
    /// one the asset keeps; else, when turns wait, one opened now (or the one being opened,
    /// waited for); when they do not, nil after waiting at most `patience` for one being opened
    /// (its opening is started if it was not).
    ///
    /// - Parameter staleBefore: an opening's failure that came before this is not thrown but tried
    ///   again (a channel's item whose failure has lapsed: its source may be back since).
    /// - Throws: what opening the asset ahead threw (once: the next call tries again); when turns
    ///   wait, what opening it now throws; `cancelled` when `interrupt` is raised while waiting.
    func take(_ asset: Asset, interrupt: InterruptFlag, patience: Duration = .zero, staleBefore: Date? = nil) throws(PlayheadError) -> Demuxer? {
        let key = ObjectIdentifier(asset)
        let deadline = Date().addingTimeInterval(Self.seconds(patience))
        while true {
            enum Step {
                case got(DemuxerBox)
                case failed(PlayheadError)
                case wait
                case open
            }
            let step = table.withLock { table -> Step in
                guard var entry = table.entries[key] else { return .open }
                defer { table.entries[key] = entry }
                if !entry.ready.isEmpty {
                    if let index = table.order.firstIndex(of: key) { table.order.remove(at: index) }
                    return .got(entry.ready.removeFirst())
                }
                if entry.opening == 0, let failure = entry.failure {
                    entry.failure = nil
                    if let staleBefore, entry.failedAt < staleBefore { return .open }
                    return .failed(failure)
                }
                return entry.opening > 0 ? .wait : .open
            }
            switch step {
            case .got(let box):
                guard let demuxer = box.take() else { continue }
                demuxer.attach(interrupt)
                return demuxer
            case .failed(let error):
                throw error
            case .open:
                if let kept = asset.keptDemuxer(interrupt: interrupt) { return kept }
                if waits { return try asset.openDemuxer(interrupt: interrupt) }
                prepare(asset)
                guard Date() < deadline else { return nil }
            case .wait:
                guard waits || Date() < deadline else { return nil }
            }
            try waitForChange(until: waits ? .distantFuture : deadline, interrupt: interrupt, file: asset.source)
        }
    }

    /// Waits until `asset` can be taken without waiting, `deadline` passes, or `interrupt` is
    /// raised; its opening is started if it was not.
    func waitUntilReady(_ asset: Asset, until deadline: Date, interrupt: InterruptFlag) {
        prepare(asset)
        while Date() < deadline, !interrupt.isRaised, !isReady(asset) {
            try? waitForChange(until: deadline, interrupt: interrupt, file: asset.source)
        }
    }

    /// Whether `asset` can be taken without waiting (opened, or its open failed).
    func isReady(_ asset: Asset) -> Bool {
        table.withLock { table in
            guard let entry = table.entries[ObjectIdentifier(asset)] else { return false }
            return !entry.ready.isEmpty || (entry.opening == 0 && entry.failure != nil)
        }
    }

    /// Keeps `demuxer`, done with, for the next pass of `asset` (given to the asset once the
    /// preparer is closed or full); one whose source stalled or failed is closed instead (the
    /// next pass opens the source anew).
    func giveBack(_ demuxer: Demuxer, of asset: Asset) {
        demuxer.attach(nil)
        guard demuxer.isReusable else { return }
        let key = ObjectIdentifier(asset)
        let box = DemuxerBox(demuxer, token: 0)
        let out = table.withLock { table -> [(Asset, [DemuxerBox])] in
            guard !table.closed, !box.isOneShot || demuxer.isFresh else { return [(asset, [box])] }
            var entry = table.entries[key] ?? Entry(asset: asset)
            entry.ready.append(box)
            table.entries[key] = entry
            table.order.append(key)
            return Self.overCapacity(&table)
        }
        Self.giveBack(out)
        signal()
    }

    /// Stops every opening under way and gives back what was opened and not taken (kept by each
    /// asset for its next user). Later openings are not started; later give-backs go to the assets.
    func close() {
        interrupt.raise()
        let left = table.withLock { table -> [(Asset, [DemuxerBox])] in
            table.closed = true
            defer {
                table.entries = [:]
                table.order = []
            }
            return table.entries.values.map { ($0.asset, $0.ready) }
        }
        Self.giveBack(left)
        signal()
    }

    private func startOpening(_ asset: Asset, key: ObjectIdentifier) {
        let interrupt = interrupt
        WorkerPool.shared.run("playhead.prepare") { [self] in
            var box: DemuxerBox?
            var failure: PlayheadError?
            do throws(PlayheadError) {
                let opened = try asset.openDemuxer(interrupt: interrupt)
                // The taker attaches its own flag.
                opened.attach(nil)
                box = DemuxerBox(opened, token: 0)
            } catch {
                failure = error
            }
            let out = table.withLock { table -> [(Asset, [DemuxerBox])] in
                guard !table.closed, var entry = table.entries[key] else { return box.map { [(asset, [$0])] } ?? [] }
                entry.opening = max(0, entry.opening - 1)
                if let box {
                    entry.ready.append(box)
                    entry.failure = nil
                    table.order.append(key)
                } else if entry.ready.isEmpty {
                    // A failure counts when nothing of the asset is open: a source read once
                    // fails a second open, which the first one's demuxer answers.
                    entry.failure = failure
                    entry.failedAt = Date()
                }
                table.entries[key] = entry
                return Self.overCapacity(&table)
            }
            Self.giveBack(out)
            signal()
        }
    }

    private func waitForChange(until deadline: Date, interrupt: InterruptFlag, file: String) throws(PlayheadError) {
        if interrupt.isRaised { throw .cancelled(file: file) }
        changed.wait(until: deadline)
        if interrupt.isRaised { throw .cancelled(file: file) }
    }

    private func signal() { changed.signal() }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return max(0, Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    /// Takes the oldest opened demuxers out of `table` past the capacity.
    private static func overCapacity(_ table: inout Table) -> [(Asset, [DemuxerBox])] {
        var out: [(Asset, [DemuxerBox])] = []
        while table.order.count > capacity {
            let key = table.order.removeFirst()
            guard var entry = table.entries[key], !entry.ready.isEmpty else { continue }
            out.append((entry.asset, [entry.ready.removeFirst()]))
            table.entries[key] = entry
        }
        return out
    }

    /// Gives demuxers back to their assets.
    private static func giveBack(_ boxes: [(Asset, [DemuxerBox])]) {
        for (asset, boxes) in boxes {
            for box in boxes { if let demuxer = box.take() { asset.giveBack(demuxer) } }
        }
    }
}
