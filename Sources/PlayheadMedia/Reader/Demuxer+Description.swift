internal import CFFmpeg

extension Demuxer {
    /// Everything the container and its streams say, for an ``Asset``'s keys. Durations are the
    /// declared ones when believable (``DeclaredDuration``), unknown otherwise.
    package func describe() -> AssetDescription {
        let ctx = context.pointer.pointee
        let streams = context.streams
        let duration = DeclaredDuration.asset(container: ctx.duration, streams: streams.map(\.pointee), in: context.pointer)
        let containerStart = self.containerStart
        let playing = Set([video?.index, audio?.index].compactMap { $0 })
        let tracks = streams.map { stream in
            var track = makeTrack(stream, containerStart: containerStart, containerDuration: duration)
            track.isSelected = playing.contains(stream.pointee.index)
            return track
        }
        return AssetDescription(
            formatName: context.formatName,
            formatLongName: ctx.iformat.flatMap { $0.pointee.long_name.map { String(cString: $0) } },
            duration: duration ?? .indefinite,
            startTime: containerStart,
            bitRate: ctx.bit_rate > 0 && duration != nil ? Int(ctx.bit_rate) : nil,
            tracks: tracks,
            metadata: Self.dictionary(ctx.metadata),
            chapters: chapters,
            variants: variants,
            commonMetadata: AssetMetadata(
                tags: Self.dictionary(ctx.metadata),
                fallback: audio.flatMap { context.stream(at: Int($0.index)) }.map { Self.dictionary($0.pointee.metadata) } ?? [:]),
            coverArt: coverArt,
            isOneShot: !canSeek,
            byteCount: byteCount,
            noPicture: video == nil ? missingVideo() : nil,
            unmetSelection: audioChoiceFailure
        )
    }

    /// The container's chapters, each on the asset's timeline (in its own time base; a chapter
    /// without a usable start is left out, one without a usable end lasts an unknown time).
    private var chapters: [AssetChapter] {
        let ctx = context.pointer.pointee
        guard ctx.nb_chapters > 0, let list = ctx.chapters else { return [] }
        return (0..<Int(ctx.nb_chapters)).compactMap { i -> AssetChapter? in
            guard let chapter = list[i]?.pointee else { return nil }
            let start = MediaTime(ffmpegTimestamp: chapter.start, timeBase: chapter.time_base)
            guard start.isNumeric else { return nil }
            let end = MediaTime(ffmpegTimestamp: chapter.end, timeBase: chapter.time_base)
            var tags = Self.dictionary(chapter.metadata)
            let title = tags.removeValue(forKey: "title")
            return AssetChapter(
                id: chapter.id, title: title, timeRange: TimeRange(start: start, duration: end.isNumeric && end >= start ? end - start : .indefinite),
                metadata: tags)
        }
    }

    /// The first picture attached to the file (cover art), if any.
    private var coverArt: AssetCoverArt? {
        guard let stream = context.streams.first(where: { $0.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 }) else { return nil }
        let parameters = stream.pointee.codecpar.pointee
        let size = PixelSize(width: Int(parameters.width), height: Int(parameters.height))
        return AssetCoverArt(trackIndex: Int(stream.pointee.index), codecName: StreamDecoder.codecName(parameters), size: size.isEmpty ? nil : size)
    }

    /// The size of the one file read, when the I/O layer knows it (a playlist's size is not the media's).
    private var byteCount: Int64? {
        guard canSeek, !context.formatName.contains("hls"), let pb = context.pointer.pointee.pb else { return nil }
        let size = avio_size(pb)
        return size > 0 ? size : nil
    }

