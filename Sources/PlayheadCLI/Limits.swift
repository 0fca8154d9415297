import ArgumentParser
import Playhead

/// What a run may ask for, checked before any work starts (a usage error, exit status 2): sizes
/// that can be allocated, and a bounded amount of work per file.
enum Limits {
    /// Times per file, however they are given (`--count`, `--every`, `--at`).
    static let timesPerFile = 10_000
    /// A canvas or image side, and a canvas's pixels (8K UHD fits).
    static let canvasSide = 8192
    static let canvasPixels = 7680 * 4320
    static func checkCanvas(_ size: PixelSize, option: String) throws {
        guard size.width <= canvasSide, size.height <= canvasSide, size.width * size.height <= canvasPixels else {
            throw ValidationError("\(option) \(size.width)x\(size.height) is too large: at most \(canvasSide) a side and \(canvasPixels) pixels")
        }
    }

    static func checkTimes(_ count: Int, file: String? = nil) throws {
        guard count <= timesPerFile else {
            let subject = file.map { "\($0) would need" } ?? "that is"
            throw ValidationError("\(subject) \(count) times: at most \(timesPerFile) per file")
        }
    }
}
