import Foundation
import PlayheadMedia

/// Makes still images of an asset's video at chosen times.
///
/// ```swift
/// var generator = AssetImageGenerator(asset: asset)
/// generator.maximumSize = PixelSize(width: 320, height: 180)
/// let (image, actualTime) = try await generator.image(at: MediaTime(seconds: 12))
/// for await result in generator.images(for: times) { … }   // ascending time order
/// ```
///
/// Exact by default (zero tolerances: the frame displayed at the requested time — the last frame
/// that starts at or before it). With tolerances, the keyframe nearest the requested time inside
/// them, decoded alone; when no keyframe lies inside, the first frame that starts inside them. An
/// image never comes from outside its window.
///
/// A request decodes only what its answers need, on worker threads: the times sorted, each
/// reader going forward where the index shows that beats seeking, non-reference frames before a
/// target skipped, and several single-threaded decoders splitting the times into shares of about
/// equal decoding work (worked out from the index).
public struct AssetImageGenerator: Sendable {
    public let asset: Asset
    /// Images are scaled down to fit inside this size, proportions kept; nil keeps the displayed size.
    public var maximumSize: PixelSize?
    /// Honor pixel aspect ratio and rotation (default), or use the stored pixels as they are.
    public var appliesPreferredTrackTransform = true
    public var requestedTimeToleranceBefore = MediaTime.zero
    public var requestedTimeToleranceAfter = MediaTime.zero
    /// Any damaged data met while decoding fails the image (as ``DecodeConfiguration/strict``
    /// fails a session); by default it is decoded past and counted in each result.
    public var strict = false
    /// Subtitles drawn into each image before it is fitted (a track of the asset, or a subtitle
    /// file), at the image's frame's time; nil: none.
    public var subtitles: SubtitleBurnIn?
    /// When set, an image whose frame is blank (``GeneratedImage/isBlank``: almost uniform, as at
    /// a fade or a clip's first frames) moves to the next frame that is not, looked for frame by
    /// frame up to this long after the blank one — or, when there is none (a clip that ends in
    /// black), to the last frame that is not, up to this long before it; the result's
    /// ``Result/blankFrameTime`` says where it moved from. When every frame inside is blank, the
    /// frame asked for stays, marked ``Result/isBlank``. Nil (the default), or a limit that is not a positive
    /// numeric time (invalid, indefinite, infinite, zero or less): the frame asked for, blank or not.
    public var blankFrameSearchLimit: MediaTime?
    /// Decoders working on one request at once, each on its own share of the times.
    public var decoderCount = min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// A generator of `asset`'s images: exact, at the displayed size, until its properties are changed.
    /// - Parameter asset: the asset whose video is shown.
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
        /// Damaged packets decoded past while this image was looked for (see ``strict``).
        public var damagedPackets = 0
        /// The first damage met then, if any.
        public var firstDamage: PlayheadError?
        /// The time of the blank frame this image moved from (see ``AssetImageGenerator/blankFrameSearchLimit``);
        /// nil when it did not move.
        public var blankFrameTime: MediaTime?
        /// The image is blank: no frame that is not was found within the search limit.
        public var isBlank = false
    }

    /// The image at `time` and the time of the frame it shows.
    /// - Parameter time: the time wanted, on the asset's timeline.
    /// - Returns: the image, and the time of the frame it shows.
    /// - Throws: ``PlayheadError``: what loading or opening the asset threw (an `io` or `demux` code);
    ///   `state.invalidArgument` for a time that is not a number, is before the clip's start or after its video's
    ///   end; `demux.noVideoTrack`, `demux.seekFailed`, `io.truncated` or a `decode` code when no frame can be had
    ///   there; `state.cancelled` when the calling task is cancelled.
    public func image(at time: MediaTime) async throws(PlayheadError) -> (image: GeneratedImage, actualTime: MediaTime) {
        for await result in images(for: [time]) {
            if let image = result.image, let actual = result.actualTime { return (image, actual) }
            throw result.error ?? PlayheadError(code: .decodeFailed, message: "no image", file: asset.source)
        }
        throw PlayheadError.cancelled(file: asset.source)
    }

    /// One result per requested time, in ascending time order. A time outside the clip fails alone.
    /// Stop iterating to cancel. Decoders running ahead of the consumer hold back at most
    /// ``ImageResults/bufferBudget`` bytes of images.
    /// - Parameter times: the times wanted, in any order.
    /// - Returns: one ``AssetImageGenerator/Result`` per time, in ascending time order, each with its image or its error.
    public func images(for times: [MediaTime]) -> ImageResults {
        let interrupt = InterruptFlag()
        let channel = ResultChannel(count: times.count, onTerminate: { interrupt.raise() })
        let generator = self
        // The work starts with the first answer asked for: a sequence dropped un-iterated holds
        // no thread and no demuxer.
        let starter = StartOnce {
            Task {
                await generator.run(times: times.sorted(), interrupt: interrupt, emitter: channel)
                channel.finish()
            }
        }
        return ImageResults(channel: channel, starter: starter)
    }

    private func run(times: [MediaTime], interrupt: InterruptFlag, emitter: ResultChannel) async {
        let description: AssetDescription
        do {
            description = try await asset.loadDescription([.duration, .startTime, .tracks])
        } catch {
            for (i, time) in times.enumerated() { emitter.put(i, Result(requestedTime: time, error: error)) }
            return
        }
        // An asset without a picture to take (sound alone, sound and its cover, or a video whose
        // picture size could not be read) fails every time alike, before any time is checked
        // against its start (its sound's).
        if let noPicture = description.noPicture {
            for (i, time) in times.enumerated() { emitter.put(i, Result(requestedTime: time, error: noPicture)) }
            return
        }
        let start = description.startTime
        // Where the clip ends is known from the data, not from its header (which may say less
        // than the last frame's end, or hours more than the file holds): a time after the
        // declared end is looked for all the same, and fails only when the data ends before it.
        var work: [ImageWork] = []
        for (i, time) in times.enumerated() {
            if !time.isNumeric || time < start {
                emitter.put(
                    i,
                    Result(
                        requestedTime: time,
                        error: PlayheadError(
                            code: .invalidArgument, message: "\(time.seconds) s is outside the clip (it starts at \(start.seconds) s)",
                            file: asset.source)))
            } else {
                work.append(ImageWork(index: i, time: time))
            }
        }
        guard !work.isEmpty else { return }
        // A source that cannot be opened twice is read by one decoder, forward.
        let decoders = description.isOneShot ? 1 : max(1, min(decoderCount, work.count))
        let settings = ImageSettings(
            maximumSize: maximumSize, appliesPreferredTrackTransform: appliesPreferredTrackTransform,
            toleranceBefore: requestedTimeToleranceBefore, toleranceAfter: requestedTimeToleranceAfter,
            strict: strict, blankSearchLimit: blankFrameSearchLimit.flatMap { $0.isNumeric && $0 > .zero ? $0 : nil },
            subtitles: subtitles)
        let asset = self.asset
        let requested = work
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            WorkerPool.shared.run("playhead.images") {
                let demuxer: Demuxer
                do throws(PlayheadError) {
                    demuxer = try asset.openDemuxer(interrupt: interrupt)
                } catch {
                    for item in requested { emitter.put(item.index, Result(requestedTime: item.time, error: error)) }
                    done.resume()
                    return
                }
                let shares = ImageWork.split(requested, into: decoders, keyframe: { demuxer.keyframe(atOrBefore: $0) })
                let remaining = Locked(shares.count)
                let finished: @Sendable () -> Void = {
                    if remaining.withLock({
                        $0 -= 1
                        return $0
                    }) == 0 {
                        done.resume()
                    }
                }
                for share in shares.dropFirst() {
                    WorkerPool.shared.run("playhead.images") {
                        ImageGrabber.grab(share, asset: asset, demuxer: nil, settings: settings, interrupt: interrupt, emitter: emitter)
                        finished()
                    }
                }
                ImageGrabber.grab(shares[0], asset: asset, demuxer: demuxer, settings: settings, interrupt: interrupt, emitter: emitter)
                finished()
            }
        }
    }
}

