internal import CFFmpeg
import Glibc

/// Where a channel's stream goes: written through libavformat's muxers and protocols.
///
/// | written as | target |
/// | --- | --- |
/// | HLS: a playlist and a rolling window of MPEG-TS segments beside it | `NAME.m3u8` |
/// | FLV over RTMP | `rtmp://host/app/stream` |
/// | MPEG-TS over SRT or UDP | `srt://host:port`, `udp://host:port` |
/// | a recording: MPEG-TS or fragmented MP4 | `NAME.ts`, `NAME.mp4` |
/// | MPEG-TS on standard output | `-` |
public struct ChannelTarget: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case hls, rtmp, srt, udp, transportStreamFile, mp4File, standardOutput
    }

    public let kind: Kind
    /// The path or URL as given (credentials, query values and an RTMP stream key are redacted in ``description``).
    public let location: String

    /// The target `text` names, or nil when it names none of the kinds above.
    /// - Parameter text: a path ending in `.m3u8`, `.ts` or `.mp4`; an `rtmp://`, `rtmps://`, `srt://` or `udp://`
    ///   URL; or `-` for standard output.
    public init?(_ text: String) {
        let lower = text.lowercased()
        let kind: Kind
        if text == "-" {
            kind = .standardOutput
        } else if lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") {
            kind = .rtmp
        } else if lower.hasPrefix("srt://") {
            kind = .srt
        } else if lower.hasPrefix("udp://") {
            kind = .udp
        } else if lower.contains("://") {
            return nil
        } else if lower.hasSuffix(".m3u8") {
            kind = .hls
        } else if lower.hasSuffix(".ts") {
            kind = .transportStreamFile
        } else if lower.hasSuffix(".mp4") {
            kind = .mp4File
        } else {
            return nil
        }
        self.kind = kind
        location = text
    }

    /// The muxer that writes it.
    var container: Muxer.Container {
        switch kind {
        case .hls: return .hls
        case .rtmp: return .flv
        case .srt, .udp, .transportStreamFile, .standardOutput: return .mpegts
        case .mp4File: return .mp4
        }
    }

    /// Where the muxer writes it.
    /// Where the muxer writes it (`hls`: the HLS files' owner, for an HLS target).
    func destination(deadline: OutputDeadline, openTimeout: Double, hls: HLSFolder?) throws(PlayheadError) -> Muxer.Destination {
        switch kind {
        case .transportStreamFile, .mp4File: return .file(path: location, replacing: false, keptBeside: true)
        case .standardOutput: return .descriptor(STDOUT_FILENO, name: "standard output")
        case .rtmp, .srt, .udp: return .network(url: location, deadline: deadline, openTimeout: openTimeout)
        case .hls:
            guard let hls else { throw PlayheadError(code: .invalidState, message: "an HLS target without its folder", file: description) }
            return .hls(hls, deadline: deadline)
        }
    }

    /// The header's options for this target (the container's own are the muxer's; HLS's are its folder's).
    func headerOptions(segmentSeconds: Double, hls: HLSFolder?) -> [String: String] {
        switch kind {
        case .hls: return hls?.headerOptions(segmentSeconds: segmentSeconds) ?? [:]
        case .rtmp: return ["flvflags": "no_duration_filesize"]
        default: return [:]
        }
    }

    /// A stream that a network peer takes: it may drop, and is reconnected with back-off.
    var isNetwork: Bool { kind == .rtmp || kind == .srt || kind == .udp }

    /// The muxer repeats the picture's parameter sets in-band before every keyframe (MPEG-TS
    /// readers join at any keyframe).
    var needsInBandParameters: Bool { container == .mpegts || container == .hls }

    /// The target as status, metrics, logs and errors show it (``SourceRedaction``: credentials,
    /// query values and an RTMP stream key redacted).
    public var description: String { SourceRedaction.redacted(location) }
}
