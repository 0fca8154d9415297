internal import CFFmpeg

/// The pixel layouts sinks can ask for.
public enum OutputPixelFormat: String, Sendable, Hashable {
    /// Packed 8-bit RGB, 3 bytes a pixel, one plane.
    case rgb24
    /// Planar 8-bit YUV 4:2:0 (three planes; chroma at half width and height).
    case yuv420p
    /// Whatever the decoder produces, unconverted when the geometry allows (for decode-only runs).
    case native

    var ffmpeg: AVPixelFormat? {
        switch self {
        case .rgb24: return AV_PIX_FMT_RGB24
        case .yuv420p: return AV_PIX_FMT_YUV420P
        case .native: return nil
        }
    }
}

/// One plane of a frame's pixels.
public struct PixelPlane {
    /// The first byte of the plane's first row.
    public let baseAddress: UnsafePointer<UInt8>
    /// Bytes from one row to the next (may exceed the visible width).
    public let bytesPerRow: Int
    /// Rows in the plane.
    public let rows: Int
    /// Bytes of visible pixels in a row.
    public let visibleBytesPerRow: Int
}

/// A decoded, converted frame, lent to a ``FrameSink`` for the length of one `write` call.
///
/// The pixels belong to the pipeline and are reused for a later frame as soon as `write` returns:
/// copy what you need to keep.
public struct VideoFrame {
    /// Where the frame sits on its source's timeline.
    public let presentationTime: MediaTime
    /// How long it is shown.
    public let duration: MediaTime
    /// Its position in the decode order of presented frames: 0, 1, 2, …
    public let index: Int
    /// The file or URL it came from.
    public let source: String
    /// The pixel size.
    public let size: PixelSize
    /// The pixel layout.
    public let pixelFormat: OutputPixelFormat
    /// FFmpeg's name for the pixel format (useful with ``OutputPixelFormat/native``).
    public let pixelFormatName: String
    let frame: UnsafeMutablePointer<AVFrame>
    /// The session segment it belongs to, and the session's control (to tell whether a seek has
    /// superseded it while it waits to be shown).
    var segment = 0
    var control: (any SegmentWatch)?
    /// A composition's cancellation (its frames have no session control).
    var interrupt: InterruptFlag?
    /// Seconds from the start of the player's timeline, when a player presents it (an item of a
    /// queue, a loop's pass): where an export places it.
    package var timelinePosition: Double?
    /// Its producer draws no later picture into these buffers while another frame references
    /// them (``OwnedFrame/renewIfShared()``): an internal consumer that keeps the picture past
    /// `write` (an encoder, a queue) may take a reference instead of a copy
    /// (``OwnedFrame/hold(_:file:)``).
    package var sharable = false
    /// A run stopped at this frame keeps its sound past it: the frame lies within
    /// ``FrameStreamInfo/nearEnd`` of where its track declares the picture ends (the picture has
    /// ended: the decoder holds its last frames until the data ends), or a player paced it on its
    /// clock with its sound (no sound was decoded ahead of it; a picture frozen while the decoder
    /// waits for the data's end must not take the sound played meanwhile with it).
    package var keepsSoundPast = false

    init(
        presentationTime: MediaTime, duration: MediaTime, index: Int, source: String, size: PixelSize, pixelFormat: OutputPixelFormat,
        pixelFormatName: String, frame: UnsafeMutablePointer<AVFrame>, segment: Int = 0, control: (any SegmentWatch)? = nil,
        interrupt: InterruptFlag? = nil
    ) {
        self.presentationTime = presentationTime
        self.duration = duration
        self.index = index
        self.source = source
        self.size = size
        self.pixelFormat = pixelFormat
        self.pixelFormatName = pixelFormatName
        self.frame = frame
        self.segment = segment
        self.control = control
        self.interrupt = interrupt
    }

