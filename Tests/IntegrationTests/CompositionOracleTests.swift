import Foundation
import Playhead
import Testing

/// `playhead compose` against the picture ffmpeg's own filter graph makes of the same layout:
/// each layer's frames retimed to the canvas by `fps=RATE:round=up` (output frame *n* shows the
/// last frame at or before *n / rate*), looped by `-stream_loop`, scaled by the default bicubic
/// `scale` to the layer's content size (cropped first for aspect-fill) and laid with `overlay`
/// (`eof_action=pass` clears a layer that has ended, `repeat` holds it). Every 80×80 tile of
/// every frame must match (PSNR ≥ 40 dB), and a second check that owes nothing to the filter
/// graph finds, for each output frame, which source frame a looping layer shows: it must be
/// ⌊t × source rate⌋ modulo the loop, so no seam repeats or drops a frame.
@Suite struct CompositionOracleTests {
    /// A layer as the reference draws it.
    struct ReferenceLayer {
        var clip: String
        /// Where the picture lands (worked out here from the layout rule, not by the library).
        var content: PixelRect
        /// The ffmpeg filters that turn a decoded frame into the content picture.
        var filters: String
        var loops: Bool
        var clearsAfterEnd: Bool
    }

    /// The side-by-side example at 1280x720, 30 fps, 6 s: a looping 25 fps background filling the
    /// canvas, a 4:3 clip (looping) and an anamorphic one (once, then cleared) fitted side by side.
    @Test func sideBySideExampleMatchesTheFilterGraph() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let layout = Fixtures.sampleMedia.deletingLastPathComponent().appendingPathComponent("examples/side-by-side.json").path
        let run = try await CLI.run([
            "compose", "--size", "1280x720", "--rate", "30", "--duration", "6", "--layout", layout, "--out", folder + "/out.y4m",
        ])
        #expect(run.status == 0, "\(run.stderr)")

