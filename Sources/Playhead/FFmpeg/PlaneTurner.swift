import CFFmpeg

/// Copies a scaled picture into the canvas turned by quarter turns (and mirrored), plane by plane.
/// Only used for sources with a display matrix; upright sources are scaled straight into the canvas.
enum PlaneTurner {
    static func turn(_ source: OwnedFrame, into canvas: OwnedFrame, at content: PixelRect, orientation: VideoOrientation, format: AVPixelFormat) {
        guard let descriptor = av_pix_fmt_desc_get(format) else { return }
        let d = descriptor.pointee
        let isPacked = Int(d.nb_components) > 1 && d.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) == 0
        let planeCount = isPacked ? 1 : Int(av_pix_fmt_count_planes(format))
        let bytesPerPixel = isPacked ? Int(av_get_bits_per_pixel(descriptor)) / 8 : 1
        let s = source.pointer.pointee, c = canvas.pointer.pointee
        for plane in 0..<planeCount {
            let chroma = !isPacked && (plane == 1 || plane == 2)
            let hs = chroma ? Int(d.log2_chroma_w) : 0, vs = chroma ? Int(d.log2_chroma_h) : 0
            let (srcData, srcStride) = Self.plane(plane, of: s)
            let (dstData, dstStride) = Self.plane(plane, of: c)
            guard let src = srcData, let dst = dstData else { continue }
            let sw = (Int(s.width) + (1 << hs) - 1) >> hs, sh = (Int(s.height) + (1 << vs) - 1) >> vs
            let ox = content.x >> hs, oy = content.y >> vs
            let cw = (content.width + (1 << hs) - 1) >> hs, ch = (content.height + (1 << vs) - 1) >> vs
            turnPlane(src: src, srcStride: srcStride, srcWidth: sw, srcHeight: sh,
                      dst: dst + oy * dstStride + ox * bytesPerPixel, dstStride: dstStride,
                      width: cw, height: ch, bytesPerPixel: bytesPerPixel, orientation: orientation)
        }
    }

    static func plane(_ index: Int, of frame: AVFrame) -> (UnsafeMutablePointer<UInt8>?, Int) {
        switch index {
        case 0: return (frame.data.0, Int(frame.linesize.0))
        case 1: return (frame.data.1, Int(frame.linesize.1))
        case 2: return (frame.data.2, Int(frame.linesize.2))
        default: return (frame.data.3, Int(frame.linesize.3))
        }
    }

    /// For each canvas pixel (dx, dy), the source pixel it shows.
    static func turnPlane(src: UnsafeMutablePointer<UInt8>, srcStride: Int, srcWidth: Int, srcHeight: Int,
                          dst: UnsafeMutablePointer<UInt8>, dstStride: Int, width: Int, height: Int,
                          bytesPerPixel: Int, orientation: VideoOrientation) {
        let mirrored = orientation.isMirrored
        for dy in 0..<height {
            let row = dst + dy * dstStride
            for dx in 0..<width {
                var (ux, uy): (Int, Int)
                switch orientation.rotation {
                case 90: (ux, uy) = (dy, srcHeight - 1 - dx)
                case 180: (ux, uy) = (srcWidth - 1 - dx, srcHeight - 1 - dy)
                case 270: (ux, uy) = (srcWidth - 1 - dy, dx)
                default: (ux, uy) = (dx, dy)
                }
                if mirrored { ux = srcWidth - 1 - ux }
                ux = min(max(ux, 0), srcWidth - 1)
                uy = min(max(uy, 0), srcHeight - 1)
                let from = src + uy * srcStride + ux * bytesPerPixel
                let to = row + dx * bytesPerPixel
                for b in 0..<bytesPerPixel { to[b] = from[b] }
            }
        }
    }
}
