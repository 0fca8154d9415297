import Foundation
import PlayheadMedia

extension ContactSheet {
    /// A time as a sheet labels it, counted from the clip's start: `MM:SS.ss` for a clip shorter
    /// than an hour, `HH:MM:SS` for a longer one. Cut, never rounded up: the label of a frame at
    /// 9.999 s says 00:09.99, not a time the frame does not reach.
    /// - Parameters:
    ///   - time: the time, from the clip's start.
    ///   - duration: the clip's duration (it chooses the form; not a number: `MM:SS.ss`).
    /// - Returns: the label.
    public static func timeLabel(_ time: MediaTime, duration: MediaTime) -> String {
        let seconds = time.isNumeric ? max(0, time.seconds) : 0
        let long = duration.isNumeric && duration.seconds >= 3600
        if long {
            let whole = Int(seconds.rounded(.down))
            return String(format: "%02d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
        }
        // In hundredths, with a nudge for binary fractions (0.29 is 0.28999… as a Double).
        let hundredths = Int((seconds * 100 + 1e-6).rounded(.down))
        return String(format: "%02d:%02d.%02d", hundredths / 6000, hundredths / 100 % 60, hundredths % 100)
    }
}

extension ContactSheet.Section {
    /// A file's section: `name` over the asset's facts (``details(of:)``), and a cell per result —
    /// its image labelled with the time it shows, or its error's message — counted from the
    /// clip's start (as the results' times, on the asset's own timeline, are not).
    /// - Parameters:
    ///   - asset: the asset the images come from.
    ///   - name: the title (the file's name as the user knows it).
    ///   - results: the image generator's results, in order.
    /// - Throws: ``PlayheadError`` when the asset's keys cannot be loaded.
    public init(asset: Asset, name: String, results: [AssetImageGenerator.Result]) async throws(PlayheadError) {
        let (duration, start) = try await asset.load(.duration, .startTime)
        let origin = start.isNumeric ? start : .zero
        let cells = results.map { result in
            if let image = result.image {
                return ContactSheet.Cell(
                    image: image, label: ContactSheet.timeLabel((result.actualTime ?? result.requestedTime) - origin, duration: duration))
            }
            return ContactSheet.Cell(
                failure: result.error?.message ?? "no image", label: ContactSheet.timeLabel(result.requestedTime - origin, duration: duration))
        }
        self.init(title: name, details: try await Self.details(of: asset), cells: cells)
    }

    /// The header lines of an asset: its size, duration, displayed dimensions and frame rate; its
    /// video and audio codecs and its bit rate. What is not known is left out.
    /// - Parameter asset: the asset described.
    /// - Returns: two lines (fewer when little is known).
    /// - Throws: ``PlayheadError`` when the asset's keys cannot be loaded.
    public static func details(of asset: Asset) async throws(PlayheadError) -> [String] {
        let (tracks, duration, bitRate, byteCount) = try await asset.load(.tracks, .duration, .bitRate, .byteCount)
        let video = tracks.first { $0.playsAsVideo }
        let audio = tracks.first { $0.mediaType == .audio && $0.isSelected }
        var first: [String] = []
        if let byteCount { first.append("Size " + Self.bytes(byteCount)) }
        if duration.isNumeric { first.append("Duration " + ContactSheet.timeLabel(duration, duration: duration)) }
        if let size = video?.presentationSize { first.append("\(size.width)x\(size.height)") }
        if let rate = video?.video?.nominalFrameRate, rate >= 0.001 { first.append(Self.number(rate, digits: 3) + " fps") }
        var second: [String] = []
        if let video { second.append("Video " + video.codecName) }
        if let audio {
            var text = "Audio " + audio.codecName
            if let info = audio.audio {
                text += " " + Self.number(Double(info.sampleRate) / 1000, digits: 3) + " kHz"
                text += " " + (info.channelLayout ?? "\(info.channelCount) channels")
            }
            second.append(text)
        }
        if let bitRate { second.append(Self.bitRate(bitRate)) }
        return [first, second].filter { !$0.isEmpty }.map { $0.joined(separator: "  ·  ") }
    }

    private static func number(_ value: Double, digits: Int) -> String {
        var text = String(format: "%.\(digits)f", value)
        while text.contains("."), text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func bytes(_ count: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : String(format: "%.1f %@", value, units[unit])
    }

    private static func bitRate(_ bits: Int) -> String {
        if bits >= 1_000_000 { return String(format: "%.2f Mb/s", Double(bits) / 1e6) }
        return bits >= 1000 ? String(format: "%.0f kb/s", Double(bits) / 1e3) : "\(bits) b/s"
    }
}
