internal import CFFmpeg

/// Where a decode session's frames go. Every method is called on the session's output thread, one
/// call at a time, in this order: `begin`, `write` for each frame, then `finish` (after the last
/// frame, when all went well) or `abort` (on failure or cancellation).
///
/// A sink has one writer at a time (one after another is fine). A session or render given a sink
/// that another writer holds fails at once with `state.invalidState` and leaves that sink as it is.
/// A player takes its outputs at its first frame or samples: when another writer holds one then,
/// that item fails, and the player never finishes or gives up an output it was refused.
///
/// A sink is handed to the session's thread, so its conformance cannot be isolated to an actor
/// (`SendableMetatype`): a `@MainActor` class is not a sink; give the player a ``VideoOutput`` or
/// a ``FrameStream`` and read frames from the main actor instead.
public protocol FrameSink: AnyObject, SendableMetatype {
    /// The pixel layout the sink wants frames in.
    var pixelFormat: OutputPixelFormat { get }
    /// Prepares for frames of the given kind.
    /// - Parameter info: the frames' source, size, layout and rate.
    /// - Throws: ``PlayheadError`` when the sink cannot take such frames or open its output; a session then fails
    ///   and calls ``abort()``.
    func begin(_ info: FrameStreamInfo) throws(PlayheadError)
    /// Takes one frame. The frame's pixels are only valid during the call.
    /// - Parameter frame: the frame, lent for the call.
    /// - Throws: ``PlayheadError`` when the frame cannot be written; a session then fails and calls ``abort()``.
    func write(_ frame: VideoFrame) throws(PlayheadError)
    /// Completes the output (flushes, renames temporary files into place).
    /// - Throws: ``PlayheadError`` when the output cannot be completed; a ``DecodeSession`` then fails and calls
    ///   ``abort()``.
    func finish() throws(PlayheadError)
    /// Gives up: nothing that was written may pass for complete output (a file sink keeps a valid,
    /// shorter file and says it is partial, or removes it).
    func abort()
}

/// A frame sink that also writes a sound track (``MP4Sink``). Told the sound's format before
/// `begin`; then, on the same thread, each stretch of samples after the frame it goes with.
public protocol AudioCarryingFrameSink: FrameSink {
    /// The sound that will come (interleaved signed 16-bit at this rate and channel count).
    /// - Parameter info: the sound's rate and channel count.
    /// - Throws: ``PlayheadError`` when the sink cannot take such sound.
    func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError)
    /// Takes samples that follow the previous ones without a gap; valid only during the call.
    /// - Parameter buffer: interleaved signed 16-bit samples, in the prepared format.
    /// - Throws: ``PlayheadError`` when the samples cannot be written.
    func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError)
}

/// Decodes and converts, and keeps nothing: for measuring and for checking that a file decodes.
public final class NullSink: FrameSink {
    public let pixelFormat: OutputPixelFormat
    public private(set) var framesReceived = 0

    /// `pixelFormat` defaults to ``OutputPixelFormat/native``: no conversion at native size.
    /// - Parameter pixelFormat: the layout frames are converted to.
    public init(pixelFormat: OutputPixelFormat = .native) {
        self.pixelFormat = pixelFormat
    }

    /// Does nothing.
    /// - Parameter info: the frames' description.
    /// - Throws: never.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {}
    /// Counts the frame (``framesReceived``).
    /// - Parameter frame: the frame.
    /// - Throws: never.
    public func write(_ frame: VideoFrame) throws(PlayheadError) { framesReceived += 1 }
    /// Does nothing.
    /// - Throws: never.
    public func finish() throws(PlayheadError) {}
    /// Does nothing.
    public func abort() {}
}
