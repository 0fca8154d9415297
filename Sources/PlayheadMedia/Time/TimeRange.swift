/// A span of a timeline: a start and a duration.
public struct TimeRange: Sendable, Hashable, CustomStringConvertible {
    /// Where the range begins.
    public var start: MediaTime
    /// How long it lasts.
    public var duration: MediaTime

    /// A range of `duration` from `start`.
    /// - Parameters:
    ///   - start: where the range begins.
    ///   - duration: how long it lasts.
    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// The range from `start` up to `end`, not included.
    /// - Parameters:
    ///   - start: where the range begins.
    ///   - end: the first time after the range.
    public init(start: MediaTime, end: MediaTime) {
        self.start = start
        self.duration = end - start
    }

    /// The first time after the range.
    public var end: MediaTime { start + duration }

    /// Whether the range can be used: a numeric start, and a duration that is a numeric time not
    /// negative or +infinity (to the end); `TimeRange(start: 5, end: 1)` is not. What takes a range
    /// refuses an invalid one with `state.invalidArgument`.
    public var isValid: Bool { start.isNumeric && (duration.isNumeric ? duration >= .zero : duration == .positiveInfinity) }

    /// `true` when `time` lies in `[start, end)`.
    /// - Parameter time: the time to look for.
    /// - Returns: `true` when `start <= time < end`.
    public func contains(_ time: MediaTime) -> Bool {
        time >= start && time < end
    }

    public var description: String { "[\(start.seconds)s, +\(duration.seconds)s)" }
}
