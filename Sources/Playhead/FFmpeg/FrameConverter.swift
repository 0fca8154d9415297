import CFFmpeg

/// Scales and converts decoded frames into a canvas by a fixed ``FrameLayout``: straight into the
/// canvas's content rectangle when the picture is upright, through one intermediate frame plus a
/// turn when it is not. The swscale context and the intermediate frame are made once and reused.
final class FrameConverter {
    let layout: FrameLayout
    let outputFormat: AVPixelFormat
    private var scaler: OpaquePointer?
    private var turnBuffer: OwnedFrame?
    private let source: String

    init(layout: FrameLayout, outputFormat: AVPixelFormat, source: String) {
        self.layout = layout
        self.outputFormat = outputFormat
        self.source = source
    }

    deinit {
        sws_freeContext(scaler)
    }

    /// Converts `frame` into `canvas` (whose bars are already black and stay so).
    func convert(_ frame: OwnedFrame, into canvas: OwnedFrame) throws(PlayheadError) {
        let input = frame.pointer
        let inputFormat = AVPixelFormat(rawValue: input.pointee.format)
        let crop = Self.alignedCrop(layout.sourceCrop, format: inputFormat, frameSize: frame.size)
        let scaled = layout.scaledSize
        scaler = sws_getCachedContext(scaler, Int32(crop.width), Int32(crop.height), inputFormat,
                                      Int32(scaled.width), Int32(scaled.height), outputFormat,
                                      SWS_BICUBIC, nil, nil, nil)
        guard let scaler else {
            throw PlayheadError(code: .conversionFailed, message: "no conversion from \(Self.name(inputFormat)) \(crop.size) to \(Self.name(outputFormat)) \(scaled)", file: source)
        }
        var sourcePlanes = Self.planes(of: input, offsetBy: crop, format: inputFormat)
        var sourceStrides = Self.strides(of: input)
        let target: OwnedFrame
        let targetRect: PixelRect
        if layout.orientation == .identity {
            target = canvas
            targetRect = layout.content
        } else {
            if turnBuffer == nil { turnBuffer = try OwnedFrame(size: scaled, format: outputFormat) }
            target = turnBuffer!
            targetRect = PixelRect(size: scaled)
        }
        var destinationPlanes = Self.planes(of: target.pointer, offsetBy: targetRect, format: outputFormat)
        var destinationStrides = Self.strides(of: target.pointer)
        let rows = withUnsafePointer(to: &sourcePlanes) { src in
            withUnsafePointer(to: &sourceStrides) { srcStride in
                withUnsafePointer(to: &destinationPlanes) { dst in
                    withUnsafePointer(to: &destinationStrides) { dstStride in
                        src.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 4) { s in
                            srcStride.withMemoryRebound(to: Int32.self, capacity: 4) { ss in
                                dst.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { d in
                                    dstStride.withMemoryRebound(to: Int32.self, capacity: 4) { ds in
                                        sws_scale(scaler, s, ss, 0, Int32(crop.height), d, ds)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        guard rows > 0 else {
            throw FFmpegError.error(.conversionFailed, "scaling failed", function: "sws_scale", result: rows, file: source)
        }
        if layout.orientation != .identity {
            PlaneTurner.turn(target, into: canvas, at: layout.content, orientation: layout.orientation, format: outputFormat)
        }
    }

    /// The crop with its origin moved onto the chroma grid of subsampled formats.
    static func alignedCrop(_ crop: PixelRect, format: AVPixelFormat, frameSize: PixelSize) -> PixelRect {
        guard let descriptor = av_pix_fmt_desc_get(format) else { return crop }
        let xStep = 1 << Int(descriptor.pointee.log2_chroma_w), yStep = 1 << Int(descriptor.pointee.log2_chroma_h)
        var rect = crop
        rect.x -= rect.x % xStep
        rect.y -= rect.y % yStep
        rect.width = min(rect.width, frameSize.width - rect.x)
        rect.height = min(rect.height, frameSize.height - rect.y)
        return rect
    }

    typealias Planes = (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?)

    /// The frame's plane pointers moved to `rect`'s origin (no allocation: called per frame).
    static func planes(of frame: UnsafeMutablePointer<AVFrame>, offsetBy rect: PixelRect, format: AVPixelFormat) -> Planes {
        let f = frame.pointee
        var planes: Planes = (f.data.0, f.data.1, f.data.2, f.data.3)
        guard rect.x != 0 || rect.y != 0, let descriptor = av_pix_fmt_desc_get(format) else { return planes }
        let d = descriptor.pointee
        // Bytes per pixel of each plane: the largest step of the components stored in it.
        var steps: (Int, Int, Int, Int) = (0, 0, 0, 0)
        let components = d.comp
        func note(_ c: AVComponentDescriptor) {
            switch c.plane {
            case 0: steps.0 = max(steps.0, Int(c.step))
            case 1: steps.1 = max(steps.1, Int(c.step))
            case 2: steps.2 = max(steps.2, Int(c.step))
            default: steps.3 = max(steps.3, Int(c.step))
            }
        }
        let count = Int(d.nb_components)
        if count > 0 { note(components.0) }
        if count > 1 { note(components.1) }
        if count > 2 { note(components.2) }
        if count > 3 { note(components.3) }
        let subsampled = (d.flags & UInt64(AV_PIX_FMT_FLAG_RGB)) == 0
        let cx = subsampled ? rect.x >> Int(d.log2_chroma_w) : rect.x
        let cy = subsampled ? rect.y >> Int(d.log2_chroma_h) : rect.y
        planes.0 = planes.0.map { $0 + rect.y * Int(f.linesize.0) + rect.x * steps.0 }
        planes.1 = planes.1.map { $0 + cy * Int(f.linesize.1) + cx * steps.1 }
        planes.2 = planes.2.map { $0 + cy * Int(f.linesize.2) + cx * steps.2 }
        planes.3 = planes.3.map { $0 + rect.y * Int(f.linesize.3) + rect.x * steps.3 }
        return planes
    }

    static func strides(of frame: UnsafeMutablePointer<AVFrame>) -> (Int32, Int32, Int32, Int32) {
        let l = frame.pointee.linesize
        return (l.0, l.1, l.2, l.3)
    }

    static func name(_ format: AVPixelFormat) -> String {
        av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "pixel format \(format.rawValue)"
    }
}
