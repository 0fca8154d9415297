import Foundation
import PlayheadMedia

/// How a ``DecodeSession`` decodes and what frames it produces.
public struct DecodeConfiguration: Sendable, Hashable {
    /// The canvas size; nil means the track's presentation size (after pixel aspect and rotation).
    public var outputSize: PixelSize?
    /// How the picture is placed in the canvas.
    public var gravity: VideoGravity
    /// Honor the track's pixel aspect ratio and display matrix (default), or use stored pixels as they are.
    public var appliesPreferredTrackTransform: Bool
    /// Stop after this many frames (0: none; a negative limit counts as 0).
    public var frameLimit: Int? { didSet { frameLimit = frameLimit.map { max(0, $0) } } }
    /// Decoder threads; 0 lets FFmpeg choose from the core count. Held to
    /// 0…``maximumDecoderThreads`` (what FFmpeg recommends at most; more only costs memory).
    public var decoderThreads: Int { didSet { decoderThreads = Self.clamp(decoderThreads, 0, Self.maximumDecoderThreads) } }
    /// Packets the demux thread may read ahead of the decoder: 2…4096.
    public var packetQueueCapacity: Int { didSet { packetQueueCapacity = Self.clamp(packetQueueCapacity, 2, 4096) } }
    /// Converted frames that may wait for the sink: 1…64 (each holds a canvas).
    public var frameQueueCapacity: Int { didSet { frameQueueCapacity = Self.clamp(frameQueueCapacity, 1, 64) } }

    /// The most decoder threads a session uses.
    public static let maximumDecoderThreads = StreamDecoder.maximumThreads
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
    /// Subtitles drawn into each picture before it is fitted (a track of the file, or a
    /// subtitle file); nil: none.
    public var subtitles: SubtitleBurnIn? = nil

    /// A configuration; each argument sets the property of the same name, and counts and capacities out of
    /// range are held to their ranges.
    /// - Parameters:
    ///   - outputSize: the canvas size; nil: the track's presentation size.
    ///   - gravity: how the picture is placed in the canvas.
    ///   - appliesPreferredTrackTransform: whether the track's pixel aspect ratio and display matrix are honoured.
    ///   - frameLimit: the most frames delivered; nil: no limit (a negative limit counts as 0).
    ///   - decoderThreads: decoder threads, 0…``maximumDecoderThreads``; 0 lets FFmpeg choose.
    ///   - packetQueueCapacity: packets the demux thread may read ahead of the decoder, 2…4096.
    ///   - frameQueueCapacity: converted frames that may wait for the sink, 1…64.
    ///   - startTime: where to start; nil: at the beginning.
    ///   - startToleranceBefore: how far before `startTime` the first frame may lie.
    ///   - startToleranceAfter: how far after `startTime` the first frame may lie.
    ///   - endTime: where to stop; nil: at the end.
    ///   - audioFormat: the format audio is converted to; nil fields keep the source's.
    ///   - strict: whether any damage makes the result `failed`.
    public init(
        outputSize: PixelSize? = nil, gravity: VideoGravity = .resizeAspect, appliesPreferredTrackTransform: Bool = true,
        frameLimit: Int? = nil, decoderThreads: Int = 0, packetQueueCapacity: Int = 64, frameQueueCapacity: Int = 3,
        startTime: MediaTime? = nil, startToleranceBefore: MediaTime = .zero, startToleranceAfter: MediaTime = .zero,
        endTime: MediaTime? = nil, audioFormat: AudioFormat = AudioFormat(), strict: Bool = false
    ) {
        self.strict = strict
        self.endTime = endTime
        self.audioFormat = audioFormat
        self.startTime = startTime
        self.startToleranceBefore = startToleranceBefore
        self.startToleranceAfter = startToleranceAfter
        self.outputSize = outputSize
        self.gravity = gravity
        self.appliesPreferredTrackTransform = appliesPreferredTrackTransform
        self.frameLimit = frameLimit.map { max(0, $0) }
        self.decoderThreads = Self.clamp(decoderThreads, 0, Self.maximumDecoderThreads)
        self.packetQueueCapacity = Self.clamp(packetQueueCapacity, 2, 4096)
        self.frameQueueCapacity = Self.clamp(frameQueueCapacity, 1, 64)
    }

    private static func clamp(_ value: Int, _ low: Int, _ high: Int) -> Int { min(max(value, low), high) }
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

extension DecodeConfiguration {
    /// Why a session cannot run with this configuration: a start after its end (nothing could be
    /// delivered, and a caller meant something else). Nil when it can.
    func refusal(source: String) -> PlayheadError? {
        if let start = startTime, let end = endTime, start.isNumeric, end.isNumeric, start > end {
            return PlayheadError(
                code: .invalidArgument, message: "the start time (\(start.seconds) s) is after the end time (\(end.seconds) s)", file: source)
        }
        return nil
    }
}

extension DecodeConfiguration {
    /// Decoder threads for each of `sessions` decoders working at once on `cores` cores: the one
    /// rule for sharing the machine. 0 (FFmpeg chooses) for one; otherwise an even share,
    /// 1 … ``maximumDecoderThreads``.
    /// - Parameters:
    ///   - sessions: decoders working at once.
    ///   - cores: the machine's cores (the active processors by default).
    /// - Returns: a value for ``decoderThreads``.
    public static func decoderThreads(sharedBy sessions: Int, cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        sessions <= 1 ? 0 : clamp(cores / sessions, 1, maximumDecoderThreads)
    }
}
