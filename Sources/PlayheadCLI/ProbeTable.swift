import Foundation
import Playhead

/// The human-readable form of a probe: one block per file.
enum ProbeTable {
    static func render(_ reports: [AssetReport]) -> String {
        var out = ""
        for report in reports {
            guard report.status == "loaded" else {
                out +=
                    "\(Console.name(report.path))  \(report.status.uppercased())  \(report.error.map { "[\($0.code)] \($0.reason)\($0.cause.map { " (\($0))" } ?? "")" } ?? "")\n"
                continue
            }
            var header = "\(Console.name(report.path))  \(report.format ?? "?")"
            header += "  " + (report.duration.map { String(format: "%.3fs", $0) } ?? "duration unknown")
            if let bitRate = report.bitRate { header += "  \(bitRate / 1000) kb/s" }
            header += (report.isPlayable == true) ? "  playable" + partly(report) : "  not playable"
            out += header + "\n"
            for track in report.tracks ?? [] {
                out +=
                    "  #\(track.index) \(track.mediaType) \(track.codec)" + details(track)
                    + (track.encryption.map { " (encrypted: \($0))" } ?? (track.isPlayable ? "" : " (no decoder)"))
                    + (track.selected ? "  (plays)" : "") + "\n"
            }
            if let metadata = report.metadata {
                let said = [
                    ("title", metadata.title), ("artist", metadata.artist), ("album", metadata.album), ("date", metadata.date),
                    ("genre", metadata.genre), ("track", metadata.track),
                ].compactMap { key, value in value.map { "\(key) \"\(Console.name($0))\"" } }
                if !said.isEmpty { out += "  " + said.joined(separator: ", ") + "\n" }
            }
            if let cover = report.coverArt {
                let size = cover.width.flatMap { w in cover.height.map { " \(w)x\($0)" } } ?? ""
                out += "  cover picture \(cover.codec)\(size) (track #\(cover.track))\n"
            }
            for (number, variant) in (report.variants ?? []).enumerated() {
                var line = "  variant \(number + 1) \(variant.bandwidth / 1000) kb/s"
                if let width = variant.width, let height = variant.height { line += " \(width)x\(height)" }
                if let rate = variant.frameRate { line += String(format: " %.5g fps", rate) }
                line += " " + variant.codecs.joined(separator: " ") + " (tracks " + variant.tracks.map { "#\($0)" }.joined(separator: " ") + ")"
                out += line + (variant.selected ? "  (plays)" : "") + "\n"
            }
            for (number, chapter) in (report.chapters ?? []).enumerated() {
                let span = [chapter.start, chapter.end].map { $0.map { String(format: "%.3fs", $0) } ?? "?" }.joined(separator: "–")
                out += "  chapter \(number + 1) \(span)" + (chapter.title.map { " \"\(Console.name($0))\"" } ?? "") + "\n"
            }
        }
        return out
    }

    /// What of a playable file plays, when not all of it: a picture that cannot be decoded beside
    /// a sound that can is sound only (`play` then fails on the picture), and the other way round.
    /// A cover picture is not the file's picture.
    private static func partly(_ report: AssetReport) -> String {
        switch report.decodable {
        case (false?, true?): return " (sound only: no track of its picture can be decoded)"
        case (true?, false?): return " (picture only: no track of its sound can be decoded)"
        default: return ""
        }
    }

    private static func details(_ track: TrackReport) -> String {
        var parts: [String] = []
        if let size = track.naturalSize {
            parts.append("\(size.width)x\(size.height)")
            if let par = track.pixelAspectRatio, par.horizontal != par.vertical { parts.append("PAR \(par.horizontal):\(par.vertical)") }
            if let rotation = track.rotation, rotation != 0 { parts.append("rotated \(rotation)°") }
            if let shown = track.presentationSize, shown.width != size.width || shown.height != size.height {
                parts.append("shown \(shown.width)x\(shown.height)")
            }
            // (A cover picture has no rate: its stream's is a placeholder.)
            if let fps = track.nominalFrameRate, !(track.flags ?? []).contains("attached_pic") { parts.append(String(format: "%.3g fps", fps)) }
            if let pf = track.pixelFormat { parts.append(pf) }
            if let color = track.color, !color.brief.isEmpty { parts.append(color.brief) }
        }
        if let rate = track.sampleRate { parts.append("\(rate) Hz") }
        if let layout = track.channelLayout ?? track.channels.map({ "\($0) ch" }) { parts.append(layout) }
        if let language = track.language { parts.append(language) }
        if let title = track.title { parts.append("\"\(Console.name(title))\"") }
        if let flags = track.flags { parts.append(flags.joined(separator: " ")) }
        return parts.isEmpty ? "" : " " + parts.joined(separator: ", ")
    }
}
