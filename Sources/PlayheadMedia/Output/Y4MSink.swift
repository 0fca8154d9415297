internal import CFFmpeg
import Foundation

/// Writes all frames into one YUV4MPEG2 file through libavformat's `yuv4mpegpipe` muxer, safely
/// (see `SafeFile`): under a temporary name until `finish` puts it in place. Given up
/// (`abort`), what was written is kept as a valid, shorter file and ``isPartial`` says so.
public final class Y4MSink: FrameSink {
    public let pixelFormat: OutputPixelFormat = .yuv420p
    public let path: String
    public private(set) var framesWritten = 0
    /// `true` when the file was given up part way and kept with what it had.
    public private(set) var isPartial = false
    private var muxer: Muxer?
    private var stream: Int32 = 0
    private var encoder: FrameEncoder?
    private var nextPTS: Int64 = 0
    private var size: PixelSize?

    /// Set when the frames stream into an open descriptor instead of a file.
    private let descriptor: Int32?

    /// Whether a file already at ``path`` may be replaced when this one is complete.
    private let replacing: Bool

    /// A Y4M file at `path`. With `replacing` false, a file already there is never replaced: the
    /// finished file takes the name atomically, or the sink fails with `output.outputExists`.
    /// - Parameters:
    ///   - path: where the file goes.
    ///   - replacing: whether a file already at `path` may be replaced.
    public init(path: String, replacing: Bool = true) {
        self.path = path
        self.replacing = replacing
        descriptor = nil
    }

    /// Streams the Y4M into `descriptor` as frames come (standard output, for a viewer reading
    /// `| mpv -`): nothing is renamed or taken back, and a reader that goes away ends the output
    /// with `output.writeFailed`. `name` is what errors call it. The descriptor is not closed.
    /// - Parameters:
    ///   - descriptor: an open descriptor to write to, such as 1 for standard output.
    ///   - name: what errors call the output.
    public init(descriptor: Int32, name: String) {
        path = name
        self.descriptor = descriptor
        replacing = false
    }

    /// Opens the file (under a temporary name, unless it streams into a descriptor) and writes its header, at the
    /// first stream; a later stream of the same size goes on in the same file.
    /// - Parameter info: the frames' size, and their rate (the first stream's is the file's).
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` for a stream of another size than the first;
    ///   `output.outputExists` when `replacing` is false and a file is at the path; `output.outputOpenFailed` or
    ///   `output.writeFailed` (`output.diskFull`, …) when the file cannot be made or its header written.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        if let size, size != info.size {
            throw PlayheadError(
                code: .invalidArgument, message: "a Y4M file holds one frame size (\(size)); this stream is \(info.size): give an output size",
                file: path)
        }
        guard muxer == nil else { return }
        size = info.size
        let muxer = try Muxer(.y4m, to: descriptor.map { .descriptor($0, name: path) } ?? .file(path: path, replacing: replacing))
        // Y4M records the frame rate from the stream's time base: one tick per frame.
        let tick = info.frameRate.map { Self.rational(forRate: $0) } ?? AVRational(num: 1, den: 25)
        stream = try muxer.addStream(timeBase: tick) { parameters in
            parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            parameters.pointee.codec_id = AV_CODEC_ID_WRAPPED_AVFRAME
            parameters.pointee.width = Int32(info.size.width)
            parameters.pointee.height = Int32(info.size.height)
            parameters.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        }
        encoder = try FrameEncoder(codec: AV_CODEC_ID_WRAPPED_AVFRAME, size: info.size, format: AV_PIX_FMT_YUV420P, timeBase: tick, target: path)
        try muxer.writeHeader()
        self.muxer = muxer
    }

    /// Appends one frame.
    /// - Parameter frame: the frame, in 4:2:0.
    /// - Throws: ``PlayheadError`` with `state.invalidState` before ``begin(_:)`` or after ``finish()``;
    ///   `output.encodeFailed`, or `output.writeFailed` (`output.diskFull`, …) when the frame cannot be written.
    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        guard let encoder, let muxer else { throw PlayheadError(code: .invalidState, message: "write before begin", file: path) }
        frame.frame.pointee.pts = nextPTS
        nextPTS += 1
        let stream = self.stream
        try encoder.encode(frame.frame) { packet throws(PlayheadError) in
            try muxer.write(packet, stream: stream, from: encoder.context.pointee.time_base)
        }
        framesWritten += 1
    }

    /// Writes the file's end, syncs it and gives it its name; nothing happens when no stream began.
    /// - Throws: ``PlayheadError`` with `output.writeFailed` (`output.diskFull`, …) when the file cannot be
    ///   completed, or `output.outputExists` when `replacing` is false and the name was taken meanwhile.
    public func finish() throws(PlayheadError) {
        guard let muxer else { return }
        self.muxer = nil
        encoder = nil
        try muxer.finish()
    }

    /// Keeps what was written as a valid, shorter file (``isPartial``), or nothing when nothing was.
    public func abort() {
        guard let muxer else { return }
        self.muxer = nil
        encoder = nil
        isPartial = muxer.keepWhatWasWritten()
    }

    static func rational(forRate rate: Double) -> AVRational {
        let r = av_d2q(1 / rate, 1_000_000)
        return r.num > 0 && r.den > 0 ? r : AVRational(num: 1, den: 25)
    }
}
