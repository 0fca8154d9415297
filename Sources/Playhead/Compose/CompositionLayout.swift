import Foundation
import PlayheadMedia

/// A compositor's layers kept as a named list, the way a running channel is edited: each version
/// of the list is given whole (``apply(_:)``), and what changed is worked out here — a layer that
/// is gone is removed, a new one added (its playlist starts then), a changed one takes its new
/// version at its next item boundary. A version is taken whole or not at all.
///
/// Its sources' files are watched too (``takeReplacedSources()``): a file replaced in place (a
/// sync tool's atomic rename, a copy over it) or one that appears where it was missing is opened
/// afresh, and every layer that plays it takes it as a live edit at its next item boundary — once
/// the file has stayed the same for `quietSeconds`, so a copy still being written is not taken
/// half way. Sources no layer plays any more are let go.
///
/// What `playhead playout` does with its layout file, for any app that runs a channel.
public final class CompositionLayout: Sendable {
    /// One layer of a version: its name (its identity across versions) and what it plays, where
    /// and how. Two descriptions are the same layer version when every field is equal (the
    /// equality is the compiler's: a field added later takes part in it).
    public struct Layer: Sendable, Hashable {
        public var name: String
        /// Paths or URLs of its playlist, in order.
        public var sources: [String]
        public var rect: PixelRect
        public var zIndex: Int
        public var gravity: VideoGravity
        public var loop: LayerLoop
        public var timeRange: TimeRange?
        public var afterEnd: LayerAfterEnd
        public var providesAudio: Bool
        public var scheduledStart: Date?
        /// Which of its sources' tracks play (their sound, when a file holds several); nil: the
        /// layout's ``AssetOptions/selection``.
        public var selection: MediaSelection?
        public var subtitles: SubtitleBurnIn?

        /// A layer of the given parts (as ``CompositionLayer``'s of the same names; `selection`:
        /// which tracks of its sources play, nil for the layout's own).
        public init(
            name: String, sources: [String], rect: PixelRect, zIndex: Int = 0, gravity: VideoGravity = .resizeAspect, loop: LayerLoop = .once,
            timeRange: TimeRange? = nil, afterEnd: LayerAfterEnd = .holdLastFrame, providesAudio: Bool = false, scheduledStart: Date? = nil,
            selection: MediaSelection? = nil, subtitles: SubtitleBurnIn? = nil
        ) {
            self.selection = selection
            self.subtitles = subtitles
            self.name = name
            self.sources = sources
            self.rect = rect
            self.zIndex = zIndex
            self.gravity = gravity
            self.loop = loop
            self.timeRange = timeRange
            self.afterEnd = afterEnd
            self.providesAudio = providesAudio
            self.scheduledStart = scheduledStart
        }

        func composed(assets: [Asset]) -> CompositionLayer {
            CompositionLayer(
                assets: assets, rect: rect, zIndex: zIndex, gravity: gravity, loop: loop, timeRange: timeRange, afterEnd: afterEnd,
                providesAudio: providesAudio, scheduledStart: scheduledStart, subtitles: subtitles)
        }
    }

    /// A source whose file changed and was taken, and the layers that take it.
    public struct SourceChange: Sendable, Hashable {
        public var source: String
        public var layers: [String]
        /// Why a layer could not take it, if one could not.
        public var error: PlayheadError?
    }

    /// A source as a layer opens it: the same file with another selection is another asset.
    private struct Opening: Hashable {
        var source: String
        var selection: MediaSelection
    }

    private struct State {
        var layers: [(layer: Layer, id: CompositionLayer.ID)] = []
        /// Each source's asset, made once: a playlist that comes back in a new version reuses its
        /// probed assets (and their idle demuxers).
        var assets: [Opening: Asset] = [:]
        /// Each local source's file as its asset was made, and as the last check saw it.
        var stamps: [String: (taken: FileStamp?, seen: FileStamp?, since: Date)] = [:]
    }

    private let compositor: Compositor
    private let assetOptions: AssetOptions
    /// How long a source's changed file must stay the same before it is taken.
    public let quietSeconds: Double
    private let state = Locked(State())
    /// One change at a time (a new version, a source taken): none acts on layers another changed.
    private let serial = NSLock()

    /// A layout of `compositor`'s layers (it starts empty).
    /// - Parameters:
    ///   - compositor: the compositor whose layers this keeps.
    ///   - assetOptions: how its sources are opened.
    ///   - quietSeconds: how long a changed source must stay the same before it is taken.
    public init(compositor: Compositor, assetOptions: AssetOptions = AssetOptions(), quietSeconds: Double = 2) {
        self.compositor = compositor
        self.assetOptions = assetOptions
        self.quietSeconds = quietSeconds
    }