    /// A frame lending `picture`'s pixels (the other arguments as the properties of the same names).
    package init(
        presentationTime: MediaTime, duration: MediaTime, index: Int, source: String, size: PixelSize, pixelFormat: OutputPixelFormat,
        pixelFormatName: String, picture: OwnedFrame, segment: Int = 0, control: (any SegmentWatch)? = nil, interrupt: InterruptFlag? = nil
    ) {
        self.init(
            presentationTime: presentationTime, duration: duration, index: index, source: source, size: size, pixelFormat: pixelFormat,
            pixelFormatName: pixelFormatName, frame: picture.pointer, segment: segment, control: control, interrupt: interrupt)
    }

    /// `true` once a seek has started a newer segment: the frame is no longer wanted.
    package var isSuperseded: Bool { control?.isSuperseded(segment) ?? false }

    /// `true` once nothing waits for the frame any more: a seek superseded it, or its session stopped.
    package var isAbandoned: Bool {
        if interrupt?.isRaised == true { return true }
        guard let control else { return false }
        return control.isSuperseded(segment) || control.isStopped
    }

    /// The number of planes (1 for rgb24, 3 for yuv420p).
    public var planeCount: Int { Int(av_pix_fmt_count_planes(AVPixelFormat(rawValue: frame.pointee.format))) }

    /// Plane `index`'s pixels.
    /// - Parameter index: the plane, 0 ..< ``planeCount``.
    /// - Returns: the plane's first byte, row stride, rows and visible bytes a row, valid only during the `write`
    ///   call; nil for an index out of range.
    public func plane(_ index: Int) -> PixelPlane? {
        guard index >= 0, index < planeCount else { return nil }
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        let (data, stride) = PlaneTurner.plane(index, of: frame.pointee)
        guard let data, let descriptor = av_pix_fmt_desc_get(format) else { return nil }
        let rows = index == 0 || index == 3 ? size.height : Int(-((-Int32(size.height)) >> Int32(descriptor.pointee.log2_chroma_h)))
        let visible = Int(av_image_get_linesize(format, Int32(size.width), Int32(index)))
        return PixelPlane(baseAddress: UnsafePointer(data), bytesPerRow: stride, rows: rows, visibleBytesPerRow: visible)
    }
}

/// What a sink is told before the first frame.
public struct FrameStreamInfo: Sendable, Hashable {
    /// The file or URL being decoded.
    public var source: String
    /// The size of every frame that follows.
    public var size: PixelSize
    /// The frames' pixel layout.
    public var pixelFormat: OutputPixelFormat
    /// The nominal frame rate, when known.
    public var frameRate: Double?
    /// The layout of the picture in the canvas.
    public var layout: FrameLayout
    /// The timescale in which the source's times are counted.
    public var timescale: Int32
    /// Where the session's timeline begins (its start time, or the file's start): the origin from
    /// which the video and audio of one session are placed, together.
    public var timelineStart: MediaTime = .zero
    /// The container allows its timestamps to jump (MPEG-TS): realtime presentation follows jumps.
    package var timestampsMayJump = false
    /// Where the picture's track declares it ends (its start and duration), when it does.
    package var pictureEnd: MediaTime?
    /// How close to ``pictureEnd`` a frame's end counts as the picture's end: the frames a
    /// decoder may hold until the data ends (reordering, frame threads) come after it.
    package static let nearEnd = MediaTime(value: 1, timescale: 1)

    /// A description of the frames that follow (each argument sets the property of the same name).
    package init(
        source: String, size: PixelSize, pixelFormat: OutputPixelFormat, frameRate: Double?, layout: FrameLayout, timescale: Int32,
        timelineStart: MediaTime = .zero, timestampsMayJump: Bool = false
    ) {
        self.source = source
        self.size = size
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.layout = layout
        self.timescale = timescale
        self.timelineStart = timelineStart
        self.timestampsMayJump = timestampsMayJump
    }
}

extension VideoFrame: CustomStringConvertible {
    /// `VideoFrame(#12 at 0.48 s for 0.04 s, 1280x720 yuv420p, clip.mp4)`.
    public var description: String {
        "VideoFrame(#\(index) at \(presentationTime.seconds) s for \(duration.seconds) s, \(size.width)x\(size.height) \(pixelFormatName), \(SourceRedaction.redacted(source)))"
    }
}
