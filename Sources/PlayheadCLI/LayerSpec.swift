import ArgumentParser
import Foundation
import Glibc
import Playhead

/// One layer as the command line or a layout file describes it.
struct LayerSpec {
    /// The most layers one composition holds, however they are given.
    static let maximumLayers = 64

    var sources: [String]
    var rect: PixelRect
    var z = 0
    var gravity = VideoGravity.resizeAspect
    var loop = LayerLoop.once
    var start: Double?
    var duration: Double?
    var afterEnd = LayerAfterEnd.holdLastFrame
    /// The composition's sound comes from this layer.
    var audio = false
    /// Which sound of its sources plays (`audio-track=`, `"audioTrack"`); nil: the command's `--audio-track`.
    var audioTrack: TrackChoice?
    /// Which variant of an HLS master its sources play (`variant=`, `max-bitrate=`,
    /// `max-resolution=`; `"variant"`, `"maxBitRate"`, `"maxResolution"`); nil: the command's.
    var variant: SourceArguments.VariantRule?
    var maxBitRate: Int?
    var maxResolution: PixelSize?
    /// Subtitles drawn into its items' pictures (`subtitles=`, `"subtitles"`: a track, a subtitle
    /// file beside the layout, none).
    var subtitles: SubtitleBurnIn?
    /// The layer's identity across versions of a layout (a live edit changes the layer of that
    /// name); nil: its position.
    var name: String?
    /// The playlist's schedule: when its first item began (ISO 8601), so that a restarted channel
    /// comes back where the schedule is.
    var startsAt: Date?

    init(sources: [String], rect: PixelRect, z: Int) {
        self.sources = sources
        self.rect = rect
        self.z = z
    }

