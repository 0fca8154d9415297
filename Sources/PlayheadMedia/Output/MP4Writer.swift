internal import CFFmpeg

/// The encoders and the muxer of one ``MP4Sink``, used under its lock from whichever thread
/// feeds it (the picture's, and the sound's when it has its own). ``MP4ExportPlan`` says when the
/// header can be written; until then encoded packets are held back, in their encoder's time base.
final class MP4Writer {
    let path: String
    let preset: String
    let crf: Int
    let replacing: Bool
    private(set) var plan: MP4ExportPlan
    private(set) var framesWritten = 0
    private(set) var audioFramesWritten = 0
    private(set) var isPartial = false
    /// Why the file was given up part way (a write that failed: a full disk): every later call
    /// says so, so that the end of the output cannot pass for a success.
    private var failure: PlayheadError?

    private var muxer: Muxer?
    private var encoder: FrameEncoder?
    private var videoStream: Int32?
    /// The encoder may keep a reference to what it is given: frames go through a copy it owns.
    private var staging: OwnedFrame?
    private var lastPTS: Int64 = -1
    /// The nominal frame grid the frames follow, anchored at a frame's time (encoder units on the
    /// timeline). A time within half a tick of the source's timescale of a point of it is that
    /// point: a container that counts milliseconds rounds a 29.97 fps frame's time by up to half
    /// of one.
    private var gridAnchor: Int64?
    private var sourceTimescale: Int32 = 1
    private var videoSize: PixelSize?
    /// Where the picture's timeline begins, the encoder's units per second and a nominal frame in
    /// units. Each frame is placed at its own time on the timeline (a source of variable rate, a
    /// gap where a queue played sound alone); the first is shown from the timeline's start, so a
    /// picture that starts after its sound stays in sync. Times go from the frame's rational time
    /// to units exactly; only a player's placing is in seconds.
    private var videoClock: VideoClock?
    /// The encoder sees frames a nominal frame apart (so its reordering delay is two frames, not
    /// whatever gap a source has between its first frames, and its rate control is even); each
    /// packet then gets its frame's own time and duration back, by the encoder's timestamp. Its
    /// decode timestamps are timestamps of earlier frames, mapped the same way (the mapping only
    /// ever grows, so a decode time stays at or before its presentation time).
    /// By frame number (the encoder's timestamp over a nominal frame) from `timingBase` on.
    private var timing: [(time: Int64, duration: Int64)] = []
    private var timingBase: Int64 = 0
    /// The encoder's timestamp and the time of the first frame (decode timestamps before it are
    /// kept at their distance from it).
    private var firstTiming: (encoder: Int64, time: Int64)?
    /// The last picture packet, held until the next (see `write`) in one packet made once, and
    /// where the picture ends.
    private var pendingPicture: OwnedPacket?
    private var hasPendingPicture = false
    private var pictureEnd: Int64 = 0
    /// The picture fed so far reached its end (``pictureEnded()``); reset by the next frame.
    private var pictureReachedEnd = false
    /// The sound is fed by a player (``MP4Sink/soundInput()``): its first samples are placed at
    /// their time on the timeline, after silence when the sound starts later than the picture.
    private let placesSound: Bool
    private var soundPlaced = false
    /// The longest silence put before a late sound.
    static let longestLeadingSilence = 600.0
    private var audioInfo: AudioStreamInfo?
    private var audioEncoder: AudioEncoder?
    private var audioStream: Int32?
    /// Packets encoded before the header: (is sound, packet in its encoder's time base).
    private var held: [(sound: Bool, packet: OwnedPacket)] = []
    private var heldBytes = 0
    /// What may be held back before a side that has not begun is left out (a sound that starts
    /// this far into the picture, or a picture into the sound).
    static let holdLimit = (packets: 3000, bytes: 64 << 20)

    init(path: String, preset: String, crf: Int, replacing: Bool, separateSound: Bool) {
        self.path = path
        self.preset = preset
        self.crf = crf
        self.replacing = replacing
        plan = MP4ExportPlan(separateSound: separateSound)
        placesSound = separateSound
    }

    // MARK: The picture

