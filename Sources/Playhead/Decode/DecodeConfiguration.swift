/// How a ``DecodeSession`` decodes and what frames it produces.
public struct DecodeConfiguration: Sendable, Hashable {
    /// The canvas size; nil means the track's presentation size (after pixel aspect and rotation).
    public var outputSize: PixelSize?
    /// How the picture is placed in the canvas.
    public var gravity: VideoGravity
    /// Honor the track's pixel aspect ratio and display matrix (default), or use stored pixels as they are.
    public var appliesPreferredTrackTransform: Bool
    /// Stop after this many frames.
    public var frameLimit: Int?
    /// Decoder threads; 0 lets FFmpeg choose from the core count.
    public var decoderThreads: Int
    /// Packets the demux thread may read ahead of the decoder.
    public var packetQueueCapacity: Int
    /// Converted frames that may wait for the sink.
    public var frameQueueCapacity: Int
    /// Where to start; nil starts at the beginning.
    public var startTime: MediaTime?
    /// How far before and after `startTime` the first frame may lie. Zero (the default) is
    /// frame-exact: the first frame delivered is the one showing at `startTime`. Otherwise the
    /// session starts at the keyframe nearest to `startTime` inside the window, found in the index.
    public var startToleranceBefore: MediaTime
    public var startToleranceAfter: MediaTime
    /// Where to stop: frames at or after this time are not delivered; nil plays to the end.
    public var endTime: MediaTime?
    /// The format audio is converted to when the session is given an audio sink (nil fields keep
    /// the source's rate and channel count).
    public var audioFormat: AudioFormat
    /// Damaged data (a packet the container or a decoder rejects, a frame decoded with concealed
    /// errors) is decoded past and counted in ``DecodeResult/damagedPackets``; with `strict`, any
    /// damage makes the result `failed`.
    public var strict: Bool

    public init(outputSize: PixelSize? = nil, gravity: VideoGravity = .resizeAspect, appliesPreferredTrackTransform: Bool = true,
                frameLimit: Int? = nil, decoderThreads: Int = 0, packetQueueCapacity: Int = 64, frameQueueCapacity: Int = 3,
                startTime: MediaTime? = nil, startToleranceBefore: MediaTime = .zero, startToleranceAfter: MediaTime = .zero,
                endTime: MediaTime? = nil, audioFormat: AudioFormat = AudioFormat(), strict: Bool = false) {
        self.strict = strict
        self.endTime = endTime
        self.audioFormat = audioFormat
        self.startTime = startTime
        self.startToleranceBefore = startToleranceBefore
        self.startToleranceAfter = startToleranceAfter
        self.outputSize = outputSize
        self.gravity = gravity
        self.appliesPreferredTrackTransform = appliesPreferredTrackTransform
        self.frameLimit = frameLimit
        self.decoderThreads = decoderThreads
        self.packetQueueCapacity = max(2, packetQueueCapacity)
        self.frameQueueCapacity = max(1, frameQueueCapacity)
    }
}

/// How a decode session ended, with its counts.
public struct DecodeResult: Sendable, Hashable {
    public enum Status: Sendable, Hashable {
        /// Every frame was decoded and delivered (damaged packets, if any, decoded past and
        /// counted), and the sink finished.
        case completed
        /// Something failed — the file is truncated, a sink failed, or (strict) damage was met;
        /// the counts say how far it got.
        case failed(PlayheadError)
        /// Cancelled before the end.
        case cancelled
    }

    public var status: Status
    /// The file or URL decoded.
    public var source: String
    /// Frames that came out of the decoder.
    public var framesDecoded: Int
    /// Frames the sink took.
    public var framesDelivered: Int
    /// The canvas size, once known.
    public var outputSize: PixelSize?
    /// The first and last delivered frames' presentation times.
    public var firstPresentationTime: MediaTime?
    public var lastPresentationTime: MediaTime?
    /// Damaged data decoded past: packets the container flagged or could not read, packets a
    /// decoder rejected, frames decoded with concealed errors (video and audio).
    public var damagedPackets: Int
    /// The first damage met, when there was any.
    public var firstDamage: PlayheadError?
    /// The audio delivered to the audio sink, when one was given and the file has audio: its
    /// format, and samples per channel.
    public var audio: AudioStreamInfo?
    public var audioFramesDelivered = 0

    init(source: String) {
        status = .completed
        self.source = source
        framesDecoded = 0
        framesDelivered = 0
        damagedPackets = 0
    }
}