        // The example's rectangles: [0,0,1280,720] fill; [40,180,580,360] fit; [660,180,580,360] fit.
        let background = try await Self.videoOnly(Fixtures.clip("h264-aac.mp4"), in: folder)
        let fourByThree = try await Self.videoOnly(Fixtures.clip("4x3.mp4"), in: folder)
        let anamorphic = try await Self.videoOnly(Fixtures.clip("anamorphic.mp4"), in: folder)
        // 320x180 square pixels fill 1280x720 exactly; 320x240 fits 580x360 as 480x360; 240x180
        // with 4:3 pixels shows as 320x180 and fits as 580x326.25, rounded to 580x326 (even sizes,
        // offsets rounded down to even).
        let layers = [
            ReferenceLayer(
                clip: background, content: Self.fit(shown: (320, 180), in: PixelRect(x: 0, y: 0, width: 1280, height: 720)),
                filters: "scale=1280:720", loops: true, clearsAfterEnd: false),
            ReferenceLayer(
                clip: fourByThree, content: Self.fit(shown: (320, 240), in: PixelRect(x: 40, y: 180, width: 580, height: 360)),
                filters: "scale=480:360", loops: true, clearsAfterEnd: false),
            ReferenceLayer(
                clip: anamorphic, content: Self.fit(shown: (320, 180), in: PixelRect(x: 660, y: 180, width: 580, height: 360)),
                filters: "scale=580:326", loops: false, clearsAfterEnd: true),
        ]
        #expect(
            layers.map(\.content) == [
                PixelRect(x: 0, y: 0, width: 1280, height: 720), PixelRect(x: 90, y: 180, width: 480, height: 360),
                PixelRect(x: 660, y: 196, width: 580, height: 326),
            ])
        let reference = folder + "/reference.y4m"
        try await Self.renderReference(layers, canvas: PixelSize(width: 1280, height: 720), rate: "30", frames: 180, to: reference)
        try Self.compareTiles(folder + "/out.y4m", reference, frames: 180)

        // The background's seams, from what is visible of it below the two clips (rows 544..<720,
        // where its colour bar moves every frame).
        try await Self.checkShownFrames(
            folder + "/out.y4m", clip: background, scaledTo: PixelSize(width: 1280, height: 720), frames: 180,
            region: PixelRect(x: 0, y: 544, width: 1280, height: 176), sourceRegion: PixelRect(x: 0, y: 544, width: 1280, height: 176),
            expected: { n in (n * 25 / 30) % 50 })
    }

    /// A 25 fps layer (aspect-fill, cropped) and a 24000/1001 fps one (stretched), both looping,
    /// side by side in a 30 fps canvas for 7 s: the frame each shows at every output time.
    @Test func layersOf25And23976FramesPerSecondInA30Canvas() async throws {
        let folder = try HostileOperationsTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let quarter = try await Self.videoOnly(Fixtures.clip("4x3.mp4"), in: folder)
        let film = try await CompositorTests.ntscFilmClip(in: folder)
        let run = try await CLI.run([
            "compose", "--size", "640x360", "--rate", "30", "--duration", "7",
            "--layer", "x=0,y=0,w=320,h=360,gravity=aspect-fill,loop=forever,source=\(quarter)",
            "--layer", "x=320,y=0,w=320,h=360,gravity=stretch,loop=forever,source=\(film)",
            "--out", folder + "/out.y4m",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        // 320x240 filling 320x360: scale 1.5, so 213.3 of its 320 columns show, centred from 53.3:
        // 213 columns from 53, the origin moved down onto the chroma grid (52).
        let layers = [
            ReferenceLayer(
                clip: quarter, content: PixelRect(x: 0, y: 0, width: 320, height: 360), filters: "crop=213:240:52:0:exact=1,scale=320:360",
                loops: true, clearsAfterEnd: false),
            ReferenceLayer(
                clip: film, content: PixelRect(x: 320, y: 0, width: 320, height: 360), filters: "scale=320:360",
                loops: true, clearsAfterEnd: false),
        ]
        let reference = folder + "/reference.y4m"
        try await Self.renderReference(layers, canvas: PixelSize(width: 640, height: 360), rate: "30", frames: 210, to: reference)
        try Self.compareTiles(folder + "/out.y4m", reference, frames: 210)

        // 25 fps: frame ⌊n × 25 / 30⌋ of a 50-frame loop. 24000/1001: frame k is at k × 1001/24000 s,
        // so ⌊n × 800 / 1001⌋ of a 48-frame loop.
        try await Self.checkShownFrames(
            folder + "/out.y4m", clip: quarter, scaledTo: PixelSize(width: 320, height: 360), crop: "crop=213:240:52:0:exact=1,",
            frames: 210, region: PixelRect(x: 0, y: 0, width: 320, height: 360),
            sourceRegion: PixelRect(x: 0, y: 0, width: 320, height: 360), expected: { n in (n * 25 / 30) % 50 })
        try await Self.checkShownFrames(
            folder + "/out.y4m", clip: film, scaledTo: PixelSize(width: 320, height: 360), frames: 210,
            region: PixelRect(x: 320, y: 0, width: 320, height: 360),
            sourceRegion: PixelRect(x: 0, y: 0, width: 320, height: 360), expected: { n in (n * 800 / 1001) % 48 })
    }

    // MARK: - The reference

    /// The content rectangle of a picture shown at `shown` fitted into `rect`: the largest scale
    /// that fits, sizes rounded to even, the bars split with the offset rounded down to even.
    static func fit(shown: (Double, Double), in rect: PixelRect) -> PixelRect {
        let scale = min(Double(rect.width) / shown.0, Double(rect.height) / shown.1)
        let width = Int((shown.0 * scale / 2).rounded()) * 2, height = Int((shown.1 * scale / 2).rounded()) * 2
        return PixelRect(x: rect.x + (rect.width - width) / 2 / 2 * 2, y: rect.y + (rect.height - height) / 2 / 2 * 2, width: width, height: height)
    }

    /// A copy of the clip's video alone, so `-stream_loop` loops at the video's own length.
    static func videoOnly(_ clip: String, in folder: String) async throws -> String {
        let path = folder + "/" + URL(fileURLWithPath: clip).deletingPathExtension().lastPathComponent + "-video.mp4"
        _ = try await Reference.run(
            try Reference.ffmpeg(), ["-hide_banner", "-loglevel", "error", "-y", "-i", clip, "-map", "0:v", "-c", "copy", path])
        return path
    }

    /// The layout drawn by ffmpeg over a black canvas, as a Y4M file.
    static func renderReference(_ layers: [ReferenceLayer], canvas: PixelSize, rate: String, frames: Int, to path: String) async throws {
        var arguments = [
            "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=\(canvas.width)x\(canvas.height):r=\(rate)",
        ]
        var graph: [String] = []
        var below = "0:v"
        for (i, layer) in layers.enumerated() {
            if layer.loops { arguments += ["-stream_loop", "-1"] }
            arguments += ["-i", layer.clip]
            graph.append("[\(i + 1):v]setpts=PTS-STARTPTS,\(layer.filters),fps=\(rate):round=up[l\(i)]")
            let eof = layer.clearsAfterEnd ? "pass" : "repeat"
            graph.append("[\(below)][l\(i)]overlay=\(layer.content.x):\(layer.content.y):eof_action=\(eof)[m\(i)]")
            below = "m\(i)"
        }
        graph.append("[\(below)]format=yuv420p[out]")
        arguments += ["-filter_complex", graph.joined(separator: ";"), "-map", "[out]", "-frames:v", "\(frames)", "-f", "yuv4mpegpipe", path]
        _ = try await Reference.run(try Reference.ffmpeg(), arguments)
    }

    // MARK: - Comparing

    /// Every 80×80 tile of the luma of every frame (and each whole chroma plane) at ≥ 40 dB.
    static func compareTiles(_ actualPath: String, _ referencePath: String, frames: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let actual = try Y4MFile(actualPath), reference = try Y4MFile(referencePath)
        try #require(actual.size == reference.size, "sizes \(actual.size) and \(reference.size)", sourceLocation: sourceLocation)
        #expect(
            actual.frameCount == frames && reference.frameCount == frames, "frames: \(actual.frameCount) and \(reference.frameCount)",
            sourceLocation: sourceLocation)
        let width = actual.size.width, height = actual.size.height, tile = 80
        let columns = (width + tile - 1) / tile, rows = (height + tile - 1) / tile
        var failures: [String] = []
        for n in 0..<min(actual.frameCount, reference.frameCount) {
            let a = try actual.frame(n), e = try reference.frame(n)
            var squares = [Double](repeating: 0, count: columns * rows)
            a.withUnsafeBufferPointer { a in
                e.withUnsafeBufferPointer { e in
                    for y in 0..<height {
                        let rowBase = (y / tile) * columns
                        for x in 0..<width {
                            let d = Int(a[y * width + x]) - Int(e[y * width + x])
                            if d != 0 { squares[rowBase + x / tile] += Double(d * d) }
                        }
                    }
                }
            }
            for (index, sum) in squares.enumerated() where sum > 0 {
                let x = index % columns * tile, y = index / columns * tile
                let pixels = Double(min(tile, width - x) * min(tile, height - y))
                let psnr = 10 * log10(255 * 255 / (sum / pixels))
                if psnr < 40 { failures.append("frame \(n), tile at \(x),\(y): \(String(format: "%.1f", psnr)) dB") }
            }
            let lumaCount = width * height
            let chroma = Reference.psnr(Array(a[lumaCount...]), Array(e[lumaCount...]))
            if chroma < 40 { failures.append("frame \(n), chroma: \(String(format: "%.1f", chroma)) dB") }
        }
        let summary = "\(failures.count) regions differ from the filter graph: \(failures.prefix(12))"
        let clean = failures.isEmpty
        #expect(clean, "\(summary)", sourceLocation: sourceLocation)
    }

    /// For each output frame, the source frame whose picture best matches `region` of it (luma,
    /// sampled every 8 pixels both ways) must be `expected(n)`. The clip's frames are scaled by ffmpeg to
    /// `scaledTo`, and `sourceRegion` of them compared.
    static func checkShownFrames(
        _ path: String, clip: String, scaledTo size: PixelSize, crop: String = "", frames: Int,
        region: PixelRect, sourceRegion: PixelRect, expected: (Int) -> Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let luma = try await Reference.run(
            try Reference.ffmpeg(),
            [
                "-hide_banner", "-loglevel", "error", "-i", clip,
                "-vf", "\(crop)scale=\(size.width):\(size.height)", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-",
            ])
        // (YUV rather than gray: gray would be the luma stretched to full range.)
        let frameBytes = size.width * size.height * 3 / 2
        let sourceCount = luma.count / frameBytes
        try #require(sourceCount > 1 && luma.count == sourceCount * frameBytes, "\(luma.count) bytes of YUV", sourceLocation: sourceLocation)
        func samples(_ bytes: ArraySlice<UInt8>, width: Int, in rect: PixelRect) -> [Int] {
            let base = bytes.startIndex
            return stride(from: rect.y, to: rect.y + rect.height, by: 8).flatMap { y in
                stride(from: rect.x, to: rect.x + rect.width, by: 8).map { x in Int(bytes[base + y * width + x]) }
            }
        }
        let sources = (0..<sourceCount).map { samples(luma[($0 * frameBytes)..<(($0 + 1) * frameBytes)], width: size.width, in: sourceRegion) }
        // Without distinct frames the match would prove nothing.
        try #require(Set(sources).count == sourceCount, "the clip's frames are not all distinct", sourceLocation: sourceLocation)
        let output = try Y4MFile(path)
        var wrong: [String] = []
        for n in 0..<min(frames, output.frameCount) {
            let frame = try output.frame(n)
            let shown = samples(frame[0..<(output.size.width * output.size.height)], width: output.size.width, in: region)
            let distances = sources.map { source in zip(source, shown).reduce(0) { $0 + abs($1.0 - $1.1) } }
            let best = distances.indices.min { distances[$0] < distances[$1] } ?? -1
            if best != expected(n) { wrong.append("output \(n): source frame \(best), expected \(expected(n))") }
        }
        let matched = output.frameCount == frames && wrong.isEmpty
        #expect(matched, "\(output.frameCount) frames; \(wrong.count) wrong: \(wrong.prefix(12))", sourceLocation: sourceLocation)
    }
}

