import Foundation
import PlayheadMedia

/// How often a session plays its item.
public enum LoopPolicy: Sendable, Hashable {
    /// Once.
    case none
    /// This many times, back to back, gaplessly.
    case count(Int)
    /// Until stopped with ``PlaybackCoordinator/stopLooping(_:)`` or cancelled.
    case forever
}

/// One thing for a ``PlaybackCoordinator`` to play, with its policies.
public struct PlaybackRequest: Sendable, Hashable {
    /// A path, `-` or a URL, as ``Asset/init(source:options:logger:)`` takes it.
    public var source: String
    public var loop: LoopPolicy
    /// Pace at rate 1.0 on the clock, or deliver frames as fast as possible.
    public var realtime: Bool
    /// Canvas size, gravity, frame limit; `decoderThreads` 0 lets the coordinator share the cores.
    public var decoding: DecodeConfiguration
    /// Play only this part of the source.
    public var timeRange: TimeRange?
    /// How the source is opened (timeouts).
    public var assetOptions: AssetOptions

    /// The asset played instead of one opened from `source` (a byte source's asset, or one
    /// already loaded); nil: `source` is opened.
    public var asset: Asset? {
        get { assetReference?.asset }
        set { assetReference = newValue.map(AssetReference.init) }
    }
    private var assetReference: AssetReference?

    /// A request for an asset (`source` is its source).
    /// - Parameters:
    ///   - asset: the asset to play.
    ///   - loop: how often to play it.
    ///   - realtime: whether frames are paced at rate 1.0 on the coordinator's clock.
    ///   - decoding: canvas size, gravity and frame limit; `decoderThreads` 0 lets the coordinator share the cores.
    ///   - timeRange: the part of the asset to play; nil: all of it.
    public init(
        asset: Asset, loop: LoopPolicy = .none, realtime: Bool = false,
        decoding: DecodeConfiguration = DecodeConfiguration(), timeRange: TimeRange? = nil
    ) {
        self.init(source: asset.source, loop: loop, realtime: realtime, decoding: decoding, timeRange: timeRange)
        self.asset = asset
    }

    /// A request for `source`, opened as ``Asset/init(source:options:logger:)`` opens it when the session starts.
    /// - Parameters:
    ///   - source: a path, `-` or a URL.
    ///   - loop: how often to play it.
    ///   - realtime: whether frames are paced at rate 1.0 on the coordinator's clock.
    ///   - decoding: canvas size, gravity and frame limit; `decoderThreads` 0 lets the coordinator share the cores.
    ///   - timeRange: the part of the source to play; nil: all of it.
    ///   - assetOptions: how the source is opened (timeouts).
    public init(
        source: String, loop: LoopPolicy = .none, realtime: Bool = false,
        decoding: DecodeConfiguration = DecodeConfiguration(), timeRange: TimeRange? = nil,
        assetOptions: AssetOptions = AssetOptions()
    ) {
        self.source = source
        self.assetOptions = assetOptions
        self.loop = loop
        self.realtime = realtime
        self.decoding = decoding
        self.timeRange = timeRange
    }
}

/// An asset, equal to another only when it is the same asset.
private struct AssetReference: Sendable, Hashable {
    let asset: Asset
    static func == (lhs: AssetReference, rhs: AssetReference) -> Bool { lhs.asset === rhs.asset }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(asset)) }
}

/// Names a session of a coordinator.
public struct SessionID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let value: Int
    /// The coordinator that made it (an id is answered only by its own coordinator).
    let coordinator: UInt64

    init(value: Int, coordinator: UInt64) {
        self.value = value
        self.coordinator = coordinator
    }

    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { lhs.value < rhs.value }
    public var description: String { "session \(value)" }
}

/// How a session ended.
public struct SessionOutcome: Sendable, Hashable {
    public enum Status: Sendable, Hashable {
        case completed
        case failed(PlayheadError)
        case cancelled
    }

    public var id: SessionID
    public var source: String
    public var status: Status
    public var framesPresented: Int
    public var framesDropped: Int
    public var loopsCompleted: Int
    /// Audio samples per channel presented (0 without an audio sink or audio track).
    public var audioFramesPresented: Int
    /// Damaged data decoded past (see ``DecodeResult/damagedPackets``), and the first damage.
    public var damagedPackets = 0
    public var firstDamage: PlayheadError?
}

/// A running session's progress, for live displays.
public struct SessionProgress: Sendable, Hashable {
    public var id: SessionID
    public var source: String
    public var framesPresented: Int
    public var loopsCompleted: Int
    public var loop: LoopPolicy
}

/// What a coordinator reports, in order.
public enum CoordinatorEvent: Sendable, Hashable {
    /// Accepted; waiting for a free slot.
    case queued(SessionID)
    case started(SessionID)
    case finished(SessionOutcome)
}
