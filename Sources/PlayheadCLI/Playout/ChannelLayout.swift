import ArgumentParser
import Foundation
import Glibc
import Playhead

/// A channel's layout file and the compositor's layers made from it: read at the start, and again
/// when the file changes (an editor's or a deploy tool's atomic rename: its identity or its time
/// changes) or on SIGHUP. A version that does not parse is refused with a line on standard error,
/// and the channel goes on with the layers it has. Layers are told apart by their `name`, or by
/// their position when they have none: a layer that is gone is removed at once, a new one added
/// at once (its playlist starts then), a changed one takes its new version at its next item
/// boundary (``Compositor/update(_:to:)``).
///
/// Its sources' files are watched too: a file replaced in place (a sync tool's atomic rename, a
/// copy over it) or one that appears where it was missing is opened afresh, and every layer that
/// plays it takes it as a live edit, at its next item boundary — once the file has stayed the
/// same for `quietSeconds`, so a copy still being written is not taken half way (an atomic
/// rename is still the safe way to replace a file). Sources no layer plays any more are let go.
/// One reload runs at a time (the watcher's and SIGHUP's): none acts on a copy of the layers
/// another has changed.
final class ChannelLayout: @unchecked Sendable {
    // @unchecked Sendable: `layers`, `stamp` and `sourceStamps` are read and written only under
    // `lock`; the compositor and the assets' table are thread-safe.
    private let path: String
    private let compositor: Compositor
    private let assetOptions: AssetOptions
    private let timeout: Double
    private let lock = NSLock()
    /// Held for a whole reload (outermost: then `assets`, then `lock`).
    private let reloading = NSLock()
    /// How long a source's changed file must stay the same before it is taken.
    let quietSeconds: Double
    private var layers: [(key: String, spec: LayerSpec, id: CompositionLayer.ID)] = []
    private var stamp: FileStamp?
    /// Told of each version taken or refused (a line for the log).
    private let report: @Sendable (String) -> Void
    /// Each source's asset, made once: a playlist that comes back in a new version reuses its
    /// probed assets (and their idle demuxers).
    private let assets = Locked<[String: Asset]>([:])
    /// Each local source's file as its asset was made, and as the last check saw it.
    private var sourceStamps: [String: (taken: FileStamp?, seen: FileStamp?, since: Date)] = [:]

    init(
        path: String, compositor: Compositor, assetOptions: AssetOptions, timeout: Double, quietSeconds: Double = 2,
        report: @escaping @Sendable (String) -> Void
    ) {
        self.path = path
        self.quietSeconds = quietSeconds
        self.compositor = compositor
        self.assetOptions = assetOptions
        self.timeout = timeout
        self.report = report
    }

    /// Reads the layout and puts its layers in the compositor (the first version: a bad one is a
    /// usage error).
    func load() throws {
        reloading.lock()
        defer { reloading.unlock() }
        let stamp = FileStamp(path: path)
        let specs = try LayerSpec.layoutFile(path, timeout: timeout)
        try apply(specs)
        lock.withLock { self.stamp = stamp }
    }

    /// Takes the file's new version if it changed (or `force`, for SIGHUP).
    func reloadIfChanged(force: Bool = false) {
        reloading.lock()
        defer { reloading.unlock() }
        let now = FileStamp(path: path)
        let changed = lock.withLock { () -> Bool in
            guard force || now != stamp else { return false }
            stamp = now
            return true
        }
        guard changed else {
            takeReplacedSources()
            return
        }
        do {
            try apply(try LayerSpec.layoutFile(path, timeout: timeout))
            report("layout \(path): new version taken")
        } catch let error as ValidationError {
            report("layout \(path): new version refused, the channel goes on with the one it has: \(error.message)")
        } catch {
            report("layout \(path): new version refused, the channel goes on with the one it has: \(error)")
        }
    }

    private func asset(_ source: String) -> Asset {
        assets.withLock { table in
            if let made = table[source] { return made }
            // Its file as it is before the asset opens it: a change after that is seen.
            let made = Asset(source: source, options: assetOptions)
            if made.url.isFileURL {
                let now = FileStamp(path: made.url.path)
                lock.withLock { sourceStamps[source] = (now, now, Date()) }
            }
            table[source] = made
            return made
        }
    }

