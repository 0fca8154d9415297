internal import CFFmpeg
import Glibc

/// A libavformat muxer writing one file through custom I/O into a ``SafeFile``: FFmpeg never opens
/// a path itself, so the file is created the safe way, synced, and renamed into place only when
/// complete — or, given up part way, kept as a valid (partial) file or removed.
///
/// Not `Sendable`: used by the one thread that feeds the sink.
package final class MuxedFile {
    let file: any MuxTarget
    let context: UnsafeMutablePointer<AVFormatContext>
    private var io: UnsafeMutablePointer<AVIOContext>?
    private(set) var packetsWritten = 0
    private var headerWritten = false
    /// A write error the I/O callback met (FFmpeg only sees its error number).
    fileprivate var ioError: PlayheadError?
    /// Where the latest fragment a fragmented MP4 began writing starts in the file (0: none yet):
    /// every byte before it belongs to the header and to whole fragments, so a file given up on a
    /// write error (a full disk) is valid when cut there. Told by the muxer's data markers.
    fileprivate var fragmentStart: Int64 = 0
    private static let bufferSize: Int32 = 1 << 16

    /// A muxer of `format` (`wav`, `yuv4mpegpipe`, `mp4`, …) for `path`.
    /// With `replacing` false, a file already at `path` is left alone: the muxer is refused at once
    /// (`output.outputExists`) rather than after all the work, and a file that takes the name meanwhile
    /// makes the completion fail the same way.
    package convenience init(path: String, format: String, replacing: Bool = true) throws(PlayheadError) {
        var info = stat()
        if !replacing, lstat(path, &info) == 0 {
            throw PlayheadError(code: .outputExists, message: "\(path) already exists and is not this run's: left alone", file: path)
        }
        try self.init(format: format, name: path) { () throws(PlayheadError) in
            let file = try SafeFile.create(for: path)
            file.replacesExisting = replacing
            return file
        }
    }

    /// A muxer of `format` streaming into `descriptor` (a format that never seeks back:
    /// `yuv4mpegpipe`, fragmented `mp4`).
    package convenience init(descriptor: Int32, name: String, format: String) throws(PlayheadError) {
        try self.init(format: format, name: name) { StreamTarget(descriptor: descriptor, name: name) }
    }

    private init(format: String, name path: String, target: () throws(PlayheadError) -> any MuxTarget) throws(PlayheadError) {
        var allocated: UnsafeMutablePointer<AVFormatContext>?
        let result = avformat_alloc_output_context2(&allocated, nil, format, nil)
        guard result >= 0, let allocated else {
            throw FFmpegError.error(
                .outputOpenFailed, "could not set up the \(format) muxer", function: "avformat_alloc_output_context2", result: result, file: path)
        }
        context = allocated
        do throws(PlayheadError) {
            file = try target()
        } catch {
            avformat_free_context(allocated)
            throw error
        }
        guard let buffer = av_malloc(Int(Self.bufferSize)) else {
            avformat_free_context(allocated)
            throw PlayheadError(code: .outputOpenFailed, message: "out of memory for the output buffer", file: path)
        }
        io = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Self.bufferSize, 1, Unmanaged.passUnretained(self).toOpaque(),
            nil,
            { opaque, data, size in
                guard let opaque, let data, size > 0 else { return 0 }
                return Unmanaged<MuxedFile>.fromOpaque(opaque).takeUnretainedValue().writeOut(data, size: size)
            },
            { opaque, offset, whence in
                guard let opaque else { return -1 }
                let muxed = Unmanaged<MuxedFile>.fromOpaque(opaque).takeUnretainedValue()
                if whence & AVSEEK_SIZE != 0 { return muxed.file.size }
                return muxed.file.seek(offset, whence: whence & ~AVSEEK_FORCE)
            })
        guard let io else {
            av_free(buffer)
            avformat_free_context(allocated)
            throw PlayheadError(code: .outputOpenFailed, message: "could not set up output I/O", file: path)
        }
        // With a typed write, the buffer is handed over at each marker the muxer sets (the MP4
        // muxer sets one where each fragment begins), tagged with the marker's kind.
        io.pointee.write_data_type = { opaque, data, size, type, _ in
            guard let opaque, let data, size > 0 else { return 0 }
            let muxed = Unmanaged<MuxedFile>.fromOpaque(opaque).takeUnretainedValue()
            if muxed.ioError == nil, type == AVIO_DATA_MARKER_SYNC_POINT || type == AVIO_DATA_MARKER_BOUNDARY_POINT {
                let here = muxed.file.seek(0, whence: SEEK_CUR)
                if here > 0 { muxed.fragmentStart = here }
            }
            return muxed.writeOut(data, size: size)
        }
        allocated.pointee.pb = io
        allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
    }

    /// Writes what the muxer's I/O hands over; a failure is kept (FFmpeg sees only EIO).
    fileprivate func writeOut(_ data: UnsafeMutablePointer<UInt8>, size: Int32) -> Int32 {
        do throws(PlayheadError) {
            try file.write(UnsafeRawBufferPointer(start: data, count: Int(size)))
            return size
        } catch {
            ioError = ioError ?? error
            return playhead_averror(EIO)
        }
    }

    deinit {
        release()
        avformat_free_context(context)
        file.discard()
    }

    var path: String { file.path }

    package func writeHeader(options: [String: String] = [:]) throws(PlayheadError) {
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        let result = avformat_write_header(context, &dictionary)
        guard result >= 0 else { throw failure("could not write the header", function: "avformat_write_header", result: result) }
        headerWritten = true
    }

    /// Writes a packet (its timestamps in the stream's time base).
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        let result = av_write_frame(context, packet)
        guard result >= 0 else { throw failure("could not write", function: "av_write_frame", result: result) }
        packetsWritten += 1
    }

    /// Writes a packet of one of several streams: the muxer holds packets back as needed to
    /// interleave the streams by time (it takes the packet's data; the packet is left blank).
    func writeInterleaved(_ packet: UnsafeMutablePointer<AVPacket>) throws(PlayheadError) {
        let result = av_interleaved_write_frame(context, packet)
        guard result >= 0 else { throw failure("could not write", function: "av_interleaved_write_frame", result: result) }
        packetsWritten += 1
    }

    /// Writes the trailer and gives the file its final name.
    package func finish() throws(PlayheadError) {
        guard headerWritten else {
            file.discard()
            return
        }
        let result = av_write_trailer(context)
        if let io { avio_flush(io) }
        guard result >= 0, ioError == nil else {
            let error = failure("could not complete the file", function: "av_write_trailer", result: result)
            release()
            file.discard()
            throw error
        }
        release()
        try file.complete()
    }

    /// Writes the trailer, then copies the file into a plain MP4 at the final name (see
    /// ``MP4Rewrite``): the copy takes the name, the fragmented file is removed. When the copy
    /// cannot be made (a full disk), the fragmented file — whole — takes the name instead. A
    /// stream target (standard output) is only finished.
    package func finishRewrittenAsPlainMP4(ends: [Int32: Int64]) throws(PlayheadError) {
        guard headerWritten, let safe = file as? SafeFile else { return try finish() }
        let result = av_write_trailer(context)
        if let io { avio_flush(io) }
        guard result >= 0, ioError == nil else {
            let error = failure("could not complete the file", function: "av_write_trailer", result: result)
            release()
            file.discard()
            throw error
        }
        release()
        do throws(PlayheadError) {
            let plain = try MuxedFile(path: safe.path, format: "mp4", replacing: safe.replacesExisting)
            try MP4Rewrite.copy(from: safe.temporaryPath, into: plain, ends: ends)
            try plain.finish()
            safe.discard()
        } catch {
            // The name was taken meanwhile, or the process is stopping: nothing takes it.
            if error.code == .outputExists || error.code == .cancelled {
                safe.discard()
                throw error
            }
            try safe.complete()
        }
    }

    /// Gives up: what was written is kept as a valid file under the final name when there is any
    /// (returns true: the file is partial), removed otherwise.
    @discardableResult
    package func keepWhatWasWritten() -> Bool {
        guard headerWritten, packetsWritten > 0 else {
            release()
            file.discard()
            return false
        }
        if ioError == nil {
            do throws(PlayheadError) {
                try finish()
                return true
            } catch {
                return false
            }
        }
        // A write failed (a full disk): the trailer cannot be written either. A fragmented file is
        // valid up to where its last fragment began; cut there (which also frees the space the
        // torn fragment took), it takes its name as a shorter file.
        release()
        guard fragmentStart > 0, file.truncate(to: fragmentStart) else {
            file.discard()
            return false
        }
        do throws(PlayheadError) {
            try file.complete()
            return true
        } catch {
            return false
        }
    }

    private func failure(_ what: String, function: String, result: Int32) -> PlayheadError {
        if let ioError { return ioError }
        return FFmpegError.error(.writeFailed, "\(what) \(file.path)", function: function, result: result, file: file.path)
    }

    private func release() {
        if let io {
            var buffer: UnsafeMutablePointer<UInt8>? = io.pointee.buffer
            av_freep(&buffer)
            var p: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&p)
            self.io = nil
            context.pointee.pb = nil
        }
    }
}
