internal import CFFmpeg
import Foundation
import Glibc

/// The files of one HLS output — a playlist and the segments beside it — owned as the rest of
/// Playhead's outputs are: every file the `hls` muxer opens goes through this type's `io_open` and
/// `io_close2` hooks (the muxer itself ignores its write errors and renames what it wrote anyway).
///
/// - **Names no one else has.** Segments are `STEM-TOKEN-N.ts`, with a new random token at each
///   open of the muxer: they never take a user's file (`live0.ts`) nor another channel's segments
///   (`live.m3u8` and `live1.m3u8` in one folder). The hook refuses to open anything else, and a
///   segment whose name (or temporary name) exists; the playlist's temporary name (`NAME.m3u8.tmp`,
///   FFmpeg's) is refused when something is at it.
/// - **One channel a playlist.** The playlist is held with a lock beside it
///   (`.NAME.m3u8.lock`, `flock`): a second channel writing it fails instead of deleting the
///   first's segments.
/// - **Nothing cut is published.** A segment or playlist whose write or close fails (a full disk)
///   is removed before the muxer renames it into place, later opens are refused, and the failure is
///   kept for the writer (``takeFailure()``), which gives the muxer up and opens a new one at a
///   later keyframe: the playlist on disk stays the last good one meanwhile.
/// - **A reopen goes on where the last left off.** When the playlist on disk is one of ours (every
///   entry one of our segments, each there), the new muxer appends to it (`append_list`): the media
///   sequence and the segment numbers go on, `EXT-X-DISCONTINUITY` marks the join. Otherwise, when
///   the next number is known, it starts there (`start_number`, `discont_start`).
/// - **No orphans.** Segments of an earlier open that the playlist no longer lists are removed.
///
/// Not `Sendable`: used by its target's writer thread alone (the hooks run on it, inside the
/// muxer's calls).
final class HLSFolder {
    /// The playlist's path (absolute).
    let playlist: String
    private let folder: String
    private let stem: String
    /// The lock beside the playlist, held while this folder lives.
    private let lock: Int32
    /// Every token this folder gave its segments, the current one last.
    private var tokens: [String] = []
    /// The number after the last segment published (closed without an error).
    private var nextNumber: Int64?
    /// Files the muxer has open now: what each is.
    private var open: [UnsafeMutableRawPointer: (path: String, segment: Int64?)] = [:]
    /// A write or close failed: nothing more is opened until the next muxer.
    private var failure: PlayheadError?
    /// FFmpeg's own open and close, called by the hooks.
    fileprivate var defaultOpen:
        (
            @convention(c) (
                UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?, UnsafePointer<CChar>?, Int32,
                UnsafeMutablePointer<OpaquePointer?>?
            ) -> Int32
        )?
    fileprivate var defaultClose: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32)?

    /// The folder of `playlist`, its lock taken.
    /// - Throws: `output.outputOpenFailed` when the playlist's folder does not exist (or is not
    ///   one); `output.outputBusy` when another channel writes the playlist.
    init(playlist path: String) throws(PlayheadError) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        playlist = absolute
        let slash = absolute.lastIndex(of: "/") ?? absolute.startIndex
        folder = slash == absolute.startIndex ? "/" : String(absolute[..<slash])
        let name = String(absolute[absolute.index(after: slash)...])
        stem = name.hasSuffix(".m3u8") ? String(name.dropLast(5)) : name
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw PlayheadError(code: .outputOpenFailed, message: "the folder \(folder) of \(path) does not exist", file: path)
        }
        let lockPath = folder + "/." + name + ".lock"
        let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw PlayheadError(
                code: .outputOpenFailed, message: "could not make the lock \(lockPath): \(String(cString: strerror(errno)))", file: path)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(fd)
            throw PlayheadError(code: .outputBusy, message: "another channel writes \(path)", file: path)
        }
        lock = fd
    }

    deinit { Glibc.close(lock) }

    /// The segments' name pattern for the next muxer (a new token), and the playlist options that
    /// make it go on from what is on disk.
    /// - Parameter segmentSeconds: the length of a segment.
    /// - Returns: the muxer's header options.
    func headerOptions(segmentSeconds: Double) -> [String: String] {
        let token = Self.newToken()
        tokens.append(token)
        failure = nil
        var flags = "delete_segments+program_date_time+temp_file+independent_segments"
        var options = [
            "hls_time": String(segmentSeconds), "hls_list_size": "6",
            "hls_segment_filename": folder + "/" + stem + "-" + token + "-%d.ts",
        ]
        if let listed = ownPlaylist() {
            flags += "+append_list"
            removeOrphans(keeping: listed)
        } else if let nextNumber {
            flags += "+discont_start"
            options["start_number"] = String(nextNumber)
            removeOrphans(keeping: [])
        }
        options["hls_flags"] = flags
        return options
    }

    /// Checks, before a muxer opens, that the names it will use are free: FFmpeg writes the
    /// playlist as `NAME.m3u8.tmp` and renames whatever is there over the playlist, so a file of
    /// someone else's at that name stops the output (it is never written over, nor moved).
    /// - Throws: `output.outputExists` naming the file.
    func checkNames() throws(PlayheadError) {
        var info = stat()
        if lstat(playlist + ".tmp", &info) == 0 {
            throw PlayheadError(
                code: .outputExists, message: "\(playlist).tmp exists and is not this channel's: left alone (the playlist is written there)",
                file: playlist)
        }
    }

    /// Installs the hooks on the muxer's context (before its header is written).
    func attach(to context: UnsafeMutablePointer<AVFormatContext>) {
        defaultOpen = context.pointee.io_open
        defaultClose = context.pointee.io_close2
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        context.pointee.io_open = hlsOpen
        context.pointee.io_close2 = hlsClose
        open = [:]
    }

    /// The failure a hook met since the last call (the muxer's own result says nothing of it).
    func takeFailure() -> PlayheadError? { failure }

    /// The playlist's entries when it is one of ours — `#EXTM3U`, a media sequence, at least one
    /// entry, every entry one of our segments and there, not empty — else nil.
    private func ownPlaylist() -> Set<String>? {
        guard let text = try? String(contentsOfFile: playlist, encoding: .utf8) else { return nil }
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard lines.first == "#EXTM3U", lines.contains(where: { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }) else { return nil }
        let entries = lines.filter { !$0.hasPrefix("#") && !$0.isEmpty }
        guard !entries.isEmpty else { return nil }
        for entry in entries {
            var info = stat()
            guard isOurs(entry, anyRun: true), stat(folder + "/" + entry, &info) == 0, info.st_size > 0 else { return nil }
        }
        return Set(entries)
    }

    /// Whether `name` is a segment of ours: `STEM-TOKEN-N.ts`, TOKEN one this folder gave (or,
    /// with `anyRun`, of Playhead's form: 8 of `[a-z0-9]`, as an earlier run of the channel gave).
    private func isOurs(_ name: String, anyRun: Bool = false) -> Bool {
        guard name.hasPrefix(stem + "-"), name.hasSuffix(".ts") else { return false }
        let middle = name.dropFirst(stem.count + 1).dropLast(3)
        guard let dash = middle.firstIndex(of: "-") else { return false }
        let token = String(middle[..<dash]), number = middle[middle.index(after: dash)...]
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        if tokens.contains(token) { return true }
        return anyRun && token.count == 8 && token.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) }
    }

    /// Removes the segments of our earlier muxers (and of earlier runs of the channel) that are
    /// not in `listed`.
    private func removeOrphans(keeping listed: Set<String>) {
        let current = tokens.last
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // Ours — or an earlier run's of this channel, held under the same lock — and not listed.
            guard isOurs(name, anyRun: true), !listed.contains(name), let current, !name.hasPrefix(stem + "-" + current + "-") else { continue }
            unlink(folder + "/" + name)
        }
    }

    /// A new segment token: 8 characters of `[a-z0-9]`.
    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    // MARK: The hooks

    /// What the muxer may open for writing: the playlist's temporary name, or a segment of the
    /// current token (its temporary name). Returns the segment's number for a segment.
    fileprivate func vet(_ path: String) -> (allowed: Bool, segment: Int64?, reason: String) {
        if path == playlist + ".tmp" {
            // FFmpeg writes the playlist there and renames it; the hooks remove what they let
            // fail. Something at the name is not this channel's (or a killed run's): left alone.
            var info = stat()
            if lstat(path, &info) == 0 { return (false, nil, "\(path) exists and is not this channel's: left alone (remove it to publish)") }
            return (true, nil, "")
        }
        guard let token = tokens.last else { return (false, nil, "no segment name was given") }
        let prefix = folder + "/" + stem + "-" + token + "-"
        guard path.hasPrefix(prefix), path.hasSuffix(".ts.tmp"), let number = Int64(path.dropFirst(prefix.count).dropLast(7)) else {
            return (false, nil, "the muxer asked to write \(path), which is not one of this channel's names")
        }
        var info = stat()
        if lstat(path, &info) == 0 || lstat(String(path.dropLast(4)), &info) == 0 {
            return (false, nil, "\(path.dropLast(4)) exists and is not this channel's: left alone")
        }
        return (true, number, "")
    }

    fileprivate func opened(_ pb: UnsafeMutablePointer<AVIOContext>, path: String, segment: Int64?) {
        open[UnsafeMutableRawPointer(pb)] = (path, segment)
    }

    fileprivate func closing(_ pb: UnsafeMutablePointer<AVIOContext>?) -> (path: String, segment: Int64?)? {
        guard let pb else { return nil }
        return open.removeValue(forKey: UnsafeMutableRawPointer(pb))
    }

    fileprivate func failed(_ error: PlayheadError) {
        failure = failure ?? error
    }

    fileprivate func published(segment: Int64) {
        nextNumber = max(nextNumber ?? 0, segment + 1)
    }

    fileprivate var hasFailed: Bool { failure != nil }
}