    func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        try X264Settings.check(preset: preset, crf: crf, file: path)
        guard info.size.width % 2 == 0, info.size.height % 2 == 0 else {
            throw PlayheadError(code: .invalidArgument, message: "H.264 in 4:2:0 needs an even frame size, not \(info.size)", file: path)
        }
        if let videoSize {
            throw PlayheadError(
                code: .invalidArgument, message: "an MP4 file holds one frame size (\(videoSize)); this stream is \(info.size): give an output size",
                file: path)
        }
        let action = try refusing { () throws(MP4ExportPlan.Refusal) in try plan.videoBegan() }
        videoSize = info.size
        sourceTimescale = info.timescale
        let tick = info.frameRate.map { Y4MSink.rational(forRate: $0) } ?? AVRational(num: 1, den: 25)
        // A unit of at most 0.1 ms in which a nominal frame (tick.num / tick.den s) is whole.
        let scale = max(1, (10_000 + tick.den - 1) / tick.den)
        let timeBase = AVRational(num: 1, den: tick.den * scale)
        videoClock = VideoClock(start: info.timelineStart, unitsPerSecond: timeBase.den, frame: Int64(tick.num) * Int64(scale))
        let perSecond = max(1, Int32((Double(tick.den) / Double(tick.num)).rounded()))
        let muxer = try openedMuxer()
        let encoder = try FrameEncoder(
            named: "libx264", size: info.size, format: AV_PIX_FMT_YUV420P, timeBase: timeBase, target: path,
            options: ["preset": preset, "crf": String(crf)], threads: 0, globalHeader: true, groupOfPictures: perSecond,
            frameRate: AVRational(num: tick.den, den: tick.num))
        videoStream = try muxer.addStream(from: encoder.context)
        staging = try OwnedFrame(size: info.size, format: AV_PIX_FMT_YUV420P)
        self.encoder = encoder
        try perform(action)
    }

    func write(_ frame: VideoFrame) throws(PlayheadError) {
        if let failure { throw failure }
        pictureReachedEnd = frame.keepsSoundPast
        guard encoder != nil, let videoClock else { throw PlayheadError(code: .invalidState, message: "write before begin", file: path) }
        let units = snapped(
            Self.units(frame.presentationTime, placedAt: frame.timelinePosition, from: videoClock.start, perSecond: videoClock.unitsPerSecond))
        var duration = videoClock.frame
        if frame.duration.isNumeric, frame.duration.value > 0,
            let own = Self.units(frame.duration, placedAt: nil, from: .zero, perSecond: videoClock.unitsPerSecond)
        {
            duration = max(1, own)
        }
        // A picture that starts after the timeline does is led in by its first frame, repeated at
        // the nominal rate (as ffmpeg's constant-rate output does: players differ in what they show
        // before a stream's start, and one long first frame would make x264 hold every frame's
        // decoding back by its length).
        if lastPTS < 0, let units, units >= videoClock.frame {
            let longest = Int64(Self.longestLeadingSilence) * Int64(videoClock.unitsPerSecond)
            let copies = min(units, longest) / videoClock.frame
            for copy in 0..<copies { try encode(frame, at: copy * videoClock.frame, duration: videoClock.frame) }
        }
        try encode(frame, at: Self.timestamp(of: units, after: lastPTS, frame: videoClock.frame), duration: duration)
    }

    private func encode(_ frame: VideoFrame, at pts: Int64, duration: Int64) throws(PlayheadError) {
        guard let encoder, let staging else { throw PlayheadError(code: .invalidState, message: "write before begin", file: path) }
        // The encoder may keep what it is given until a later call: each frame goes in a
        // reference its producer will not draw over, or else in a copy.
        try staging.hold(frame, file: path)
        // The producer's buffers are free again once the encoder has what it keeps of them.
        defer { staging.releaseShared() }
        let nominal = Int64(framesWritten) * (videoClock?.frame ?? 1)
        staging.pointer.pointee.pts = nominal
        timing.append((pts, duration))
        if firstTiming == nil { firstTiming = (nominal, pts) }
        lastPTS = pts
        try encoder.encode(staging.pointer) { (packet) throws(PlayheadError) in try self.take(packet, sound: false) }
        framesWritten += 1
    }

    /// Where the picture's timeline begins, the encoder's units per second and a nominal frame.
    struct VideoClock {
        var start: MediaTime
        var unitsPerSecond: Int32
        var frame: Int64
    }

    /// Units of `perSecond` from the timeline's start: where a player placed it (seconds), else
    /// its time from `start`, exactly (rounded only when the time does not fall on a unit). Nil
    /// for a time that is not a number, or past any timeline a file may hold.
    static func units(_ time: MediaTime, placedAt position: Double?, from start: MediaTime, perSecond: Int32) -> Int64? {
        let limit = Int64.max / 4
        if let position {
            let units = (position * Double(perSecond)).rounded()
            guard units.isFinite, abs(units) < Double(limit) else { return nil }
            return Int64(units)
        }
        guard time.isNumeric, start.isNumeric else { return nil }
        let from = (time - start).converted(toTimescale: perSecond)
        guard from.isNumeric, abs(from.value) < limit else { return nil }
        return from.value
    }

    /// `units` on the nominal frame grid when it is within half a tick of the source's timescale
    /// of one of its points (the time the source meant before its container rounded it);
    /// otherwise as it is, and the grid anchored there (a variable rate, a new item of a queue, a
    /// loop's next pass).
    private func snapped(_ units: Int64?) -> Int64? {
        guard let units, let videoClock, let anchor = gridAnchor else {
            if let units { gridAnchor = units }
            return units
        }
        let point = anchor + Self.nearestMultiple(of: videoClock.frame, to: units - anchor)
        // |units − point| ≤ half a source tick, in whole numbers: 2 × distance × timescale ≤ units per second.
        let (scaled, overflow) = (abs(units - point) * 2).multipliedReportingOverflow(by: Int64(max(1, sourceTimescale)))
        if !overflow, scaled <= Int64(videoClock.unitsPerSecond) { return point }
        gridAnchor = units
        return units
    }

    /// The multiple of `step` (positive) nearest `value`, halves up.
    static func nearestMultiple(of step: Int64, to value: Int64) -> Int64 {
        let down = value >= 0 ? value / step : -((-value + step - 1) / step)
        let remainder = value - down * step
        return (remainder * 2 >= step ? down + 1 : down) * step
    }

    /// Where a frame shown `units` into the timeline goes: at its time, after the frame before
    /// it; the first frame at 0 unless led in (see `write`); a frame without a time, a frame on.
    static func timestamp(of units: Int64?, after last: Int64, frame: Int64) -> Int64 {
        if last < 0 { return 0 }
        guard let units else { return last + frame }
        return max(last + 1, units)
    }

    func finishVideo() throws(PlayheadError) {
        if let failure { throw failure }
        if plan.ended { return }
        if let encoder { try encoder.encode(nil) { (packet) throws(PlayheadError) in try self.take(packet, sound: false) } }
        // A sound told with the picture (same thread) ends with it: its last samples and the
        // encoder's delayed packets are flushed too.
        if !placesSound, let audioEncoder { try audioEncoder.finish { (packet) throws(PlayheadError) in try self.take(packet, sound: true) } }
        if plan.headerWritten { try flushPendingPicture() }
        try perform(plan.videoEnded())
    }

    // MARK: The sound

    /// The sound's format, told with the picture's (before it begins).
    func prepareAudio(_ info: AudioStreamInfo) throws(PlayheadError) {
        try Self.checkSound(info, path: path)
        try refusing { () throws(MP4ExportPlan.Refusal) in try plan.soundPrepared() }
        audioInfo = info
    }

    func beginSound(_ info: AudioStreamInfo) throws(PlayheadError) {
        if let audioInfo {
            guard audioInfo.sampleRate == info.sampleRate, audioInfo.channelCount == info.channelCount else {
                throw PlayheadError(code: .invalidArgument, message: "the sound changed format mid-stream", file: path)
            }
        } else {
            try Self.checkSound(info, path: path)
        }
        let action = try refusing { () throws(MP4ExportPlan.Refusal) in try plan.soundBegan() }
        audioInfo = info
        try perform(action)
    }

    func writeAudio(_ buffer: AudioBuffer) throws(PlayheadError) {
        if let failure { throw failure }
        guard !plan.ended else { return }
        guard let audioInfo, plan.sound == .began else { throw PlayheadError(code: .invalidState, message: "sound before its format", file: path) }
        guard buffer.channelCount == audioInfo.channelCount, buffer.sampleRate == audioInfo.sampleRate else {
            throw PlayheadError(code: .invalidArgument, message: "the sound changed format mid-stream", file: path)
        }
        let encoder = try soundEncoder(audioInfo)
        if placesSound {
            try silence(before: buffer, info: audioInfo, encoder: encoder, first: !soundPlaced)
            soundPlaced = true
        }
        try encoder.encode(buffer.samples, frames: buffer.frameCount) { (packet) throws(PlayheadError) in try self.take(packet, sound: true) }
        audioFramesWritten += buffer.frameCount
    }

    /// Silence where the timeline has no sound: from its start to the first samples (none when
    /// they are at the start), and over a gap of more than 40 ms before later ones (where a queue
    /// played a picture alone), so the sound stays where the picture is.
    private func silence(before buffer: AudioBuffer, info: AudioStreamInfo, encoder: AudioEncoder, first: Bool) throws(PlayheadError) {
        guard
            let at = Self.units(
                buffer.presentationTime, placedAt: buffer.timelinePosition, from: info.timelineStart, perSecond: Int32(info.sampleRate))
        else { return }
        let due = Int(min(at, Int64(audioFramesWritten) + Int64(Self.longestLeadingSilence) * Int64(info.sampleRate)))
        var missing = due - audioFramesWritten
        guard missing > (first ? 0 : info.sampleRate / 25) else { return }
        let chunk = [Int16](repeating: 0, count: 4096 * info.channelCount)
        while missing > 0 {
            let frames = min(missing, 4096)
            try chunk.withUnsafeBufferPointer { (zeros) throws(PlayheadError) in
                try encoder.encode(UnsafeBufferPointer(rebasing: zeros[0..<(frames * info.channelCount)]), frames: frames) {
                    (packet) throws(PlayheadError) in
                    try self.take(packet, sound: true)
                }
            }
            missing -= frames
            audioFramesWritten += frames
        }
    }

    func finishSound() throws(PlayheadError) {
        if let failure { throw failure }
        if plan.ended { return }
        if let audioEncoder { try audioEncoder.finish { (packet) throws(PlayheadError) in try self.take(packet, sound: true) } }
        try perform(plan.soundEnded())
    }

    // MARK: Giving up

    /// The picture reached its end: the sound past it is the file's own, kept when it is given
    /// up. A frame written after it begins another picture (a queue's next item).
    func pictureEnded() { pictureReachedEnd = true }

    /// Keeps what was written as a valid, shorter file (``isPartial``), or nothing when nothing was;
    /// when its picture stopped short, its sound ends where the picture does (a sound decoded
    /// ahead of a picture that stopped is not kept past the last frame).
    func abort() {
        guard !plan.ended, let muxer else {
            _ = plan.abort()
            return
        }
        // What was held back is kept too: the header then names the streams that began.
        if !held.isEmpty, plan.holdingTooMuch() == .writeHeader { try? writeHeader() }
        _ = plan.abort()
        if plan.headerWritten {
            if let encoder { try? encoder.encode(nil) { (packet) throws(PlayheadError) in try self.take(packet, sound: false) } }
            if let audioEncoder { try? audioEncoder.finish { (packet) throws(PlayheadError) in try self.take(packet, sound: true) } }
            try? flushPendingPicture()
        }
        let cuts = plan.headerWritten && pictureEnd > 0 && !pictureReachedEnd ? streamEnds(soundCutAtPicture: true) : [:]
        release()
        isPartial = muxer.keepWhatWasWritten(cuts: cuts)
    }

    // MARK: Steps

    private func perform(_ action: MP4ExportPlan.Action) throws(PlayheadError) {
        do throws(PlayheadError) {
            switch action {
            case .none: return
            case .writeHeader: try writeHeader()
            case .complete: try complete()
            case .writeHeaderAndComplete:
                try writeHeader()
                try complete()
            }
        } catch {
            throw giveUp(error)
        }
    }

    /// A file that failed is given up at once (kept as far as it is valid: a fragmented file is
    /// cut after its last whole fragment); returns `error`, which every later call throws.
    private func giveUp(_ error: PlayheadError) -> PlayheadError {
        failure = failure ?? error
        _ = plan.abort()
        if let muxer {
            release()
            isPartial = muxer.keepWhatWasWritten()
        }
        return error
    }

    private func writeHeader() throws(PlayheadError) {
        let muxer = try openedMuxer()
        if plan.sound == .began, let audioInfo {
            audioStream = try muxer.addStream(from: soundEncoder(audioInfo).context)
        }
        // Fragmented, the header held until the first fragment (the muxer's MP4 rule): it then
        // carries edit lists, so the picture's reordering delay and the AAC priming are hidden and
        // both streams start at 0 in sync (an empty header up front could not say so: the muxer
        // would move each stream to 0 on its own, the sound ahead of the picture).
        try muxer.writeHeader()
        // What was held back, in time order across the two streams.
        let waiting = held.enumerated().sorted { a, b in
            let (ta, tb) = (heldTime(a.element), heldTime(b.element))
            return ta != tb ? ta < tb : a.offset < b.offset
        }
        held = []
        heldBytes = 0
        for (_, item) in waiting { try write(item.packet.pointer, sound: item.sound) }
    }

    private func complete() throws(PlayheadError) {
        guard let muxer else { return }
        try flushPendingPicture()
        let ends = streamEnds(soundCutAtPicture: false)
        release()
        try muxer.finish(ends: ends)
    }

    /// Where each stream ends, in its muxer time base, for the plain file's last samples: the
    /// picture at its last frame's end, the sound at its last sample given — or, for a file that
    /// stopped (`soundCutAtPicture`), at the picture's end when that comes first.
    private func streamEnds(soundCutAtPicture: Bool) -> [Int32: Int64] {
        guard let muxer else { return [:] }
        var ends: [Int32: Int64] = [:]
        var picture: (end: Int64, timeBase: AVRational)?
        if let encoder, let videoStream, pictureEnd > 0 {
            ends[videoStream] = av_rescale_q(pictureEnd, encoder.context.pointee.time_base, muxer.timeBase(of: videoStream))
            picture = (pictureEnd, encoder.context.pointee.time_base)
        }
        if let audioEncoder, let audioStream, audioFramesWritten > 0 {
            let timeBase = muxer.timeBase(of: audioStream)
            var end = av_rescale_q(Int64(audioFramesWritten), audioEncoder.context.pointee.time_base, timeBase)
            if soundCutAtPicture, let picture { end = min(end, av_rescale_q(picture.end, picture.timeBase, timeBase)) }
            ends[audioStream] = end
        }
        return ends
    }

    private func release() {
        muxer = nil
        encoder = nil
        videoStream = nil
        staging = nil
        audioEncoder = nil
        audioStream = nil
        held = []
        heldBytes = 0
        timing = []
        pendingPicture = nil
        hasPendingPicture = false
    }

    /// A packet from an encoder: written when the header is, else held back (copied).
    private func take(_ packet: UnsafeMutablePointer<AVPacket>, sound: Bool) throws(PlayheadError) {
        if plan.headerWritten {
            try write(packet, sound: sound)
            return
        }
        let copy = try OwnedPacket()
        let result = av_packet_ref(copy.pointer, packet)
        guard result >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not hold a packet", function: "av_packet_ref", result: result, file: path)
        }
        held.append((sound, copy))
        heldBytes += Int(packet.pointee.size)
        if held.count > Self.holdLimit.packets || heldBytes > Self.holdLimit.bytes {
            try perform(plan.holdingTooMuch())
        }
    }

    private func write(_ packet: UnsafeMutablePointer<AVPacket>, sound: Bool) throws(PlayheadError) {
        guard let muxer else { return }
        if sound {
            // A sound the plan left out (it began too late) has no stream: its packets are dropped.
            guard let audioEncoder, let audioStream else { return }
            packet.pointee.stream_index = audioStream
            av_packet_rescale_ts(packet, audioEncoder.context.pointee.time_base, muxer.timeBase(of: audioStream))
        } else {
            guard let encoder, let videoStream else { return }
            packet.pointee.stream_index = videoStream
            restoreTiming(of: packet)
            av_packet_rescale_ts(packet, encoder.context.pointee.time_base, muxer.timeBase(of: videoStream))
            // Each picture packet waits for the next: the last one's duration must reach the end
            // of the last frame shown (its decode time lags by the reordering delay).
            let pending: OwnedPacket
            if let made = pendingPicture { pending = made } else { pending = try OwnedPacket() }
            pendingPicture = pending
            if hasPendingPicture {
                hasPendingPicture = false
                try send(pending.pointer, to: muxer)
                av_packet_unref(pending.pointer)
            }
            let result = av_packet_ref(pending.pointer, packet)
            guard result >= 0 else {
                throw FFmpegError.error(.encodeFailed, "could not hold a packet", function: "av_packet_ref", result: result, file: path)
            }
            hasPendingPicture = true
            return
        }
        try send(packet, to: muxer)
    }

    private func send(_ packet: UnsafeMutablePointer<AVPacket>, to muxer: Muxer) throws(PlayheadError) {
        // With two streams, the muxer interleaves them by time.
        do throws(PlayheadError) {
            try muxer.write(packet, stream: packet.pointee.stream_index)
        } catch {
            throw giveUp(error)
        }
    }

    /// Writes the picture packet still waiting, lasting to the end of the last frame shown.
    private func flushPendingPicture() throws(PlayheadError) {
        guard hasPendingPicture, let pending = pendingPicture, let muxer, let encoder, let videoStream else { return }
        hasPendingPicture = false
        defer { av_packet_unref(pending.pointer) }
        if pictureEnd > 0, pending.pointer.pointee.dts != FFmpegConstants.noPTS {
            let end = av_rescale_q(pictureEnd, encoder.context.pointee.time_base, muxer.timeBase(of: videoStream))
            pending.pointer.pointee.duration = max(pending.pointer.pointee.duration, end - pending.pointer.pointee.dts)
        }
        try send(pending.pointer, to: muxer)
    }

    /// A picture packet's own time, duration and decode time, from the encoder's (see `timing`).
    private func restoreTiming(of packet: UnsafeMutablePointer<AVPacket>) {
        let pts = packet.pointee.pts, dts = packet.pointee.dts
        let frame = max(1, videoClock?.frame ?? 1)
        /// The entry of the frame the encoder stamped `stamp`, if it is still kept.
        func entry(_ stamp: Int64) -> (time: Int64, duration: Int64)? {
            guard stamp % frame == 0 else { return nil }
            let index = stamp / frame - timingBase
            return index >= 0 && index < Int64(timing.count) ? timing[Int(index)] : nil
        }
        guard pts != FFmpegConstants.noPTS, let own = entry(pts), let firstTiming else { return }
        packet.pointee.pts = own.time
        packet.pointee.duration = own.duration
        pictureEnd = max(pictureEnd, own.time + own.duration)
        if dts != FFmpegConstants.noPTS {
            // The first few decode before the first frame's time: a unit apart each (0.1 ms), so
            // the edit list that hides them is that short too.
            packet.pointee.dts = entry(dts)?.time ?? (firstTiming.time + min(0, (dts - firstTiming.encoder) / frame - 1))
            // Later packets decode at or after this one: earlier frames are not needed again.
            let done = min(Int64(timing.count), max(0, dts / frame - timingBase))
            if done > 0 {
                timing.removeFirst(Int(done))
                timingBase += done
            }
        }
    }

    private func heldTime(_ item: (sound: Bool, packet: OwnedPacket)) -> Double {
        let base = item.sound ? audioEncoder?.context.pointee.time_base : encoder?.context.pointee.time_base
        let dts = item.packet.pointer.pointee.dts != FFmpegConstants.noPTS ? item.packet.pointer.pointee.dts : item.packet.pointer.pointee.pts
        guard let base, base.den != 0 else { return 0 }
        return Double(dts) * Double(base.num) / Double(base.den)
    }

    private func openedMuxer() throws(PlayheadError) -> Muxer {
        if let muxer { return muxer }
        let made = try Muxer(.mp4, to: .file(path: path, replacing: replacing))
        muxer = made
        return made
    }

    private func soundEncoder(_ info: AudioStreamInfo) throws(PlayheadError) -> AudioEncoder {
        if let audioEncoder { return audioEncoder }
        let made = try AudioEncoder(sampleRate: info.sampleRate, channelCount: info.channelCount, target: path)
        audioEncoder = made
        return made
    }

    private func refusing<T>(_ step: () throws(MP4ExportPlan.Refusal) -> T) throws(PlayheadError) -> T {
        // Given up on a failed write: that is why nothing more is taken.
        if let failure { throw failure }
        do throws(MP4ExportPlan.Refusal) {
            return try step()
        } catch {
            switch error {
            case .tooLate:
                throw PlayheadError(
                    code: .invalidState, message: "the MP4's streams were settled before this one began (it would start too far into the file)",
                    file: path)
            case .alreadyBegun:
                throw PlayheadError(code: .invalidState, message: "an MP4 sink takes one stream", file: path)
            case .ended:
                throw PlayheadError(code: .invalidState, message: "the MP4 was already completed or given up", file: path)
            }
        }
    }

    private static func checkSound(_ info: AudioStreamInfo, path: String) throws(PlayheadError) {
        guard (8000...192_000).contains(info.sampleRate), (1...8).contains(info.channelCount) else {
            throw PlayheadError(
                code: .invalidArgument, message: "AAC takes 8 … 192 kHz and 1 … 8 channels, not \(info.sampleRate) Hz × \(info.channelCount)",
                file: path)
        }
    }
}
