internal import CFFmpeg

/// The options a source is opened with: the one place that turns ``AssetOptions`` into FFmpeg's
/// protocol options, and the one rule for what is a path and what a URL.
package enum SourceOptions {
    /// Schemes read over a network, which get the stall timeout (and HTTP, reconnection).
    static let networkSchemes: Set<String> = ["http", "https", "tcp", "tls", "udp", "rtp", "rtsp", "rtmp", "rtmps", "hls", "ftp", "sftp", "srt"]

    /// The scheme of `source` in lower case (`http` of `http://…`, `hls` of `hls+https://…`), nil
    /// for a path.
    static func scheme(of source: String) -> String? {
        guard let end = source.range(of: "://") else { return nil }
        let scheme = source[..<end.lowerBound].lowercased()
        return scheme.split(separator: "+").first.map(String.init)
    }

    /// Whether `source` is a path (checked as a local file first), not a URL such as `http://…`,
    /// `pipe:0` or `data:…`.
    package static func isPath(_ source: String) -> Bool {
        !(source.contains("://") || source.hasPrefix("pipe:") || source.hasPrefix("data:"))
    }

    /// Whether `source` is an HTTP(S) file read through bounded range requests of our own
    /// (``HTTPRangeReader``): not a playlist (`hls+http://…`, a `.m3u8`/`.m3u` name), whose
    /// demuxer opens its segments through FFmpeg's HTTP and wants the playlist's context to be one.
    static func readsInRanges(_ source: String) -> Bool {
        let lowered = source.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return false }
        let path = lowered.prefix { $0 != "?" && $0 != "#" }
        return !(path.hasSuffix(".m3u8") || path.hasSuffix(".m3u"))
    }

    /// A dictionary for `avformat_open_input` (the caller frees it; nil when there is nothing to set).
    static func dictionary(for source: String, _ options: AssetOptions) -> OpaquePointer? {
        var dictionary: OpaquePointer?
        guard let scheme = scheme(of: source), networkSchemes.contains(scheme) else { return nil }
        if let stall = options.stallTimeout {
            // Microseconds without a byte before a read or a connect fails with ETIMEDOUT; the
            // HLS demuxer passes it on to the playlists and segments it opens.
            av_dict_set(&dictionary, "rw_timeout", String(max(1, microseconds(stall))), 0)
        }
        if scheme == "http" || scheme == "https" || scheme == "hls" {
            // Never back off longer than the stall timeout: a source that keeps failing ends
            // within about the bound the caller chose.
            let limit = options.stallTimeout.map { min($0, options.reconnectDelayLimit) } ?? options.reconnectDelayLimit
            let delay = Int(max(0, microseconds(limit) / 1_000_000))
            if delay > 0 {
                // Reconnect on a dropped connection or a network error, resuming with a range
                // request at the byte where it broke, backing off up to `delay` seconds.
                av_dict_set(&dictionary, "reconnect", "1", 0)
                av_dict_set(&dictionary, "reconnect_streamed", "1", 0)
                av_dict_set(&dictionary, "reconnect_on_network_error", "1", 0)
                av_dict_set(&dictionary, "reconnect_delay_max", String(delay), 0)
            }
        }
        return dictionary
    }

    /// A stall timeout in nanoseconds, at least one microsecond.
    static func nanoseconds(_ duration: Duration) -> UInt64 { UInt64(max(1, microseconds(duration))) * 1000 }

    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
