import PlayheadMedia

/// How a player presents.
public struct PlayerConfiguration: Sendable, Hashable {
    /// `true`: frames reach the output at their presentation time on the playback clock (late
    /// frames are dropped and counted). `false`: every frame is delivered in order, as fast as
    /// decoding allows.
    public var realtime: Bool
    /// Canvas size, gravity and decoder threads for every item.
    public var decoding: DecodeConfiguration
    /// The one format every item's audio is converted to; nil fields are taken from the first item
    /// that presents audio.
    public var audioFormat: AudioFormat

    /// A configuration; each argument sets the property of the same name.
    /// - Parameters:
    ///   - realtime: `true` paces frames on the playback clock; `false` delivers them as fast as decoding allows.
    ///   - decoding: canvas size, gravity and decoder threads for every item.
    ///   - audioFormat: the one format every item's audio is converted to.
    public init(realtime: Bool = false, decoding: DecodeConfiguration = DecodeConfiguration(), audioFormat: AudioFormat = AudioFormat()) {
        self.realtime = realtime
        self.decoding = decoding
        self.audioFormat = audioFormat
    }
}

/// What a player reports, in order.
public enum PlayerEvent: Sendable, Hashable {
    case currentItemChanged(from: PlayerItem?, to: PlayerItem?)
    case rateChanged(Double)
    case itemEnded(PlayerItem)
    case itemFailed(PlayerItem, PlayheadError)
}

/// What a player presented so far.
public struct PlaybackStatistics: Sendable, Hashable {
    public var framesPresented: Int
    public var framesDropped: Int
    /// Seconds by which presented frames missed their time (realtime mode only), in fixed space.
    public var lateness: LatenessHistogram
    /// Realtime only: for each item after the first, seconds by which its first frame missed the
    /// end of the previous item's last frame (0: a seamless transition or loop seam).
    public var seams = LatenessHistogram()
    /// Audio samples per channel presented.
    public var audioFramesPresented = 0
    /// Realtime only: times the timeline moved to follow audio that reached the output late
    /// (audio is the master clock; video follows it).
    public var audioResyncs = 0
    /// Damaged data decoded past in the items played (see ``DecodeResult/damagedPackets``).
    public var damagedPackets = 0
    /// The first damage met.
    public var firstDamage: PlayheadError?

    /// The lateness below which `fraction` of frames were presented (0.99 for p99).
    /// - Parameter fraction: the share of frames, 0…1.
    /// - Returns: seconds, within 5 % of the exact value; nil before a frame was presented in realtime mode.
    public func latenessPercentile(_ fraction: Double) -> Double? {
        lateness.percentile(fraction)
    }
}

/// Identifies a periodic time observer, for removal.
public struct TimeObserverToken: Sendable, Hashable {
    let id: Int
}

extension PlayerItem: Hashable {
    public static func == (lhs: PlayerItem, rhs: PlayerItem) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
