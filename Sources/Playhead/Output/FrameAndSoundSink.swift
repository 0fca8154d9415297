import PlayheadMedia

/// A picture sink and a separate sound sink used as one ``AudioCarryingFrameSink``: a
/// composition's frames go to one (Y4M, PNG, …) and its sound to the other (a WAV file, memory),
/// sample for sample as an MP4 would carry it.
///
/// Every call comes from the composition's output thread, in the order ``FrameSink`` gives; the
/// sound sink is finished after the pictures, and both are aborted when either fails.
final class FrameAndSoundSink: AudioCarryingFrameSink {
    private let frames: any FrameSink
    private let sound: any AudioSink
    private var soundBegun = false

    init(frames: any FrameSink, sound: any AudioSink) {
        self.frames = frames
        self.sound = sound
    }

    var pixelFormat: OutputPixelFormat { frames.pixelFormat }

    func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {
        try sound.begin(info)
        soundBegun = true
    }

    func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) { try sound.write(buffer) }
    func begin(_ info: FrameStreamInfo) throws(PlayheadError) { try frames.begin(info) }
    func write(_ frame: VideoFrame) throws(PlayheadError) { try frames.write(frame) }

    func finish() throws(PlayheadError) {
        do throws(PlayheadError) {
            try frames.finish()
        } catch {
            if soundBegun { sound.abort() }
            throw error
        }
        if soundBegun { try sound.finish() }
    }

    func abort() {
        frames.abort()
        if soundBegun { sound.abort() }
    }
}
