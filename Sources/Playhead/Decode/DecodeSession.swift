import Foundation
import Logging

/// Decodes a file's best video track into a ``FrameSink``, and its best audio track into an
/// ``AudioSink`` when one is given: demuxing once, on one dedicated thread; decoding (with FFmpeg's
/// frame threads) and scaling into the canvas on another; the frame sink on a third; audio decoding
/// and resampling on a fourth. Bounded pools of packets and canvases between them give
/// back-pressure; nothing is allocated per frame once running. A file with audio and no video
/// plays its audio alone (the frame sink gets no frames).
///
/// The frame sink is finished by the session; the audio sink is not (several sessions — queued
/// items, loops — may feed one audio sink, sample for sample): its owner calls `finish()`. Both
/// are aborted when the session fails or is cancelled.
///
/// ```swift
/// let session = DecodeSession(source: "clip.mp4", configuration: .init(outputSize: .init(width: 640, height: 360)))
/// let result = await session.run(into: ImageSequenceSink(directory: "out", format: .png))
/// ```
public final class DecodeSession: Sendable {
    public let source: String
    public let configuration: DecodeConfiguration
    let interrupt = InterruptFlag()
    private let logger: Logger
    private let channels = Locked<[SlotChannel]>([])

    public init(source: String, configuration: DecodeConfiguration = DecodeConfiguration(), logger: Logger? = nil) {
        self.source = source
        self.configuration = configuration
        self.logger = logger ?? Logger(label: "playhead.decode", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Decodes to the end (or the frame limit) and returns how it went. Cancelling the calling
    /// task cancels the session. The sink is used on the session's own output thread.
    public func run(into sink: sending some FrameSink, audio: (any AudioSink)? = nil) async -> DecodeResult {
        let owner = SoleOwner(sink as any FrameSink)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DecodeResult, Never>) in
                let thread = Thread { [self] in
                    let pipeline = DecodePipeline(session: self, logger: logger)
                    continuation.resume(returning: pipeline.run(sink: owner.value, audio: audio))
                }
                thread.name = "playhead.decode"
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// Stops every thread of the session promptly; `run` returns a `cancelled` result.
    public func cancel() {
        interrupt.raise()
        for channel in channels.withLock({ $0 }) { channel.cancel() }
    }

    /// The pipeline registers its channels so that `cancel()` can wake every waiting thread.
    func register(_ list: [SlotChannel]) {
        channels.withLock { $0.append(contentsOf: list) }
        if interrupt.isRaised { for channel in list { channel.cancel() } }
    }
}
