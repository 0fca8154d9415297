internal import CFFmpeg
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
    var control: (any SegmentWatch)?
    /// Seconds from the start of the player's timeline, when a player presents it (an item of a
    /// queue, a loop's pass): where an export places it.
    package var timelinePosition: Double?

    /// `true` once a seek has started a newer segment: the audio is no longer wanted.
    package var isSuperseded: Bool { control?.isSuperseded(segment) ?? false }
}

extension AudioBuffer {
    /// A buffer lending the given samples (for tests of an app's own sink, and for feeding a sink
    /// from the app's own sound).
    /// - Parameters:
    ///   - samples: `frameCount × channelCount` interleaved samples, valid for as long as the buffer is used.
    ///   - frameCount: samples per channel.
    ///   - channelCount: channels.
    ///   - sampleRate: samples per channel a second.
    ///   - presentationTime: where the first sample sits on its timeline.
    public init(samples: UnsafeBufferPointer<Int16>, frameCount: Int, channelCount: Int, sampleRate: Int, presentationTime: MediaTime) {
        self.samples = samples
        self.frameCount = frameCount
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.presentationTime = presentationTime
    }
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
    package var timestampsMayJump = false

    /// A description of a stream of sound.
    /// - Parameters:
    ///   - source: the file or URL it comes from.
    ///   - sampleRate: samples per second.
    ///   - channelCount: the number of channels.
    ///   - timelineStart: where the session's timeline begins.
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

    /// A format; a nil field keeps the source's.
    /// - Parameters:
    ///   - sampleRate: samples per second; nil: the source's.
    ///   - channelCount: the number of channels; nil: the source's.
    public init(sampleRate: Int? = nil, channelCount: Int? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }
}

/// Where decoded audio goes. Called from one thread at a time: `begin` (once per stream; again
/// for each following item or loop), `write` per buffer, then `finish` once at the very end, or
/// `abort`. Sendable, because successive sessions (queued items, loops) feed the same sink — one
/// after another: a writer given a sink that another writer holds is refused with
/// `state.invalidState` and leaves it as it is (see ``FrameSink``).
public protocol AudioSink: AnyObject, Sendable {
    /// Prepares for a stream: called once per stream (again for each following item or loop), before its first
    /// buffer.
    /// - Parameter info: the stream's source, rate, channel count and timeline start.
    /// - Throws: ``PlayheadError`` when the sink cannot take such a stream or open its output; the session then fails.
    func begin(_ info: AudioStreamInfo) throws(PlayheadError)
    /// Takes samples that follow the previous ones.
    /// - Parameter buffer: interleaved signed 16-bit samples, valid only during the call.
    /// - Throws: ``PlayheadError`` when the samples cannot be written; the session then fails.
    func write(_ buffer: AudioBuffer) throws(PlayheadError)
    /// Completes the output, once, after the last stream.
    /// - Throws: ``PlayheadError`` when the output cannot be completed.
    func finish() throws(PlayheadError)
    /// Gives the output up.
    func abort()
}

/// An audio sink whose kept sound can be ended at a time before it is given up: a session whose
/// picture stopped short (cancelled, failed) keeps no sound past its last frame, though its sound
/// was decoded ahead of it.
package protocol SoundEndCutting: AnyObject {
    /// The sound kept when the sink is given up (``AudioSink/abort()``) ends at `seconds` on the
    /// buffers' timeline: where a player placed them (`timelinePosition`), else their
    /// presentation time (nothing changes for a time after the sound's end).
    func keepSound(until seconds: Double)
}

/// A frame sink told when the picture it is fed reached its end (its data, end time or frame
/// limit), after its last frame: the sound that goes on past it is not its picture stopping short.
package protocol PictureEndFollowing: AnyObject {
    /// The picture written so far reached its end; a frame written after it begins another.
    func pictureEnded()
}

/// Counts what it is given and keeps nothing: for decode-only runs and measuring.
public final class NullAudioSink: AudioSink, Sendable {
    private let frames = Locked(0)

    /// A sink that has received nothing.
    public init() {}

    /// Samples per channel received.
    public var framesReceived: Int { frames.withLock { $0 } }

    /// Does nothing.
    /// - Parameter info: the stream's format.
    /// - Throws: never.
    public func begin(_ info: AudioStreamInfo) throws(PlayheadError) {}
    /// Counts the buffer's samples per channel (``framesReceived``).
    /// - Parameter buffer: the samples.
    /// - Throws: never.
    public func write(_ buffer: AudioBuffer) throws(PlayheadError) { frames.withLock { $0 += buffer.frameCount } }
    /// Does nothing.
    /// - Throws: never.
    public func finish() throws(PlayheadError) {}
    /// Does nothing.
    public func abort() {}
}

/// Keeps every sample in memory: for tests and small jobs.
public final class InMemoryAudioSink: AudioSink, Sendable {
    private let state = Locked((samples: [Int16](), info: AudioStreamInfo?.none, finished: false))

    /// An empty sink.
    public init() {}

    public var samples: [Int16] { state.withLock { $0.samples } }
    public var info: AudioStreamInfo? { state.withLock { $0.info } }
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Notes the stream's format (``info``); the samples of every stream are kept one after another.
    /// - Parameter info: the stream's format.
    /// - Throws: never.
    public func begin(_ info: AudioStreamInfo) throws(PlayheadError) { state.withLock { $0.info = info } }
    /// Keeps a copy of the buffer's samples (``samples``).
    /// - Parameter buffer: the samples.
    /// - Throws: never.
    public func write(_ buffer: AudioBuffer) throws(PlayheadError) { state.withLock { $0.samples.append(contentsOf: buffer.samples) } }
    /// Marks the sink finished (``isFinished``).
    /// - Throws: never.
    public func finish() throws(PlayheadError) { state.withLock { $0.finished = true } }
    /// Does nothing: the samples kept stay.
    public func abort() {}
}

/// An audio sink that chooses the format a session converts to, before any audio is decoded (a
/// player's presenters, which convert every item to the player's one format).
package protocol AudioFormatNegotiating: AudioSink {
    /// The format to convert `source` to. May block until it is known; throws when cancelled.
    func outputFormat(for source: AudioStreamInfo) throws(PlayheadError) -> AudioFormat
}