/// What every share of a request is made with.
struct ImageSettings: Sendable {
    var maximumSize: PixelSize?
    var appliesPreferredTrackTransform: Bool
    var toleranceBefore: MediaTime
    var toleranceAfter: MediaTime
    var strict = false
    var blankSearchLimit: MediaTime?
    var subtitles: SubtitleBurnIn?
}

/// One requested time of a request: its place in the sorted list, and the time.
struct ImageWork: Sendable {
    var index: Int
    var time: MediaTime

    /// Shares of the sorted times, one per decoder, of about equal decoding work. Times after the
    /// same keyframe form a group that one decoder takes whole — it decodes from the keyframe to
    /// the group's last time once — and costs that stretch plus a little per image; groups are
    /// dealt out largest first, each to the decoder with the least work so far, and every decoder
    /// takes its groups in ascending time. Without an index, a time is a group of its own.
    static func split(_ work: [ImageWork], into parts: Int, keyframe: (MediaTime) -> MediaTime?) -> [[ImageWork]] {
        guard parts > 1, work.count > 1 else { return [work] }
        let perImage = 0.1
        var groups: [(items: [ImageWork], cost: Double)] = []
        var currentKey: MediaTime?
        for item in work {
            let key = keyframe(item.time)
            if let key, key == currentKey, let last = groups.indices.last {
                groups[last].items.append(item)
                groups[last].cost = (item.time - key).seconds + perImage * Double(groups[last].items.count)
            } else {
                let start = key ?? (item.time - MediaTime(value: 2, timescale: 1))
                groups.append(([item], max(0, (item.time - start).seconds) + perImage))
            }
            currentKey = key
        }
        var lanes = [(groups: [Int], load: Double)](repeating: ([], 0), count: min(parts, groups.count))
        for g in groups.indices.sorted(by: { groups[$0].cost > groups[$1].cost }) {
            let lane = lanes.indices.min { lanes[$0].load < lanes[$1].load } ?? 0
            lanes[lane].groups.append(g)
            lanes[lane].load += groups[g].cost
        }
        return lanes.filter { !$0.groups.isEmpty }.map { lane in lane.groups.sorted().flatMap { groups[$0].items } }
    }
}

