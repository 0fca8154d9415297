internal import CFFmpeg
import Glibc

/// How a source's data ended, decided from the demuxer's own evidence — never from a declared
/// duration.
package enum DataEnd: Sendable, Hashable {
    /// The data ended where the container says it ends.
    case complete
    /// The data stops inside what the container promised (its index, its element sizes, a
    /// transport packet): the error says what the evidence is.
    case truncated(PlayheadError)
    /// Reading failed for good (too many read errors in a row).
    case failed(PlayheadError)
    case cancelled
}

extension DataEnd {
    /// The one rule for an end: data cut short or reading that failed is a failure, with its
    /// evidence; a complete end is not (nor a cancellation, which the caller reports as such).
    /// Sessions (``SegmentTally``), images, compositions and their sound all judge an end by it.
    package var failure: PlayheadError? {
        switch self {
        case .truncated(let error), .failed(let error): return error
        case .complete, .cancelled: return nil
        }
    }
}

/// Damaged data passed over: packets the demuxer flagged corrupt or could not read, packets a
/// decoder rejected, frames a decoder marked corrupt. One rule everywhere: decode past it, count
/// it, keep the first error.
package struct DamageTally: Sendable, Hashable {
    package private(set) var count = 0
    package private(set) var first: PlayheadError?

    package init(count: Int = 0, first: PlayheadError? = nil) {
        self.count = count
        self.first = first
    }

    mutating func record(_ error: PlayheadError) {
        count += 1
        if first == nil { first = error }
    }

    package mutating func add(_ other: DamageTally) {
        count += other.count
        if first == nil { first = other.first }
    }

    /// The one damage rule: damage is decoded past and counted; in a strict run any is a failure.
    package func failure(strict: Bool, file: String) -> PlayheadError? {
        strict ? summary(file: file) : nil
    }

    /// A failure for a strict run, or a note for a lenient one.
    func summary(file: String) -> PlayheadError? {
        guard let error = first else { return nil }
        return error.with(message: "\(count) damaged packet(s); first: \(error.message)").namingIfNone(file)
    }
}

