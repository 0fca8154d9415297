import Foundation
import Synchronization

/// Makes still images of an asset's video at chosen times.
///
/// ```swift
/// var generator = AssetImageGenerator(asset: asset)
/// generator.maximumSize = PixelSize(width: 320, height: 180)
/// let (image, actualTime) = try await generator.image(at: MediaTime(seconds: 12))
/// for await result in generator.images(for: times) { … }   // ascending time order
/// ```
///
/// Exact by default (zero tolerances: the frame showing at the requested time). With tolerances,
/// the keyframe nearest the requested time inside them, found in the index and decoded alone.
/// A request opens the file once per decoder and decodes only what its answers need; several
/// single-threaded decoders split the sorted times between them.
public struct AssetImageGenerator: Sendable {
    public let asset: Asset
    /// Images are scaled down to fit inside this size, proportions kept; nil keeps the displayed size.
    public var maximumSize: PixelSize?
    /// Honor pixel aspect ratio and rotation (default), or use the stored pixels as they are.
    public var appliesPreferredTrackTransform = true
    public var requestedTimeToleranceBefore = MediaTime.zero
    public var requestedTimeToleranceAfter = MediaTime.zero
    /// Decoders working on one request at once, each on its own share of the times.
    public var decoderCount = min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))

    public init(asset: Asset) {
        self.asset = asset
    }

    /// One requested time's answer.
    public struct Result: Sendable, Hashable {
        public var requestedTime: MediaTime
        /// The time of the frame the image shows.
        public var actualTime: MediaTime?
        public var image: GeneratedImage?
        public var error: PlayheadError?
    }

    /// The image at `time` and the time of the frame it shows.
    public func image(at time: MediaTime) async throws(PlayheadError) -> (image: GeneratedImage, actualTime: MediaTime) {
        for await result in images(for: [time]) {
            if let image = result.image, let actual = result.actualTime { return (image, actual) }
            throw result.error ?? PlayheadError(code: .decodeFailed, message: "no image", file: asset.source)
        }
        throw PlayheadError.cancelled(file: asset.source)
    }

    /// One result per requested time, in ascending time order. A time outside the clip fails alone.
    /// Stop iterating to cancel.
    public func images(for times: [MediaTime]) -> AsyncStream<Result> {
        let (stream, continuation) = AsyncStream<Result>.makeStream()
        let interrupt = InterruptFlag()
        continuation.onTermination = { _ in interrupt.raise() }
        let generator = self
        Task {
            await generator.run(times: times.sorted(), interrupt: interrupt, continuation: continuation)
            continuation.finish()
        }
        return stream
    }

    private func run(times: [MediaTime], interrupt: InterruptFlag, continuation: AsyncStream<Result>.Continuation) async {
        let emitter = OrderedEmitter(count: times.count, continuation: continuation)
        let range: TimeRange
        do {
            let (start, duration) = try await asset.load(.startTime, .duration)
            range = TimeRange(start: start, duration: duration)
        } catch {
            for (i, time) in times.enumerated() { emitter.put(i, Result(requestedTime: time, error: error)) }
            return
        }
        var work: [(index: Int, time: MediaTime)] = []
        for (i, time) in times.enumerated() {
            if !time.isNumeric || time < range.start || (range.duration.isNumeric && time > range.end) {
                emitter.put(i, Result(requestedTime: time, error: PlayheadError(
                    code: .invalidArgument, message: "\(time.seconds) s is outside the clip (\(range.start.seconds) … \(range.end.seconds) s)", file: asset.source)))
            } else {
                work.append((i, time))
            }
        }
        guard !work.isEmpty else { return }
        let shares = Self.split(work, into: min(decoderCount, work.count))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Atomic<Int>(shares.count)
            for share in shares {
                let thread = Thread { [self] in
                    grab(share, interrupt: interrupt, emitter: emitter)
                    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.resume() }
                }
                thread.name = "playhead.images"
                thread.start()
            }
        }
    }

    /// On its own thread: one grabber for a contiguous share of the sorted times.
    private func grab(_ share: [(index: Int, time: MediaTime)], interrupt: InterruptFlag, emitter: OrderedEmitter) {
        let grabber: FrameGrabber
        do {
            grabber = try FrameGrabber(source: asset.source, maximumSize: maximumSize,
                                       appliesPreferredTrackTransform: appliesPreferredTrackTransform, interrupt: interrupt)
        } catch {
            for (i, time) in share { emitter.put(i, Result(requestedTime: time, error: error)) }
            return
        }
        for (i, time) in share {
            if interrupt.isRaised {
                emitter.put(i, Result(requestedTime: time, error: .cancelled(file: asset.source)))
                continue
            }
            do {
                let (image, actual) = try grabber.image(at: time, toleranceBefore: requestedTimeToleranceBefore, toleranceAfter: requestedTimeToleranceAfter)
                emitter.put(i, Result(requestedTime: time, actualTime: actual, image: image))
            } catch {
                emitter.put(i, Result(requestedTime: time, error: error))
            }
        }
    }

    static func split<T>(_ items: [T], into parts: Int) -> [[T]] {
        guard parts > 1 else { return [items] }
        var shares: [[T]] = []
        var start = 0
        for part in 0..<parts {
            let end = items.count * (part + 1) / parts
            if end > start { shares.append(Array(items[start..<end])) }
            start = end
        }
        return shares
    }
}

/// Yields results in index order, whichever thread finishes first.
private final class OrderedEmitter: Sendable {
    private let state: Locked<(slots: [AssetImageGenerator.Result?], next: Int)>
    private let continuation: AsyncStream<AssetImageGenerator.Result>.Continuation

    init(count: Int, continuation: AsyncStream<AssetImageGenerator.Result>.Continuation) {
        state = Locked((Array(repeating: nil, count: count), 0))
        self.continuation = continuation
    }

    func put(_ index: Int, _ result: AssetImageGenerator.Result) {
        state.withLock { s in
            s.slots[index] = result
            // Yielding under the lock keeps the order (yield never blocks: the buffer is unbounded).
            while s.next < s.slots.count, let ready = s.slots[s.next] {
                continuation.yield(ready)
                s.slots[s.next] = nil
                s.next += 1
            }
        }
    }
}
