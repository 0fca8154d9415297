import Foundation
import Glibc
import Playhead
import PlayheadRunFolder

/// What is on disk in an output folder, read back after the run: the summary's numbers come from
/// here, so that they are what a reader of the folder finds, whatever happened on the way. (A
/// completed MP4 export, which only a whole read could count, is counted by its own sink.)
enum OutputInventory {
    /// What an MP4 sink says it wrote.
    struct Written: Sendable {
        var frames: Int
        var audioFrames: Int
        var isPartial: Bool

        init(_ sink: MP4Sink) {
            frames = sink.framesWritten
            audioFrames = sink.audioFramesWritten
            isPartial = sink.isPartial
        }
    }

    /// The frame files (`frame-000001.png` …) in `folder` that runs wrote there (a user's file
    /// under a frame's name is not counted).
    static func frameFiles(in folder: String, format: String) -> Int {
        guard let directory = opendir(folder) else { return 0 }
        defer { closedir(directory) }
        let ours = WrittenLog.ours(in: folder)
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard ImageSequenceSink.number(inFileName: name)?.format.rawValue == format else { continue }
            if ours(name) { count += 1 }
        }
        return count
    }

    /// Whole frames in a Y4M file (nil: no such file, or not one playhead writes).
    static func y4mFrames(_ path: String) -> Int? {
        guard let data = read(path, limit: 4096) else { return nil }
        guard let newline = data.firstIndex(of: 0x0A), data.starts(with: Array("YUV4MPEG2 ".utf8)) else { return nil }
        let header = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ")
        var width = 0, height = 0
        for field in header {
            if field.hasPrefix("W") { width = Int(field.dropFirst()) ?? 0 }
            if field.hasPrefix("H") { height = Int(field.dropFirst()) ?? 0 }
        }
        guard width > 0, height > 0, let size = fileSize(path) else { return nil }
        let frameBytes = 6 + width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        return max(0, Int(size) - (newline + 1)) / frameBytes
    }

    /// Samples per channel in a WAV file: those its data chunk declares and the file holds (nil:
    /// no such file, or not one playhead writes).
    static func wavFrames(_ path: String) -> Int? {
        guard let data = read(path, limit: 4096), data.count >= 12, let size = fileSize(path) else { return nil }
        guard Array(data[0..<4]) == Array("RIFF".utf8), Array(data[8..<12]) == Array("WAVE".utf8) else { return nil }
        func le32(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24 }
        func le16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        var offset = 12, blockAlign = 0
        while offset + 8 <= data.count {
            let id = Array(data[offset..<offset + 4]), length = le32(offset + 4)
            if id == Array("fmt ".utf8), offset + 8 + 14 <= data.count { blockAlign = le16(offset + 8 + 12) }
            if id == Array("data".utf8) {
                guard blockAlign > 0 else { return nil }
                let present = max(0, Int(size) - (offset + 8))
                return min(length, present) / blockAlign
            }
            offset += 8 + length + (length & 1)
        }
        return nil
    }

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    static func exists(_ path: String) -> Bool { fileSize(path) != nil }

    private static func read(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, limit) }
        guard n > 0 else { return nil }
        return Array(bytes[0..<n])
    }
}

extension OutputInventory {
    /// What a `play` output folder holds.
    struct Folder: Sendable {
        /// Frames on disk: frame files, or whole frames in `frames.y4m`.
        var frames = 0
        /// Samples per channel in `audio.wav` (or in the MP4's sound); nil when there is none.
        var audioFrames: Int?
        var audioPath: String

        /// - Parameters:
        ///   - folder: the output folder.
        ///   - format: what the run wrote there.
        ///   - written: the MP4 sink's own count of a completed export: taken for its file once
        ///     the file is the one the run committed, instead of reading the file back.
        init(_ folder: String, format: PlayCommand.DumpFormat, written: Written? = nil) {
            if format == .mp4, let written, !written.isPartial {
                let path = folder + "/" + OutputNames.video
                if WrittenLog.counts(path), OutputInventory.exists(path) {
                    frames = written.frames
                    audioPath = path
                    audioFrames = written.audioFrames > 0 ? written.audioFrames : nil
                    return
                }
            }
            switch format {
            case .png, .ppm: frames = OutputInventory.frameFiles(in: folder, format: format.rawValue)
            case .y4m:
                let path = folder + "/" + OutputNames.frames
                frames = WrittenLog.counts(path) ? OutputInventory.y4mFrames(path) ?? 0 : 0
            case .mp4:
                let path = folder + "/" + OutputNames.video
                frames = WrittenLog.counts(path) ? WrittenMedia.videoFrames(path) ?? 0 : 0
            case .none: frames = 0
            }
            if format == .mp4 {
                // The sound is in the MP4.
                audioPath = folder + "/" + OutputNames.video
                audioFrames = OutputInventory.exists(audioPath) && WrittenLog.counts(audioPath) ? WrittenMedia.audioFrames(audioPath) : nil
            } else {
                audioPath = folder + "/" + OutputNames.audio
                audioFrames = WrittenLog.counts(audioPath) ? OutputInventory.wavFrames(audioPath) : nil
            }
        }
    }
}
