internal import CFFmpeg

/// Encrypted tracks (ISO Common Encryption in MP4: `cenc`, `cens`, `cbc1`, `cbcs`). FFmpeg marks
/// every packet of a protected track with its encryption information (`AV_PKT_DATA_ENCRYPTION_INFO`,
/// which names the scheme); nothing known before packets are read says so reliably (the codec tag
/// is the original format's, and the initialization data exists only with a `pssh` box, on one
/// stream). So the demuxer looks at the first packets of each stream when it opens (and puts them
/// back), and its read rule refuses any encrypted packet with `decode.encrypted`: without the key
/// a decoder makes garbage frames and silence.
package enum Encryption {
    /// The scheme of an encrypted packet (`cenc`, `cbcs`, …; `encrypted` when it names none), or nil.
    static func scheme(of packet: UnsafeMutablePointer<AVPacket>) -> String? {
        var size = 0
        guard let data = av_packet_get_side_data(packet, AV_PKT_DATA_ENCRYPTION_INFO, &size) else { return nil }
        guard let info = av_encryption_info_get_side_data(data, size) else { return "encrypted" }
        defer { av_encryption_info_free(info) }
        return fourCC(info.pointee.scheme) ?? "encrypted"
    }

    /// A big-endian four-character code as text, nil when it is not printable.
    static func fourCC(_ code: UInt32) -> String? {
        let bytes = [24, 16, 8, 0].map { UInt8((code >> UInt32($0)) & 0xFF) }
        guard code != 0, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func refusal(scheme: String, stream: Int32, file: String) -> PlayheadError {
        PlayheadError(
            code: .encrypted,
            message:
                "stream \(stream) is encrypted (\(scheme == "encrypted" ? "an unnamed scheme" : "scheme \(scheme)")): it cannot be decoded without its key",
            file: file)
    }
}
