import Foundation
import PlayheadMedia

/// One layer of a composition: what it shows (a playlist of assets, looped or not, or a part of
/// each), where (a rectangle of the canvas, in canvas pixels), how the picture sits in it
/// (``VideoGravity``: fit with bars of the background, fill cropped, or stretch — pixel aspect
/// ratio and rotation honoured), and above which others (``zIndex``; equal ones in the order
/// added).
public struct CompositionLayer: Sendable {
    /// A layer's identity in its compositor.
    public struct ID: Sendable, Hashable, CustomStringConvertible {
        let value: Int
        public var description: String { "layer \(value)" }
    }

    /// The assets played one after another on the layer's own timeline.
    public var assets: [Asset]
    /// Where it is drawn (rounded down to even coordinates and sizes, for 4:2:0).
    public var rect: PixelRect
    /// Higher draws above lower.
    public var zIndex: Int
    /// How the picture fits the rectangle.
    public var gravity: VideoGravity
    /// How often the playlist plays.
    public var loop: LayerLoop
    /// The part of every item that plays, counted from each item's start as its container gives
    /// it (so the same span of every item of a playlist, whatever their first timestamps — as the
    /// `thumbnails` command's `--at` counts); nil: all of it, from its first frame.
    public var timeRange: TimeRange?
    /// What the layer shows once its content has ended.
    public var afterEnd: LayerAfterEnd
    /// The composition's sound comes from this layer (at most one layer of a compositor): its
    /// items' audio, pass for pass as its picture plays (loops, playlist, time range), silent
    /// where it shows nothing of its own. Written by sinks that carry sound
    /// (``AudioCarryingFrameSink``: ``MP4Sink``).
    public var providesAudio: Bool
    /// The playlist's schedule: when (on the wall clock) its first item began. A layer with one
    /// joins its playlist where the schedule says it is now — the item, the position in it, the
    /// loops completed (from the items' durations) — so a channel restarted after a crash or a
    /// deploy comes back on schedule rather than at the top of its playlist. Nil: the playlist
    /// starts when the layer does.
    public var scheduledStart: Date?
    /// Subtitles drawn into each item's picture before it is fitted into the rectangle (a track of
    /// the item, or a subtitle file); nil: none. A filler is drawn without.
    public var subtitles: SubtitleBurnIn?

    /// A layer; each argument sets the property of the same name.
    /// - Parameters:
    ///   - assets: the playlist, played one after another.
    ///   - rect: where the layer is drawn, in canvas pixels.
    ///   - zIndex: its place in the order of drawing; higher draws above lower.
    ///   - gravity: how the picture fits the rectangle.
    ///   - loop: how often the playlist plays.
    ///   - timeRange: the part of every item that plays; nil: all of it.
    ///   - afterEnd: what the layer shows once its content has ended.
    ///   - providesAudio: whether the layer's items give the composition sound.
    ///   - scheduledStart: when, on the wall clock, the playlist's first item began; nil: when the layer starts.
    ///   - subtitles: subtitles drawn into each item's picture; nil: none.
    public init(
        assets: [Asset], rect: PixelRect, zIndex: Int = 0, gravity: VideoGravity = .resizeAspect, loop: LayerLoop = .once,
        timeRange: TimeRange? = nil, afterEnd: LayerAfterEnd = .holdLastFrame, providesAudio: Bool = false, scheduledStart: Date? = nil,
        subtitles: SubtitleBurnIn? = nil
    ) {
        self.subtitles = subtitles
        self.scheduledStart = scheduledStart
        self.providesAudio = providesAudio
        self.assets = assets
        self.rect = rect
        self.zIndex = zIndex
        self.gravity = gravity
        self.loop = loop
        self.timeRange = timeRange
        self.afterEnd = afterEnd
    }
}

/// How many times a layer's playlist plays.
public enum LayerLoop: Sendable, Hashable {
    /// Once.
    case once
    /// This many times in all (at least 1).
    case times(Int)
    /// Until the composition ends.
    case forever
}

/// What a layer shows after its content has ended.
public enum LayerAfterEnd: String, Sendable, Hashable {
    /// The last frame stays.
    case holdLastFrame
    /// The background shows through.
    case clear
}