/// Takes the images of one share on the calling (worker) thread, with one single-threaded reader.
enum ImageGrabber {
    static func grab(
        _ share: [ImageWork], asset: Asset, demuxer given: Demuxer?, settings: ImageSettings, interrupt: InterruptFlag,
        emitter: ResultChannel
    ) {
        let fail = { (error: PlayheadError) in
            for item in share { emitter.put(item.index, AssetImageGenerator.Result(requestedTime: item.time, error: error)) }
        }
        let demuxer: Demuxer
        if let given {
            demuxer = given
        } else {
            do throws(PlayheadError) {
                demuxer = try asset.openDemuxer(interrupt: interrupt)
            } catch {
                fail(error)
                return
            }
        }
        defer { asset.giveBack(demuxer) }
        let reader: MediaReader
        let converter: FrameConverter
        let canvas: OwnedFrame
        do throws(PlayheadError) {
            reader = try MediaReader(demuxer: demuxer, threads: 1)
            let facts = reader.facts
            let par = settings.appliesPreferredTrackTransform ? facts.pixelAspectRatio : .square
            let orientation = settings.appliesPreferredTrackTransform ? facts.orientation : .identity
            // Fitted once: the image is the picture, its size rounded (no bar beside it).
            let size = facts.storedSize.fittedCanvas(pixelAspectRatio: par, orientation: orientation, within: settings.maximumSize)
            let layout = VideoGravity.resize.layout(stored: facts.storedSize, pixelAspectRatio: par, orientation: orientation, canvas: size)
            converter = FrameConverter(layout: layout, format: .rgb24, source: asset.source)
            if let subtitles = settings.subtitles {
                converter.burner = try SubtitleBurner(subtitles, demuxer: demuxer, timeBase: facts.timeBase)
            }
            canvas = try OwnedFrame(size: size, format: .rgb24)
        } catch {
            fail(error)
            return
        }
        for item in share {
            if interrupt.isRaised {
                emitter.put(item.index, AssetImageGenerator.Result(requestedTime: item.time, error: .cancelled(file: asset.source)))
                continue
            }
            var damageBefore = reader.damage.count
            do throws(PlayheadError) {
                guard
                    let request = SeekRequest.resolving(
                        time: item.time, toleranceBefore: settings.toleranceBefore,
                        toleranceAfter: settings.toleranceAfter)
                else {
                    throw PlayheadError(code: .invalidArgument, message: "\(item.time) is not a time", file: asset.source)
                }
                try reader.seek(to: request)
                damageBefore = reader.damage.count
                guard let held = try reader.selectedFrame() else {
                    throw reader.end?.failure ?? Self.damaged(reader, since: damageBefore, "no frame could be decoded", file: asset.source)
                }
                // The one rule: a frame taken as displayed because the data ended there, when the
                // data was cut short, is not the frame displayed at the time (that one is missing).
                if let failure = reader.verdict(for: held, strict: settings.strict) { throw failure }
                let timeBase = reader.facts.timeBase
                let actual = MediaTime(ticks: held.pts, timeBase: timeBase)
                // Past the data's end (a complete end: one cut short failed above; its very end still
                // shows the last frame, as at a clip's duration), by evidence: the
                // last frame lasts its duration, or as long as the frame before it did when that
                // is longer (a declared 1 ms is not the last frame's length).
                let lastEnd = reader.lastFrameEnd(held)
                if reader.isLastFrame(held), item.time > lastEnd {
                    // Past the last frame that decoded: the caller's time when the data ends there,
                    // the data's damage when what follows could not be decoded.
                    if reader.damage.count > damageBefore {
                        throw Self.damaged(
                            reader, since: damageBefore,
                            "no frame at \(item.time.seconds) s could be decoded (the last one is at \(actual.seconds) s)",
                            file: asset.source)
                    }
                    throw PlayheadError(
                        code: .invalidArgument, message: "no frame at \(item.time.seconds) s: the video ends at \(lastEnd.seconds) s",
                        file: asset.source)
                }
                try converter.convert(held.frame, into: canvas)
                var result = AssetImageGenerator.Result(requestedTime: item.time, actualTime: actual, image: GeneratedImage.from(canvas))
                if let limit = settings.blankSearchLimit, let image = result.image, image.isBlank {
                    result.isBlank = true
                    if let found = try nextPicture(
                        after: held, limit: limit, reader: reader, converter: converter, canvas: canvas, settings: settings)
                    {
                        result.blankFrameTime = actual
                        result.actualTime = found.time
                        result.image = found.image
                        result.isBlank = false
                    }
                }
                let damage = reader.damage
                result.damagedPackets = damage.count - damageBefore
                if result.damagedPackets > 0 { result.firstDamage = damage.first }
                emitter.put(item.index, result)
            } catch {
                var failed = AssetImageGenerator.Result(requestedTime: item.time, error: interrupt.isRaised ? .cancelled(file: asset.source) : error)
                // The damage met looking for it counts, as a session counts it.
                let damage = reader.damage
                failed.damagedPackets = max(0, damage.count - damageBefore)
                if failed.damagedPackets > 0 { failed.firstDamage = damage.first }
                emitter.put(item.index, failed)
            }
        }
    }

