import Glibc

/// How much of a fragmented MP4 being written is a valid file: its top-level boxes walked from the
/// start (`ftyp`, `moov`, then `moof` + `mdat` per fragment), up to the end of the last whole
/// fragment after the header. What a file given up part way (a full disk) or kept by a process
/// stopping at once is cut to.
enum MP4Boxes {
    /// The length of the valid part of the MP4 at `path`, of `size` bytes; nil when no fragment
    /// after its header is whole.
    /// - Parameters:
    ///   - path: the file.
    ///   - size: how much of it to look at (what was written).
    static func validPrefix(of path: String, size: Int64) -> Int64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var position: Int64 = 0
        var sawHeader = false
        var valid: Int64?
        var header = [UInt8](repeating: 0, count: 16)
        while position + 8 <= size {
            let read = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, off_t(position)) }
            guard read >= 8 else { break }
            let small = Int64(header[0]) << 24 | Int64(header[1]) << 16 | Int64(header[2]) << 8 | Int64(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            var length = small
            if small == 1 {
                // A 64-bit size follows the type.
                guard read >= 16 else { break }
                length = header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            // A box "to the end of the file" (size 0), or one that is not whole, ends the walk.
            guard length >= 8, length <= size - position else { break }
            position += length
            if type == "moov" { sawHeader = true }
            if type == "mdat", sawHeader { valid = position }
        }
        return valid
    }
}
