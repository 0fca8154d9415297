internal import CFFmpeg
import Glibc

/// The one libavformat muxer owner: every file, fragmented file, stream and protocol output
/// Playhead writes (WAV, Y4M, MP4 exports, a channel's recordings, standard output, RTMP, SRT,
/// UDP and HLS, subtitle files) is opened, given its streams, headed, written, completed and
/// given up here, so a rule about any of them holds for all of them.
///
/// - A file goes through custom I/O into a ``SafeFile`` (FFmpeg never opens the path itself): a
///   temporary name until it is complete, then renamed into place; given up, it keeps its valid
///   part (``keepWhatWasWritten()``, by ``Container/validPrefix``) or is removed.
/// - An MP4 file is written fragmented (a killed run leaves a file that plays up to its last
///   fragment) and, once complete, copied into a plain MP4 whose edit lists hide the encoders'
///   delays (``MP4Rewrite``): an export and a channel's recording alike.
/// - A network output is opened by FFmpeg's protocol (`avio_open2`); HLS by the `hls` muxer itself,
///   which writes its segments and playlists. Both ask an ``OutputDeadline`` through the interrupt
///   callback, so a peer that stops reading never holds the writer.
///
/// Not `Sendable`: used by the one thread that feeds it.
final class Muxer {
    /// What is written: the libavformat muxer, and the rules that follow from it.
    enum Container: String, Sendable, Hashable {
        case wav, y4m, mp4, mpegts, flv, hls
        /// Text subtitles: SubRip, WebVTT, ASS.
        case srt, webvtt, ass
        /// A plain (unfragmented) MP4: what an MP4 file becomes when complete (``MP4Rewrite``).
        case plainMP4

        /// libavformat's name for the muxer.
        var formatName: String {
            switch self {
            case .wav: return "wav"
            case .y4m: return "yuv4mpegpipe"
            case .mp4, .plainMP4: return "mp4"
            case .mpegts: return "mpegts"
            case .flv: return "flv"
            case .hls: return "hls"
            case .srt: return "srt"
            case .webvtt: return "webvtt"
            case .ass: return "ass"
            }
        }

        /// The options every header of this container is written with.
        var headerOptions: [String: String] {
            switch self {
            // Fragmented, with the header held until the first fragment: it then carries edit
            // lists (the picture's reordering delay, the AAC priming), and a file cut after any
            // fragment is valid.
            case .mp4: return ["movflags": "frag_keyframe+delay_moov+default_base_moof"]
            default: return [:]
            }
        }

        /// MPEG-TS is a sequence of 188-byte packets: a file cut on a packet's boundary is valid.
        static let transportPacketSize: Int64 = 188

        /// How much of a file of this container, `size` bytes written at `path`, is valid when cut
        /// there: the last whole fragment of an MP4 (``MP4Boxes``), the last whole packet of an
        /// MPEG-TS; nil for a container whose cut file is not valid (its header says how long it is),
        /// or when nothing is. Safe from any thread (it reads the file).
        func validPrefix(of path: String, size: Int64) -> Int64? {
            switch self {
            case .mp4: return size > 0 ? MP4Boxes.validPrefix(of: path, size: size) : nil
            case .mpegts: return size >= Self.transportPacketSize ? size / Self.transportPacketSize * Self.transportPacketSize : nil
            default: return nil
            }
        }
    }

    /// Where it writes.
    enum Destination {
        /// A file written safely; `replacing` false never replaces what is at `path` (the
        /// completion fails with `output.outputExists`, or with `keptBeside` the file takes a free
        /// name beside it: a recording is never thrown away for its name).
        case file(path: String, replacing: Bool, keptBeside: Bool = false)
        /// An open descriptor written as a stream (standard output); never closed.
        case descriptor(Int32, name: String)
        /// A URL FFmpeg's protocols open (rtmp, srt, udp), within `openTimeout` seconds
        /// (`rw_timeout` for each later read or write of TCP based protocols).
        case network(url: String, deadline: OutputDeadline, openTimeout: Double)
        /// A playlist the muxer writes itself with its segments beside it (HLS): every file it
        /// opens goes through `folder`'s hooks.
        case hls(HLSFolder, deadline: OutputDeadline)
    }

