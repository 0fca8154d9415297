/// What a demuxer opens: a path or URL that FFmpeg's protocols read, or a caller's
/// ``ByteSource`` or ``AsyncByteSource`` read through custom I/O.
package struct MediaInput: Sendable {
    /// What errors and logs call it (a ``PlayheadError`` redacts a URL's credentials).
    let name: String
    /// The exact bytes handed to FFmpeg: a path's bytes, which need not be UTF-8, or a URL.
    let location: [UInt8]
    package let bytes: CustomBytes?
    /// Why it must not be opened at all (a `file:` URL naming another host), if it must not.
    package var refusal: String?

    /// A path or an FFmpeg URL.
    package init(_ location: String) {
        name = location
        self.location = Array(location.utf8)
        bytes = nil
    }

    /// A local path of any bytes; `name` is how it is shown.
    package init(path: [UInt8], name: String) {
        self.name = name
        location = path
        bytes = nil
    }

    package init(bytes: CustomBytes, name: String) {
        self.name = name
        location = Array(name.utf8)
        self.bytes = bytes
    }

    /// Checked as a local file before opening.
    var isPath: Bool { bytes == nil && SourceOptions.isPath(String(decoding: location, as: UTF8.self)) }

    /// A NUL inside would make C open a shorter, different path.
    var hasNUL: Bool { location.contains(0) }

    /// Calls `body` with the location as a C string.
    func withLocation<Result>(_ body: (UnsafePointer<CChar>) throws(PlayheadError) -> Result) throws(PlayheadError) -> Result {
        var terminated = location.map { CChar(bitPattern: $0) }
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { (buffer) throws(PlayheadError) -> Result in
            // A buffer of at least one element always has a base address.
            guard let base = buffer.baseAddress else { throw PlayheadError(code: .invalidArgument, message: "empty location", file: name) }
            return try body(base)
        }
    }
}

extension MediaInput {
    /// The bytes of a `file:` URL's path, percent escapes decoded: a name that is not UTF-8
    /// arrives as `file:///dir/caf%E9.mp4`, which `URL.path` cannot hold but this can.
    package static func pathBytes(ofFileURLPath encoded: String) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(encoded.utf8.count)
        var iterator = Array(encoded.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]), let low = hexValue(iterator[iterator.startIndex + 1])
            {
                result.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else {
                result.append(byte)
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// A caller's bytes: read on the I/O thread, or fetched by a task of their own (see ``AsyncRead``).
package enum CustomBytes: Sendable {
    case blocking(any ByteSource)
    case async(any AsyncByteSource)

    var size: Int64? {
        switch self {
        case .blocking(let source): source.size
        case .async(let source): source.size
        }
    }

    var isSeekable: Bool {
        switch self {
        case .blocking(let source): source.isSeekable
        case .async(let source): source.isSeekable
        }
    }
}
