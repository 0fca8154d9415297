internal import CFFmpeg

/// The channel's two encoders — H.264 (libx264, low latency: no B-frames, a keyframe every
/// segment) and AAC — whose packets go to every target. Output frame *n* is stamped *n* in a
/// time base of one frame (rate.den / rate.num), output sample *m* is stamped *m* (1 / rate):
/// the timeline is exact by construction, however long it runs. Used by one thread at a time
/// (the channel's encoder thread, then the sink's `finish`).
package final class ChannelEncoder {
    package let video: FrameEncoder
    package let audio: AudioEncoder?
    let videoTimeBase: AVRational
    let audioTimeBase: AVRational
    /// Frames between keyframes (one segment).
    let keyframeInterval: Int
    private var nextFrame: Int64 = 0
    private let target: String

    package struct Settings: Sendable {
        var preset = "veryfast"
        var crf = 23
        /// Seconds between keyframes: an HLS segment's length.
        package var keyframeSeconds = 2.0
        /// The picture's peak rate in kbit/s (nil: chosen from the canvas, 0.1 bit per pixel and frame).
        var maxBitRate: Int?
    }

    package init(size: PixelSize, rate: FrameRate, sound: AudioStreamInfo?, settings: Settings, target: String) throws(PlayheadError) {
        self.target = target
        videoTimeBase = AVRational(num: Int32(rate.denominator), den: Int32(rate.numerator))
        keyframeInterval = max(1, Int((settings.keyframeSeconds * rate.value).rounded()))
        let peak = settings.maxBitRate ?? max(300, Int(Double(size.width * size.height) * rate.value * 0.1 / 1000))
        let parameters = "keyint=\(keyframeInterval):min-keyint=\(keyframeInterval):scenecut=0:vbv-maxrate=\(peak):vbv-bufsize=\(2 * peak)"
        video = try FrameEncoder(
            named: "libx264", size: size, format: AV_PIX_FMT_YUV420P, timeBase: videoTimeBase, target: target,
            options: ["preset": settings.preset, "tune": "zerolatency", "crf": String(settings.crf), "x264-params": parameters],
            threads: 0, globalHeader: true, groupOfPictures: Int32(keyframeInterval),
            frameRate: AVRational(num: Int32(rate.numerator), den: Int32(rate.denominator)))
        if let sound {
            audio = try AudioEncoder(sampleRate: sound.sampleRate, channelCount: sound.channelCount, target: target)
            audioTimeBase = AVRational(num: 1, den: Int32(sound.sampleRate))
        } else {
            audio = nil
            audioTimeBase = AVRational(num: 1, den: 48_000)
        }
    }

    /// Encodes a slot's picture as the next output frame (the encoder may keep a reference to
    /// its buffers: whoever fills it again makes it writable first), then its sound.
    func encode(
        _ slot: ChannelEncodeQueue.Slot, video videoBody: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void,
        audio audioBody: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) {
        if slot.hasPicture {
            slot.picture.pointer.pointee.pts = nextFrame
            nextFrame += 1
            try video.encode(slot.picture.pointer, videoBody)
        }
        guard slot.sampleFrames > 0, let audio else { return }
        try slot.samples.withUnsafeBufferPointer { (samples) throws(PlayheadError) in try audio.encode(samples, frames: slot.sampleFrames, audioBody)
        }
    }

    /// Drains both encoders.
    func finish(
        video videoBody: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void,
        audio audioBody: (UnsafeMutablePointer<AVPacket>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) {
        try video.encode(nil, videoBody)
        try audio?.finish(audioBody)
    }
}
