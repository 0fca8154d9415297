internal import CFFmpeg

/// Writes all frames into one H.264 MP4 — libavcodec's libx264, libavformat's mp4 muxer —
/// safely (see `SafeFile`): under a temporary name until `finish` puts it in place. Given a
/// sound, it is encoded as AAC beside the picture: told with the picture on its thread
/// (``prepareAudio(_:)`` before `begin`, then ``writeAudio(_:)``), or fed by a player or session
/// from its audio thread through ``soundInput()``.
///
/// While it is written the MP4 is fragmented (a fragment at every keyframe, one a second), so the
/// temporary file of a run that was killed still plays up to its last complete fragment. When
/// complete it is copied into a plain MP4 whose edit lists hide the picture's reordering delay
/// and the AAC priming (`MP4Rewrite`): every frame and sample where the source had them, for a
/// gapless decoder and a timestamp-honouring player alike. Given up (`abort`),
/// what was written is kept as a valid, shorter file and ``isPartial`` says so.
public final class MP4Sink: AudioCarryingFrameSink, PictureEndFollowing, Sendable {
    public let pixelFormat: OutputPixelFormat = .yuv420p
    public let path: String
    /// x264's preset (one of ``X264Settings/presets``).
    public let preset: String
    /// x264's constant rate factor (0 … 51; lower is better and larger).
    public let crf: Int
    /// Whether a file already at ``path`` may be replaced when this one is complete.
    public let replacing: Bool
    /// The encoders and the muxer, fed from the picture's thread and the sound's.
    private let writer: LockedExclusive<MP4Writer?>
    /// Set when ``soundInput()`` is taken.
    private let separateSound = Locked(false)

    /// An MP4 at `path`, encoded with x264's `preset` and `crf`. With `replacing` false, a file
    /// already at `path` is never replaced: the finished file takes the name atomically, or the
    /// sink fails with `output.outputExists` and the file is left alone.
    /// - Parameters:
    ///   - path: where the file goes.
    ///   - preset: x264's preset; checked by ``begin(_:)``.
    ///   - crf: x264's constant rate factor; checked by ``begin(_:)``.
    ///   - replacing: whether a file already at `path` may be replaced.
    public init(path: String, preset: String = "veryfast", crf: Int = 23, replacing: Bool = true) {
        self.path = path
        self.replacing = replacing
        self.preset = preset
        self.crf = crf
        writer = LockedExclusive(nil)
    }

    public var framesWritten: Int { writer.withLock { $0?.framesWritten ?? 0 } }
    /// Samples per channel of sound written.
    public var audioFramesWritten: Int { writer.withLock { $0?.audioFramesWritten ?? 0 } }
    /// `true` when the file was given up part way and kept with what it had.
    public var isPartial: Bool { writer.withLock { $0?.isPartial ?? false } }

    /// An audio sink whose sound goes into this MP4 (for a player's or session's `audioOutput`,
    /// called from its audio thread). Take it before the first frame: the file then waits, before
    /// writing its header, until the sound begins, or finishes without beginning (a source without
    /// sound), holding the picture's first packets meanwhile. The file is complete once both this
    /// sink and the input are finished; a sound that begins only after 3000 packets of picture is
    /// refused (`state.invalidState`).
    /// - Returns: the audio sink whose sound goes into this file.
    public func soundInput() -> any AudioSink {
        separateSound.withLock { $0 = true }
        return MP4SoundInput(sink: self)
    }

    private func withWriter<T: Sendable>(_ body: (MP4Writer) throws(PlayheadError) -> T) throws(PlayheadError) -> T {
        try writer.withLock { (slot: inout MP4Writer?) throws(PlayheadError) -> T in
            if slot == nil {
                slot = MP4Writer(path: path, preset: preset, crf: crf, replacing: replacing, separateSound: separateSound.withLock { $0 })
            }
            guard let writer = slot else { throw PlayheadError(code: .invalidState, message: "no writer", file: path) }
            return try body(writer)
        }
    }

