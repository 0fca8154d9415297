internal import CFFmpeg

extension OwnedFrame {
    /// Fills the whole picture with `colour` (an RGB24 picture with its bytes, any other as 4:2:0
    /// YUV with the colour's limited-range values).
    /// - Parameter colour: the colour.
    package func fill(with colour: RGBColor) {
        let frame = pointer.pointee
        let width = Int(frame.width), height = Int(frame.height)
        if format == AV_PIX_FMT_RGB24 {
            guard let base = frame.data.0, width > 0 else { return }
            // One row by pixel, the others copied from it.
            for x in 0..<width {
                base[3 * x] = colour.red
                base[3 * x + 1] = colour.green
                base[3 * x + 2] = colour.blue
            }
            for row in 1..<max(1, height) { (base + row * Int(frame.linesize.0)).update(from: base, count: 3 * width) }
            return
        }
        let (y, u, v) = colour.limitedYUV
        let planes: [(UnsafeMutablePointer<UInt8>?, Int, UInt8, Int, Int)] = [
            (frame.data.0, Int(frame.linesize.0), y, width, height),
            (frame.data.1, Int(frame.linesize.1), u, width / 2, height / 2),
            (frame.data.2, Int(frame.linesize.2), v, width / 2, height / 2),
        ]
        for (plane, stride, value, w, h) in planes {
            guard let plane else { continue }
            for row in 0..<h { (plane + row * stride).update(repeating: value, count: w) }
        }
    }
}
