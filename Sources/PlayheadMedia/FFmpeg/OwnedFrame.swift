internal import CFFmpeg

/// Owns an `AVFrame` (and through it, its buffers); freed when released. One per pipeline slot,
/// reused for every frame: never allocated per frame.
package final class OwnedFrame {
    let pointer: UnsafeMutablePointer<AVFrame>

    /// An empty frame; `outOfMemory` (a typed error, never a trap) when even its small struct
    /// cannot be allocated (a memory limit reached).
    package init() throws(PlayheadError) {
        guard let frame = av_frame_alloc() else { throw .outOfMemory("av_frame_alloc") }
        pointer = frame
    }

    /// A frame with its own buffers of the given size and format, filled with black (`filled`
    /// false: left as allocated, for a frame drawn over whole at once).
    convenience init(size: PixelSize, format: AVPixelFormat, filled: Bool = true) throws(PlayheadError) {
        try self.init()
        pointer.pointee.width = Int32(size.width)
        pointer.pointee.height = Int32(size.height)
        pointer.pointee.format = format.rawValue
        let result = av_frame_get_buffer(pointer, 0)
        guard result >= 0 else {
            throw FFmpegError.error(
                .conversionFailed, "could not allocate a \(size) canvas", function: "av_frame_get_buffer", result: result, file: nil)
        }
        if filled { fillBlack() }
    }

    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }

    /// Makes this frame another reference to `other`'s buffers (its own are let go): a frame kept
    /// beyond the life of a frame that is reused.
    package func reference(_ other: OwnedFrame) throws(PlayheadError) {
        av_frame_unref(pointer)
        let result = av_frame_ref(pointer, other.pointer)
        guard result >= 0 else { throw .outOfMemory("av_frame_ref") }
    }

    package var size: PixelSize { PixelSize(width: Int(pointer.pointee.width), height: Int(pointer.pointee.height)) }
    var format: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }

    /// FFmpeg's name for the frame's pixel format (`yuv420p`, `rgb24`, …).
    package var formatName: String { FrameConverter.name(format) }

    /// A frame with its own buffers of `size` in `format`, filled with black unless `filled` is false.
    /// - Throws: `output.conversionFailed` when the buffers cannot be allocated.
    package convenience init(size: PixelSize, format: PictureFormat, filled: Bool = true) throws(PlayheadError) {
        try self.init(size: size, format: format.ffmpeg, filled: filled)
    }

    /// The frame's layout.
    package var pictureFormat: PictureFormat { PictureFormat(format) }

    /// Lets go of the frame's buffers (the frame itself is kept, for the next picture).
    package func unref() { av_frame_unref(pointer) }

    /// Makes this frame hold `picture`, of this frame's size and format: when its producer allows
    /// (``VideoFrame/sharable``), another reference to its buffers (no pixel copied: the producer
    /// draws its next picture into buffers of its own, see ``renewIfShared()``); otherwise a copy
    /// of its pixels into buffers this frame alone holds (kept from the last copy).
    /// - Parameters:
    ///   - picture: the picture to hold.
    ///   - file: the output named in an error.
    /// - Throws: `output.encodeFailed` when `picture`'s size or format differ from this frame's, or
    ///   the buffers cannot be allocated or the picture not copied.
    package func hold(_ picture: VideoFrame, file: String?) throws(PlayheadError) {
        let frame = UnsafePointer(picture.frame)
        let sharing = picture.sharable
        let (width, height, format) = (pointer.pointee.width, pointer.pointee.height, pointer.pointee.format)
        guard frame.pointee.width == width, frame.pointee.height == height, frame.pointee.format == format else {
            let given = "\(frame.pointee.width)x\(frame.pointee.height) \(FrameConverter.name(AVPixelFormat(rawValue: frame.pointee.format)))"
            throw PlayheadError(
                code: .encodeFailed, message: "a \(given) frame where \(width)x\(height) \(formatName) frames were begun", file: file)
        }
        if sharing {
            av_frame_unref(pointer)
            let result = av_frame_ref(pointer, frame)
            guard result >= 0 else {
                restore(width, height, format)
                throw FFmpegError.error(.encodeFailed, "could not hold the frame", function: "av_frame_ref", result: result, file: file)
            }
            return
        }
        if pointer.pointee.buf.0 == nil || av_frame_is_writable(pointer) == 0 {
            av_frame_unref(pointer)
            restore(width, height, format)
            let result = av_frame_get_buffer(pointer, 0)
            guard result >= 0 else {
                restore(width, height, format)
                throw FFmpegError.error(.encodeFailed, "could not allocate a frame", function: "av_frame_get_buffer", result: result, file: file)
            }
        }
        let copied = av_frame_copy(pointer, frame)
        guard copied >= 0 else {
            throw FFmpegError.error(.encodeFailed, "could not copy the frame", function: "av_frame_copy", result: copied, file: file)
        }
    }

    /// Lets go of the frame's buffers when another frame references them too (a picture held by
    /// ``hold(_:file:)`` once it is encoded), so that their producer may draw into them
    /// again; buffers this frame alone holds are kept for the next copy. Its size and format stay.
    package func releaseShared() {
        guard pointer.pointee.buf.0 != nil, av_frame_is_writable(pointer) == 0 else { return }
        let (width, height, format) = (pointer.pointee.width, pointer.pointee.height, pointer.pointee.format)
        av_frame_unref(pointer)
        restore(width, height, format)
    }

    /// Gives the frame buffers no other frame references, of its size and format, before it is
    /// drawn over whole: a consumer that holds its last picture (``hold(_:file:)``) keeps
    /// it, and the frame takes new buffers (their pixels undefined) instead of waiting or copying.
    /// - Throws: `output.conversionFailed` when new buffers cannot be allocated.
    package func renewIfShared() throws(PlayheadError) {
        guard av_frame_is_writable(pointer) == 0 else { return }
        let (width, height, format) = (pointer.pointee.width, pointer.pointee.height, pointer.pointee.format)
        av_frame_unref(pointer)
        restore(width, height, format)
        let result = av_frame_get_buffer(pointer, 0)
        guard result >= 0 else {
            restore(width, height, format)
            throw FFmpegError.error(
                .conversionFailed, "could not allocate a \(width)x\(height) canvas", function: "av_frame_get_buffer", result: result, file: nil)
        }
    }

    /// Whether another frame references this frame's buffers (a picture held uncopied).
    package var isShared: Bool { pointer.pointee.buf.0 != nil && av_frame_is_writable(pointer) == 0 }

    /// Sets the geometry `av_frame_unref` resets.
    private func restore(_ width: Int32, _ height: Int32, _ format: Int32) {
        pointer.pointee.width = width
        pointer.pointee.height = height
        pointer.pointee.format = format
    }

    /// Whether `other` holds the same pixel buffers as this frame (a reference, not a copy).
    package func sharesBuffers(with other: OwnedFrame) -> Bool {
        pointer.pointee.buf.0 != nil && pointer.pointee.buf.0?.pointee.data == other.pointer.pointee.buf.0?.pointee.data
    }

    /// Takes `other`'s buffers and properties; `other` is left blank.
    package func move(from other: OwnedFrame) {
        av_frame_unref(pointer)
        av_frame_move_ref(pointer, other.pointer)
    }

    /// The frame's presentation timestamp, in its stream's time base (``FFmpegConstants/noPTS``: none).
    package var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }

    /// How long the frame lasts, in its stream's time base (0: not known).
    package var duration: Int64 { pointer.pointee.pkt_duration }

    /// FFmpeg's best guess of the frame's timestamp (the pts, else one worked out from the dts).
    package var bestEffortTimestamp: Int64 { pointer.pointee.best_effort_timestamp }

    /// Paints the whole frame black (limited-range black for YUV).
    func fillBlack() {
        var data: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) =
            (pointer.pointee.data.0, pointer.pointee.data.1, pointer.pointee.data.2, pointer.pointee.data.3)
        var linesizes: (Int, Int, Int, Int) = (
            Int(pointer.pointee.linesize.0), Int(pointer.pointee.linesize.1),
            Int(pointer.pointee.linesize.2), Int(pointer.pointee.linesize.3)
        )
        withUnsafeMutablePointer(to: &data) { dataTuple in
            withUnsafeMutablePointer(to: &linesizes) { sizeTuple in
                dataTuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { planes in
                    sizeTuple.withMemoryRebound(to: Int.self, capacity: 4) { strides in
                        _ = av_image_fill_black(planes, strides, format, AVCOL_RANGE_MPEG, pointer.pointee.width, pointer.pointee.height)
                    }
                }
            }
        }
    }
}

