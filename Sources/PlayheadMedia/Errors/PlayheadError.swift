import Foundation

/// An error from Playhead: what went wrong (``code``), in words (``message``), for which file
/// (``file``), and what FFmpeg said about it (``cause``).
///
/// Codes are grouped in families that name the stage that failed: `io` (finding and reading the
/// file), `demux` (understanding the container), `decode`, `output` (writing results) and `state`
/// (using the API at the wrong moment, or cancellation).
public struct PlayheadError: Error, Sendable, Hashable {
    /// What went wrong, as a value that can be matched: `error.code == .fileNotFound`.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The file or URL the error is about, when there is one; a URL's credentials and query
    /// values are redacted (``SourceRedaction``). Immutable: every way to set it goes through the
    /// redaction (the initializer, `naming(file:)`).
    public let file: String?
    /// What FFmpeg reported, when an FFmpeg call failed.
    public let cause: FFmpegCause?

    /// An error of `code` about `file`; URLs in `message` and `file` are redacted (``SourceRedaction``).
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: a sentence for people.
    ///   - file: the file or URL the error is about, if any.
    ///   - cause: what FFmpeg reported, when an FFmpeg call failed.
    public init(code: Code, message: String, file: String? = nil, cause: FFmpegCause? = nil) {
        self.code = code
        // A message may quote what FFmpeg said, URLs included (a key file a playlist names).
        self.message = SourceRedaction.redactingURLs(in: message)
        self.file = file.map(SourceRedaction.redacted)
        self.cause = cause
    }

    /// The same error, naming `file` (redacted).
    package func naming(file: String) -> PlayheadError {
        PlayheadError(code: code, message: message, file: file, cause: cause)
    }

    /// The same error with another message (and code), for the file it names.
    package func with(code: Code? = nil, message: String) -> PlayheadError {
        PlayheadError(code: code ?? self.code, message: message, redactedFile: file, cause: cause)
    }

    /// The same error naming `file` when it names none yet.
    func namingIfNone(_ file: String) -> PlayheadError {
        self.file == nil ? naming(file: file) : self
    }

    /// A file already redacted is kept as it is.
    private init(code: Code, message: String, redactedFile: String?, cause: FFmpegCause?) {
        self.code = code
        self.message = SourceRedaction.redactingURLs(in: message)
        self.file = redactedFile
        self.cause = cause
    }
}

extension PlayheadError {
    /// The stage of work an error comes from.
    public enum Family: String, Sendable, Hashable, CaseIterable {
        case io, demux, decode, output, state
    }

