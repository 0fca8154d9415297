internal import CFFmpeg
import Foundation

/// Writes every frame as an image file, `frame-000001.png`, `frame-000002.png`, … (numbered from
/// `firstNumber`), encoded by libavcodec's PNG or PPM (P6) encoder. Each file appears under its
/// final name only once complete.
public final class ImageSequenceSink: FrameSink {
    /// The image formats.
    public enum Format: String, Sendable, CaseIterable {
        case png, ppm

        var codec: AVCodecID { self == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_PPM }
    }

    public let pixelFormat: OutputPixelFormat = .rgb24
    public let directory: String
    public let format: Format
    /// The number the next file gets.
    public private(set) var nextNumber: Int
    /// Frame files in place so far (synced and named).
    public var framesWritten: Int { committer.committed }
    private var encoder: FrameEncoder?
    private var encoderSize: PixelSize?
    /// Syncs and names the frames off the output thread.
    private let committer = BackgroundCommitter()

    /// A sink writing image files into `directory`.
    /// - Parameters:
    ///   - directory: the folder the files go into; it must exist.
    ///   - format: PNG or PPM.
    ///   - firstNumber: the number of the first file.
    public init(directory: String, format: Format, firstNumber: Int = 1) {
        self.directory = directory
        self.format = format
        self.nextNumber = firstNumber
    }

    /// Makes an encoder for frames of the stream's size (a new one when the size changes).
    /// - Parameter info: the frames' size.
    /// - Throws: ``PlayheadError`` with `output.encodeFailed` when the encoder is missing or does not open.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        // A new stream of another size (the next item of a queue) gets an encoder of its own size.
        if encoder == nil || encoderSize != info.size {
            encoder = try FrameEncoder(
                codec: format.codec, size: info.size, format: AV_PIX_FMT_RGB24,
                timeBase: AVRational(num: 1, den: 25), target: directory)
            encoderSize = info.size
        }
    }

    /// Encodes the frame into the next numbered file, written under a temporary name; a worker thread syncs it and
    /// gives it its name.
    /// - Parameter frame: the frame, in RGB.
    /// - Throws: ``PlayheadError`` with `state.invalidState` before ``begin(_:)``; `output.encodeFailed`;
    ///   `output.writeFailed`, `output.diskFull` or `output.nameTooLong` when a file cannot be written; an earlier
    ///   file's failure to be synced or named.
    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        guard let encoder else { throw PlayheadError(code: .invalidState, message: "write before begin", file: directory) }
        let path = directory + "/" + Self.fileName(number: nextNumber, format: format)
        try encoder.encode(frame.frame) { packet throws(PlayheadError) in
            let file = try SafeFile.create(for: path)
            do throws(PlayheadError) {
                try file.write(UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            } catch {
                file.discard()
                throw error
            }
            try committer.commit(file)
        }
        nextNumber += 1
    }

    /// Each frame's data is synced before it takes its name (on a worker thread, while the next
    /// frame is encoded); the folder's names are synced once here, for them all.
    /// - Throws: ``PlayheadError`` when a frame's file could not be synced or named (`output.writeFailed`,
    ///   `output.diskFull`, …).
    public func finish() throws(PlayheadError) {
        try committer.drain()
        SafeFile.syncFolder(directory)
    }

    /// Keeps the frames' files that are complete, and waits until they have their names.
    public func abort() {
        // Complete frames stay (they are real frames); no partial file is left behind, since each
        // is renamed into place only when whole.
        try? committer.drain()
        SafeFile.syncFolder(directory)
    }

    /// `frame-000042.png`.
    /// - Parameters:
    ///   - number: the frame's number, padded with zeros to six digits.
    ///   - format: the format, whose name is the extension.
    /// - Returns: the file's name, without a folder.
    public static func fileName(number: Int, format: Format) -> String {
        let digits = String(number)
        return namePrefix + String(repeating: "0", count: max(0, numberDigits - digits.count)) + digits + "." + format.rawValue
    }

    /// The frame number a name of ``fileName(number:format:)`` holds: nil for any other name.
    /// - Parameter name: a file's name, without a folder.
    /// - Returns: the number and the format.
    package static func number(inFileName name: String) -> (number: Int, format: Format)? {
        guard name.hasPrefix(namePrefix), let dot = name.lastIndex(of: ".") else { return nil }
        let digits = name[name.index(name.startIndex, offsetBy: namePrefix.count)..<dot]
        guard digits.count >= numberDigits, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits),
            let format = Format(rawValue: String(name[name.index(after: dot)...]))
        else { return nil }
        return (number, format)
    }

    private static let namePrefix = "frame-"
    private static let numberDigits = 6
}