    /// Opens afresh each local source whose file changed (and has stayed as it is for
    /// `quietSeconds`), and gives every layer that plays one its new version.
    private func takeReplacedSources() {
        let watched = lock.withLock { sourceStamps }
        var replaced: [String] = []
        for (source, stamps) in watched {
            guard let url = assets.withLock({ $0[source]?.url }) else { continue }
            let now = FileStamp(path: url.path)
            if now != stamps.seen {
                lock.withLock {
                    sourceStamps[source]?.seen = now
                    sourceStamps[source]?.since = Date()
                }
            } else if now != nil, now != stamps.taken, Date().timeIntervalSince(stamps.since) >= quietSeconds {
                replaced.append(source)
            }
        }
        guard !replaced.isEmpty else { return }
        assets.withLock { table in
            for source in replaced { table[source] = nil }
        }
        // Each layer that plays one of them takes its new version once.
        let changed = Set(replaced)
        for (key, spec, id) in lock.withLock({ layers }) where !changed.isDisjoint(with: spec.sources) {
            var named = Set<String>()
            let files = spec.sources.filter { changed.contains($0) && named.insert($0).inserted }
            do throws(PlayheadError) {
                try compositor.update(id, to: spec.layer(assets: spec.sources.map(asset)))
                for file in files { report("source \(file) changed: layer \(key) takes it at the next item boundary") }
            } catch {
                report("layer \(key): the new \(files.joined(separator: ", ")) could not be taken: \(error.message)")
            }
        }
        letGoOfUnplayedSources()
    }

    /// Makes the compositor's layers those of `specs`. Every layer is checked before any is changed.
    private func apply(_ specs: [LayerSpec]) throws {
        // The assets of a refused version are let go as well.
        defer { letGoOfUnplayedSources() }
        let keyed = specs.enumerated().map { index, spec in (key: spec.name ?? "#\(index + 1)", spec: spec) }
        let made = keyed.map { ($0.key, $0.spec, $0.spec.layer(assets: $0.spec.sources.map(asset))) }
        for (key, _, layer) in made {
            guard !layer.assets.isEmpty else { throw ValidationError("layer \(key) has no source") }
        }
        try lock.withLock {
            let wanted = Set(keyed.map(\.key))
            for old in layers where !wanted.contains(old.key) { compositor.remove(old.id) }
            var next: [(key: String, spec: LayerSpec, id: CompositionLayer.ID)] = []
            for (key, spec, layer) in made {
                if let old = layers.first(where: { $0.key == key }) {
                    if old.spec != spec {
                        do throws(PlayheadError) { try compositor.update(old.id, to: layer) } catch {
                            throw ValidationError("layer \(key): \(error.message)")
                        }
                    }
                    next.append((key, spec, old.id))
                } else {
                    do throws(PlayheadError) {
                        next.append((key, spec, try compositor.add(layer)))
                    } catch {
                        throw ValidationError("layer \(key): \(error.message)")
                    }
                }
            }
            layers = next
        }
    }

    /// Forgets the assets (and the watch) of sources no layer plays any more: a channel whose
    /// layout changes every day does not keep every day's files.
    private func letGoOfUnplayedSources() {
        let playing = Set(lock.withLock { layers.flatMap(\.spec.sources) })
        assets.withLock { table in table = table.filter { playing.contains($0.key) } }
        lock.withLock { sourceStamps = sourceStamps.filter { playing.contains($0.key) } }
    }

    /// The layer's name in the layout (or its position), for the as-run log and the status.
    func name(of id: CompositionLayer.ID) -> String {
        lock.withLock { layers.first { $0.id == id }?.key } ?? id.description
    }
}

extension LayerSpec: Equatable {
    static func == (a: LayerSpec, b: LayerSpec) -> Bool {
        a.sources == b.sources && a.rect == b.rect && a.z == b.z && a.gravity == b.gravity && a.loop == b.loop && a.start == b.start
            && a.duration == b.duration && a.afterEnd == b.afterEnd && a.audio == b.audio && a.name == b.name && a.startsAt == b.startsAt
    }
}