    private func makeTrack(_ stream: UnsafeMutablePointer<AVStream>, containerStart: MediaTime, containerDuration: MediaTime?) -> AssetTrack {
        let st = stream.pointee
        let par = st.codecpar.pointee
        let mediaType = Self.mediaType(par.codec_type)
        let start = MediaTime(ffmpegTimestamp: st.start_time, timeBase: st.time_base)
        let trackStart = start.isNumeric ? start : containerStart
        // Matroska's tracks have a duration of their own only as a tag (believed when it ends
        // within the container: a stale one a tool copied may not); streams without one span the
        // container.
        let spanned = containerDuration.map { $0 - (trackStart - containerStart) }
        let tagged = DeclaredDuration.tagged(st, in: context.pointer).flatMap { tag in
            spanned.map { tag <= $0 + MediaTime(value: 1, timescale: 10) } ?? true ? tag : nil
        }
        let duration = DeclaredDuration.stream(st, in: context.pointer) ?? tagged ?? spanned ?? .indefinite
        let candidate = Self.candidate(stream)
        var track = AssetTrack(
            index: Int(st.index),
            trackID: st.id != 0 ? Int(st.id) : Int(st.index) + 1,
            mediaType: mediaType,
            codecName: StreamDecoder.codecName(par),
            isPlayable: avcodec_find_decoder(par.codec_id) != nil && encryption[st.index] == nil,
            bitRate: par.bit_rate > 0 ? Int(par.bit_rate) : nil,
            frameCount: st.nb_frames > 0 ? Int(st.nb_frames) : nil,
            timeRange: TimeRange(start: trackStart, duration: duration),
            language: candidate.language
        )
        track.encryptionScheme = encryption[st.index]
        track.title = candidate.title
        track.flags = candidate.flags
        switch mediaType {
        case .video:
            let facts = VideoStreamFacts(stream: stream, format: context.pointer)
            track.video = VideoTrackInfo(
                naturalSize: facts.storedSize, pixelAspectRatio: facts.pixelAspectRatio, orientation: facts.orientation,
                pixelFormat: facts.pixelFormatName, nominalFrameRate: facts.frameRate.map(\.doubleValue),
                color: facts.color)
        case .audio:
            var layout = par.ch_layout
            let description = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer -> String? in
                guard let base = buffer.baseAddress, av_channel_layout_describe(&layout, base, buffer.count) > 0 else { return nil }
                return String(cString: base)
            }
            track.audio = AudioTrackInfo(
                sampleRate: Int(par.sample_rate),
                channelCount: Int(par.ch_layout.nb_channels),
                channelLayout: description,
                sampleFormat: av_get_sample_fmt_name(AVSampleFormat(rawValue: par.format)).map { String(cString: $0) }
            )
        default:
            break
        }
        return track
    }

    /// What the choice of a track looks at of `stream` (``TrackChoice/resolve(kind:among:best:file:)``).
    static func candidate(_ stream: UnsafeMutablePointer<AVStream>) -> TrackCandidate {
        let st = stream.pointee
        let tags = dictionary(st.metadata)
        return TrackCandidate(
            index: Int(st.index), mediaType: mediaType(st.codecpar.pointee.codec_type), codecName: StreamDecoder.codecName(st.codecpar.pointee),
            language: tags["language"].flatMap { $0 == "und" ? nil : $0 }, title: tags["title"], flags: TrackFlags(rawValue: Int(st.disposition)),
            isDecodable: avcodec_find_decoder(st.codecpar.pointee.codec_id) != nil)
    }

    static func mediaType(_ type: AVMediaType) -> MediaType {
        switch type {
        case AVMEDIA_TYPE_VIDEO: return .video
        case AVMEDIA_TYPE_AUDIO: return .audio
        case AVMEDIA_TYPE_SUBTITLE: return .subtitle
        case AVMEDIA_TYPE_DATA: return .data
        case AVMEDIA_TYPE_ATTACHMENT: return .attachment
        default: return .unknown
        }
    }

    static func dictionary(_ dict: OpaquePointer?) -> [String: String] {
        var result: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(dict, "", entry, AV_DICT_IGNORE_SUFFIX) {
            result[String(cString: next.pointee.key)] = String(cString: next.pointee.value)
            entry = next
        }
        return result
    }
}