    /// A failure to decode what was looked for, after `reader` met damage from `since` on: a
    /// decode error naming how many packets were damaged, with the first one's cause.
    private static func damaged(_ reader: MediaReader, since: Int, _ what: String, file: String) -> PlayheadError {
        let damage = reader.damage
        let count = damage.count - since
        guard count > 0 else { return PlayheadError(code: .decodeFailed, message: what, file: file) }
        let first = damage.first
        return PlayheadError(
            code: .decodeFailed, message: "\(what): \(count) damaged packet(s)\(first.map { "; first: \($0.message)" } ?? "")", file: file,
            cause: first?.cause)
    }

    /// The nearest picture that is not blank around the blank `held`: the first one after it,
    /// starting at most `limit` later; when there is none (a clip that ends in black), the last
    /// one before it, starting at most `limit` earlier. Nil when every frame inside is blank.
    private static func nextPicture(
        after held: DisplayedFrameWindow<OwnedFrame>.Held, limit: MediaTime, reader: MediaReader, converter: FrameConverter,
        canvas: OwnedFrame, settings: ImageSettings
    ) throws(PlayheadError) -> (image: GeneratedImage, time: MediaTime)? {
        let timeBase = reader.facts.timeBase
        let blankAt = MediaTime(ticks: held.pts, timeBase: timeBase)
        let step = max(1, held.duration, reader.video.lastInterval)
        let walk = PictureWalk(reader: reader, converter: converter, canvas: canvas, strict: settings.strict)
        if let after = try walk.firstPicture(from: held.pts.addingReportingOverflow(step).partialValue, through: blankAt + limit, last: false) {
            return after
        }
        let earliest = MediaTime(ticks: held.pts, timeBase: timeBase) - limit
        return try walk.firstPicture(from: earliest.ticks(in: timeBase), through: blankAt, last: true, before: held.pts)
    }
}

