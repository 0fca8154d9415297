import CFFmpeg

extension FormatContext {
    /// Reads the container's and every stream's parameters (after `findStreamInfo`).
    func makeDescription() -> AssetDescription {
        let ctx = pointer.pointee
        let containerDuration = ctx.duration > 0 && ctx.duration != FFmpegConstants.noPTS
            ? MediaTime(value: ctx.duration, timescale: 1_000_000) : MediaTime.indefinite
        let containerStart = ctx.start_time != FFmpegConstants.noPTS
            ? MediaTime(value: ctx.start_time, timescale: 1_000_000) : MediaTime.zero
        let tracks = (0..<streamCount).map { makeTrack(index: $0, containerStart: containerStart, containerDuration: containerDuration) }
        var duration = containerDuration
        if !duration.isNumeric {
            // No container duration: the longest track's, when any is known.
            duration = tracks.map(\.timeRange.duration).filter(\.isNumeric).max() ?? .indefinite
        }
        return AssetDescription(
            formatName: ctx.iformat.map { String(cString: $0.pointee.name) } ?? "unknown",
            formatLongName: ctx.iformat.flatMap { $0.pointee.long_name.map { String(cString: $0) } },
            duration: duration,
            startTime: containerStart,
            bitRate: ctx.bit_rate > 0 ? Int(ctx.bit_rate) : nil,
            tracks: tracks,
            metadata: Self.dictionary(ctx.metadata)
        )
    }

    private func makeTrack(index: Int, containerStart: MediaTime, containerDuration: MediaTime) -> AssetTrack {
        let streamPointer = stream(at: index)
        let st = streamPointer.pointee
        let par = st.codecpar.pointee
        let mediaType = Self.mediaType(par.codec_type)
        let start = MediaTime(ffmpegTimestamp: st.start_time, timeBase: st.time_base)
        var duration = MediaTime(ffmpegTimestamp: st.duration, timeBase: st.time_base)
        if !duration.isNumeric || st.duration <= 0 {
            // Matroska and others leave stream durations unset: the container's span stands in.
            duration = containerDuration.isNumeric ? containerDuration - ((start.isNumeric ? start : containerStart) - containerStart) : .indefinite
        }
        var track = AssetTrack(
            index: index,
            trackID: st.id != 0 ? Int(st.id) : index + 1,
            mediaType: mediaType,
            codecName: String(cString: avcodec_get_name(par.codec_id)),
            isPlayable: avcodec_find_decoder(par.codec_id) != nil,
            bitRate: par.bit_rate > 0 ? Int(par.bit_rate) : nil,
            frameCount: st.nb_frames > 0 ? Int(st.nb_frames) : nil,
            timeRange: TimeRange(start: start.isNumeric ? start : containerStart, duration: duration),
            language: Self.dictionary(st.metadata)["language"].flatMap { $0 == "und" ? nil : $0 }
        )
        switch mediaType {
        case .video:
            var sar = av_guess_sample_aspect_ratio(pointer, streamPointer, nil)
            if sar.num <= 0 || sar.den <= 0 { sar = AVRational(num: 1, den: 1) }
            var reducedNum: Int32 = 0, reducedDen: Int32 = 0
            av_reduce(&reducedNum, &reducedDen, Int64(sar.num), Int64(sar.den), Int64(Int32.max))
            let rate = st.avg_frame_rate.isValidPositive ? st.avg_frame_rate : st.r_frame_rate
            track.video = VideoTrackInfo(
                naturalSize: PixelSize(width: Int(par.width), height: Int(par.height)),
                pixelAspectRatio: PixelAspectRatio(horizontal: Int(reducedNum), vertical: Int(reducedDen)),
                orientation: Self.orientation(of: streamPointer),
                pixelFormat: av_get_pix_fmt_name(AVPixelFormat(rawValue: par.format)).map { String(cString: $0) },
                nominalFrameRate: rate.isValidPositive ? rate.doubleValue : nil
            )
        case .audio:
            var layout = par.ch_layout
            let description = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer -> String? in
                guard av_channel_layout_describe(&layout, buffer.baseAddress, buffer.count) > 0 else { return nil }
                return String(cString: buffer.baseAddress!)
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

    /// The display matrix's turn, as clockwise quarter turns after an optional mirror.
    static func orientation(of stream: UnsafeMutablePointer<AVStream>) -> VideoOrientation {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else {
            return .identity
        }
        return data.withMemoryRebound(to: Int32.self, capacity: 9) { matrix in
            // A negative determinant of the 2x2 part means the picture is mirrored; un-mirror the
            // first column before reading the rotation.
            let determinant = Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3])
            let mirrored = determinant < 0
            var m = [Int32](repeating: 0, count: 9)
            for i in 0..<9 { m[i] = matrix[i] }
            if mirrored { m[0] = -m[0]; m[3] = -m[3] }
            let counterClockwise = m.withUnsafeBufferPointer { av_display_rotation_get($0.baseAddress) }
            guard counterClockwise.isFinite else { return .identity }
            return VideoOrientation(rotation: Int((-counterClockwise).rounded()), isMirrored: mirrored)
        }
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
