import Playhead

/// What a media file that Playhead wrote holds on disk, read back with the demuxer (for
/// summaries that report the disk, not what was meant to be written).
package enum WrittenMedia {
    /// The video packets (one a frame) of the file at `path`, read without decoding; nil when it
    /// cannot be opened or has no video.
    /// - Parameter path: the file.
    @available(*, noasync, message: "reads the whole file: call it on a worker thread")
    package static func videoFrames(_ path: String) -> Int? { PacketCensus.videoPackets(path) }

    /// The sound's samples per channel in the file at `path`, from its packets' durations; nil
    /// when it cannot be opened or has no sound.
    /// - Parameter path: the file.
    @available(*, noasync, message: "reads the whole file: call it on a worker thread")
    package static func audioFrames(_ path: String) -> Int? { PacketCensus.audioSamples(path) }
}
