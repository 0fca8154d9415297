internal import CFFmpeg
import Foundation

/// Writes interleaved 16-bit audio into a WAV file through libavformat's `wav` muxer, safely (see
/// `SafeFile`): under a temporary name until `finish` puts it in place. Streams that follow
/// (queued items, loops) are appended sample for sample; they must share the first stream's rate
/// and channel count. Given up (`abort`), what was written is kept as a valid, shorter file and
/// ``isPartial`` says so.
public final class WAVSink: AudioSink, SoundEndCutting {
    public let path: String
    private struct State {
        var muxer: Muxer?
        var stream: Int32?
        var format: (rate: Int, channels: Int)?
        var framesWritten = 0
        var partial = false
        /// The latest stream's first sample frame in the file and its place on its timeline
        /// (seconds), and where kept sound ends if given up.
        var streamStart = 0
        var firstPlace: Double?
        var keptUntil: Double?
        /// Made with the file, in `begin`.
        var packet: OwnedPacket?
    }
    /// `Locked` keeps the calls of successive sessions (each on its own audio thread, one after
    /// another) ordered.
    private let state = LockedExclusive(State())
    private let replacing: Bool

    /// With `replacing` false, a file already at `path` is left alone and the sink fails with
    /// `output.outputExists` when it would take the name.
    /// - Parameters:
    ///   - path: where the file goes.
    ///   - replacing: whether a file already at `path` may be replaced.
    public init(path: String, replacing: Bool = true) {
        self.path = path
        self.replacing = replacing
    }

    /// Samples per channel written so far.
    public var framesWritten: Int { state.withLock { $0.framesWritten } }

    /// `true` when the file was given up part way and kept with what it had.
    public var isPartial: Bool { state.withLock { $0.partial } }

    /// Opens the file (under a temporary name) and writes its header, at the first stream; a later stream goes on
    /// in the same file.
    /// - Parameter info: the stream's rate and channel count; a later stream must have the first one's.
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a stream of another rate or channel count than
    ///   the first; `output.outputExists` when `replacing` is false and a file is at the path; `output.outputOpenFailed`
    ///   or `output.writeFailed` (`output.diskFull`, …) when the file cannot be made or its header written.
    public func begin(_ info: AudioStreamInfo) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            if let format = s.format {
                try check(format, rate: info.sampleRate, channels: info.channelCount, what: "this stream is")
                // A stream that follows (a queued item, a loop) is placed by its own first buffer.
                s.streamStart = s.framesWritten
                s.firstPlace = nil
                return
            }
            let muxer = try Muxer(.wav, to: .file(path: path, replacing: replacing))
            let stream = try muxer.addStream(timeBase: AVRational(num: 1, den: Int32(info.sampleRate))) { parameters in
                parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
                parameters.pointee.codec_id = AV_CODEC_ID_PCM_S16LE
                parameters.pointee.sample_rate = Int32(info.sampleRate)
                parameters.pointee.format = AV_SAMPLE_FMT_S16.rawValue
                av_channel_layout_default(&parameters.pointee.ch_layout, Int32(info.channelCount))
                parameters.pointee.bits_per_coded_sample = 16
                parameters.pointee.block_align = Int32(2 * info.channelCount)
                parameters.pointee.bit_rate = Int64(16 * info.channelCount * info.sampleRate)
            }
            try muxer.writeHeader()
            s.packet = try OwnedPacket()
            s.muxer = muxer
            s.stream = stream
            s.format = (info.sampleRate, info.channelCount)
        }
    }

    /// Appends the buffer's samples; a buffer after ``finish()`` or ``abort()`` is dropped.
    /// - Parameter buffer: interleaved signed 16-bit samples, in the stream's format.
    /// - Throws: ``PlayheadError`` with `state.invalidState` for a buffer before any ``begin(_:)``,
    ///   `state.invalidArgument` for one of another rate or channel count than the file's (it would garble the
    ///   file), `output.writeFailed` (`output.diskFull`, …) when the samples cannot be written.
    public func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard let format = s.format else {
                throw PlayheadError(code: .invalidState, message: "samples came before the stream began (begin first)", file: path)
            }
            try check(format, rate: buffer.sampleRate, channels: buffer.channelCount, what: "these samples are")
            guard let muxer = s.muxer, let stream = s.stream, let packet = s.packet, buffer.frameCount > 0, let samples = buffer.samples.baseAddress
            else { return }
            // The muxer copies the bytes out during the call: the packet only borrows them.
            let p = packet.pointer
            p.pointee.data = UnsafeMutableRawPointer(mutating: samples).assumingMemoryBound(to: UInt8.self)
            p.pointee.size = Int32(buffer.samples.count * 2)
            p.pointee.pts = Int64(s.framesWritten)
            p.pointee.dts = Int64(s.framesWritten)
            p.pointee.duration = Int64(buffer.frameCount)
            defer {
                p.pointee.data = nil
                p.pointee.size = 0
            }
            try muxer.write(p, stream: stream)
            if s.firstPlace == nil {
                s.firstPlace = buffer.timelinePosition ?? (buffer.presentationTime.isNumeric ? buffer.presentationTime.seconds : nil)
            }
            s.framesWritten += buffer.frameCount
        }
    }

    /// Writes the file's end, syncs it and gives it its name; nothing happens when no stream began.
    /// - Throws: ``PlayheadError`` with `output.writeFailed` (`output.diskFull`, …) when the file cannot be
    ///   completed, or `output.outputExists` when `replacing` is false and the name was taken meanwhile.
    public func finish() throws(PlayheadError) {
        try state.withLock { (s: inout State) throws(PlayheadError) in
            guard let muxer = s.muxer else { return }
            s.muxer = nil
            s.stream = nil
            try muxer.finish()
        }
    }

    /// The one rule for streams and samples: a WAV file holds the format it began with.
    private func check(_ format: (rate: Int, channels: Int), rate: Int, channels: Int, what: String) throws(PlayheadError) {
        guard format == (rate, channels) else {
            throw PlayheadError(
                code: .invalidArgument,
                message: "a WAV file holds one format (\(format.rate) Hz, \(format.channels) channels); \(what) \(rate) Hz, \(channels) channels",
                file: path)
        }
    }

    /// Keeps what was written as a valid, shorter file (``isPartial``), or nothing when nothing was
    /// (up to the time a session or player gave it, when its picture stopped short).
    public func abort() {
        state.withLock { s in
            guard let muxer = s.muxer else { return }
            s.muxer = nil
            var cuts: [Int32: Int64] = [:]
            if let stream = s.stream, let first = s.firstPlace, let until = s.keptUntil, until > first, let format = s.format {
                // The latest stream's samples up to `until` (from its first buffer's place), when
                // fewer were written; a time before that stream began cuts nothing.
                let frames = Double(s.streamStart) + ((until - first) * Double(format.rate)).rounded()
                if frames.isFinite, frames < Double(s.framesWritten) { cuts[stream] = Int64(frames) }
            }
            s.stream = nil
            s.partial = muxer.keepWhatWasWritten(cuts: cuts)
        }
    }

    /// The sound kept when the sink is given up ends at `seconds` (a session or player whose
    /// picture stopped keeps no sound past its last frame).
    /// - Parameter seconds: on the buffers' timeline (a player's positions, else presentation times).
    package func keepSound(until seconds: Double) {
        state.withLock { $0.keptUntil = seconds }
    }
}
