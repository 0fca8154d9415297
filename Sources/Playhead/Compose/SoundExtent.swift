internal import CFFmpeg
import Foundation

/// Where an item's decoded sound starts and ends on its own timeline, by evidence: its audio
/// decoded to the end (the decoder trims what the stream says to skip — an encoder's delay, a
/// gapless header's padding), the first frame's time and the last frame's end — or the end the
/// container gives, when that is earlier (an edit list trimming the encoder's padding). A declared
/// duration is a hint (a raw AAC stream's is guessed from its first packets' bit rate; an MP3's
/// and an Opus stream's count their padding): a sound-only layer item lasts what it plays.
struct SoundExtent: Sendable, Hashable {
    var start: MediaTime
    var end: MediaTime

    /// `asset`'s sound if it has no picture, decoded once (blocking; `interrupt` stops it); nil when it has none or
    /// none could be decoded. A failure of the data (cut short, unreadable) is thrown.
    static func measure(_ asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> SoundExtent? {
        let demuxer = try asset.openDemuxer(interrupt: interrupt)
        defer { asset.giveBack(demuxer) }
        // Only an item of sound alone: a picture's frames set its passes.
        guard demuxer.video == nil, let audio = demuxer.audio, let stream = demuxer.context.stream(at: Int(audio.index)) else { return nil }
        if let scheme = demuxer.encryption[audio.index] { throw Encryption.refusal(scheme: scheme, stream: audio.index, file: demuxer.source) }
        try demuxer.rewind()
        demuxer.select([audio.index])
        let decoder = try StreamDecoder(stream: stream, threads: 1, source: demuxer.source)
        let timeBase = stream.pointee.time_base
        let packet = try OwnedPacket()
        let frame = try OwnedFrame()
        var tally = Tally()
        let take: (OwnedFrame) throws(PlayheadError) -> Bool = { decoded in
            defer { av_frame_unref(decoded.pointer) }
            tally.add(decoded.pointer.pointee, timeBase: timeBase)
            return true
        }
        reading: while true {
            switch demuxer.read(into: packet.pointer) {
            case .packet:
                defer { av_packet_unref(packet.pointer) }
                _ = try decoder.decode(packet.pointer, into: frame, take)
            case .end(let end):
                if case .cancelled = end { throw .cancelled(file: demuxer.source) }
                if let failure = end.failure { throw failure }
                break reading
            }
        }
        _ = try decoder.decode(nil, into: frame, take)
        guard var extent = tally.extent(startingAt: audio.startTime ?? .zero) else { return nil }
        // A container that says where the sound ends short of the decoder's last sample (an MP4's
        // edit list cutting AAC's end padding) is heeded; one that says more is not believed.
        if let declared = audio.duration, declared.isNumeric, declared > .zero {
            let end = (audio.startTime ?? extent.start) + declared
            if end > extent.start, end < extent.end { extent.end = end }
        }
        return extent
    }

    /// The decoded frames' span, frame by frame.
    struct Tally {
        private var first: MediaTime?
        private var end: MediaTime?
        /// Samples decoded, for frames without times.
        private var samples: Int64 = 0
        private var sampleRate: Int32 = 0

        mutating func add(_ frame: AVFrame, timeBase: AVRational) {
            guard frame.nb_samples > 0, frame.sample_rate > 0 else { return }
            sampleRate = frame.sample_rate
            let length = MediaTime(value: Int64(frame.nb_samples), timescale: frame.sample_rate)
            let pts = frame.best_effort_timestamp != FFmpegConstants.noPTS ? frame.best_effort_timestamp : frame.pts
            if pts != FFmpegConstants.noPTS {
                let time = MediaTime(ffmpegTimestamp: pts, timeBase: timeBase)
                if time.isNumeric {
                    first = first.map { min($0, time) } ?? time
                    end = end.map { max($0, time + length) } ?? time + length
                }
            } else if let last = end {
                end = last + length
            }
            samples += Int64(frame.nb_samples)
        }

        /// The span, or nil when nothing was decoded; frames without times count from `start`.
        func extent(startingAt start: MediaTime) -> SoundExtent? {
            guard samples > 0, sampleRate > 0 else { return nil }
            if let first, let end { return SoundExtent(start: first, end: end) }
            return SoundExtent(start: start, end: start + MediaTime(value: samples, timescale: sampleRate))
        }
    }
}

/// Sound-only items' extents, each measured once per version of a source (an asset made after its
/// file was replaced is measured again) on a worker thread: asked for ahead (``prefetch(_:)``, when a layer starts or is edited), waited for
/// when an item opens.
final class SoundExtentTable: Sendable {
    private enum Entry: Sendable {
        case pending(Signature)
        case done(Signature, Result<SoundExtent?, PlayheadError>)
    }

    private typealias Signature = SourceVersion

    private let entries = Locked<[String: Entry]>([:])
    private let done = NSCondition()

    init() {}

    /// Starts measuring those of `assets` not measured yet, on worker threads.
    func prefetch(_ assets: [Asset]) {
        for asset in assets { start(asset) }
    }

    /// `asset`'s extent, measuring it now (on this thread) if no worker has begun, else waiting
    /// for the worker. Throws what the measurement threw.
    func extent(of asset: Asset, interrupt: InterruptFlag) throws(PlayheadError) -> SoundExtent? {
        let signature = Signature(asset)
        enum Step { case measure, wait, result(Result<SoundExtent?, PlayheadError>) }
        let step = entries.withLock { table -> Step in
            switch table[asset.source] {
            case .done(let known, let result)? where known == signature: return .result(result)
            case .pending(let known)? where known == signature: return .wait
            default:
                table[asset.source] = .pending(signature)
                return .measure
            }
        }
        switch step {
        case .result(let result): return try result.get()
        case .measure:
            let result = Result { () throws(PlayheadError) -> SoundExtent? in try SoundExtent.measure(asset, interrupt: interrupt) }
            // A cancelled measure is not kept: the next asks again.
            finish(asset.source, signature, result, keep: !interrupt.isRaised)
            return try result.get()
        case .wait:
            done.lock()
            defer { done.unlock() }
            while true {
                if interrupt.isRaised { throw .cancelled(file: asset.source) }
                let state = entries.withLock { $0[asset.source] }
                switch state {
                case .done(let known, let result)? where known == signature: return try result.get()
                case .pending(let known)? where known == signature: _ = done.wait(until: Date().addingTimeInterval(0.05))
                default: return try SoundExtent.measure(asset, interrupt: interrupt)
                }
            }
        }
    }

    private func start(_ asset: Asset) {
        let signature = Signature(asset)
        let fresh = entries.withLock { table -> Bool in
            switch table[asset.source] {
            case .done(let known, _)? where known == signature: return false
            case .pending(let known)? where known == signature: return false
            default:
                table[asset.source] = .pending(signature)
                return true
            }
        }
        guard fresh else { return }
        WorkerPool.shared.run("playhead.sound-extent") { [self] in
            let result = Result { () throws(PlayheadError) -> SoundExtent? in try SoundExtent.measure(asset, interrupt: InterruptFlag()) }
            finish(asset.source, signature, result, keep: true)
        }
    }

    private func finish(_ source: String, _ signature: Signature, _ result: Result<SoundExtent?, PlayheadError>, keep: Bool) {
        entries.withLock { table in
            if keep { table[source] = .done(signature, result) } else { table[source] = nil }
        }
        done.lock()
        done.broadcast()
        done.unlock()
    }
}
