import CFFmpeg
import Foundation

/// One blocking probe of a file: checks the path, opens it, analyses the streams, describes them,
/// and closes it again. Runs on a ``BlockingThreadPool`` thread.
enum MediaProbe {
    static func describe(source: String, isLocalFile: Bool, interrupt: InterruptFlag) throws(PlayheadError) -> AssetDescription {
        if isLocalFile { try checkLocalFile(source) }
        let context = try FormatContext.open(source, interrupt: interrupt)
        try context.findStreamInfo()
        guard context.streamCount > 0 else {
            throw PlayheadError(code: .noStreams, message: "the container holds no streams", file: source)
        }
        return context.makeDescription()
    }

    /// Gives the clear errors FFmpeg would blur: missing, a directory, unreadable, empty.
    static func checkLocalFile(_ path: String) throws(PlayheadError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code: PlayheadError.Code = errno == EACCES ? .permissionDenied : .fileNotFound
            throw PlayheadError(code: code, message: code == .fileNotFound ? "no such file" : "permission denied", file: path)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw PlayheadError(code: .notARegularFile, message: "is a directory, not a media file", file: path)
        }
        if (info.st_mode & S_IFMT) == S_IFREG {
            guard access(path, R_OK) == 0 else {
                throw PlayheadError(code: .permissionDenied, message: "permission denied", file: path)
            }
            if info.st_size == 0 {
                throw PlayheadError(code: .emptyFile, message: "the file is empty", file: path)
            }
        }
    }
}
