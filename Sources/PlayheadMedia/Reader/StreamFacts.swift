internal import CFFmpeg

/// A video stream's facts, worked out in this one place from the container's and the codec's
/// parameters: stored size, pixel shape, display orientation, colours, timing. Probe, sessions,
/// the image generator and the converter all read them from here.
package struct VideoStreamFacts: Sendable, Hashable {
    package var index: Int32
    package var storedSize: PixelSize
    package var pixelAspectRatio: PixelAspectRatio
    package var orientation: VideoOrientation
    var color: ColorDescription
    var pixelFormatName: String?
    /// The layout the decoder produces (FFmpeg's number for it).
    private var storedFormat: Int32 = -1
    var storedPixelFormat: AVPixelFormat { AVPixelFormat(rawValue: storedFormat) }
    package var timeBase: Rational
    /// Frames per second as a ratio (average, or the container's base rate), when known.
    package var frameRate: Rational?
    /// The stream's own duration, when it declares a believable one.
    package var duration: MediaTime?
    package var startTime: MediaTime?

    /// The size a display shows (pixel aspect ratio, then orientation).
    var presentationSize: PixelSize { storedSize.presentationSize(pixelAspectRatio: pixelAspectRatio, orientation: orientation) }

    /// One frame's duration in the stream's time base (1 when the rate is unknown).
    var frameDurationTicks: Int64 {
        guard let frameRate, frameRate.isPositive else { return 1 }
        return max(1, av_rescale_q(1, AVRational(num: frameRate.den, den: frameRate.num), timeBase.ffmpeg))
    }

    /// One frame's duration, when the rate is known.
    package var frameDuration: MediaTime? {
        guard let frameRate, frameRate.isPositive else { return nil }
        return MediaTime(value: Int64(frameRate.den), timescale: frameRate.num)
    }

    init(stream: UnsafeMutablePointer<AVStream>, format: UnsafeMutablePointer<AVFormatContext>) {
        let st = stream.pointee
        let par = st.codecpar.pointee
        index = st.index
        storedSize = PixelSize(width: Int(par.width), height: Int(par.height))
        var sar = av_guess_sample_aspect_ratio(format, stream, nil)
        // FFmpeg's own rule: a ratio that is not positive, or that would shrink a side below one
        // pixel (1:2147483647 made a 64-wide picture 0 wide, and its frames black), is no ratio.
        if sar.num <= 0 || sar.den <= 0 || av_image_check_sar(UInt32(max(0, par.width)), UInt32(max(0, par.height)), sar) != 0 {
            sar = AVRational(num: 1, den: 1)
        }
        var num: Int32 = 0, den: Int32 = 0
        av_reduce(&num, &den, Int64(sar.num), Int64(sar.den), Int64(Int32.max))
        pixelAspectRatio = PixelAspectRatio(horizontal: Int(num), vertical: Int(den))
        orientation = Self.orientation(of: stream)
        color = Self.color(par)
        pixelFormatName = av_get_pix_fmt_name(AVPixelFormat(rawValue: par.format)).map { String(cString: $0) }
        storedFormat = par.format
        timeBase = Rational(st.time_base)
        let rate = st.avg_frame_rate.num > 0 && st.avg_frame_rate.den > 0 ? st.avg_frame_rate : st.r_frame_rate
        frameRate = rate.num > 0 && rate.den > 0 ? Rational(rate) : nil
        duration = DeclaredDuration.stream(st, in: format)
        startTime = st.start_time == FFmpegConstants.noPTS ? nil : MediaTime(ffmpegTimestamp: st.start_time, timeBase: st.time_base)
    }

    /// The orientation the stream's display matrix describes (identity without one).
    static func orientation(of stream: UnsafeMutablePointer<AVStream>) -> VideoOrientation {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else { return .identity }
        let matrix = UnsafeRawPointer(data).withMemoryRebound(to: Int32.self, capacity: 9) { Array(UnsafeBufferPointer(start: $0, count: 9)) }
        return VideoOrientation(displayMatrix: matrix)
    }

    static func color(_ par: AVCodecParameters) -> ColorDescription {
        func name(_ text: UnsafePointer<CChar>?) -> String? { text.map { String(cString: $0) } }
        return ColorDescription(
            matrix: par.color_space == AVCOL_SPC_UNSPECIFIED ? nil : name(av_color_space_name(par.color_space)),
            range: par.color_range == AVCOL_RANGE_JPEG ? .full : par.color_range == AVCOL_RANGE_MPEG ? .limited : nil,
            primaries: par.color_primaries == AVCOL_PRI_UNSPECIFIED ? nil : name(av_color_primaries_name(par.color_primaries)),
            transfer: par.color_trc == AVCOL_TRC_UNSPECIFIED ? nil : name(av_color_transfer_name(par.color_trc)))
    }
}

/// An audio stream's facts.
package struct AudioStreamFacts: Sendable, Hashable {
    package var index: Int32
    package var sampleRate: Int
    package var channelCount: Int
    var timeBase: Rational
    package var duration: MediaTime?
    package var startTime: MediaTime?
    /// How much audio before a point a decoder needs to have decoded for its output from that
    /// point on to be what decoding from the start gives: the codec's declared seek pre-roll
    /// (Opus: 80 ms), and never less than 200 ms (an AAC or Vorbis window's overlap, an MP3 bit
    /// reservoir span several frames).
    var preroll: MediaTime

    init(stream: UnsafeMutablePointer<AVStream>, format: UnsafeMutablePointer<AVFormatContext>) {
        let st = stream.pointee
        index = st.index
        let declared =
            st.codecpar.pointee.sample_rate > 0 && st.codecpar.pointee.seek_preroll > 0
            ? MediaTime(value: Int64(st.codecpar.pointee.seek_preroll), timescale: st.codecpar.pointee.sample_rate) : .zero
        preroll = max(declared, MediaTime(value: 1, timescale: 5))
        sampleRate = Int(st.codecpar.pointee.sample_rate)
        channelCount = Int(st.codecpar.pointee.ch_layout.nb_channels)
        timeBase = Rational(st.time_base)
        duration = DeclaredDuration.stream(st, in: format)
        startTime = st.start_time == FFmpegConstants.noPTS ? nil : MediaTime(ffmpegTimestamp: st.start_time, timeBase: st.time_base)
    }
}

