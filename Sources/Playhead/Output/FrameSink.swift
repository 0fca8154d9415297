/// Where a decode session's frames go. Every method is called on the session's output thread, one
/// call at a time, in this order: `begin`, `write` for each frame, then `finish` (after the last
/// frame, when all went well) or `abort` (on failure or cancellation).
///
/// A sink is handed to the session's thread, so its conformance cannot be isolated to an actor
/// (`SendableMetatype`): a `@MainActor` class is not a sink; give the player a ``VideoOutput`` or
/// a ``FrameStream`` and read frames from the main actor instead.
public protocol FrameSink: AnyObject, SendableMetatype {
    /// The pixel layout the sink wants frames in.
    var pixelFormat: OutputPixelFormat { get }
    /// Prepares for frames of the given kind.
    func begin(_ info: FrameStreamInfo) throws(PlayheadError)
    /// Takes one frame. The frame's pixels are only valid during the call.
    func write(_ frame: VideoFrame) throws(PlayheadError)
    /// Completes the output (flushes, renames temporary files into place).
    func finish() throws(PlayheadError)
    /// Gives up: removes whatever would pass for complete output.
    func abort()
}

/// A frame sink that also writes a sound track (``MP4Sink``). Told the sound's format before
/// `begin`; then, on the same thread, each stretch of samples after the frame it goes with.
public protocol AudioCarryingFrameSink: FrameSink {
    /// The sound that will come (interleaved signed 16-bit at this rate and channel count).
    func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError)
    /// Takes samples that follow the previous ones without a gap; valid only during the call.
    func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError)
}

/// Decodes and converts, and keeps nothing: for measuring and for checking that a file decodes.
public final class NullSink: FrameSink {
    public let pixelFormat: OutputPixelFormat
    public private(set) var framesReceived = 0

    /// `pixelFormat` defaults to ``OutputPixelFormat/native``: no conversion at native size.
    public init(pixelFormat: OutputPixelFormat = .native) {
        self.pixelFormat = pixelFormat
    }

    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    public func write(_ frame: VideoFrame) throws(PlayheadError) { framesReceived += 1 }
    public func finish() throws(PlayheadError) {}
    public func abort() {}
}
