internal import CFFmpeg

/// A file's cover picture (its first track flagged `attached_pic`), decoded by its own decoder
/// (``StreamDecoder``) and converted to RGB by the ``FrameConverter``, as any picture is.
package enum CoverArtDecoder {
    /// The cover picture of `demuxer`'s file, at its own size; nil when the file has none.
    /// - Parameter demuxer: the opened source (not read: the picture comes with the header).
    /// - Returns: the picture.
    /// - Throws: `decode.decoderNotFound`, `decode.decodeFailed` naming the file.
    package static func image(of demuxer: Demuxer) throws(PlayheadError) -> GeneratedImage? {
        guard let stream = demuxer.context.streams.first(where: { $0.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 }) else { return nil }
        let decoder = try StreamDecoder(stream: stream, threads: 1, source: demuxer.source)
        let frame = try OwnedFrame()
        var picture: GeneratedImage?
        var failure: PlayheadError?
        let take: (OwnedFrame) throws(PlayheadError) -> Bool = { decoded in
            let size = decoded.size
            guard !size.isEmpty else { return true }
            let layout = VideoGravity.resize.layout(stored: size, pixelAspectRatio: .square, orientation: .identity, canvas: size)
            do throws(PlayheadError) {
                let canvas = try OwnedFrame(size: size, format: .rgb24)
                try FrameConverter(layout: layout, format: .rgb24, source: demuxer.source).convert(decoded, into: canvas)
                picture = GeneratedImage.from(canvas)
            } catch {
                failure = error
            }
            av_frame_unref(decoded.pointer)
            return false
        }
        let packet = try OwnedPacket()
        guard av_packet_ref(packet.pointer, &stream.pointee.attached_pic) >= 0, packet.pointer.pointee.size > 0 else {
            throw PlayheadError(code: .decodeFailed, message: "the cover picture holds no data", file: demuxer.source)
        }
        if try decoder.decode(packet.pointer, into: frame, take) { _ = try decoder.decode(nil, into: frame, take) }
        if let failure { throw failure }
        guard let picture else {
            throw decoder.damage.first ?? PlayheadError(code: .decodeFailed, message: "the cover picture could not be decoded", file: demuxer.source)
        }
        return picture
    }
}
