internal import CFFmpeg

/// Turns a picture by its ``VideoOrientation``, plane by plane, in its own pixel format: what a
/// display (and ffmpeg's autorotate) does before any scaling or conversion, so the result matches
/// bit for bit. Each displayed pixel takes the stored pixel ``VideoOrientation/storedPoint(forDisplayed:stored:)``
/// names; since that mapping is affine, each row is a walk with a fixed step through the source.
package enum PlaneTurner {
    /// The layout of one plane: bytes per pixel and chroma subsampling.
    struct PlaneLayout {
        var bytesPerPixel: Int
        var log2Width: Int
        var log2Height: Int
    }

    /// The planes of `format`, when it can be turned plane by plane: planar or packed, whole bytes
    /// per pixel, chroma subsampled the same way in both directions (so it stays valid once
    /// turned), no palette, bitstream or hardware layouts. Nil otherwise.
    static func planes(of format: AVPixelFormat) -> [PlaneLayout]? {
        guard let descriptor = av_pix_fmt_desc_get(format) else { return nil }
        let d = descriptor.pointee
        let unsupported = UInt64(AV_PIX_FMT_FLAG_PAL) | UInt64(AV_PIX_FMT_FLAG_BITSTREAM) | UInt64(AV_PIX_FMT_FLAG_HWACCEL)
        guard d.flags & unsupported == 0, d.log2_chroma_w == d.log2_chroma_h else { return nil }
        let count = Int(av_pix_fmt_count_planes(format))
        guard count > 0 else { return nil }
        var steps = [Int](repeating: 0, count: count)
        let components = [d.comp.0, d.comp.1, d.comp.2, d.comp.3].prefix(Int(d.nb_components))
        for c in components where Int(c.plane) < count {
            guard c.depth % 8 == 0 || c.step > 0 else { return nil }
            steps[Int(c.plane)] = max(steps[Int(c.plane)], Int(c.step))
        }
        guard steps.allSatisfy({ $0 > 0 }) else { return nil }
        let isRGB = d.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
        return steps.enumerated().map { plane, step in
            // Planes 1 and 2 of YUV formats hold subsampled chroma; alpha and luma are full size.
            let chroma = !isRGB && (plane == 1 || plane == 2)
            return PlaneLayout(bytesPerPixel: step, log2Width: chroma ? Int(d.log2_chroma_w) : 0, log2Height: chroma ? Int(d.log2_chroma_h) : 0)
        }
    }

    /// Turns `source` (`storedSize`, any format ``planes(of:)`` accepts) into `target`, which has
    /// the same format and the displayed size.
    static func turn(
        _ source: UnsafeMutablePointer<AVFrame>, storedSize: PixelSize, into target: UnsafeMutablePointer<AVFrame>,
        orientation: VideoOrientation, layouts: [PlaneLayout]
    ) {
        let shown = orientation.displayedSize(of: storedSize)
        for (index, layout) in layouts.enumerated() {
            let (srcData, srcStride) = plane(index, of: source.pointee)
            let (dstData, dstStride) = plane(index, of: target.pointee)
            guard let src = srcData, let dst = dstData else { continue }
            let stored = PixelSize(width: rounded(storedSize.width, layout.log2Width), height: rounded(storedSize.height, layout.log2Height))
            let width = rounded(shown.width, layout.log2Width), height = rounded(shown.height, layout.log2Height)
            let bpp = layout.bytesPerPixel
            // The source address of displayed (x, y) is origin + x·stepX + y·stepY.
            let origin = orientation.storedPoint(forDisplayed: (0, 0), stored: stored)
            let right = orientation.storedPoint(forDisplayed: (1, 0), stored: stored)
            let down = orientation.storedPoint(forDisplayed: (0, 1), stored: stored)
            let stepX = (right.x - origin.x) * bpp + (right.y - origin.y) * srcStride
            let stepY = (down.x - origin.x) * bpp + (down.y - origin.y) * srcStride
            let start = origin.x * bpp + origin.y * srcStride
            for y in 0..<height {
                var from = src + start + y * stepY
                var to = dst + y * dstStride
                if bpp == 1 {
                    for _ in 0..<width {
                        to.pointee = from.pointee
                        to += 1
                        from += stepX
                    }
                } else {
                    for _ in 0..<width {
                        to.update(from: from, count: bpp)
                        to += bpp
                        from += stepX
                    }
                }
            }
        }
    }

    private static func rounded(_ size: Int, _ log2: Int) -> Int { (size + (1 << log2) - 1) >> log2 }

    static func plane(_ index: Int, of frame: AVFrame) -> (UnsafeMutablePointer<UInt8>?, Int) {
        switch index {
        case 0: return (frame.data.0, Int(frame.linesize.0))
        case 1: return (frame.data.1, Int(frame.linesize.1))
        case 2: return (frame.data.2, Int(frame.linesize.2))
        default: return (frame.data.3, Int(frame.linesize.3))
        }
    }
}
