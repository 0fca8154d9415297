internal import CFFmpeg
import Foundation

/// Tells "not media at all" from "media, but damaged" after an open failed with invalid data, by
/// asking FFmpeg's demuxers about the file's first bytes alone (the file name's extension is not
/// shown to them, so a text file named `.mp4` is not taken for an MP4).
enum FormatSniffer {
    /// The name of the format the content looks like, or nil.
    static func recognizedFormat(path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64 * 1024), !head.isEmpty else { return nil }
        var bytes = [UInt8](head)
        bytes.append(contentsOf: repeatElement(0, count: Int(AVPROBE_PADDING_SIZE)))
        return bytes.withUnsafeMutableBufferPointer { buffer -> String? in
            "".withCString { emptyName in
                var probe = AVProbeData()
                probe.filename = emptyName
                probe.buf = buffer.baseAddress
                probe.buf_size = Int32(head.count)
                var score: Int32 = AVPROBE_SCORE_RETRY
                guard let format = av_probe_input_format2(&probe, 1, &score) else { return nil }
                return String(cString: format.pointee.name)
            }
        }
    }
}
