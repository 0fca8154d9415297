internal import CFFmpeg

/// Scales and converts decoded frames into a canvas by a fixed ``FrameLayout``, the way ffmpeg's
/// scale filter does: libswscale with bicubic filtering, told each frame's own colour matrix and
/// range (an untagged frame is BT.601, limited range). A frame with an orientation is first turned
/// in its own pixel format — as ffmpeg's autorotate does — and then scaled into the canvas's
/// content rectangle. The swscale context and the frames it uses are made once and reused.
package final class FrameConverter {
    package let layout: FrameLayout
    let outputFormat: AVPixelFormat
    /// The scaler, made for `scalerKey`; remade (with its colour details) when the key changes.
    /// (`sws_getCachedContext` is not used: for `yuvj` formats it rebuilds on every call, often at
    /// the same address, which hides that the colour details were lost.)
    private var scaler: OpaquePointer?
    private var scalerKey: ScalerKey?
    private struct ScalerKey: Equatable {
        var input: PixelSize
        var inputFormat: Int32
        var output: PixelSize
        var space: Int32
        var fullRange: Int32
    }
    private var turned: OwnedFrame?
    /// For formats that cannot be turned plane by plane: the picture converted at its stored
    /// orientation, turned afterwards in the output format.
    private var converted: OwnedFrame?
    /// How the decoded format's planes turn (nil: they cannot), worked out once per format.
    private var turnable: (format: AVPixelFormat, planes: [PlaneTurner.PlaneLayout]?)?
    /// A reused header over the canvas's content rectangle (the fallback turn's target), made
    /// the first time it is needed.
    private var contentView: OwnedFrame?
    /// The picture scaled at its content size, when the content is not the whole output.
    private var staging: OwnedFrame?
    private let source: String
    /// Subtitles drawn into each picture before it is fitted (nil: none).
    package var burner: SubtitleBurner?

    /// A converter of decoded frames into `layout`'s rectangle of a canvas in `format`.
    /// - Parameters:
    ///   - layout: where the picture goes and what part of it is used.
    ///   - format: the canvas's layout.
    ///   - source: what errors name.
    package convenience init(layout: FrameLayout, format: PictureFormat, source: String) {
        self.init(layout: layout, outputFormat: format.ffmpeg, source: source)
    }

    init(layout: FrameLayout, outputFormat: AVPixelFormat, source: String) {
        self.layout = layout
        self.outputFormat = outputFormat
        self.source = source
    }

    deinit {
        sws_freeContext(scaler)
    }

    /// Converts `frame` into `canvas` (whose bars are already painted and stay so).
    package func convert(_ given: OwnedFrame, into canvas: OwnedFrame) throws(PlayheadError) {
        let frame = try burner?.burn(given) ?? given
        let input = frame.pointer
        let inputFormat = AVPixelFormat(rawValue: input.pointee.format)
        guard layout.orientation != .identity else {
            try scale(input, crop: layout.sourceCrop, into: canvas.pointer, at: layout.content)
            return
        }
        if turnable?.format != inputFormat { turnable = (inputFormat, PlaneTurner.planes(of: inputFormat)) }
        if let planes = turnable?.planes {
            // Turn first, in the decoded format; then scale the upright picture into the canvas.
            let stored = frame.size
            let shown = layout.orientation.displayedSize(of: stored)
            if turned?.size != shown || turned?.format != inputFormat {
                turned = try OwnedFrame(size: shown, format: inputFormat)
            }
            guard let turned else { return }
            PlaneTurner.turn(input, storedSize: stored, into: turned.pointer, orientation: layout.orientation, layouts: planes)
            Self.copyColourTags(from: input, to: turned.pointer)
            try scale(turned.pointer, crop: layout.displayedCrop, into: canvas.pointer, at: layout.content)
            return
        }
        // A layout that cannot be turned as it is: convert at the stored orientation, then turn
        // the result (the output formats can always be turned).
        let scaled = layout.scaledSize
        if converted?.size != scaled { converted = try OwnedFrame(size: scaled, format: outputFormat) }
        guard let converted, let planes = PlaneTurner.planes(of: outputFormat) else {
            throw PlayheadError(code: .conversionFailed, message: "cannot turn pictures in \(Self.name(outputFormat))", file: source)
        }
        try scale(input, crop: layout.sourceCrop, into: converted.pointer, at: PixelRect(size: scaled))
        if contentView == nil { contentView = try OwnedFrame() }
        guard let contentView else { return }
        Self.point(contentView.pointer, at: layout.content, of: canvas.pointer, format: outputFormat)
        PlaneTurner.turn(converted.pointer, storedSize: scaled, into: contentView.pointer, orientation: layout.orientation, layouts: planes)
    }

    /// Scales `crop` of `input` into the `rect` of `output`, honouring the input's colour tags.
    ///
    /// libswscale writes its rows in whole SIMD blocks, so a row may run a few pixels past the
    /// width asked for: harmless at the end of a frame's own row (its line padding), but inside a
    /// canvas it would paint over the pixels right of the rectangle (a bar, another layer). So only
    /// a rectangle that is the whole output is scaled in place; any other is scaled into a frame of
    /// its own size (reused) and its rows copied into the output.
    private func scale(
        _ input: UnsafeMutablePointer<AVFrame>, crop requested: PixelRect, into output: UnsafeMutablePointer<AVFrame>,
        at rect: PixelRect
    ) throws(PlayheadError) {
        if rect == PixelRect(x: 0, y: 0, width: Int(output.pointee.width), height: Int(output.pointee.height)) {
            try scaleInPlace(input, crop: requested, into: output, at: rect)
            return
        }
        if staging?.size != rect.size || staging?.format != outputFormat {
            staging = try OwnedFrame(size: rect.size, format: outputFormat)
        }
        guard let staging else { return }
        try scaleInPlace(input, crop: requested, into: staging.pointer, at: PixelRect(size: rect.size))
        Self.copy(staging.pointer, into: output, at: rect, format: outputFormat)
    }

    /// Copies all of `picture` (already scaled, in the canvas's format) into `rect` of `canvas`.
    package static func blit(_ picture: OwnedFrame, into canvas: OwnedFrame, at rect: PixelRect) {
        copy(picture.pointer, into: canvas.pointer, at: rect, format: canvas.format)
    }

    /// Copies all of `frame` into `rect` of `output` (both in `format`), plane by plane.
    private static func copy(
        _ frame: UnsafeMutablePointer<AVFrame>, into output: UnsafeMutablePointer<AVFrame>, at rect: PixelRect, format: AVPixelFormat
    ) {
        Self.withPlaneArrays(
            source: Self.planes(of: frame, offsetBy: PixelRect(x: 0, y: 0, width: 0, height: 0), format: format), Self.strides(of: frame),
            target: Self.planes(of: output, offsetBy: rect, format: format), Self.strides(of: output)
        ) { s, ss, t, ts in
            av_image_copy(t, ts, s, ss, format, Int32(rect.width), Int32(rect.height))
        }
    }

    /// The plane pointers and strides of a source and a target as the C arrays of four that
    /// libswscale and libavutil take (valid only during `body`).
    private static func withPlaneArrays<R>(
        source: Planes, _ sourceStrides: (Int32, Int32, Int32, Int32), target: Planes, _ targetStrides: (Int32, Int32, Int32, Int32),
        _ body: (
            UnsafeMutablePointer<UnsafePointer<UInt8>?>, UnsafeMutablePointer<Int32>,
            UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int32>
        ) -> R
    ) -> R {
        var (sources, sourceStrides, targets, targetStrides) = (source, sourceStrides, target, targetStrides)
        return withUnsafeMutablePointer(to: &sources) { s in
            withUnsafeMutablePointer(to: &sourceStrides) { ss in
                withUnsafeMutablePointer(to: &targets) { t in
                    withUnsafeMutablePointer(to: &targetStrides) { ts in
                        s.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 4) { sp in
                            ss.withMemoryRebound(to: Int32.self, capacity: 4) { ssp in
                                t.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { tp in
                                    ts.withMemoryRebound(to: Int32.self, capacity: 4) { tsp in body(sp, ssp, tp, tsp) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Scales `crop` of `input` straight into the `rect` of `output`.
    private func scaleInPlace(
        _ input: UnsafeMutablePointer<AVFrame>, crop requested: PixelRect, into output: UnsafeMutablePointer<AVFrame>,
        at rect: PixelRect
    ) throws(PlayheadError) {
        let inputFormat = AVPixelFormat(rawValue: input.pointee.format)
        let size = PixelSize(width: Int(input.pointee.width), height: Int(input.pointee.height))
        let crop = Self.alignedCrop(requested, format: inputFormat, frameSize: size)
        let (space, fullRange) = Self.colour(of: input)
        let key = ScalerKey(input: crop.size, inputFormat: inputFormat.rawValue, output: rect.size, space: space, fullRange: fullRange)
        if key != scalerKey || scaler == nil {
            sws_freeContext(scaler)
            scaler = sws_getContext(
                Int32(crop.width), Int32(crop.height), inputFormat, Int32(rect.width), Int32(rect.height), outputFormat,
                SWS_BICUBIC, nil, nil, nil)
            scalerKey = key
            if let scaler {
                let coefficients = sws_getCoefficients(space)
                _ = sws_setColorspaceDetails(scaler, coefficients, fullRange, coefficients, 0, 0, 1 << 16, 1 << 16)
            }
        }
        guard let scaler else {
            scalerKey = nil
            throw PlayheadError(
                code: .conversionFailed,
                message: "no conversion from \(Self.name(inputFormat)) \(crop.size) to \(Self.name(outputFormat)) \(rect.size)", file: source)
        }
        let rows = Self.withPlaneArrays(
            source: Self.planes(of: input, offsetBy: crop, format: inputFormat), Self.strides(of: input),
            target: Self.planes(of: output, offsetBy: rect, format: outputFormat), Self.strides(of: output)
        ) { s, ss, d, ds in
            sws_scale(scaler, s, ss, 0, Int32(crop.height), d, ds)
        }
        guard rows > 0 else {
            throw FFmpegError.error(.conversionFailed, "scaling failed", function: "sws_scale", result: rows, file: source)
        }
    }

    /// The frame's matrix and range as ffmpeg's scale filter reads them: its colour space picks
    /// the coefficients (RGB-tagged, unspecified and reserved values mean BT.601, libswscale's
    /// default), its range the input range (`yuvj` formats are full); the output range stays
    /// limited for YUV (it means nothing for RGB).
    private static func colour(of frame: UnsafeMutablePointer<AVFrame>) -> (space: Int32, fullRange: Int32) {
        var space = Int32(frame.pointee.colorspace.rawValue)
        if space < 1 || space > 10 || space == 8 { space = SWS_CS_DEFAULT }
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        switch frame.pointee.color_range {
        case AVCOL_RANGE_JPEG: return (space, 1)
        case AVCOL_RANGE_MPEG: return (space, 0)
        default: return (space, isFullRangeFormat(format) ? 1 : 0)
        }
    }

    /// The `yuvj` formats, which are full range by definition.
    static func isFullRangeFormat(_ format: AVPixelFormat) -> Bool {
        [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUVJ411P].contains(format)
    }

    private static func copyColourTags(from source: UnsafeMutablePointer<AVFrame>, to target: UnsafeMutablePointer<AVFrame>) {
        target.pointee.colorspace = source.pointee.colorspace
        target.pointee.color_range = source.pointee.color_range
        target.pointee.color_primaries = source.pointee.color_primaries
        target.pointee.color_trc = source.pointee.color_trc
    }

    /// Points the header `view` (which owns no buffers) at `rect` of `frame`: no copy.
    private static func point(
        _ view: UnsafeMutablePointer<AVFrame>, at rect: PixelRect, of frame: UnsafeMutablePointer<AVFrame>, format: AVPixelFormat
    ) {
        let planes = Self.planes(of: frame, offsetBy: rect, format: format)
        view.pointee.data.0 = planes.0
        view.pointee.data.1 = planes.1
        view.pointee.data.2 = planes.2
        view.pointee.data.3 = planes.3
        view.pointee.linesize = frame.pointee.linesize
        view.pointee.width = Int32(rect.width)
        view.pointee.height = Int32(rect.height)
        view.pointee.format = format.rawValue
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
        func note(_ c: AVComponentDescriptor) {
            switch c.plane {
            case 0: steps.0 = max(steps.0, Int(c.step))
            case 1: steps.1 = max(steps.1, Int(c.step))
            case 2: steps.2 = max(steps.2, Int(c.step))
            default: steps.3 = max(steps.3, Int(c.step))
            }
        }
        let count = Int(d.nb_components)
        if count > 0 { note(d.comp.0) }
        if count > 1 { note(d.comp.1) }
        if count > 2 { note(d.comp.2) }
        if count > 3 { note(d.comp.3) }
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
