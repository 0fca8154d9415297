/// What a demuxer opens: a path or URL that FFmpeg's protocols read, or a caller's
/// ``ByteSource`` read through custom I/O. `name` is what errors and logs call it.
struct MediaInput: Sendable {
    let name: String
    let bytes: (any ByteSource)?

    /// A path or an FFmpeg URL.
    init(_ location: String) {
        name = location
        bytes = nil
    }

    init(bytes: any ByteSource, name: String) {
        self.name = name
        self.bytes = bytes
    }

    /// Checked as a local file before opening.
    var isPath: Bool { bytes == nil && SourceOptions.isPath(name) }
}