/// Frames walked forward one at a time from a time (each the frame displayed one frame duration
/// after the last; a frame that does not move doubles the step), for the first or last picture
/// that is not blank.
private struct PictureWalk {
    let reader: MediaReader
    let converter: FrameConverter
    let canvas: OwnedFrame
    let strict: Bool

    /// The first (or with `last`, the last) picture that is not blank among the frames starting
    /// from the one displayed at `start` (stream ticks) until `through`, and before `before` when given.
    func firstPicture(
        from start: Int64, through end: MediaTime, last: Bool, before: Int64? = nil
    ) throws(PlayheadError) -> (image: GeneratedImage, time: MediaTime)? {
        let timeBase = reader.facts.timeBase
        var target = start
        var previous: Int64?
        var step: Int64 = 1
        var found: (image: GeneratedImage, time: MediaTime)?
        while true {
            let time = MediaTime(ticks: target, timeBase: timeBase)
            guard time <= end, let request = SeekRequest.resolving(time: time, toleranceBefore: .zero, toleranceAfter: .zero) else { break }
            try reader.seek(to: request)
            guard let frame = try reader.selectedFrame(), reader.verdict(for: frame, strict: strict) == nil else { break }
            if let previous, frame.pts <= previous {
                let (doubled, overflow) = step.multipliedReportingOverflow(by: 2)
                guard !overflow else { break }
                step = doubled
                target = previous.addingReportingOverflow(step).partialValue
                continue
            }
            if let before, frame.pts >= before { break }
            previous = frame.pts
            try converter.convert(frame.frame, into: canvas)
            let image = GeneratedImage.from(canvas)
            if !image.isBlank {
                found = (image, MediaTime(ticks: frame.pts, timeBase: timeBase))
                if !last { break }
            }
            step = max(1, frame.duration, reader.video.lastInterval)
            let (next, overflow) = frame.pts.addingReportingOverflow(step)
            guard !overflow else { break }
            target = next
        }
        return found
    }
}
