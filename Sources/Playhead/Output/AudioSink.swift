import Synchronization

/// Decoded audio lent to an ``AudioSink`` for one `write` call: interleaved signed 16-bit samples.
public struct AudioBuffer {
    /// `frameCount × channelCount` samples, interleaved; valid only during the call.
    public let samples: UnsafeBufferPointer<Int16>
    /// Samples per channel.
    public let frameCount: Int
    public let channelCount: Int
    public let sampleRate: Int
    /// Where the first sample sits on the source's timeline.
    public let presentationTime: MediaTime
    /// The session segment it belongs to, and the session's control (see ``VideoFrame``).
    var segment = 0
    var control: SessionControl?
    /// Seconds from the start of the player's timeline, when a player presents it (an item of a
    /// queue, a loop's pass): where an export places it.
    var timelinePosition: Double?

    /// `true` once a seek has started a newer segment: the audio is no longer wanted.
    var isSuperseded: Bool { control?.isSuperseded(segment) ?? false }
}

/// What an audio sink is told before the first buffer.
public struct AudioStreamInfo: Sendable, Hashable {
    public var source: String
    public var sampleRate: Int
    public var channelCount: Int
    /// Where the session's timeline begins (as in ``FrameStreamInfo/timelineStart``): buffers'
    /// presentation times are placed from it, together with the session's video.
    public var timelineStart: MediaTime
    /// The container allows its timestamps to jump (MPEG-TS): realtime presentation follows jumps.
    var timestampsMayJump = false

    public init(source: String, sampleRate: Int, channelCount: Int, timelineStart: MediaTime = .zero) {
        self.source = source
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.timelineStart = timelineStart
    }
}

/// The format decoded audio is converted to: interleaved signed 16-bit at this rate and channel
/// count. A nil field keeps the source's.
public struct AudioFormat: Sendable, Hashable {
    public var sampleRate: Int?
    public var channelCount: Int?

    public init(sampleRate: Int? = nil, channelCount: Int? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }
}

/// Where decoded audio goes. Called from one thread at a time: `begin` (once per stream; again
/// for each following item or loop), `write` per buffer, then `finish` once at the very end, or
/// `abort`. Sendable, because successive sessions (queued items, loops) feed the same sink.
public protocol AudioSink: AnyObject, Sendable {
    func begin(_ info: AudioStreamInfo) throws(PlayheadError)
    func write(_ buffer: AudioBuffer) throws(PlayheadError)
    func finish() throws(PlayheadError)
    func abort()
}

/// Counts what it is given and keeps nothing: for decode-only runs and measuring.
public final class NullAudioSink: AudioSink, Sendable {
    private let frames = Locked(0)

    public init() {}

    /// Samples per channel received.
    public var framesReceived: Int { frames.withLock { $0 } }

    public func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}
    public func write(_ buffer: AudioBuffer) throws(PlayheadError) { frames.withLock { $0 += buffer.frameCount } }
    public func finish() throws(PlayheadError) {}
    public func abort() {}
}

/// Keeps every sample in memory: for tests and small jobs.
public final class InMemoryAudioSink: AudioSink, Sendable {
    private let state = Locked((samples: [Int16](), info: AudioStreamInfo?.none, finished: false))

    public init() {}

    public var samples: [Int16] { state.withLock { $0.samples } }
    public var info: AudioStreamInfo? { state.withLock { $0.info } }
    public var isFinished: Bool { state.withLock { $0.finished } }

    public func begin(_ info: AudioStreamInfo) throws(PlayheadError) { state.withLock { $0.info = info } }
    public func write(_ buffer: AudioBuffer) throws(PlayheadError) { state.withLock { $0.samples.append(contentsOf: buffer.samples) } }
    public func finish() throws(PlayheadError) { state.withLock { $0.finished = true } }
    public func abort() {}
}