/// Owns an `AVPacket`; freed when released. Reused for every packet.
package final class OwnedPacket {
    let pointer: UnsafeMutablePointer<AVPacket>

    /// Lets go of the packet's data (the packet itself is kept, for the next one).
    package func unref() { av_packet_unref(pointer) }

    /// Takes `other`'s data and properties; `other` is left blank.
    package func move(from other: OwnedPacket) { av_packet_move_ref(pointer, other.pointer) }

    /// The index of the stream the packet belongs to.
    package var streamIndex: Int32 { pointer.pointee.stream_index }

    /// The bytes of media data the packet holds.
    package var byteCount: Int { Int(pointer.pointee.size) }

    /// Whether the packet holds a keyframe.
    package var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }

    /// An empty packet; `outOfMemory` (a typed error, never a trap) when even its small struct
    /// cannot be allocated.
    package init() throws(PlayheadError) {
        guard let packet = av_packet_alloc() else { throw .outOfMemory("av_packet_alloc") }
        pointer = packet
    }

    /// A packet holding `count` zeroed bytes of data (for a stage fed by hand).
    /// - Throws: `outOfMemory` when the packet or its data cannot be allocated.
    package convenience init(zeroedBytes count: Int) throws(PlayheadError) {
        try self.init()
        guard count >= 0, count <= Int(Int32.max) - Int(AV_INPUT_BUFFER_PADDING_SIZE), av_new_packet(pointer, Int32(count)) >= 0 else {
            throw .outOfMemory("av_new_packet")
        }
        if count > 0 { memset(pointer.pointee.data, 0, count) }
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
}

extension PlayheadError {
    /// FFmpeg could not allocate one of its small structs: the process is at its memory limit.
    package static func outOfMemory(_ function: String) -> PlayheadError {
        PlayheadError(
            code: .decodeFailed, message: "out of memory (\(function))", file: nil, cause: FFmpegError.cause(function, playhead_averror(ENOMEM)))
    }
}
