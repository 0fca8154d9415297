internal import CFFmpeg

/// A picture's pixel layout, as FFmpeg numbers it: what the engine passes around where it needs
/// to name a layout (a canvas's, a stream's own) without touching FFmpeg's types.
package struct PictureFormat: Sendable, Hashable, CustomStringConvertible {
    let ffmpeg: AVPixelFormat

    init(_ format: AVPixelFormat) { ffmpeg = format }

    /// Packed 8-bit RGB.
    package static let rgb24 = PictureFormat(AV_PIX_FMT_RGB24)
    /// Planar 8-bit YUV 4:2:0.
    package static let yuv420p = PictureFormat(AV_PIX_FMT_YUV420P)

    /// The layout a sink asks for, or `native` (the decoded stream's own) when it asks for none.
    /// - Parameters:
    ///   - output: the sink's format.
    ///   - native: the stream's format.
    package init(_ output: OutputPixelFormat, native: PictureFormat) {
        ffmpeg = output.ffmpeg ?? native.ffmpeg
    }

    /// The layout a sink asks for; 4:2:0 for ``OutputPixelFormat/native`` (a canvas drawn by us).
    package init(_ output: OutputPixelFormat) {
        ffmpeg = output.ffmpeg ?? AV_PIX_FMT_YUV420P
    }

    /// The layout of `facts`' stream, as its decoder will produce it.
    package init(of facts: VideoStreamFacts) {
        ffmpeg = facts.storedPixelFormat
    }

    /// 2 for formats with chroma at half resolution (so bars and content fall on the chroma
    /// grid), else 1.
    package var alignment: Int {
        guard let d = av_pix_fmt_desc_get(ffmpeg) else { return 1 }
        return 1 << Int(max(d.pointee.log2_chroma_w, d.pointee.log2_chroma_h))
    }

    /// The bytes one picture of `size` takes as `av_frame_get_buffer` lays it out (rows padded to
    /// 64 bytes, height to 32 rows): what a picture kept in memory costs.
    package func bytes(of size: PixelSize) -> Int {
        let width = Int32(clamping: (size.width + 63) & ~63), height = Int32(clamping: (size.height + 31) & ~31)
        return max(0, Int(av_image_get_buffer_size(ffmpeg, width, height, 64)))
    }

    /// FFmpeg's name for it (`yuv420p`).
    package var description: String { FrameConverter.name(ffmpeg) }
}