/// The `hls` muxer's `io_open`: every file it writes is vetted by its ``HLSFolder`` first.
private let hlsOpen:
    @convention(c) (
        UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?, UnsafePointer<CChar>?, Int32,
        UnsafeMutablePointer<OpaquePointer?>?
    ) -> Int32 = { context, pb, url, flags, options in
        guard let context, let opaque = context.pointee.opaque, let url else { return playhead_averror(EINVAL) }
        let folder = Unmanaged<HLSFolder>.fromOpaque(opaque).takeUnretainedValue()
        guard let defaultOpen = folder.defaultOpen else { return playhead_averror(EINVAL) }
        // Reads (the playlist appended to) are FFmpeg's business.
        guard flags & AVIO_FLAG_WRITE != 0 else { return defaultOpen(context, pb, url, flags, options) }
        let path = String(cString: url)
        if folder.hasFailed {
            // Nothing more of this muxer is published: a stale temporary file cannot be renamed into place.
            if path.hasSuffix(".tmp") { unlink(path) }
            return playhead_averror(EIO)
        }
        let (allowed, segment, reason) = folder.vet(path)
        guard allowed else {
            folder.failed(PlayheadError(code: .outputExists, message: reason, file: folder.playlist))
            return playhead_averror(EEXIST)
        }
        let result = defaultOpen(context, pb, url, flags, options)
        if result >= 0, let opened = pb?.pointee { folder.opened(opened, path: path, segment: segment) }
        if result < 0 {
            folder.failed(FFmpegError.error(.writeFailed, "could not open \(path)", function: "io_open", result: result, file: folder.playlist))
        }
        return result
    }

/// The `hls` muxer's `io_close2`: a file whose write or close failed is removed before the muxer
/// renames it into place, and the failure kept for the writer.
private let hlsClose: @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32 = {
    context, pb in
    guard let context, let opaque = context.pointee.opaque else { return playhead_averror(EINVAL) }
    let folder = Unmanaged<HLSFolder>.fromOpaque(opaque).takeUnretainedValue()
    let file = folder.closing(pb)
    let result = folder.defaultClose?(context, pb) ?? playhead_averror(EINVAL)
    guard let file else { return result }
    if result < 0 {
        unlink(file.path)
        let code: PlayheadError.Code = result == FFmpegError.noSpace ? .diskFull : .writeFailed
        folder.failed(FFmpegError.error(code, "could not write \(file.path)", function: "avio_close", result: result, file: folder.playlist))
    } else if let segment = file.segment {
        folder.published(segment: segment)
    }
    return result
}
