import CFFmpeg

/// Owns an `AVFrame` (and through it, its buffers); freed when released. One per pipeline slot,
/// reused for every frame: never allocated per frame.
final class OwnedFrame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() {
        // Unreachable from input, environment or arguments: av_frame_alloc allocates one struct of
        // fixed size (no buffers: picture sizes go through av_frame_get_buffer, checked and typed
        // in init(size:format:)) and fails only when malloc of that struct fails — the process is out of memory,
        // a state in which Swift's own allocations (this object's) already abort.
        guard let frame = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        pointer = frame
    }

    /// A frame with its own buffers of the given size and format, filled with black.
    convenience init(size: PixelSize, format: AVPixelFormat) throws(PlayheadError) {
        self.init()
        pointer.pointee.width = Int32(size.width)
        pointer.pointee.height = Int32(size.height)
        pointer.pointee.format = format.rawValue
        let result = av_frame_get_buffer(pointer, 0)
        guard result >= 0 else {
            throw FFmpegError.error(.conversionFailed, "could not allocate a \(size) canvas", function: "av_frame_get_buffer", result: result, file: nil)
        }
        fillBlack()
    }

    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }

    var size: PixelSize { PixelSize(width: Int(pointer.pointee.width), height: Int(pointer.pointee.height)) }
    var format: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }

    /// Paints the whole frame black (limited-range black for YUV).
    func fillBlack() {
        var data: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) =
            (pointer.pointee.data.0, pointer.pointee.data.1, pointer.pointee.data.2, pointer.pointee.data.3)
        var linesizes: (Int, Int, Int, Int) = (Int(pointer.pointee.linesize.0), Int(pointer.pointee.linesize.1),
                                               Int(pointer.pointee.linesize.2), Int(pointer.pointee.linesize.3))
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
final class OwnedPacket {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() {
        // Unreachable from input, environment or arguments: av_packet_alloc allocates one struct of
        // fixed size (no data buffer) and fails only when malloc of that struct fails — the process is out of memory,
        // a state in which Swift's own allocations (this object's) already abort.
        guard let packet = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        pointer = packet
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
}
