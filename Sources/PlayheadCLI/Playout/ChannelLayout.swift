import ArgumentParser
import Foundation
import Glibc
import Playhead

/// A channel's layout file: read at the start, and again when the file changes (an editor's or a
/// deploy tool's atomic rename: its identity or its time changes) or on SIGHUP. Each version is
/// given whole to the library's ``CompositionLayout``, which works out what changed and takes it
/// whole or not at all; a version that does not parse, or that cannot be taken, is refused with a
/// line on standard error, and the channel goes on with the layers it has. Layers are told apart
/// by their `name`, or by their position when they have none. Its sources' files are watched by
/// the layout too (a file replaced in place is taken at each layer's next item boundary).
/// One reload runs at a time (the watcher's and SIGHUP's).
final class ChannelLayout: Sendable {
    private let path: String
    private let layout: CompositionLayout
    private let timeout: Double
    /// Held for a whole reload.
    private let reloading = NSLock()
    private let stamp = Locked<FileStamp?>(nil)
    /// Told of each version taken or refused, and each source taken (a line for the log).
    private let report: @Sendable (String) -> Void
    /// The command's selection, which each layer's own keys change.
    private let selection: MediaSelection

    init(
        path: String, compositor: Compositor, assetOptions: AssetOptions, timeout: Double, quietSeconds: Double = 2,
        report: @escaping @Sendable (String) -> Void
    ) {
        self.path = path
        layout = CompositionLayout(compositor: compositor, assetOptions: assetOptions, quietSeconds: quietSeconds)
        selection = assetOptions.selection
        self.timeout = timeout
        self.report = report
    }

    /// Reads the layout and puts its layers in the compositor (the first version: a bad one is a
    /// usage error).
    func load() throws {
        reloading.lock()
        defer { reloading.unlock() }
        let now = FileStamp(path: path)
        try apply(try LayerSpec.layoutFile(path, timeout: timeout))
        stamp.withLock { $0 = now }
    }

    /// Takes the file's new version if it changed (or `force`, for SIGHUP); otherwise the sources
    /// replaced in place.
    func reloadIfChanged(force: Bool = false) {
        reloading.lock()
        defer { reloading.unlock() }
        let now = FileStamp(path: path)
        let changed = stamp.withLock { stamp -> Bool in
            guard force || now != stamp else { return false }
            stamp = now
            return true
        }
        guard changed else {
            for change in layout.takeReplacedSources() {
                if let error = change.error {
                    report("layer \(change.layers.joined(separator: ", ")): the new \(change.source) could not be taken: \(error.message)")
                } else {
                    report("source \(change.source) changed: layer \(change.layers.joined(separator: ", ")) takes it at the next item boundary")
                }
            }
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

    /// Gives the layout `specs`, keyed by name (or position), whole or not at all.
    private func apply(_ specs: [LayerSpec]) throws {
        let layers = specs.enumerated().map { index, spec in spec.layoutLayer(name: spec.name ?? "#\(index + 1)", base: selection) }
        do throws(PlayheadError) {
            try layout.apply(layers)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The layer's name in the layout (or its position), for the as-run log and the status.
    func name(of id: CompositionLayer.ID) -> String {
        layout.name(of: id) ?? id.description
    }
}
