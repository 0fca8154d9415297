import Foundation

/// Bytes of a media file that the caller provides: held in memory, fetched through the caller's
/// own storage client, decrypted on the fly. Playhead's demuxer reads them through FFmpeg's
/// custom I/O, as it reads a file.
///
/// Reads are positional: each opened reader of the asset (its probe, a player, an image request)
/// keeps its own position and asks for the bytes at that offset, so several can read one source
/// at once, like the data requests of a resource loader. A source that is not seekable is a
/// stream: it is read once, in order, from offset 0, by one reader; what needs a seek (a player
/// seek, exact images far into a file whose index is at the end) then fails with a typed error.
///
/// ```swift
/// let asset = Asset(byteSource: MemoryByteSource(bytes), name: "upload.mp4")
/// ```
public protocol ByteSource: Sendable {
    /// The total size in bytes, when known. Containers that keep their index at the end (MP4)
    /// need it, or a seekable source that reads to the end.
    var size: Int64? { get }
    /// Whether a read may start at any offset. Defaults to true.
    var isSeekable: Bool { get }
    /// Copies up to `buffer.count` bytes starting at `offset` into `buffer` and returns how many
    /// it copied; 0 means the end of the data. Called on a Playhead I/O thread; a thrown error
    /// ends the read as `io.readFailed`, with the error's description.
    ///
    /// Each read runs on a worker thread of its own, into a buffer of its own, while the
    /// session waits for it: a cancellation, the open timeout or the stall timeout ends the wait
    /// (`cancelled`, `io.timedOut`) and the session goes on to its end. A read that never
    /// returns keeps its thread until it does (nothing stops a blocked call), and what it copies
    /// then is dropped. A source that waits on a network belongs in an ``AsyncByteSource``,
    /// whose reads are also cancelled.
    /// - Parameters:
    ///   - offset: the position of the first byte wanted, from the start of the data.
    ///   - buffer: where to copy the bytes; at most `buffer.count` of them.
    /// - Returns: the number of bytes copied; 0 at the end of the data.
    /// - Throws: any error, when the bytes cannot be read: the read then fails as `io.readFailed`.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension ByteSource {
    public var isSeekable: Bool { true }
}

/// A ``ByteSource`` over bytes held in memory.
public struct MemoryByteSource: ByteSource {
    private let bytes: Data

    /// A source reading `bytes`.
    /// - Parameter bytes: the media file's bytes.
    public init(_ bytes: Data) { self.bytes = bytes }

    public var size: Int64? { Int64(bytes.count) }

    /// Copies the bytes from `offset` on into `buffer`.
    /// - Parameters:
    ///   - offset: the position of the first byte wanted.
    ///   - buffer: where to copy them.
    /// - Returns: the number of bytes copied: `buffer.count`, fewer near the end of the data, 0 at or past the end
    ///   (or for a negative offset).
    /// - Throws: never: the bytes are in memory.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        let start = bytes.startIndex + Int(offset)
        let count = min(buffer.count, bytes.endIndex - start)
        bytes.copyBytes(to: buffer, from: start..<(start + count))
        return count
    }
}

/// Bytes of a media file that the caller fetches asynchronously: objects in a store read through
/// the caller's own HTTP client, chunks from a database, a service behind an SDK.
///
/// Each read is a task of its own. A read that brings nothing for the asset's stall timeout ends
/// the read as `io.timedOut`; a cancellation (of a player, a session, an image request, a key
/// load) ends it within 100 ms. Either way the read's task is cancelled, and what it returns
/// afterwards is dropped, so a client that honours cancellation stops its request, and one that
/// does not cannot hold Playhead up. Reads are positional, as for ``ByteSource``.
///
/// ```swift
/// struct StoreObject: AsyncByteSource {
///     let client: StoreClient, key: String, size: Int64?
///     func read(at offset: Int64, maxLength: Int) async throws -> Data {
///         try await client.get(key, bytes: offset..<min(offset + Int64(maxLength), size ?? .max))
///     }
/// }
/// let asset = Asset(byteSource: StoreObject(client: client, key: "clips/a.mp4", size: 48_213_004),
///                   name: "store://clips/a.mp4")
/// ```
public protocol AsyncByteSource: Sendable {
    /// The total size in bytes, when known. Containers that keep their index at the end (MP4)
    /// need it, or a seekable source that reads to the end.
    var size: Int64? { get }
    /// Whether a read may start at any offset. Defaults to true.
    var isSeekable: Bool { get }
    /// Up to `maxLength` bytes starting at `offset` (fewer is fine: the rest is asked for next);
    /// empty means the end of the data. A thrown error ends the read as `io.readFailed`, with
    /// the error's description.
    /// - Parameters:
    ///   - offset: the position of the first byte wanted, from the start of the data.
    ///   - maxLength: the most bytes to return.
    /// - Returns: the bytes from `offset` on, at most `maxLength` of them; empty at the end of the data.
    /// - Throws: any error, when the bytes cannot be fetched: the read then fails as `io.readFailed`.
    func read(at offset: Int64, maxLength: Int) async throws -> Data
}

extension AsyncByteSource {
    public var isSeekable: Bool { true }
}