    /// `--layer "x=0,y=0,w=640,h=360,gravity=aspect-fill,loop=forever,z=1,source=clip.mp4"`.
    init(parsing text: String) throws {
        guard let sourceRange = text.range(of: "source=") else { throw ValidationError("--layer needs source= (last): \(text)") }
        let source = String(text[sourceRange.upperBound...])
        guard !source.isEmpty else { throw ValidationError("--layer has an empty source") }
        var values: [String: String] = [:]
        for pair in text[..<sourceRange.lowerBound].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--layer: '\(pair)' is not key=value") }
            guard values.updateValue(parts[1], forKey: parts[0].lowercased()) == nil else {
                throw ValidationError("--layer gives \(parts[0]) twice: \(text)")
            }
        }
        func int(_ key: String) throws -> Int {
            guard let text = values.removeValue(forKey: key), let value = Int(text), (0...16384).contains(value) else {
                throw ValidationError("--layer needs \(key)= a whole number of pixels 0 … 16384")
            }
            return value
        }
        self.init(sources: [source], rect: PixelRect(x: try int("x"), y: try int("y"), width: try int("w"), height: try int("h")), z: 0)
        if let text = values.removeValue(forKey: "z") {
            guard let value = Int(text), abs(value) <= 1_000_000 else { throw ValidationError("--layer z= must be a whole number") }
            z = value
        }
        if let text = values.removeValue(forKey: "gravity") { gravity = try Self.gravity(text) }
        if let text = values.removeValue(forKey: "loop") { loop = try Self.loop(text) }
        for key in ["start", "duration"] {
            guard let text = values.removeValue(forKey: key) else { continue }
            guard let value = Double(text) else { throw ValidationError("--layer \(key)= must be seconds") }
            try setRange(key, value)
        }
        if let text = values.removeValue(forKey: "after-end") { afterEnd = try Self.afterEnd(text) }
        if let text = values.removeValue(forKey: "audio") {
            guard let value = ["yes": true, "true": true, "1": true, "no": false, "false": false, "0": false][text.lowercased()] else {
                throw ValidationError("--layer audio= must be yes or no, not \(text)")
            }
            audio = value
        }
        if let text = values.removeValue(forKey: "audio-track") { audioTrack = try SourceArguments.parseTrack(text) }
        if let text = values.removeValue(forKey: "variant") { variant = try Self.variant(text) }
        if let text = values.removeValue(forKey: "max-bitrate") { maxBitRate = try SourceArguments.parseBitRate(text) }
        if let text = values.removeValue(forKey: "max-resolution") { maxResolution = try PlayCommand.parseSize(text) }
        if let text = values.removeValue(forKey: "subtitles") { subtitles = try SourceArguments.parseSubtitles(text).burnIn }
        if let unknown = values.keys.sorted().first { throw ValidationError("--layer: unknown key \(unknown)") }
        try checkLoopedRange("--layer")
    }

    private mutating func setRange(_ key: String, _ value: Double) throws {
        guard value.isFinite, value >= 0, value <= 1e7, key == "start" || value > 0 else {
            throw ValidationError("a layer's \(key) must be 0 … 10,000,000 seconds\(key == "duration" ? " (more than 0)" : "")")
        }
        if key == "start" { start = value } else { duration = value }
    }

    static func gravity(_ text: String) throws -> VideoGravity {
        guard let value = PlayCommand.Gravity(rawValue: text) else {
            throw ValidationError("a layer's gravity must be aspect-fit, aspect-fill or stretch, not \(text)")
        }
        return value.videoGravity
    }

    static func loop(_ text: String) throws -> LayerLoop {
        switch text {
        case "once": return .once
        case "forever": return .forever
        default:
            guard let count = Int(text), (1...1_000_000).contains(count) else {
                throw ValidationError("a layer's loop must be once, 1 … 1000000 or forever, not \(text)")
            }
            return .times(count)
        }
    }

    static func variant(_ text: String) throws -> SourceArguments.VariantRule {
        guard let rule = SourceArguments.VariantRule(rawValue: text) else {
            throw ValidationError("a layer's variant must be highest or lowest, not \(text)")
        }
        return rule
    }

    static func afterEnd(_ text: String) throws -> LayerAfterEnd {
        guard let value = ["hold": LayerAfterEnd.holdLastFrame, "clear": .clear][text] else {
            throw ValidationError("a layer's after-end must be hold or clear, not \(text)")
        }
        return value
    }

    /// The sources in `rows`x`columns` equal cells (the last row may be short), aspect-fit.
    static func grid(_ text: String, sources: [String], canvas: PixelSize, zBase: Int) throws -> [LayerSpec] {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let rows = Int(parts[0]), let columns = Int(parts[1]), (1...64).contains(rows), (1...64).contains(columns) else {
            throw ValidationError("--grid must look like 2x2 (1 … 64 each)")
        }
        guard !sources.isEmpty, sources.count <= rows * columns else { throw ValidationError("--grid \(text) holds 1 … \(rows * columns) sources") }
        let cellWidth = canvas.width / columns & ~1, cellHeight = canvas.height / rows & ~1
        guard cellWidth >= 2, cellHeight >= 2 else { throw ValidationError("--grid \(text) is too fine for a \(canvas) canvas") }
        return sources.enumerated().map { index, source in
            LayerSpec(
                sources: [source],
                rect: PixelRect(x: index % columns * cellWidth, y: index / columns * cellHeight, width: cellWidth, height: cellHeight),
                z: zBase)
        }
    }

    /// The layers of a JSON layout file (at most 1 MiB, 64 layers); relative sources are found
    /// beside the file.
    /// A layout's source as the media layer opens it: standard input, a URL (the media layer's
    /// one rule: `://`, `pipe:`, `data:`) and an absolute path as written; a relative name beside
    /// the layout — a file named `we:ird.mp4` included; another name with a colon that is no file
    /// there (`file:/clips/a.mp4`) as written, for FFmpeg's protocols.
    /// - Parameters:
    ///   - source: the source as the layout names it.
    ///   - folder: the folder relative names are found in.
    /// - Returns: the source to open.
    static func resolve(_ source: String, in folder: String) -> String {
        if source.hasPrefix("/") || source == "-" || !SourceOptions.isPath(source) { return source }
        let beside = folder + "/" + source
        if source.contains(":"), !FileManager.default.fileExists(atPath: beside) { return source }
        return beside
    }

    static func layoutFile(_ path: String, timeout: Double) throws -> [LayerSpec] {
        struct Entry: Decodable {
            struct Range: Decodable {
                var start: Double?
                var duration: Double?
            }
            var source: String?
            var sources: [String]?
            var rect: [Int]
            var z: Int?
            var gravity: String?
            var loop: LoopValue?
            var timeRange: Range?
            var afterEnd: String?
            var audio: Bool?
            var audioTrack: LoopValue?
            var variant: String?
            var maxBitRate: LoopValue?
            var maxResolution: String?
            var subtitles: LoopValue?
            var name: String?
            var startsAt: String?
        }
        enum LoopValue: Decodable {
            case text(String)
            case count(Int)
            init(from decoder: Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let count = try? container.decode(Int.self) { self = .count(count) } else { self = .text(try container.decode(String.self)) }
            }
        }
        let data = try BoundedRead.contents(of: path, limit: 1 << 20, timeout: timeout, what: "the layout")
        guard data.count <= 1 << 20 else { throw ValidationError("the layout \(path) is over 1 MiB: not a layout") }
        let entries: [Entry]
        do {
            entries = try JSONDecoder().decode([Entry].self, from: data)
        } catch {
            throw ValidationError("the layout \(path) is not a JSON array of layers (\(error))")
        }
        guard (1...maximumLayers).contains(entries.count) else { throw ValidationError("the layout \(path) holds 1 … \(maximumLayers) layers") }
        let names = entries.compactMap(\.name)
        guard Set(names).count == names.count, !names.contains(where: \.isEmpty) else {
            throw ValidationError("the layout \(path) gives a layer name twice (or an empty one): names tell layers apart")
        }
        // A misspelt key would otherwise be dropped without a word (as --layer refuses one).
        let known: Set<String> = [
            "source", "sources", "rect", "z", "gravity", "loop", "timeRange", "afterEnd", "audio", "audioTrack", "variant", "maxBitRate",
            "maxResolution", "name", "startsAt", "subtitles",
        ]
        if let objects = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] {
            for (index, object) in objects.enumerated() {
                if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
                    throw ValidationError(
                        "layer \(index + 1) of \(path): unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
                }
                if let range = object["timeRange"] as? [String: Any],
                    let unknown = range.keys.filter({ !["start", "duration"].contains($0) }).sorted().first
                {
                    throw ValidationError("layer \(index + 1) of \(path): unknown key \"timeRange.\(unknown)\" (known: start, duration)")
                }
            }
        }
        // Relative sources are the layout file's folder's (the file's own, through links:
        // /dev/stdin redirected from a file) — or, for a layout that is no file (a pipe), the
        // working directory's.
        var info = stat()
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let folder =
            stat(real.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            ? real.deletingLastPathComponent().path : FileManager.default.currentDirectoryPath
        return try entries.enumerated().map { index, entry in
            let what = "layer \(index + 1) of \(path)"
            let named = (entry.sources ?? []) + (entry.source.map { [$0] } ?? [])
            guard !named.isEmpty, named.count <= 1000, entry.source == nil || entry.sources == nil else {
                throw ValidationError("\(what) needs \"source\" or \"sources\" (one of them)")
            }
            guard !named.contains(where: \.isEmpty) else { throw ValidationError("\(what) has an empty source") }
            guard entry.rect.count == 4, entry.rect.allSatisfy({ (0...16384).contains($0) }) else {
                throw ValidationError("\(what): \"rect\" is [x, y, width, height] in canvas pixels")
            }
            let sources = named.map { source in Self.resolve(source, in: folder) }
            var spec = LayerSpec(
                sources: sources, rect: PixelRect(x: entry.rect[0], y: entry.rect[1], width: entry.rect[2], height: entry.rect[3]),
                z: entry.z ?? 0)
            do {
                if let gravity = entry.gravity { spec.gravity = try Self.gravity(gravity) }
                switch entry.loop {
                case .text(let text)?: spec.loop = try Self.loop(text)
                case .count(let count)?: spec.loop = try Self.loop(String(count))
                case nil: break
                }
                if let start = entry.timeRange?.start { try spec.setRange("start", start) }
                if let duration = entry.timeRange?.duration { try spec.setRange("duration", duration) }
                if let afterEnd = entry.afterEnd { spec.afterEnd = try Self.afterEnd(afterEnd) }
                spec.audio = entry.audio ?? false
                switch entry.audioTrack {
                case .text(let text)?: spec.audioTrack = try SourceArguments.parseTrack(text)
                case .count(let index)?: spec.audioTrack = try SourceArguments.parseTrack(String(index))
                case nil: break
                }
                if let text = entry.variant { spec.variant = try Self.variant(text) }
                switch entry.maxBitRate {
                case .text(let text)?: spec.maxBitRate = try SourceArguments.parseBitRate(text)
                case .count(let rate)?: spec.maxBitRate = try SourceArguments.parseBitRate(String(rate))
                case nil: break
                }
                if let text = entry.maxResolution { spec.maxResolution = try PlayCommand.parseSize(text) }
                switch entry.subtitles {
                case .text(let text)?:
                    // A subtitle file is found beside the layout, as its sources are.
                    let beside = Self.resolve(text, in: folder)
                    spec.subtitles = try SourceArguments.parseSubtitles(FileManager.default.fileExists(atPath: beside) ? beside : text).burnIn
                case .count(let index)?: spec.subtitles = try SourceArguments.parseSubtitles(String(index)).burnIn
                case nil: break
                }
                spec.name = entry.name
                if let text = entry.startsAt {
                    // Whole seconds, or with a fraction (2026-11-26T06:00:00.250Z).
                    guard
                        let date = (try? Date(text, strategy: .iso8601))
                            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
                    else {
                        throw ValidationError("\"startsAt\" must be an ISO 8601 time with its zone, like 2026-11-26T06:00:00Z, not \(text)")
                    }
                    spec.startsAt = date
                }
                try spec.checkLoopedRange("layer \(index + 1)")
            } catch let error as ValidationError {
                throw ValidationError("\(what): \(error.message)")
            }
            return spec
        }
    }

    /// A looped range that short would be read again thousands of times a second.
    func checkLoopedRange(_ what: String) throws {
        if let duration, duration < 0.01, loop != .once {
            throw ValidationError("\(what): a looped range must last at least 0.01 s, not \(duration)")
        }
    }

    /// The layer as the library's layout names it.
    /// - Parameters:
    ///   - name: the layer's name in the layout.
    ///   - base: the command's selection (`--audio-track`, `--variant`…), which the layer's own keys change.
    func layoutLayer(name: String, base: MediaSelection) -> CompositionLayout.Layer {
        CompositionLayout.Layer(
            name: name, sources: sources, rect: rect, zIndex: z, gravity: gravity, loop: loop, timeRange: timeRange, afterEnd: afterEnd,
            providesAudio: audio, scheduledStart: startsAt, selection: selection(over: base), subtitles: subtitles)
    }

    /// The command's selection with the layer's own keys applied; nil when the layer has none.
    func selection(over base: MediaSelection) -> MediaSelection? {
        guard audioTrack != nil || variant != nil || maxBitRate != nil || maxResolution != nil else { return nil }
        var selection = base
        if let audioTrack { selection.audio = audioTrack }
        if let variant { selection.variant.lowest = variant == .lowest }
        if let maxBitRate { selection.variant.maximumBitRate = maxBitRate }
        if let maxResolution { selection.variant.maximumSize = maxResolution }
        return selection
    }

    /// How the layer's sources open: `options`, with the layer's own selection if it has one.
    func assetOptions(_ options: AssetOptions) -> AssetOptions {
        var options = options
        if let selection = selection(over: options.selection) { options.selection = selection }
        return options
    }

    /// The time range `start` and `duration` give (nil: the whole item).
    var timeRange: TimeRange? {
        start == nil && duration == nil
            ? nil : TimeRange(start: MediaTime(seconds: start ?? 0), duration: duration.map { MediaTime(seconds: $0) } ?? .positiveInfinity)
    }

    func layer(assets: [Asset]) -> CompositionLayer {
        CompositionLayer(
            assets: assets, rect: rect, zIndex: z, gravity: gravity, loop: loop, timeRange: timeRange, afterEnd: afterEnd, providesAudio: audio,
            scheduledStart: startsAt, subtitles: subtitles)
    }
}
