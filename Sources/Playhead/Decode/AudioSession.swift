import CFFmpeg
import Foundation

/// Decodes a file's best audio track alone, resamples it to interleaved signed 16-bit (the
/// source's rate and channel layout unless told otherwise), and hands the buffers to an
/// ``AudioSink``, on a dedicated thread. ``DecodeSession`` decodes audio beside video from one
/// demuxer; this is for audio on its own. `finish()` of the sink is left to the caller (several
/// sessions — queued items, loops — may feed one sink, sample for sample).
public final class AudioSession: Sendable {
    public let source: String
    /// Convert to this format; nil fields keep the source's.
    public let format: AudioFormat
    let interrupt = InterruptFlag()

    public init(source: String, format: AudioFormat = AudioFormat()) {
        self.source = source
        self.format = format
    }

    /// How a run went.
    public struct Result: Sendable, Hashable {
        public var status: DecodeResult.Status
        /// Samples per channel delivered.
        public var frames: Int
        public var sampleRate: Int
        public var channelCount: Int
    }

    /// Decodes to the end. Cancelling the task cancels the session.
    public func run(into sink: some AudioSink) async -> Result {
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
                let thread = Thread { [self] in continuation.resume(returning: decode(sink)) }
                thread.name = "playhead.audio"
                thread.start()
            }
        } onCancel: {
            interrupt.raise()
        }
    }

    public func cancel() { interrupt.raise() }

    private func decode(_ sink: any AudioSink) -> Result {
        var result = Result(status: .completed, frames: 0, sampleRate: 0, channelCount: 0)
        var stage: AudioStage?
        do throws(PlayheadError) {
            if !source.contains("://") { try MediaProbe.checkLocalFile(source) }
            let format = try FormatContext.open(source, interrupt: interrupt)
            try format.findStreamInfo()
            let index = av_find_best_stream(format.pointer, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
            guard index >= 0 else { throw PlayheadError(code: .noStreams, message: "no audio track", file: source) }
            for i in 0..<format.streamCount where i != Int(index) { format.stream(at: i).pointee.discard = AVDISCARD_ALL }
            let audio = try AudioStage(stream: format.stream(at: Int(index)), format: self.format, start: nil, end: nil, timelineStart: .zero,
                                        sink: sink, source: source)
            stage = audio
            try audio.begin()
            result.sampleRate = audio.info?.sampleRate ?? 0
            result.channelCount = audio.info?.channelCount ?? 0
            let packet = OwnedPacket()
            while !interrupt.isRaised, !audio.reachedEnd {
                if av_read_frame(format.pointer, packet.pointer) < 0 { break }
                defer { av_packet_unref(packet.pointer) }
                if packet.pointer.pointee.stream_index == index { try audio.feed(packet.pointer) }
            }
            if interrupt.isRaised {
                sink.abort()
                result.status = .cancelled
                result.frames = audio.framesDelivered
                return result
            }
            try audio.finish()
            if let failure = audio.decodeFailure { result.status = .failed(failure) }
        } catch {
            result.status = interrupt.isRaised ? .cancelled : .failed(error)
        }
        result.frames = stage?.framesDelivered ?? 0
        return result
    }
}