    /// What went wrong. A struct over a private enum, so that codes can be added without breaking
    /// callers that switch over them.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Wrapped: String, Sendable, Hashable {
            case fileNotFound, notARegularFile, permissionDenied, readFailed, truncated, timedOut, connectionFailed
            case emptyFile, unrecognizedFormat, openFailed, streamInfoFailed, noStreams, noVideoTrack, trackNotFound, seekFailed
            case decoderNotFound, decoderOpenFailed, decodeFailed, encrypted
            case encodeFailed, writeFailed, outputOpenFailed, conversionFailed, outputExists, diskFull, nameTooLong, outputBusy
            case cancelled, invalidArgument, invalidState
        }
        let wrapped: Wrapped

        /// The stage this code belongs to.
        public var family: Family {
            switch wrapped {
            case .fileNotFound, .notARegularFile, .permissionDenied, .readFailed, .truncated, .timedOut, .connectionFailed: return .io
            case .emptyFile, .unrecognizedFormat, .openFailed, .streamInfoFailed, .noStreams, .noVideoTrack, .trackNotFound, .seekFailed:
                return .demux
            case .decoderNotFound, .decoderOpenFailed, .decodeFailed, .encrypted: return .decode
            case .encodeFailed, .writeFailed, .outputOpenFailed, .conversionFailed, .outputExists, .diskFull, .nameTooLong, .outputBusy:
                return .output
            case .cancelled, .invalidArgument, .invalidState: return .state
            }
        }

        /// A stable dotted name such as `io.fileNotFound`, for logs and JSON.
        public var description: String { "\(family.rawValue).\(wrapped.rawValue)" }

        /// The path does not exist.
        public static let fileNotFound = Code(wrapped: .fileNotFound)
        /// The path exists but is a directory or another non-file.
        public static let notARegularFile = Code(wrapped: .notARegularFile)
        /// The file cannot be read with the process's permissions.
        public static let permissionDenied = Code(wrapped: .permissionDenied)
        /// Reading failed below the container level.
        public static let readFailed = Code(wrapped: .readFailed)
        /// The data stops inside what the container promised (its index, its element sizes): the
        /// file was cut short.
        public static let truncated = Code(wrapped: .truncated)
        /// A source did not open, or sent nothing, within its timeout (``AssetOptions``).
        public static let timedOut = Code(wrapped: .timedOut)
        /// A server could not be reached: it refused the connection, or no route leads to it.
        public static let connectionFailed = Code(wrapped: .connectionFailed)
        /// The file has no bytes.
        public static let emptyFile = Code(wrapped: .emptyFile)
        /// No demuxer recognized the bytes as media.
        public static let unrecognizedFormat = Code(wrapped: .unrecognizedFormat)
        /// The container was recognized but could not be opened (damaged or truncated).
        public static let openFailed = Code(wrapped: .openFailed)
        /// The streams could not be analysed.
        public static let streamInfoFailed = Code(wrapped: .streamInfoFailed)
        /// The container holds no audio or video stream.
        public static let noStreams = Code(wrapped: .noStreams)
        /// A video track was needed and there is none.
        public static let noVideoTrack = Code(wrapped: .noVideoTrack)
        /// The track asked for (``MediaSelection``: an index, a language) is not in the file.
        public static let trackNotFound = Code(wrapped: .trackNotFound)
        /// Seeking failed.
        public static let seekFailed = Code(wrapped: .seekFailed)
        /// No decoder exists for the track's codec.
        public static let decoderNotFound = Code(wrapped: .decoderNotFound)
        /// The decoder exists but refused to open.
        public static let decoderOpenFailed = Code(wrapped: .decoderOpenFailed)
        /// Decoding failed.
        public static let decodeFailed = Code(wrapped: .decodeFailed)
        /// The track is encrypted (Common Encryption: `cenc`, `cbcs`, …): its packets cannot be
        /// decoded without the key, and are refused rather than decoded into garbage.
        public static let encrypted = Code(wrapped: .encrypted)
        /// Encoding an output image or stream failed.
        public static let encodeFailed = Code(wrapped: .encodeFailed)
        /// Writing output failed (full disk, unwritable folder, …).
        public static let writeFailed = Code(wrapped: .writeFailed)
        /// An output file or muxer could not be opened.
        public static let outputOpenFailed = Code(wrapped: .outputOpenFailed)
        /// Scaling or pixel-format conversion failed.
        public static let conversionFailed = Code(wrapped: .conversionFailed)
        /// The output's name is taken by something this run did not create: it is left alone.
        public static let outputExists = Code(wrapped: .outputExists)
        /// The disk (or the quota) is full.
        public static let diskFull = Code(wrapped: .diskFull)
        /// An output name is longer than the file system allows.
        public static let nameTooLong = Code(wrapped: .nameTooLong)
        /// Another run is writing into the output folder (it holds the folder's lock).
        public static let outputBusy = Code(wrapped: .outputBusy)
        /// The work was cancelled.
        public static let cancelled = Code(wrapped: .cancelled)
        /// An argument was out of range or inconsistent.
        public static let invalidArgument = Code(wrapped: .invalidArgument)
        /// The call is not allowed in the current state.
        public static let invalidState = Code(wrapped: .invalidState)
    }

    /// What an FFmpeg call returned: the function, its error number, and `av_strerror`'s text.
    public struct FFmpegCause: Sendable, Hashable, CustomStringConvertible {
        /// The FFmpeg function that failed, such as `avformat_open_input`.
        public var function: String
        /// The negative error code it returned.
        public var errorNumber: Int32
        /// `av_strerror`'s description of the code.
        public var text: String

        /// A cause made of its parts.
        /// - Parameters:
        ///   - function: the FFmpeg function that failed.
        ///   - errorNumber: the negative error code it returned.
        ///   - text: `av_strerror`'s description of the code.
        public init(function: String, errorNumber: Int32, text: String) {
            self.function = function
            self.errorNumber = errorNumber
            self.text = text
        }

        public var description: String { "\(function): \(text) (\(errorNumber))" }
    }
}

extension PlayheadError: CustomStringConvertible {
    /// `[family.code] file: message (function: FFmpeg text)`.
    public var description: String {
        var text = "[\(code)] "
        if let file { text += "\(file): " }
        text += message
        if let cause { text += " (\(cause))" }
        return text
    }
}

extension PlayheadError: LocalizedError {
    /// The same text as ``description``, so that `localizedDescription` (and whatever shows an
    /// `Error` through Foundation) carries the code, the file and the message.
    public var errorDescription: String? { description }
}

extension PlayheadError {
    package static func cancelled(file: String? = nil) -> PlayheadError {
        PlayheadError(code: .cancelled, message: "cancelled", file: file)
    }
}
