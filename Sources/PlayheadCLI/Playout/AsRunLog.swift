import Foundation
import Glibc
import Playhead

/// The channel's as-run log: JSON Lines appended to a file, one record per item played (a
/// layer's item as it ended: played, failed, or a filler in its place), and at the end one per
/// output (its connects and drops). Each line is written whole with one `write` on a descriptor
/// opened for appending, so a reader (or a crash) never sees half a record.
final class AsRunLog: Sendable {
    private let descriptor: Int32
    let path: String

    /// Opens (or makes) the log at `path`: a regular file. Opened without blocking, so a FIFO (or
    /// a device) named there never holds the channel before it starts: it is refused.
    init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            // A FIFO nobody reads answers ENXIO to a non-blocking open for writing.
            let reason = errno == ENXIO ? "it is a FIFO (the log must be a regular file)" : String(cString: strerror(errno))
            throw CommandFailure(description: "could not open the as-run log \(path): \(reason)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw CommandFailure(description: "the as-run log \(path) is not a regular file")
        }
        // Writes block as a file's do (a record is written whole).
        _ = fcntl(fd, F_SETFL, O_WRONLY | O_APPEND)
        descriptor = fd
    }

    deinit { close(descriptor) }

    struct ItemLine: Encodable {
        var kind = "item"
        var layer: String
        var item: Int
        var source: String
        var canvasStart: Double
        var canvasEnd: Double
        var wallClockStart: String?
        var status: String
        var error: ErrorReport?
        var loudness: Double?
    }

    struct OutputLine: Encodable {
        var kind = "output"
        var target: String
        var state: String
        var connects: Int
        var drops: Int
        var framesWritten: Int
        var framesDropped: Int
        var lastError: String?
        var at: String
    }

    /// An ISO 8601 time with milliseconds, in UTC.
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    func record(_ record: LayerItemRecord, layer: String) {
        append(
            ItemLine(
                layer: layer, item: record.item + 1, source: SourceRedaction.redacted(record.source), canvasStart: record.start.seconds,
                canvasEnd: record.end.seconds, wallClockStart: record.wallClockStart.map { Self.timestamp($0) },
                status: record.status.rawValue, error: record.error.map(ErrorReport.init), loudness: record.loudness))
    }

    func record(_ status: ChannelTargetStatus) {
        append(
            OutputLine(
                target: status.target, state: status.state.rawValue, connects: status.connects, drops: status.drops,
                framesWritten: status.framesWritten, framesDropped: status.framesDropped, lastError: status.lastError,
                at: Self.timestamp(Date())))
    }

    private func append(_ line: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(line) else { return }
        data.append(0x0A)
        _ = data.withUnsafeBytes { DescriptorWrite.all($0, to: descriptor) }
    }
}