    /// Opens the file (under a temporary name) and x264, for the one stream of frames the file holds.
    /// - Parameter info: the frames' size (even width and height) and rate.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a preset x264 does not know, a crf outside
    ///   0 … 51, an odd frame size or a second stream; `state.invalidState` when the file was completed or given up;
    ///   `output.outputExists` when `replacing` is false and a file is at the path; `output.encodeFailed` when x264
    ///   is missing or does not open; `output.outputOpenFailed` or `output.writeFailed` when the file cannot be made.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) { try withWriter { (w) throws(PlayheadError) in try w.begin(info) } }
    /// Encodes one frame.
    /// - Parameter frame: the frame, in 4:2:0.
    /// - Throws: ``PlayheadError`` with `state.invalidState` before ``begin(_:)``; `output.encodeFailed`, or
    ///   `output.writeFailed` (`output.diskFull`, …) when the file cannot be written.
    public func write(_ frame: VideoFrame) throws(PlayheadError) { try withWriter { (w) throws(PlayheadError) in try w.write(frame) } }
    /// Ends the picture. Once the sound has ended too (or there is none), the file is completed: copied into a
    /// plain MP4 that takes the final name.
    /// - Throws: ``PlayheadError`` with `output.encodeFailed` or `output.writeFailed` (`output.diskFull`, …) when
    ///   the file cannot be completed, or `output.outputExists` when `replacing` is false and the name was taken
    ///   meanwhile; the file is then given up (kept as far as it is valid).
    public func finish() throws(PlayheadError) { try withWriter { (w) throws(PlayheadError) in try w.finishVideo() } }
    /// Keeps what was written as a valid, shorter file (``isPartial``), or nothing when nothing was.
    public func abort() { try? withWriter { (w) throws(PlayheadError) in w.abort() } }

    /// The picture fed so far reached its end: a file given up keeps the sound past it.
    package func pictureEnded() { try? withWriter { (w) throws(PlayheadError) in w.pictureEnded() } }

    /// Tells the sink a sound follows (call before `begin`): AAC at its rate and channel count.
    /// - Parameter info: the sound's rate (8 … 192 kHz) and channel count (1 … 8).
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a rate or channel count AAC does not take;
    ///   `state.invalidState` when the picture has begun already, or the file was completed or given up.
    public func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {
        try withWriter { (w) throws(PlayheadError) in try w.prepareAudio(info) }
    }
    /// Takes the next samples of the sound (interleaved signed 16-bit, in the prepared format).
    /// - Parameter buffer: the samples.
    /// - Throws: ``PlayheadError`` with `state.invalidState` before the sound's format is known;
    ///   `state.invalidArgument` for samples of another rate or channel count; `output.encodeFailed`, or
    ///   `output.writeFailed` when the file cannot be written.
    public func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) { try withWriter { (w) throws(PlayheadError) in try w.writeAudio(buffer) } }

    fileprivate func beginSound(_ info: AudioStreamInfo) throws(PlayheadError) {
        try withWriter { (w) throws(PlayheadError) in try w.beginSound(info) }
    }
    fileprivate func finishSound() throws(PlayheadError) { try withWriter { (w) throws(PlayheadError) in try w.finishSound() } }
}

/// The sound of an ``MP4Sink`` fed from another thread (``MP4Sink/soundInput()``).
final class MP4SoundInput: AudioSink, Sendable {
    private let sink: MP4Sink

    init(sink: MP4Sink) { self.sink = sink }

    func begin(_ info: AudioStreamInfo) throws(PlayheadError) { try sink.beginSound(info) }
    func write(_ buffer: AudioBuffer) throws(PlayheadError) { try sink.writeAudio(buffer) }
    func finish() throws(PlayheadError) { try sink.finishSound() }
    func abort() { sink.abort() }
}