/// A source opened once for demuxing: the container's streams (and their facts, worked out once),
/// the one read rule, and the seeking primitives the reader's seek rule is built from.
///
/// Owned by one thread at a time (the one that opened it, then the session or request it is
/// handed to); never shared.
package final class Demuxer {
    package let context: FormatContext
    package let source: String
    /// The video stream that plays (FFmpeg's best, never a cover picture) and the audio stream
    /// that plays (the selection's, ``TrackChoice/resolve(kind:among:best:file:)``), when there are any.
    package let video: VideoStreamFacts?
    package let audio: AudioStreamFacts?
    /// An HLS master playlist's variants, the chosen one marked (none for another source).
    package let variants: [AssetVariant]
    /// Why the selection's sound cannot play (`demux.trackNotFound`, naming what the file holds):
    /// what needs the sound fails with it; what needs only the picture plays (``audio`` is nil).
    package let audioChoiceFailure: PlayheadError?
    /// The file has sound and the selection turned it off (``TrackChoice/none``).
    package let soundTurnedOff: Bool
    /// The source is a playlist of segments (HLS): a stream not read is not fetched.
    package let isPlaylist: Bool
    /// Damage met while reading: packets flagged corrupt or unreadable.
    private var readDamage = DamageTally()
    /// Errors the demuxer logged before reading began (while opening): not damage of the data read.
    private let errorsAtOpen: Int
    /// `true` until the first packet is read: a fresh demuxer starts at the beginning.
    package private(set) var isFresh = true
    /// The container allows its timestamps to jump (MPEG-TS and the like: FFmpeg's
    /// `AVFMT_TS_DISCONT`); realtime presentation follows such jumps.
    package let timestampsMayJump: Bool
    private var consecutiveErrors = 0
    /// The last packet read came out short (flagged corrupt): at the end of the file, the data was
    /// cut inside it.
    private var lastPacketWasShort = false
    private var selected: Set<Int32> = []
    /// Reading goes on from the start of the data (since the open or an exact rewind): the first
    /// packet read of each stream is its first.
    private var readsFromStart = true
    /// Each stream's first packet time (presentation, else decoding) and byte position (-1:
    /// unknown), as read from the start: what a rewind must give again.
    private var firstPackets: [Int32: (time: Int64, position: Int64)] = [:]
    /// Streams whose packets are encrypted, with the scheme (`cenc`, `cbcs`, …), as the first
    /// packets read showed it (see ``Encryption``).
    package private(set) var encryption: [Int32: String] = [:]
    /// Packets read ahead (to look at them) and put back, handed out first.
    private var pushedBack: [OwnedPacket] = []
    private var spare: [OwnedPacket] = []
    static let maximumConsecutiveErrors = 32

    /// A video stream is there, but its picture size is unknown (its first picture could not be
    /// decoded while probing: damaged, or larger than the decoders' cap).
    let hasSizelessVideo: Bool

    /// The error for a path that needs video and finds none usable: one rule for every path.
    package func missingVideo(what: String = "no video track") -> PlayheadError {
        if soundTurnedOff, video == nil {
            return PlayheadError(
                code: .noVideoTrack, message: "\(what): no picture, and the selection turned the sound off (none) (\(holdings))", file: source)
        }
        guard hasSizelessVideo else { return PlayheadError(code: .noVideoTrack, message: "\(what) (\(holdings))", file: source) }
        return PlayheadError(
            code: .decodeFailed,
            message:
                "the video track's picture size is unknown: its first picture could not be decoded (damaged, or larger than \(StreamDecoder.defaultMaximumPixels) pixels, which are refused)",
            file: source)
    }

    /// What the file holds, as the unplayable reason names it: `only audio #0 aac, subtitle #1 mov_text`.
    var holdings: String {
        let streams = context.streams.map { stream in
            let parameters = stream.pointee.codecpar.pointee
            let kind =
                stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 ? "cover picture" : Self.mediaType(parameters.codec_type).rawValue
            return "\(kind) #\(stream.pointee.index) \(String(cString: avcodec_get_name(parameters.codec_id)))"
        }
        return streams.isEmpty ? "no tracks" : "only " + streams.joined(separator: ", ")
    }

    private init(context: FormatContext, selection: MediaSelection) {
        self.context = context
        source = context.source
        let format = context.pointer
        isPlaylist = context.formatName.contains("hls")
        let all = context.streams.map(Self.candidate)
        var variants = isPlaylist ? Self.variants(in: context) : []
        // A sound named by index or language is looked for in the variants that hold it.
        var holding = variants
        if selection.audio != .default, selection.audio != .none {
            let found = variants.filter { variant in
                let own = all.filter { variant.trackIndices.contains($0.index) }
                return (try? selection.audio.resolve(kind: .audio, among: own, best: nil, file: context.source)) != nil
            }
            if !found.isEmpty { holding = found }
        }
        let chosen = selection.variant.choose(among: holding)
        // The streams that may play: the chosen variant's (nil: any of the file's).
        let allowed = chosen.flatMap { index in variants.first { $0.index == index } }.map { Set($0.trackIndices) }
        for i in variants.indices { variants[i].isSelected = variants[i].index == chosen }
        self.variants = variants
        let videoStream = Self.pictureStream(in: context, among: allowed)
        video = videoStream.flatMap { stream in
            let facts = VideoStreamFacts(stream: stream, format: format)
            return facts.storedSize.isEmpty ? nil : facts
        }
        hasSizelessVideo = videoStream != nil && video == nil
        let best = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, video.map { $0.index } ?? -1, nil, 0)
        let candidates = all.filter { allowed?.contains($0.index) ?? true }
        // A choice the file cannot meet fails only what needs the sound (``audioChoiceFailure``):
        // its picture still plays for a reader that wants no sound.
        do throws(PlayheadError) {
            let audioIndex = try selection.audio.resolve(kind: .audio, among: candidates, best: best >= 0 ? Int(best) : nil, file: context.source)
            audio = audioIndex.flatMap { context.stream(at: $0) }.map { AudioStreamFacts(stream: $0, format: format) }
            audioChoiceFailure = nil
        } catch {
            audio = nil
            audioChoiceFailure = error
        }
        soundTurnedOff = selection.audio == .none && all.contains { $0.mediaType == .audio }
        let flags = format.pointee.iformat?.pointee.flags ?? 0
        timestampsMayJump = flags & AVFMT_TS_DISCONT != 0
        errorsAtOpen = context.evidence.errorCount
        // A playlist fetches the segments of what plays alone (from the open on: the asset's
        // probe reads no further, a session selects again).
        if isPlaylist { select(Set([video?.index, audio?.index].compactMap { $0 })) }
    }

    /// An HLS playlist's variants (FFmpeg's HLS demuxer makes a program of each, its declared
    /// bandwidth as `variant_bitrate`); none when it is a media playlist (one program that
    /// declares no bandwidth).
    private static func variants(in context: FormatContext) -> [AssetVariant] {
        let format = context.pointer.pointee
        guard format.nb_programs > 0, let programs = format.programs else { return [] }
        let variants = (0..<Int(format.nb_programs)).compactMap { i -> AssetVariant? in
            guard let program = programs[i]?.pointee else { return nil }
            let bandwidth = dictionary(program.metadata)["variant_bitrate"].flatMap { Int($0) } ?? 0
            let indices = (0..<Int(program.nb_stream_indexes)).compactMap { program.stream_index?[$0] }.map(Int.init)
            let streams = indices.compactMap { context.stream(at: $0) }
            let picture = streams.first { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO && !attached($0) }
            let size = picture.map { PixelSize(width: Int($0.pointee.codecpar.pointee.width), height: Int($0.pointee.codecpar.pointee.height)) }
            let rate = picture.map { $0.pointee.avg_frame_rate.num > 0 ? $0.pointee.avg_frame_rate : $0.pointee.r_frame_rate }
            return AssetVariant(
                index: i, bandwidth: bandwidth, size: size.flatMap { $0.width > 0 && $0.height > 0 ? $0 : nil },
                frameRate: rate.flatMap { $0.num > 0 && $0.den > 0 ? Double($0.num) / Double($0.den) : nil },
                codecs: streams.map { StreamDecoder.codecName($0.pointee.codecpar.pointee) }, trackIndices: indices)
        }
        return variants.count == 1 && variants[0].bandwidth == 0 ? [] : variants
    }

    private static func attached(_ stream: UnsafeMutablePointer<AVStream>) -> Bool { stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 }

    /// The video stream that plays: FFmpeg's best, unless it is a picture attached to the file
    /// (cover art: `av_find_best_stream` takes it as a video) or not among `allowed` (an HLS
    /// variant's streams), then the first video stream that is neither; nil when there is none
    /// (an MP3 with its cover is sound alone).
    private static func pictureStream(in context: FormatContext, among allowed: Set<Int>? = nil) -> UnsafeMutablePointer<AVStream>? {
        func playable(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
            !attached(stream) && (allowed?.contains(Int(stream.pointee.index)) ?? true)
        }
        let best = context.stream(at: Int(av_find_best_stream(context.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)))
        if let best, playable(best) { return best }
        return context.streams.first { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO && playable($0) }
    }

    /// Opens `source` and reads its stream parameters. Blocking; `interrupt` can stop it.
    package static func open(_ source: String, interrupt: InterruptFlag, options: AssetOptions = AssetOptions()) throws(PlayheadError) -> Demuxer {
        try open(MediaInput(source), interrupt: interrupt, options: options)
    }

    /// Opens `input` and reads its stream parameters. Blocking; `interrupt` can stop it.
    /// - Parameters:
    ///   - input: the source.
    ///   - interrupt: what stops the open.
    ///   - options: the open's options (timeouts, selection).
    ///   - attempt: told, when the open fails, whether it had read bytes of the source.
    /// - Returns: the demuxer, fresh (no packet taken from it yet).
    /// - Throws: ``PlayheadError`` from opening or analysing the source.
    package static func open(
        _ input: MediaInput, interrupt: InterruptFlag, options: AssetOptions = AssetOptions(), attempt: OpenAttempt? = nil
    ) throws(PlayheadError) -> Demuxer {
        let source = input.name
        if let refusal = input.refusal { throw PlayheadError(code: .openFailed, message: refusal, file: source) }
        if input.isPath { try checkLocalFile(input) }
        let context = try FormatContext.open(input, interrupt: interrupt, options: options, attempt: attempt)
        do throws(PlayheadError) {
            return try analysed(context, input: input, options: options, interrupt: interrupt)
        } catch {
            attempt?.note(bytesRead: context.bytesRead)
            throw error
        }
    }

    /// The demuxer of an opened context, once its stream parameters are read.
    private static func analysed(
        _ context: FormatContext, input: MediaInput, options: AssetOptions, interrupt: InterruptFlag
    ) throws(PlayheadError) -> Demuxer {
        let source = input.name
        // The open timeout covers reading the stream parameters too; then it is lifted.
        defer { context.relay.liftDeadline() }
        try context.findStreamInfo()
        // FFmpeg's analysis ends early on the interrupt without an error, its streams half known:
        // an open whose flag was raised by then is cancelled, never a demuxer to be kept.
        if interrupt.isRaised, let stopped = interrupt.stopped(file: source) { throw stopped }
        context.clearStaleInterrupt()
        // An HTTP file: a stall once open ends the source rather than starting a reconnect. A
        // playlist (its segments come through other connections): a read that brings nothing
        // for the stall timeout ends it, rather than a wait per segment.
        if let stall = options.stallTimeout, input.bytes == nil {
            let isPlaylist = context.formatName.contains("hls")
            if isPlaylist || ["http", "https"].contains(SourceOptions.scheme(of: source) ?? "") {
                context.relay.watchStalls(of: isPlaylist ? nil : context.io.pointer, stall: stall)
            }
        }
        guard context.streamCount > 0 else {
            throw PlayheadError(code: .noStreams, message: "the container holds no streams", file: source)
        }
        let demuxer = Demuxer(context: context, selection: options.selection)
        demuxer.lookAtFirstPackets()
        return demuxer
    }

    /// Reads the first packets (those the analysis read are buffered already) until each audio
    /// and video stream has shown one, at most 64 of them, and puts them back: what they say that
    /// nothing before them does (which streams are encrypted) is known from the open on. The
    /// demuxer stays fresh.
    private func lookAtFirstPackets() {
        var waiting = Set(
            context.streams.filter {
                let type = $0.pointee.codecpar?.pointee.codec_type
                // (A playlist's streams not read bring no packet.)
                return (type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_VIDEO) && $0.pointee.discard != AVDISCARD_ALL
            }.map { $0.pointee.index })
        var read: [OwnedPacket] = []
        defer {
            pushedBack.insert(contentsOf: read, at: 0)
            isFresh = true
        }
        while !waiting.isEmpty, read.count < 64, let holder = try? spareOrNew() {
            guard case .packet = readFromContainer(into: holder.pointer) else {
                spare.append(holder)
                break
            }
            let index = holder.pointer.pointee.stream_index
            if let scheme = Encryption.scheme(of: holder.pointer) { encryption[index] = scheme }
            waiting.remove(index)
            read.append(holder)
        }
    }

    /// Whether a later user may read it again: not once its source stalled or its requests failed
    /// (the watchdog's verdict stands for the connection; only a new open can tell whether the
    /// source is back).
    package var isReusable: Bool { !context.relay.hasStalled && !context.io.hasStalled && context.io.failure == nil }

    /// Hands the demuxer to a new owner, whose flag interrupts it from now on (nil: nobody's, while idle).
    package func attach(_ interrupt: InterruptFlag?) { context.relay.attach(interrupt) }

    var interrupt: InterruptFlag? { context.relay.current }

    /// Reads only these streams. In a file, the container's other audio and video packets are
    /// still read (and dropped here): a file that ends inside one of them is cut short whichever
    /// stream the reader wanted, and only reading them shows it. Other streams' packets
    /// (subtitles, data) are discarded unread, and so is every other stream of a playlist (HLS:
    /// its segments are other files, and a variant not read is not fetched).
    /// - Parameters:
    ///   - streams: the streams read.
    ///   - alone: discard the other audio and video packets unread as well, as `ffmpeg` does
    ///     with the streams it does not map (a subtitle track read whole: its packets are a few
    ///     among a film's). A cut inside one of them is then seen only where the container tells
    ///     of it (an index that points past the end, an element the data ends inside).
    package func select(_ streams: Set<Int32>, alone: Bool = false) {
        selected = streams
        for stream in context.streams {
            let type = stream.pointee.codecpar.pointee.codec_type
            let media = (type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO) && !isPlaylist && !alone
            stream.pointee.discard = streams.contains(stream.pointee.index) || media ? AVDISCARD_DEFAULT : AVDISCARD_ALL
        }
    }

    // MARK: Reading

    package enum Read {
        case packet
        case end(DataEnd)
    }

    /// The one read rule. Reads the next packet of a selected stream into `packet`, with the
    /// container's own timestamps. A packet the demuxer could not read is passed over and counted as
    /// damage; reading gives up after 32 failures in a row. At the end of the data, says whether
    /// it is complete or truncated, from the container's own evidence.
    package func read(into packet: OwnedPacket) -> Read { read(into: packet.pointer) }

    func read(into packet: UnsafeMutablePointer<AVPacket>) -> Read {
        // Packets put back of streams not selected since (looked at when the demuxer opened) are dropped.
        while let held = pushedBack.first, !selected.isEmpty, !selected.contains(held.pointer.pointee.stream_index) {
            pushedBack.removeFirst()
            av_packet_unref(held.pointer)
            spare.append(held)
        }
        if let held = pushedBack.first {
            pushedBack.removeFirst()
            av_packet_move_ref(packet, held.pointer)
            spare.append(held)
            // Handed out: no longer at the start (the first packets may have been looked at).
            isFresh = false
        } else if case .end(let end) = readFromContainer(into: packet) {
            return .end(end)
        }
        // Encrypted packets are refused: decoded without the key they are garbage.
        let index = packet.pointee.stream_index
        if let scheme = encryption[index] ?? Encryption.scheme(of: packet) {
            encryption[index] = scheme
            av_packet_unref(packet)
            return .end(.failed(Encryption.refusal(scheme: scheme, stream: index, file: source)))
        }
        return .packet
    }

    /// The read rule below the packets put back.
    private func readFromContainer(into packet: UnsafeMutablePointer<AVPacket>) -> Read {
        while true {
            if interrupt?.isRaised ?? false { return .end(.cancelled) }
            context.relay.readBegins()
            let result = av_read_frame(context.pointer, packet)
            if result >= 0 {
                isFresh = false
                consecutiveErrors = 0
                let index = packet.pointee.stream_index
                // Whichever stream it belongs to, a packet the file ends inside is the evidence
                // of a cut (``endOfData``).
                let short = packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0
                guard selected.isEmpty || selected.contains(index) else {
                    lastPacketWasShort = short
                    av_packet_unref(packet)
                    continue
                }
                if readsFromStart, firstPackets[index] == nil {
                    let p = packet.pointee
                    let time = p.pts != FFmpegConstants.noPTS ? p.pts : p.dts
                    if time != FFmpegConstants.noPTS { firstPackets[index] = (time, p.pos) }
                }
                lastPacketWasShort = packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0
                if lastPacketWasShort {
                    readDamage.record(
                        PlayheadError(code: .decodeFailed, message: "the container flags a packet of stream \(index) as corrupt", file: source))
                }
                return .packet
            }
            // A source that sent nothing for the stall timeout (retrying would wait again); a
            // stream's demuxer may even call that the end, which it is not.
            if result == FFmpegError.timedOut || context.relay.hasStalled || context.io.hasStalled, !(interrupt?.isRaised ?? false) {
                return .end(
                    .failed(
                        FFmpegError.stalled(function: "av_read_frame", result: result, file: source)))
            }
            if result == FFmpegError.eof { return .end(endOfData(readError: nil)) }
            if isFresh, let error = mediaBehindIndex(result) { return .end(.failed(error)) }
            // Cancelled only when this reader's owner asked: an EXIT left over from an earlier
            // interrupt is an I/O failure like any other, not a stop that nobody requested.
            if interrupt?.isRaised ?? false { return .end(.cancelled) }
            // An HTTP source that gave up says why (its server ended the file early, or kept failing).
            if let failure = context.io.failure { return .end(.failed(failure)) }
            let error = FFmpegError.error(
                .readFailed, context.io.sourceError.map { "the byte source failed: \($0)" } ?? "part of the data could not be read",
                function: "av_read_frame", result: result, file: source)
            // The caller's byte source failed: its error, not a guess about the file.
            if context.io.sourceError != nil { return .end(.failed(error)) }
            readDamage.record(error)
            consecutiveErrors += 1
            if context.pointer.pointee.pb?.pointee.eof_reached != 0 { return .end(endOfData(readError: error)) }
            if consecutiveErrors >= Self.maximumConsecutiveErrors {
                return .end(.failed(error.with(message: "\(consecutiveErrors) reads in a row failed: giving up")))
            }
        }
    }

    /// Damage met so far: packets the container flagged corrupt or could not read, and the errors
    /// the demuxer itself reported while reading (a resync past damaged data, a packet size that
    /// does not match) — each a damaged spot, whatever the decoders make of it.
    package var damage: DamageTally {
        var tally = readDamage
        let logged = context.evidence.errorCount - errorsAtOpen
        if logged > 0 {
            let said = context.evidence.error(at: errorsAtOpen) ?? "an error"
            tally.add(
                DamageTally(count: logged, first: PlayheadError(code: .decodeFailed, message: "the container reports damage: \(said)", file: source)))
        }
        // Lost while opening too: whoever reads this demuxer reads past the hole.
        let lost = context.evidence.lostData
        if lost.count > 0 {
            tally.add(
                DamageTally(
                    count: lost.count,
                    first: PlayheadError(
                        code: .decodeFailed, message: "data is missing: \(lost.first ?? "a part could not be fetched")", file: source)))
        }
        return tally
    }

    // MARK: How the data ended

    private func endOfData(readError: PlayheadError?) -> DataEnd {
        if let promise = indexPromise(), let size = fileSize, promise > size {
            return .truncated(
                PlayheadError(
                    code: .truncated,
                    message: "the file ends at byte \(size), but its index places media data up to byte \(promise): it is truncated", file: source))
        }
        if let said = context.evidence.first(containing: "File ended prematurely") {
            return .truncated(
                PlayheadError(code: .truncated, message: "the data ends inside a container element (\(said)): it is truncated", file: source))
        }
        // FFmpeg's NUT muxer ends every file with its index: a file without one was cut short.
        if context.formatName == "nut", context.evidence.first(containing: "no index at the end") != nil {
            return .truncated(
                PlayheadError(
                    code: .truncated, message: "the NUT file has no index at its end (its muxer writes one last): it is truncated", file: source))
        }
        if context.formatName == "mpegts", let size = fileSize, size % 188 != 0, size % 192 != 0, size % 204 != 0 {
            return .truncated(
                PlayheadError(code: .truncated, message: "the file stops in the middle of a transport packet: it is truncated", file: source))
        }
        if lastPacketWasShort, context.pointer.pointee.pb?.pointee.eof_reached != 0 {
            return .truncated(PlayheadError(code: .truncated, message: "the file ends inside its last packet: it is truncated", file: source))
        }
        if let readError {
            return .truncated(readError.with(code: .truncated, message: "a read failed at the end of the data: it is truncated or damaged"))
        }
        return .complete
    }

    /// Where the container says its timeline starts (its earliest stream's start; zero when it
    /// does not say): the origin of times counted from an item's start.
    package var containerStart: MediaTime {
        let start = context.pointer.pointee.start_time
        return start != FFmpegConstants.noPTS ? MediaTime(value: start, timescale: 1_000_000) : .zero
    }

    /// The file's size in bytes, when known.
    var fileSize: Int64? {
        guard let pb = context.pointer.pointee.pb else { return nil }
        let size = avio_size(pb)
        return size > 0 ? size : nil
    }

    /// For containers with a full sample index (MP4, MOV): the byte up to which the index places
    /// media data. Fragmented files add entries as their fragments are read, so this is asked at
    /// the end.
    private func indexPromise() -> Int64? {
        guard context.formatName.contains("mov") || context.formatName.contains("mp4") else { return nil }
        var promise: Int64 = 0
        for stream in context.streams {
            let count = avformat_index_get_entries_count(stream)
            guard count > 0 else { continue }
            // Entries are in timestamp order, not position order: look at every one.
            for i in 0..<count {
                guard let entry = avformat_index_get_entry(stream, i)?.pointee else { continue }
                promise = max(promise, entry.pos + Int64(entry.size))
            }
        }
        return promise > 0 ? promise : nil
    }

    /// The first read failed on a source that cannot seek, and the index says the media lies
    /// before the point where the header ended (an MP4 whose `moov` follows its `mdat`, read from a
    /// pipe): the media has gone by and cannot be fetched again, which a clear error says rather
    /// than a run of unreadable packets.
    private func mediaBehindIndex(_ result: Int32) -> PlayheadError? {
        guard !canSeek, context.headerEnd > 0 else { return nil }
        let streams = context.streams.filter { selected.isEmpty || selected.contains($0.pointee.index) }
        let behind = streams.contains { stream in
            guard avformat_index_get_entries_count(stream) > 0, let first = avformat_index_get_entry(stream, 0) else { return false }
            return first.pointee.pos >= 0 && first.pointee.pos < context.headerEnd
        }
        guard behind else { return nil }
        return FFmpegError.error(
            .seekFailed,
            "the source cannot seek and its index comes after the media (an MP4 without faststart): "
                + "the media went by while the index was read; give a file or a URL, or move the index to the front (ffmpeg -movflags +faststart)",
            function: "av_read_frame", result: result, file: source)
    }

    // MARK: Seeking primitives

    /// `true` when the source can seek (a file, a server with ranges); a pipe cannot.
    package var canSeek: Bool {
        guard let pb = context.pointer.pointee.pb else { return true }
        return pb.pointee.seekable != 0
    }

    /// Moves to the keyframe of `stream` nearest `timestamp` inside `[minimum, maximum]` (stream
    /// time base), as FFmpeg's index or search finds it. Forgets packets put back.
    func seek(stream: Int32, minimum: Int64, timestamp: Int64, maximum: Int64) throws(PlayheadError) {
        dropPushedBack()
        // Even a failed seek may have moved the reading position (a search by reading).
        isFresh = false
        readsFromStart = false
        context.relay.readBegins()
        let result = avformat_seek_file(context.pointer, stream, minimum, timestamp, maximum, 0)
        if context.relay.hasStalled {
            throw FFmpegError.stalled(function: "avformat_seek_file", result: result, file: source)
        }
        guard result >= 0 else {
            throw FFmpegError.error(.seekFailed, "could not seek", function: "avformat_seek_file", result: result, file: source)
        }
    }

    /// Back to the start of the data (to play it again), so that reading gives what a fresh open
    /// gave: every packet from each selected stream's first.
    ///
    /// A container's seek to its start is by one stream's index, and may drop other streams'
    /// packets that come before that stream's first keyframe (WebM keeps Opus packets timed
    /// before the first video cue; a seek by the audio stream instead can drop MPEG-TS or NUT
    /// video). So the rewind is checked by evidence: the first packets read afterwards are looked
    /// at (and put back), and a stream whose first packet comes after the first one known for it
    /// (seen when it was read from the start, else the container's start time) lost packets; the
    /// seek is then made by that stream instead. Nothing is decided from the format's name.
    package func rewind() throws(PlayheadError) {
        guard !isFresh else { return }
        guard canSeek else {
            throw PlayheadError(code: .seekFailed, message: "the source cannot seek (a pipe or a live stream), so it plays only once", file: source)
        }
        var by: Int32 = -1
        var tried: Set<Int32> = []
        while true {
            tried.insert(by)
            try seekToStart(by: by)
            let lost = try streamsThatLostTheirStart()
            guard let next = lost.first(where: { !tried.contains($0) }) else {
                var moved = by != -1
                if lost.contains(where: isChosenSubtitle) {
                    if try seekToFirstByte() {
                        readsFromStart = true
                        return
                    }
                    moved = true
                }
                if !lost.isEmpty, moved {
                    // No seek keeps every stream: the container's own choice, as before.
                    try seekToStart(by: -1)
                }
                readsFromStart = lost.isEmpty
                return
            }
            by = next
        }
    }

    /// Where no stream's seek keeps a chosen subtitle stream's start: a seek to the byte where
    /// the first packet read from the start began, when the container seeks by bytes (a raw
    /// stream of packets: a PGS file). Checked as every rewind is, and a stream that then shows
    /// no packet counts as lost (Matroska at its end reads nothing after a byte seek).
    /// - Returns: whether it kept every stream's start.
    private func seekToFirstByte() throws(PlayheadError) -> Bool {
        let positions = firstPackets.values.map(\.position).filter { $0 >= 0 }
        guard let first = positions.min(), let format = context.pointer.pointee.iformat,
            format.pointee.flags & AVFMT_NO_BYTE_SEEK == 0
        else { return false }
        dropPushedBack()
        context.relay.readBegins()
        let result = avformat_seek_file(context.pointer, -1, Int64.min, first, first, AVSEEK_FLAG_BYTE)
        if context.relay.hasStalled {
            throw FFmpegError.stalled(function: "avformat_seek_file", result: result, file: source)
        }
        guard result >= 0 else { return false }
        return try streamsThatLostTheirStart(unseenAreLost: true).isEmpty
    }

    /// Whether `index` is a subtitle stream chosen to be read.
    private func isChosenSubtitle(_ index: Int32) -> Bool {
        selected.contains(index) && context.stream(at: Int(index))?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
    }

    private func seekToStart(by stream: Int32) throws(PlayheadError) {
        dropPushedBack()
        readsFromStart = false
        context.relay.readBegins()
        var result = avformat_seek_file(context.pointer, stream, Int64.min, Int64.min, Int64.min, 0)
        // A demuxer that seeks to the nearest entry within bounds (a subtitle file: SubRip, ASS…)
        // finds none at or before the very first time: the first one after it, then.
        if result < 0 { result = avformat_seek_file(context.pointer, stream, Int64.min, Int64.min, Int64.max, 0) }
        if result < 0, stream == -1 { result = avformat_seek_file(context.pointer, -1, Int64.min, 0, 0, AVSEEK_FLAG_BYTE) }
        if context.relay.hasStalled {
            throw FFmpegError.stalled(function: "avformat_seek_file", result: result, file: source)
        }
        guard result >= 0 else {
            throw FFmpegError.error(.seekFailed, "could not go back to the start", function: "avformat_seek_file", result: result, file: source)
        }
    }

    /// Reads ahead (putting everything back) until each selected stream whose first packet is
    /// known has shown one, and returns the streams whose first packet now comes later: a later
    /// time, or the same time further into the file (a subtitle's display set is several packets
    /// of one time, and a seek to the second loses the first).
    /// - Parameter unseenAreLost: count a stream that showed no packet at all as lost too (a seek
    ///   that left the demuxer at its end reads nothing).
    private func streamsThatLostTheirStart(unseenAreLost: Bool = false) throws(PlayheadError) -> [Int32] {
        var expected: [Int32: (time: Int64, position: Int64)] = [:]
        for stream in context.streams where selected.isEmpty || selected.contains(stream.pointee.index) {
            let type = stream.pointee.codecpar?.pointee.codec_type
            // A subtitle stream only when it is chosen (a subtitle read): a sparse one's first cue
            // may come minutes in, far past what a rewind for pictures and sound reads ahead.
            let chosenSubtitle = type == AVMEDIA_TYPE_SUBTITLE && selected.contains(stream.pointee.index)
            guard type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_VIDEO || chosenSubtitle else { continue }
            let index = stream.pointee.index
            let start = stream.pointee.start_time
            if let first = firstPackets[index] ?? (start == FFmpegConstants.noPTS ? nil : (start, -1)) { expected[index] = first }
        }
        var lost: [Int32] = []
        var read: [OwnedPacket] = []
        defer { pushedBack.insert(contentsOf: read, at: 0) }
        let scratch = try spareOrNew()
        defer { spare.append(scratch) }
        while !expected.isEmpty, read.count < 2048 {
            guard case .packet = readFromContainer(into: scratch.pointer) else { break }
            let p = scratch.pointer.pointee
            let holder: OwnedPacket
            do throws(PlayheadError) { holder = try spareOrNew() } catch {
                av_packet_unref(scratch.pointer)
                throw error
            }
            av_packet_move_ref(holder.pointer, scratch.pointer)
            read.append(holder)
            let time = p.pts != FFmpegConstants.noPTS ? p.pts : p.dts
            guard let first = expected[p.stream_index], time != FFmpegConstants.noPTS else { continue }
            if time > first.time || (time == first.time && first.position >= 0 && p.pos > first.position) { lost.append(p.stream_index) }
            expected[p.stream_index] = nil
        }
        if unseenAreLost { lost += expected.keys }
        return lost
    }

    private func spareOrNew() throws(PlayheadError) -> OwnedPacket {
        if let reused = spare.popLast() { return reused }
        return try OwnedPacket()
    }

    /// The index's timestamp of the last keyframe of `stream` at or before `timestamp` (for MP4 a
    /// decoding time), nil without an index entry there.
    func indexedKeyframe(stream: Int32, atOrBefore timestamp: Int64) -> Int64? {
        guard let st = context.stream(at: Int(stream)) else { return nil }
        let i = av_index_search_timestamp(st, timestamp, AVSEEK_FLAG_BACKWARD)
        guard i >= 0, let entry = avformat_index_get_entry(st, i) else { return nil }
        return entry.pointee.timestamp
    }

    /// The index timestamp of the last keyframe of `stream` before the keyframe that a seek to
    /// `timestamp` finds: one keyframe further back. Nil without an index, or at the first.
    func indexedKeyframe(stream: Int32, before timestamp: Int64) -> Int64? {
        guard let st = context.stream(at: Int(stream)) else { return nil }
        var i = av_index_search_timestamp(st, timestamp, AVSEEK_FLAG_BACKWARD)
        guard i >= 0, let current = avformat_index_get_entry(st, i)?.pointee.timestamp else { return nil }
        while i > 0 {
            i -= 1
            guard let entry = avformat_index_get_entry(st, i)?.pointee else { continue }
            if entry.flags & AVINDEX_KEYFRAME != 0, entry.timestamp < current { return entry.timestamp }
        }
        return nil
    }

    /// The index timestamp of the first keyframe of `stream` after `timestamp` (nil without one).
    func indexedKeyframe(stream: Int32, after timestamp: Int64) -> Int64? {
        guard timestamp < Int64.max, let st = context.stream(at: Int(stream)) else { return nil }
        let i = av_index_search_timestamp(st, timestamp + 1, 0)
        guard i >= 0, let entry = avformat_index_get_entry(st, i)?.pointee, entry.timestamp > timestamp else { return nil }
        return entry.timestamp
    }

    /// `true` when the container keeps an index of `stream` that decisions can be made from: the
    /// demuxer seeks by an index of its own (MP4, Matroska, AVI, FLV). Entries FFmpeg picks up
    /// while reading formats that are searched by timestamp (MPEG-PS, MPEG-TS, raw streams) cover
    /// only what was read, and do not count.
    func hasIndex(stream: Int32) -> Bool {
        guard let st = context.stream(at: Int(stream)), context.pointer.pointee.iformat?.pointee.read_seek != nil else { return false }
        return avformat_index_get_entries_count(st) > 0
    }

    /// Reads up to the next keyframe of `stream` that carries a presentation time — where decoding
    /// from here can begin — and puts everything read back. Returns its presentation and decoding
    /// times, or nil when none comes within a few hundred packets.
    func peekKeyframe(stream: Int32, scratch: OwnedPacket) throws(PlayheadError) -> (pts: Int64, dts: Int64)? {
        var found: (Int64, Int64)?
        var read: [OwnedPacket] = []
        defer { pushedBack.insert(contentsOf: read, at: 0) }
        while read.count < 512 {
            guard case .packet = self.read(into: scratch.pointer) else { break }
            let p = scratch.pointer.pointee
            let holder: OwnedPacket
            do throws(PlayheadError) {
                holder = if let reused = spare.popLast() { reused } else { try OwnedPacket() }
            } catch {
                av_packet_unref(scratch.pointer)
                throw error
            }
            av_packet_move_ref(holder.pointer, scratch.pointer)
            read.append(holder)
            if p.stream_index == stream, p.flags & AV_PKT_FLAG_KEY != 0, p.pts != FFmpegConstants.noPTS {
                found = (p.pts, p.dts)
                break
            }
        }
        return found
    }

    /// Reads packets of `stream` from here and returns the keyframes among them whose
    /// presentation time lies in `window`, stopping past its end. Nothing is put back: the caller
    /// seeks afterwards.
    func scanKeyframes(stream: Int32, in window: ClosedRange<Int64>, scratch: OwnedPacket) -> [Int64] {
        var found: [Int64] = []
        var read = 0
        while read < 4096, case .packet = self.read(into: scratch.pointer) {
            defer { av_packet_unref(scratch.pointer) }
            let p = scratch.pointer.pointee
            guard p.stream_index == stream else { continue }
            read += 1
            let decodeTime = p.dts != FFmpegConstants.noPTS ? p.dts : p.pts
            if decodeTime != FFmpegConstants.noPTS, decodeTime > window.upperBound { break }
            if p.flags & AV_PKT_FLAG_KEY != 0, p.pts != FFmpegConstants.noPTS, window.contains(p.pts) { found.append(p.pts) }
        }
        return found
    }

    private func dropPushedBack() {
        for held in pushedBack { av_packet_unref(held.pointer) }
        spare.append(contentsOf: pushedBack)
        pushedBack.removeAll()
    }

    // MARK: Local files

    /// Whether a byte can be read from the file at `path` (opened without blocking).
    private static func hasAByte(_ path: UnsafePointer<CChar>) -> Bool {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        var byte: UInt8 = 0
        return Glibc.read(descriptor, &byte, 1) == 1
    }

    /// The scheme of a name written like one of FFmpeg's own protocols (`concat:a|b`,
    /// `subfile:…`) — which is not on disk, and which Playhead does not open (only URLs with `//`,
    /// `pipe:` and `data:` go to FFmpeg's protocols).
    static func unsupportedProtocol(_ name: String) -> String? {
        guard !name.contains("://"), let colon = name.firstIndex(of: ":") else { return nil }
        let scheme = String(name[..<colon])
        guard scheme.count > 1, scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        var opaque: UnsafeMutableRawPointer?
        while let protocolName = avio_enum_protocols(&opaque, 0) {
            if String(cString: protocolName) == scheme { return scheme }
        }
        return nil
    }

    /// Gives the clear errors FFmpeg would blur: missing, a directory, unreadable, empty.
    static func checkLocalFile(_ input: MediaInput) throws(PlayheadError) {
        let path = input.name
        if input.hasNUL {
            throw PlayheadError(code: .fileNotFound, message: "no such file: the path holds a NUL byte", file: path)
        }
        var info = stat()
        guard try input.withLocation({ stat($0, &info) }) == 0 else {
            let failure = errno
            switch failure {
            case EACCES:
                throw PlayheadError(code: .permissionDenied, message: "permission denied (a folder on the path cannot be searched)", file: path)
            case ELOOP:
                throw PlayheadError(code: .fileNotFound, message: "the path's symbolic links loop (or nest too deep): no file at its end", file: path)
            case ENAMETOOLONG:
                throw PlayheadError(
                    code: .fileNotFound,
                    message:
                        "the path is too long for the file system (\(input.location.count) bytes; at most \(PATH_MAX), each name at most \(NAME_MAX))",
                    file: path)
            case ENOTDIR:
                throw PlayheadError(code: .fileNotFound, message: "no such file: a part of the path is a file, not a folder", file: path)
            default:
                if let scheme = unsupportedProtocol(path) {
                    throw PlayheadError(
                        code: .fileNotFound,
                        message:
                            "no such file, and `\(scheme):` (an FFmpeg protocol) is not a source Playhead opens: give each file as a source of its own, or a URL",
                        file: path)
                }
                throw PlayheadError(code: .fileNotFound, message: "no such file", file: path)
            }
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw PlayheadError(code: .notARegularFile, message: "is a directory, not a media file", file: path)
        }
        if (info.st_mode & S_IFMT) == S_IFREG {
            guard try input.withLocation({ access($0, R_OK) }) == 0 else {
                throw PlayheadError(code: .permissionDenied, message: "permission denied", file: path)
            }
            // A size of 0 is empty unless a byte can be read (a /proc or /sys file tells no size).
            if info.st_size == 0, try !input.withLocation({ hasAByte($0) }) {
                throw PlayheadError(code: .emptyFile, message: "the file is empty", file: path)
            }
        }
    }
}

extension Demuxer {
    /// The time of the last keyframe of the video stream at or before `time`, from the index
    /// (nil without an index entry there): what decoding to `time` starts from.
    package func keyframe(atOrBefore time: MediaTime) -> MediaTime? {
        guard let video, hasIndex(stream: video.index) else { return nil }
        let tb = video.timeBase.ffmpeg
        return indexedKeyframe(stream: video.index, atOrBefore: time.ffmpegTimestamp(in: tb, rounding: .down)).map {
            MediaTime(ffmpegTimestamp: $0, timeBase: tb)
        }
    }
}