/// A YUV 4:2:0 Y4M file read a frame at a time (frames with no parameters, as both ffmpeg and
/// Playhead write them).
struct Y4MFile {
    let size: PixelSize
    let frameCount: Int
    private let handle: FileHandle
    private let headerLength: Int
    private var frameLength: Int { 6 + size.width * size.height * 3 / 2 }

    init(_ path: String) throws {
        handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        let head = try handle.read(upToCount: 256) ?? Data()
        guard let newline = head.firstIndex(of: 0x0A), let header = String(data: head[..<newline], encoding: .ascii), header.hasPrefix("YUV4MPEG2 ")
        else {
            throw Y4MFailure(message: "\(path): not a Y4M file")
        }
        let fields = header.split(separator: " ")
        guard let w = fields.first(where: { $0.hasPrefix("W") }).flatMap({ Int($0.dropFirst()) }),
            let h = fields.first(where: { $0.hasPrefix("H") }).flatMap({ Int($0.dropFirst()) })
        else {
            throw Y4MFailure(message: "\(path): no size in \(header)")
        }
        if let colour = fields.first(where: { $0.hasPrefix("C") }), !colour.hasPrefix("C420") {
            throw Y4MFailure(message: "\(path): \(colour) is not 4:2:0")
        }
        size = PixelSize(width: w, height: h)
        headerLength = newline + 1
        let total = Int(try handle.seekToEnd())
        let frame = 6 + w * h * 3 / 2
        guard (total - headerLength) % frame == 0 else { throw Y4MFailure(message: "\(path): \(total) bytes is not whole frames of \(frame)") }
        frameCount = (total - headerLength) / frame
    }

    /// The frame's planes (Y, then U, then V).
    func frame(_ n: Int) throws -> [UInt8] {
        try handle.seek(toOffset: UInt64(headerLength + n * frameLength))
        let data = try handle.read(upToCount: frameLength) ?? Data()
        guard data.count == frameLength, data.prefix(6).elementsEqual("FRAME\n".utf8) else {
            throw Y4MFailure(message: "frame \(n) is cut or has parameters")
        }
        return [UInt8](data.dropFirst(6))
    }
}

struct Y4MFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