/// A time base or rate, kept as plain integers (Sendable, Hashable).
package struct Rational: Sendable, Hashable {
    package var num: Int32
    package var den: Int32
    package init(num: Int32, den: Int32) {
        self.num = num
        self.den = den
    }
    init(_ r: AVRational) {
        num = r.num
        den = r.den
    }
    var ffmpeg: AVRational { AVRational(num: num, den: den) }
    package var isPositive: Bool { num > 0 && den > 0 }
    package var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
}

/// What a container's declared durations are worth. A declared duration is a hint, never
/// evidence of how much media there is: it may be missing, or the "unknown" sentinel of
/// ISO/IEC 14496-12 (all ones in a 32-bit field, which fragmented MP4s write), or absurd.
enum DeclaredDuration {
    /// A stream's duration, nil when missing, not positive, a sentinel, or only what was read so
    /// far (``coversOnlyWhatWasRead(in:)``).
    static func stream(_ st: AVStream, in format: UnsafeMutablePointer<AVFormatContext>) -> MediaTime? {
        guard isBelievable(st.duration), !coversOnlyWhatWasRead(in: format, stream: st), !isBitRateGuess(in: format) else { return nil }
        let duration = MediaTime(ffmpegTimestamp: st.duration, timeBase: st.time_base)
        return duration.isNumeric ? duration : nil
    }

    /// A Matroska track's own length, which the container does not give per track: the `DURATION`
    /// tag its muxers (FFmpeg's, mkvmerge) write once the track is complete (`HH:MM:SS.nnnnnnnnn`,
    /// read by FFmpeg's `av_parse_time`); nil for another container, or without a usable tag.
    static func tagged(_ st: AVStream, in format: UnsafeMutablePointer<AVFormatContext>) -> MediaTime? {
        guard let name = format.pointee.iformat?.pointee.name, String(cString: name).contains("matroska"),
            let entry = av_dict_get(st.metadata, "DURATION", nil, 0), let value = entry.pointee.value
        else { return nil }
        var microseconds: Int64 = 0
        guard av_parse_time(&microseconds, value, 1) == 0, microseconds > 0 else { return nil }
        return MediaTime(value: microseconds, timescale: 1_000_000)
    }

    /// A fragmented MP4 read from a source that cannot seek: its `moov` indexes no samples, so
    /// the durations FFmpeg reports are those of the fragments read while probing (2 s of a 20 s
    /// stream), not the stream's. A seekable one is read to its end when opened, and a faststart
    /// MP4's index counts every sample.
    static func coversOnlyWhatWasRead(in format: UnsafeMutablePointer<AVFormatContext>, stream st: AVStream) -> Bool {
        guard let pb = format.pointee.pb, pb.pointee.seekable == 0,
            let name = format.pointee.iformat?.pointee.name, String(cString: name).contains("mp4")
        else { return false }
        let type = st.codecpar.pointee.codec_type
        return (type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO) && st.nb_frames == 0
    }

    /// A raw AAC stream (ADTS, LATM) has no duration: FFmpeg's figure is its size over the bit
    /// rate of its first packets, which for a variable bit rate (AAC's usual) may be off by
    /// several times.
    static func isBitRateGuess(in format: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard format.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE, let name = format.pointee.iformat?.pointee.name else {
            return false
        }
        return ["aac", "loas"].contains(String(cString: name))
    }

    static func isBelievable(_ ticks: Int64) -> Bool {
        ticks != FFmpegConstants.noPTS && ticks > 0 && ticks != Int64(UInt32.max) && ticks != Int64.max
    }

    /// The asset's duration: the container's, unless the streams give it the lie. When streams
    /// declared the "unknown" sentinel and none declared a real duration, the container's figure
    /// (derived from the same header) is not believed either; when the container claims far more
    /// than its longest stream, the stream's is taken.
    static func asset(container: Int64, streams: [AVStream], in format: UnsafeMutablePointer<AVFormatContext>) -> MediaTime? {
        if streams.contains(where: { coversOnlyWhatWasRead(in: format, stream: $0) }) || isBitRateGuess(in: format) { return nil }
        let known = streams.compactMap { st -> MediaTime? in
            guard let d = stream(st, in: format) else { return nil }
            let start = st.start_time == FFmpegConstants.noPTS ? MediaTime.zero : MediaTime(ffmpegTimestamp: st.start_time, timeBase: st.time_base)
            return d + (start.isNumeric ? start : .zero)
        }
        let sentinel = streams.contains { $0.duration == Int64(UInt32.max) || $0.duration == Int64.max }
        let longest = known.max()
        guard container > 0, container != FFmpegConstants.noPTS else { return longest }
        let declared = MediaTime(value: container, timescale: 1_000_000)
        if let longest {
            return declared.seconds > 2 * longest.seconds + 60 ? longest : declared
        }
        return sentinel ? nil : declared
    }
}