    let container: Container
    /// What errors call the output.
    let name: String
    let context: UnsafeMutablePointer<AVFormatContext>
    /// The file or stream written through custom I/O (nil: FFmpeg's protocols write).
    private let file: (any MuxTarget)?
    private var io: UnsafeMutablePointer<AVIOContext>?
    /// The protocol context opened with `avio_open2` (network outputs), closed here.
    private var protocolIO: UnsafeMutablePointer<AVIOContext>?
    /// Kept alive while the context may call it.
    private let deadline: OutputDeadline?
    /// The HLS files' owner, whose hooks see every file the muxer opens.
    private var hls: HLSFolder?
    private var streamCount = 0
    private(set) var packetsWritten = 0
    private var headerWritten = false
    private var closed = false
    /// A write error the I/O callback met (FFmpeg only sees its error number).
    fileprivate var ioError: PlayheadError?
    private static let bufferSize: Int32 = 1 << 16

    /// A muxer of `container` writing to `destination`.
    /// - Throws: `output.outputExists` for a file that may not replace what is at its path (at
    ///   once, rather than after all the work); `output.outputOpenFailed` when the muxer, the file
    ///   or the connection cannot be made (a network peer that does not answer within its time).
    init(_ container: Container, to destination: Destination) throws(PlayheadError) {
        self.container = container
        var target: (any MuxTarget)?
        var url: String?
        hls = nil
        switch destination {
        case .file(let path, let replacing, let keptBeside):
            name = path
            var info = stat()
            if !replacing, !keptBeside, lstat(path, &info) == 0 {
                throw PlayheadError(code: .outputExists, message: "\(path) already exists and is not this run's: left alone", file: path)
            }
            let safe = try SafeFile.create(for: path)
            safe.replacesExisting = replacing
            safe.keepsBesideWhenTaken = keptBeside
            target = safe
            deadline = nil
        case .descriptor(let descriptor, let streamName):
            name = streamName
            target = StreamTarget(descriptor: descriptor, name: streamName)
            deadline = nil
        case .network(let location, let given, _):
            name = SourceRedaction.redacted(location)
            url = location
            deadline = given
        case .hls(let folder, let given):
            name = folder.playlist
            url = folder.playlist
            deadline = given
            hls = folder
        }
        FFmpegLogging.installCallback()
        var allocated: UnsafeMutablePointer<AVFormatContext>?
        let result = avformat_alloc_output_context2(&allocated, nil, container.formatName, url)
        guard result >= 0, let allocated else {
            target?.discard()
            throw FFmpegError.error(
                .outputOpenFailed, "could not set up the \(container.formatName) muxer", function: "avformat_alloc_output_context2", result: result,
                file: name)
        }
        context = allocated
        file = target
        if let deadline { allocated.pointee.interrupt_callback = deadline.callback }
        // A process that must stop at once keeps what a cut cannot spoil, as a give-up does.
        if let safe = target as? SafeFile, container == .mp4 || container == .mpegts {
            let temporary = safe.temporaryPath
            safe.keepOnHardExit { size in container.validPrefix(of: temporary, size: size) }
        }
        hls?.attach(to: allocated)
        do throws(PlayheadError) {
            if target != nil { try attachCustomIO() }
            if case .network(let location, let deadline, let openTimeout) = destination {
                try openProtocol(location, deadline: deadline, openTimeout: openTimeout)
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Where the output ends up (the path of a file, the redacted name of anything else).
    var path: String { file?.path ?? name }

    // MARK: Streams

    /// Adds a stream described by `describe` (which fills in its codec parameters), counted in
    /// `timeBase` (the muxer may choose another in the header).
    /// - Returns: the stream's index.
    @discardableResult
    func addStream(
        timeBase: AVRational, _ describe: (UnsafeMutablePointer<AVCodecParameters>) throws(PlayheadError) -> Void
    ) throws(PlayheadError) -> Int32 {
        guard !headerWritten, let stream = avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar else {
            throw PlayheadError(code: .outputOpenFailed, message: "could not add a stream", file: name)
        }
        try describe(parameters)
        stream.pointee.time_base = timeBase
        streamCount += 1
        return stream.pointee.index
    }

    /// Adds a stream of what `encoder` produces.
    /// - Returns: the stream's index.
    @discardableResult
    func addStream(from encoder: UnsafeMutablePointer<AVCodecContext>) throws(PlayheadError) -> Int32 {
        try addStream(timeBase: encoder.pointee.time_base) { (parameters) throws(PlayheadError) in
            let result = avcodec_parameters_from_context(parameters, encoder)
            guard result >= 0 else {
                throw FFmpegError.error(
                    .outputOpenFailed, "could not describe the stream", function: "avcodec_parameters_from_context", result: result, file: name)
            }
        }
    }

    /// Adds a stream with a copy of `source`'s parameters (packets copied from another file).
    /// - Returns: the stream's index.
    @discardableResult
    func addStream(copying source: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational) throws(PlayheadError) -> Int32 {
        try addStream(timeBase: timeBase) { (parameters) throws(PlayheadError) in
            let result = avcodec_parameters_copy(parameters, source)
            guard result >= 0 else {
                throw FFmpegError.error(
                    .outputOpenFailed, "could not describe the stream", function: "avcodec_parameters_copy", result: result, file: name)
            }
            parameters.pointee.codec_tag = 0
        }
    }

    /// The time base stream `index` is counted in once the header is written.
    func timeBase(of index: Int32) -> AVRational {
        guard index >= 0, index < Int32(context.pointee.nb_streams), let stream = context.pointee.streams[Int(index)] else {
            return AVRational(num: 1, den: 1)
        }
        return stream.pointee.time_base
    }

    // MARK: Writing

    /// Writes the header, with the container's own options and `options` (the caller's win).
    /// - Throws: `output.outputOpenFailed`, or the write's failure (`output.diskFull`, …).
    func writeHeader(options: [String: String] = [:]) throws(PlayheadError) {
        var dictionary: OpaquePointer?
        for (key, value) in container.headerOptions.merging(options, uniquingKeysWith: { $1 }) { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        let result = avformat_write_header(context, &dictionary)
        guard result >= 0 else {
            throw failure("could not write the header of", code: .outputOpenFailed, function: "avformat_write_header", result: result)
        }
        headerWritten = true
        if let failed = hls?.takeFailure() { throw failed }
    }

    /// Writes `packet` to stream `index`, its timestamps in `timeBase` (nil: already in the
    /// stream's). With several streams the muxer holds packets back as needed to interleave them
    /// by time and takes the packet's data (the packet is left blank); with one, it is written as
    /// it comes.
    /// - Throws: `output.writeFailed` (`output.diskFull`, `io.timedOut` past the deadline, …).
    func write(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational? = nil) throws(PlayheadError) {
        packet.pointee.stream_index = index
        if let timeBase { av_packet_rescale_ts(packet, timeBase, self.timeBase(of: index)) }
        let result = streamCount > 1 ? av_interleaved_write_frame(context, packet) : av_write_frame(context, packet)
        guard result >= 0 else {
            throw failure("could not write", function: streamCount > 1 ? "av_interleaved_write_frame" : "av_write_frame", result: result)
        }
        // The HLS muxer says nothing of a segment or playlist it could not write: its hooks do.
        if let failed = hls?.takeFailure() { throw failed }
        packetsWritten += 1
    }

    // MARK: Ending

    /// Completes the output: its trailer, then a file takes its name (an MP4 file is first copied
    /// into a plain MP4, see the type's description; `ends` gives, per stream index and in the
    /// stream's time base, where each must end there). A muxer whose header was never written
    /// leaves nothing behind.
    /// - Returns: where the output ended up (a file kept beside a taken name says so).
    /// - Throws: the trailer's or the completion's failure; the output is then removed, or kept
    ///   as far as it is valid when it is a recording (see ``keepWhatWasWritten()``).
    @discardableResult
    func finish(ends: [Int32: Int64] = [:]) throws(PlayheadError) -> String {
        guard headerWritten, !closed else {
            close()
            return path
        }
        guard container == .mp4, let safe = file as? SafeFile else {
            try writeTrailer()
            let kept = try completeFile()
            close()
            return kept
        }
        return try finish(copying: ends, from: safe, cut: false)
    }

    /// Writes the trailer, then copies the file into its final form (a plain MP4, or a WAV) under
    /// its name (``MP4Rewrite``): each stream of `ends` ends there (`cut`: nothing after it is
    /// kept). When the copy cannot be made (a full disk), the file itself takes the name.
    private func finish(copying ends: [Int32: Int64], from safe: SafeFile, cut: Bool) throws(PlayheadError) -> String {
        try writeTrailer()
        do throws(PlayheadError) {
            let copy = try Muxer(
                container == .wav ? .wav : .plainMP4,
                to: .file(path: safe.path, replacing: safe.replacesExisting, keptBeside: safe.keepsBesideWhenTaken))
            try MP4Rewrite.copy(from: safe.temporaryPath, into: copy, ends: ends, cut: cut)
            let kept = try copy.finish()
            safe.discard()
            close()
            return kept
        } catch {
            // The name was taken meanwhile, or the process is stopping: nothing takes it.
            if error.code == .outputExists || error.code == .cancelled {
                safe.discard()
                close()
                throw error
            }
            // The copy could not be made (a full disk): the fragmented file, whole, takes the name.
            let kept = try completeFile()
            close()
            return kept
        }
    }

    /// Gives up: what was written is kept as a valid file under the final name when there is any
    /// (returns true: the file is partial), removed otherwise. After a failed write (a full disk)
    /// no trailer can be written: the file is cut back to its valid part — the last whole
    /// fragment of an MP4, the last whole packet of an MPEG-TS — which also frees the space a torn
    /// end took. A stream or a protocol output is closed.
    ///
    /// With `cuts` (per stream index, in the stream's time base), a file that can be completed is
    /// copied instead into one that holds each of those streams only up to its cut (a stopped
    /// export's sound to the end of its last frame): an MP4 into a plain MP4, a WAV into a WAV
    /// (``MP4Rewrite``); when the copy cannot be made, the file is kept whole.
    @discardableResult
    func keepWhatWasWritten(cuts: [Int32: Int64] = [:]) -> Bool {
        guard let file, headerWritten, packetsWritten > 0, !closed else {
            close()
            return false
        }
        if ioError == nil {
            do throws(PlayheadError) {
                if !cuts.isEmpty, container == .mp4 || container == .wav, let safe = file as? SafeFile {
                    _ = try finish(copying: cuts, from: safe, cut: true)
                    return true
                }
                try writeTrailer()
                _ = try completeFile()
                close()
                return true
            } catch {
                close()
                return false
            }
        }
        releaseIO()
        guard let length = validPrefix(of: file), length > 0, file.truncate(to: length) else {
            close()
            return false
        }
        do throws(PlayheadError) {
            _ = try file.complete()
            close()
            return true
        } catch {
            close()
            return false
        }
    }

    /// How much of what was written is a valid file after a failed write (nil: none is).
    private func validPrefix(of file: any MuxTarget) -> Int64? {
        guard let safe = file as? SafeFile else { return nil }
        return container.validPrefix(of: safe.temporaryPath, size: file.size)
    }

    /// The one place a trailer is written.
    private func writeTrailer() throws(PlayheadError) {
        let result = av_write_trailer(context)
        if let io { avio_flush(io) }
        if let failed = hls?.takeFailure() {
            releaseIO()
            throw failed
        }
        guard result >= 0, ioError == nil else {
            let error = failure("could not complete", function: "av_write_trailer", result: result)
            releaseIO()
            file?.discard()
            throw error
        }
    }

    /// The file takes its name (nothing for a stream or a protocol output).
    private func completeFile() throws(PlayheadError) -> String {
        releaseIO()
        guard let file else { return name }
        return try file.complete()
    }

    private func failure(_ what: String, code: PlayheadError.Code = .writeFailed, function: String, result: Int32) -> PlayheadError {
        if let ioError { return ioError }
        if let failed = hls?.takeFailure() { return failed }
        if result == FFmpegError.exit, let deadline, !deadline.isStopping {
            return PlayheadError(code: .timedOut, message: "\(what) \(name): no progress within its time", file: name)
        }
        return FFmpegError.error(code, "\(what) \(name)", function: function, result: result, file: name)
    }

    // MARK: I/O

    private func attachCustomIO() throws(PlayheadError) {
        guard let buffer = av_malloc(Int(Self.bufferSize)) else {
            throw PlayheadError(code: .outputOpenFailed, message: "out of memory for the output buffer", file: name)
        }
        io = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Self.bufferSize, 1, Unmanaged.passUnretained(self).toOpaque(),
            nil,
            { opaque, data, size in
                guard let opaque, let data, size > 0 else { return 0 }
                return Unmanaged<Muxer>.fromOpaque(opaque).takeUnretainedValue().writeOut(data, size: size)
            },
            { opaque, offset, whence in
                guard let opaque else { return -1 }
                let muxer = Unmanaged<Muxer>.fromOpaque(opaque).takeUnretainedValue()
                guard let file = muxer.file else { return -1 }
                if whence & AVSEEK_SIZE != 0 { return file.size }
                return file.seek(offset, whence: whence & ~AVSEEK_FORCE)
            })
        guard let io else {
            av_free(buffer)
            throw PlayheadError(code: .outputOpenFailed, message: "could not set up output I/O", file: name)
        }
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
    }

    /// Writes what the muxer's I/O hands over; a failure is kept (FFmpeg sees only EIO).
    fileprivate func writeOut(_ data: UnsafeMutablePointer<UInt8>, size: Int32) -> Int32 {
        guard let file else { return playhead_averror(EIO) }
        do throws(PlayheadError) {
            try file.write(UnsafeRawBufferPointer(start: data, count: Int(size)))
            return size
        } catch {
            ioError = ioError ?? error
            return playhead_averror(EIO)
        }
    }

    /// Connects (the caller arms `deadline` for the open).
    private func openProtocol(_ location: String, deadline: OutputDeadline, openTimeout: Double) throws(PlayheadError) {
        var opened: UnsafeMutablePointer<AVIOContext>?
        var callback = deadline.callback
        var options: OpaquePointer?
        // Microseconds a read or write may block before it fails (TCP based protocols).
        av_dict_set(&options, "rw_timeout", String(Int(openTimeout * 1_000_000)), 0)
        defer { av_dict_free(&options) }
        let result = avio_open2(&opened, location, AVIO_FLAG_WRITE, &callback, &options)
        guard result >= 0, let opened else {
            throw FFmpegError.error(.outputOpenFailed, "could not connect to", function: "avio_open2", result: result, file: name)
        }
        protocolIO = opened
        context.pointee.pb = opened
    }

    /// Lets go of the custom I/O (its buffer) and closes a protocol's connection.
    private func releaseIO() {
        if let io {
            var buffer: UnsafeMutablePointer<UInt8>? = io.pointee.buffer
            av_freep(&buffer)
            var p: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&p)
            self.io = nil
            context.pointee.pb = nil
        }
        if protocolIO != nil {
            avio_closep(&protocolIO)
            context.pointee.pb = nil
        }
    }

    /// Frees everything; a file not completed is removed.
    private func close() {
        guard !closed else { return }
        closed = true
        releaseIO()
        avformat_free_context(context)
        file?.discard()
    }
}