    /// Makes the compositor's layers those of `layers`, whole or not at all.
    /// - Parameter layers: the new version; names must differ.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` naming the layer that cannot be taken (no source, a
    ///   rectangle off the canvas, two of one name, too many layers): the compositor keeps the version it has.
    public func apply(_ layers: [Layer]) throws(PlayheadError) {
        serial.lock()
        defer { serial.unlock() }
        // The assets of a refused version are let go as well.
        defer { letGoOfUnplayedSources() }
        var names = Set<String>()
        for layer in layers {
            guard !layer.sources.isEmpty else { throw PlayheadError(code: .invalidArgument, message: "layer \(layer.name) has no source") }
            guard names.insert(layer.name).inserted else {
                throw PlayheadError(code: .invalidArgument, message: "two layers are named \(layer.name)")
            }
            // Each checked before anything changes, so that the error names it.
            do throws(PlayheadError) {
                try compositor.check(layer.composed(assets: layer.sources.map { Asset(source: $0, options: options(of: layer)) }))
            } catch {
                throw error.with(message: "layer \(layer.name): \(error.message)")
            }
        }
        let current = state.withLock { $0.layers }
        var edit = CompositionEdit()
        edit.removals = current.filter { !names.contains($0.layer.name) }.map(\.id)
        var added: [Layer] = []
        var kept: [(layer: Layer, id: CompositionLayer.ID)] = []
        for layer in layers {
            if let old = current.first(where: { $0.layer.name == layer.name }) {
                if old.layer != layer { edit.updates.append((old.id, layer.composed(assets: assets(of: layer)))) }
                kept.append((layer, old.id))
            } else {
                edit.additions.append(layer.composed(assets: assets(of: layer)))
                added.append(layer)
            }
        }
        let ids = try compositor.apply(edit)
        let taken = kept + zip(added, ids).map { ($0, $1) }
        // In the version's order.
        state.withLock { s in s.layers = layers.compactMap { layer in taken.first { $0.layer.name == layer.name } } }
    }

    /// Opens afresh each local source whose file changed (and has stayed as it is for
    /// ``quietSeconds``), and gives every layer that plays one its new version, at its next item
    /// boundary. Call it now and then (a channel polls twice a second).
    /// - Returns: what was taken, and by which layers.
    @discardableResult
    public func takeReplacedSources() -> [SourceChange] {
        serial.lock()
        defer { serial.unlock() }
        let watched = state.withLock { $0.stamps }
        var replaced: [String] = []
        for (source, stamps) in watched {
            guard let url = state.withLock({ $0.assets.first { $0.key.source == source }?.value.url }) else { continue }
            let now = FileStamp(path: url.path)
            if now != stamps.seen {
                state.withLock {
                    $0.stamps[source]?.seen = now
                    $0.stamps[source]?.since = Date()
                }
            } else if now != nil, now != stamps.taken, Date().timeIntervalSince(stamps.since) >= quietSeconds {
                replaced.append(source)
            }
        }
        guard !replaced.isEmpty else { return [] }
        state.withLock { s in
            s.assets = s.assets.filter { !replaced.contains($0.key.source) }
        }
        var changes = replaced.map { SourceChange(source: $0, layers: [], error: nil) }
        // Each layer that plays one of them takes its new version once.
        let changed = Set(replaced)
        for (layer, id) in state.withLock({ $0.layers }) where !changed.isDisjoint(with: layer.sources) {
            var failure: PlayheadError?
            do throws(PlayheadError) {
                try compositor.update(id, to: layer.composed(assets: assets(of: layer)))
            } catch {
                failure = error
            }
            for index in changes.indices where layer.sources.contains(changes[index].source) {
                changes[index].layers.append(layer.name)
                changes[index].error = changes[index].error ?? failure
            }
        }
        letGoOfUnplayedSources()
        return changes
    }

    /// The name of the layer `id` is, if it is one of this layout's.
    /// - Parameter id: a layer of the compositor.
    /// - Returns: its name, or nil.
    public func name(of id: CompositionLayer.ID) -> String? {
        state.withLock { s in s.layers.first { $0.id == id }?.layer.name }
    }

    /// The layers as the last version taken gave them.
    public var layers: [Layer] { state.withLock { $0.layers.map(\.layer) } }

    /// How `layer`'s sources open: the layout's options, with the layer's selection if it has one.
    private func options(of layer: Layer) -> AssetOptions {
        var options = assetOptions
        if let selection = layer.selection { options.selection = selection }
        return options
    }

    /// The assets of `layer`'s playlist, each made once for its source and selection.
    private func assets(of layer: Layer) -> [Asset] {
        let options = options(of: layer)
        return layer.sources.map { source in
            state.withLock { s in
                let opening = Opening(source: source, selection: options.selection)
                if let made = s.assets[opening] { return made }
                // Its file as it is before the asset opens it: a change after that is seen.
                let made = Asset(source: source, options: options)
                // (Once per source: another selection of a watched file shares its watch.)
                if made.url.isFileURL, !s.assets.keys.contains(where: { $0.source == source }) {
                    let now = FileStamp(path: made.url.path)
                    s.stamps[source] = (now, now, Date())
                }
                s.assets[opening] = made
                return made
            }
        }
    }

    /// Forgets the assets (and the watch) of sources no layer plays any more: a channel whose
    /// layout changes every day does not keep every day's files.
    private func letGoOfUnplayedSources() {
        state.withLock { s in
            let playing = Set(
                s.layers.flatMap { layer in layer.layer.sources.map { Opening(source: $0, selection: self.options(of: layer.layer).selection) } })
            s.assets = s.assets.filter { playing.contains($0.key) }
            let sources = Set(playing.map(\.source))
            s.stamps = s.stamps.filter { sources.contains($0.key) }
        }
    }
}
