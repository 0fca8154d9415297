/// The kind of data a track carries.
public enum MediaType: String, Sendable, Hashable, CaseIterable {
    case video, audio, subtitle, data, attachment, unknown
}

/// One stream of an asset, as the container and codec describe it.
public struct AssetTrack: Sendable, Hashable, Identifiable {
    /// The stream's position in the container (0-based).
    public var index: Int
    /// The container's own identifier for the track (the MP4 track ID, the Matroska track number);
    /// `index + 1` when the container has none.
    public var trackID: Int
    public var id: Int { index }
    /// Video, audio, subtitle, …
    public var mediaType: MediaType
    /// FFmpeg's short codec name, such as `h264`, `hevc`, `vp9`, `aac`, `opus`.
    public var codecName: String
    /// `true` when a decoder for the codec exists in this build and the track is not encrypted.
    public var isPlayable: Bool
    /// The Common Encryption scheme protecting the track (`cenc`, `cbcs`, …; `encrypted` when its
    /// packets name none), nil when it is in the clear. An encrypted track is not playable: reading
    /// it fails with `decode.encrypted`.
    public var encryptionScheme: String?
    /// The track's bit rate in bits per second, when known.
    public var bitRate: Int?
    /// The number of frames the container claims, when it says.
    public var frameCount: Int?
    /// The track's time span on the asset's timeline.
    public var timeRange: TimeRange
    /// The language tag (ISO 639), when the container has one.
    public var language: String?
    /// The track's own name, when the container gives one (`Director's commentary`).
    public var title: String?
    /// What the container says of the track's role: the default one, forced subtitles, a
    /// commentary, for the hearing impaired, a cover picture… (FFmpeg's stream dispositions).
    public var flags: TrackFlags = []
    /// The track plays: it is the video or the sound every reader of the asset reads (its
    /// ``AssetOptions/selection`` chose it). At most one of each kind; a cover picture never.
    public var isSelected = false
    /// Video properties; nil for other tracks.
    public var video: VideoTrackInfo?
    /// Audio properties; nil for other tracks.
    public var audio: AudioTrackInfo?

    /// A track of the given description (``encryptionScheme`` nil: in the clear).
    /// - Parameters:
    ///   - index: the stream's position in the container (0-based).
    ///   - trackID: the container's own identifier for the track.
    ///   - mediaType: what the track carries.
    ///   - codecName: FFmpeg's short codec name.
    ///   - isPlayable: whether the track can be decoded.
    ///   - bitRate: bits per second, when known.
    ///   - frameCount: the frames the container claims, when it says.
    ///   - timeRange: the track's span on the asset's timeline.
    ///   - language: the ISO 639 language tag, when there is one.
    ///   - video: video properties, for a video track.
    ///   - audio: audio properties, for an audio track.
    public init(
        index: Int, trackID: Int, mediaType: MediaType, codecName: String, isPlayable: Bool,
        bitRate: Int? = nil, frameCount: Int? = nil, timeRange: TimeRange, language: String? = nil,
        video: VideoTrackInfo? = nil, audio: AudioTrackInfo? = nil
    ) {
        self.index = index
        self.trackID = trackID
        self.mediaType = mediaType
        self.codecName = codecName
        self.isPlayable = isPlayable
        self.bitRate = bitRate
        self.frameCount = frameCount
        self.timeRange = timeRange
        self.language = language
        self.video = video
        self.audio = audio
    }

    /// A video track that plays as one: not a picture attached to the file (cover art, which
    /// FFmpeg lists as a video stream; ``TrackFlags/attachedPicture``). The rule every path asks.
    public var playsAsVideo: Bool { mediaType == .video && !flags.contains(.attachedPicture) }

    /// The stored frame size (video only).
    public var naturalSize: PixelSize? { video?.naturalSize }
    /// The size a display shows, after pixel aspect ratio and rotation (video only).
    public var presentationSize: PixelSize? { video?.presentationSize }
}

/// What describes a video track's pictures.
public struct VideoTrackInfo: Sendable, Hashable {
    /// The stored frame size in pixels.
    public var naturalSize: PixelSize
    /// The shape of a stored pixel (1:1 unless anamorphic).
    public var pixelAspectRatio: PixelAspectRatio
    /// The turn (and mirror) a display applies to show the picture upright.
    public var orientation: VideoOrientation
    /// FFmpeg's pixel format name, such as `yuv420p`.
    public var pixelFormat: String?
    /// The average frame rate in frames per second, when known.
    public var nominalFrameRate: Double?
    /// How the samples map to colours (matrix, range, primaries, transfer), as the stream is tagged.
    public var color: ColorDescription

    /// A video track's description.
    /// - Parameters:
    ///   - naturalSize: the stored frame size in pixels.
    ///   - pixelAspectRatio: the shape of a stored pixel.
    ///   - orientation: the turn (and mirror) a display applies.
    ///   - pixelFormat: FFmpeg's pixel format name, when known.
    ///   - nominalFrameRate: the average frame rate in frames per second, when known.
    ///   - color: how the samples map to colours; untagged by default.
    public init(
        naturalSize: PixelSize, pixelAspectRatio: PixelAspectRatio, orientation: VideoOrientation,
        pixelFormat: String?, nominalFrameRate: Double?, color: ColorDescription = ColorDescription()
    ) {
        self.naturalSize = naturalSize
        self.pixelAspectRatio = pixelAspectRatio
        self.orientation = orientation
        self.pixelFormat = pixelFormat
        self.nominalFrameRate = nominalFrameRate
        self.color = color
    }

    /// Clockwise degrees: 0, 90, 180 or 270.
    public var rotation: Int { orientation.rotation }

    /// The size a display shows: the width stretched by the pixel aspect ratio, then turned.
    public var presentationSize: PixelSize {
        naturalSize.presentationSize(pixelAspectRatio: pixelAspectRatio, orientation: orientation)
    }
}

/// What describes an audio track's sound.
public struct AudioTrackInfo: Sendable, Hashable {
    /// Samples per second.
    public var sampleRate: Int
    /// Number of channels.
    public var channelCount: Int
    /// FFmpeg's description of the channel layout, such as `stereo` or `5.1`.
    public var channelLayout: String?
    /// FFmpeg's sample format name, such as `fltp`.
    public var sampleFormat: String?

    /// An audio track's description.
    /// - Parameters:
    ///   - sampleRate: samples per second.
    ///   - channelCount: the number of channels.
    ///   - channelLayout: FFmpeg's description of the channel layout, when known.
    ///   - sampleFormat: FFmpeg's sample format name, when known.
    public init(sampleRate: Int, channelCount: Int, channelLayout: String?, sampleFormat: String?) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.channelLayout = channelLayout
        self.sampleFormat = sampleFormat
    }
}
