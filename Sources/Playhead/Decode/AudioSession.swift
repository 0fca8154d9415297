import CFFmpeg
import Foundation

/// Decodes a file's best audio track, resamples it to interleaved signed 16-bit (the source's rate
/// and channel layout unless told otherwise), and hands the buffers to an ``AudioSink``, on a
/// dedicated thread. `finish()` of the sink is left to the caller (several sessions — queued
/// items, loops — may feed one sink, sample for sample).
public final class AudioSession: Sendable {
    public let source: String
    /// Resample to this rate; nil keeps the source's.
    public let sampleRate: Int?
    let interrupt = InterruptFlag()

    public init(source: String, sampleRate: Int? = nil) {
        self.source = source
        self.sampleRate = sampleRate
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
        do throws(PlayheadError) {
            if !source.contains("://") { try MediaProbe.checkLocalFile(source) }
            let format = try FormatContext.open(source, interrupt: interrupt)
            try format.findStreamInfo()
            let index = av_find_best_stream(format.pointer, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
            guard index >= 0 else { throw PlayheadError(code: .noStreams, message: "no audio track", file: source) }
            for i in 0..<format.streamCount where i != Int(index) { format.stream(at: i).pointee.discard = AVDISCARD_ALL }
            let stream = format.stream(at: Int(index))
            let decoder = try StreamDecoder(stream: stream, threads: 1, source: source)
            let resampler = try Resampler(from: decoder.context, sampleRate: sampleRate, source: source)
            result.sampleRate = resampler.sampleRate
            result.channelCount = resampler.channelCount
            try sink.begin(AudioStreamInfo(source: source, sampleRate: resampler.sampleRate, channelCount: resampler.channelCount))
            let packet = OwnedPacket(), frame = OwnedFrame()
            var decodeErrors = 0
            var firstError: PlayheadError?
            func deliver(_ count: Int, at time: MediaTime) throws(PlayheadError) {
                guard count > 0 else { return }
                let buffer = AudioBuffer(samples: UnsafeBufferPointer(start: resampler.buffer, count: count * resampler.channelCount),
                                         frameCount: count, channelCount: resampler.channelCount, sampleRate: resampler.sampleRate,
                                         presentationTime: time)
                try sink.write(buffer)
                result.frames += count
            }
            func drainFrames() throws(PlayheadError) {
                while true {
                    let got: Bool
                    do throws(PlayheadError) { got = try decoder.receive(into: frame) } catch {
                        decodeErrors += 1; firstError = firstError ?? error; return
                    }
                    guard got else { return }
                    let time = MediaTime(value: Int64(result.frames), timescale: Int32(resampler.sampleRate))
                    try deliver(try resampler.convert(frame.pointer), at: time)
                    av_frame_unref(frame.pointer)
                }
            }
            while !interrupt.isRaised {
                let read = av_read_frame(format.pointer, packet.pointer)
                if read < 0 { break }
                defer { av_packet_unref(packet.pointer) }
                guard packet.pointer.pointee.stream_index == index else { continue }
                do throws(PlayheadError) { _ = try decoder.send(packet.pointer) } catch {
                    decodeErrors += 1; firstError = firstError ?? error
                }
                try drainFrames()
            }
            if interrupt.isRaised {
                sink.abort()
                result.status = .cancelled
                return result
            }
            _ = try? decoder.send(nil)
            try drainFrames()
            try deliver(try resampler.convert(nil), at: MediaTime(value: Int64(result.frames), timescale: Int32(resampler.sampleRate)))
            if let firstError {
                var summary = firstError
                summary.message = "\(decodeErrors) audio packet(s) could not be decoded; first: \(firstError.message)"
                result.status = .failed(summary)
            }
        } catch {
            result.status = interrupt.isRaised ? .cancelled : .failed(error)
        }
        return result
    }
}
