/// A point or span on a media timeline, kept as an exact rational number `value / timescale` seconds.
///
/// `MediaTime` follows the model of a rational media time: besides numeric times it can be
/// *invalid* (no time at all), *indefinite* (a time that exists but is not known, such as the
/// duration of a live stream), or positive or negative *infinity*.
///
/// Comparison is exact (`1/2 == 2/4`), and arithmetic is exact whenever the result's timescale
/// fits; only then does it round, and the result says so in ``hasBeenRounded``.
public struct MediaTime: Sendable {
    /// The numerator: the time is `value / timescale` seconds.
    public let value: Int64
    /// The number of units per second (always positive for numeric times).
    public let timescale: Int32
    let kind: Kind
    /// `true` when arithmetic had to round to produce this time.
    public let hasBeenRounded: Bool

    enum Kind: UInt8, Sendable {
        case numeric, invalid, indefinite, positiveInfinity, negativeInfinity
    }

    private init(storage value: Int64, timescale: Int32, kind: Kind, rounded: Bool) {
        self.value = value
        self.timescale = timescale
        self.kind = kind
        self.hasBeenRounded = rounded
    }

    init(kind: Kind) {
        self.init(storage: 0, timescale: 0, kind: kind, rounded: false)
    }

    /// A numeric time of `value / timescale` seconds. A timescale of zero or less gives ``invalid``.
    /// - Parameters:
    ///   - value: the numerator.
    ///   - timescale: units per second.
    public init(value: Int64, timescale: Int32) {
        self.init(value: value, timescale: timescale, rounded: false)
    }

    init(value: Int64, timescale: Int32, rounded: Bool) {
        if timescale <= 0 {
            self.init(kind: .invalid)
        } else {
            self.init(storage: value, timescale: timescale, kind: .numeric, rounded: rounded)
        }
    }

    /// The time a decimal number of seconds says, exactly (`"6.4731334"` is 64731334/10⁷ s, not
    /// the nearest microsecond), as people and manifests write times: an optional sign, digits,
    /// an optional fraction. Beyond nanoseconds the fraction is rounded to the nearest
    /// nanosecond. Nil for anything else, or for more than 9·10⁹ whole seconds.
    /// - Parameter text: a decimal number of seconds, such as `12`, `-0.5` or `6.4731334`; spaces around it are
    ///   ignored.
    public init?(decimal text: String) {
        var digits = Substring(text)
        while digits.first == " " { digits = digits.dropFirst() }
        while digits.last == " " { digits = digits.dropLast() }
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count > 1 ? parts[1] : ""
        guard !(whole.isEmpty && fraction.isEmpty), whole.allSatisfy(Self.isDigit), fraction.allSatisfy(Self.isDigit),
            whole.count <= 10
        else { return nil }
        var kept = fraction.prefix(9)
        var roundUp = false
        if fraction.count > 9, let next = fraction.dropFirst(9).first, next >= "5" { roundUp = true }
        while kept.count > 0, kept.last == "0", !roundUp { kept = kept.dropLast() }
        var scale: Int64 = 1
        for _ in 0..<kept.count { scale *= 10 }
        // At most 9,000,000,000 whole seconds: their nanoseconds fit in an Int64, whatever follows.
        guard let seconds = Int64(whole.isEmpty ? "0" : whole), seconds <= Self.largestDecimalSeconds else { return nil }
        var value = seconds * scale + (Int64(kept.isEmpty ? "0" : kept) ?? 0)
        if roundUp { value += 1 }
        self.init(value: negative ? -value : value, timescale: Int32(scale), rounded: fraction.count > 9)
    }

    /// The most whole seconds ``init(decimal:)`` reads (about 285 years).
    public static let largestDecimalSeconds: Int64 = 9_000_000_000

    private static func isDigit(_ c: Character) -> Bool { c.isASCII && c.isNumber }

    /// The nearest time to `seconds` on the given timescale (rounded half away from zero).
    /// NaN gives ``invalid``; ±infinity gives ``positiveInfinity`` / ``negativeInfinity``.
    /// - Parameters:
    ///   - seconds: the time in seconds; one too large for `preferredTimescale` gives ±infinity.
    ///   - preferredTimescale: units per second of the result; zero or less gives ``invalid``.
    public init(seconds: Double, preferredTimescale: Int32 = 1_000_000) {
        if seconds.isNaN || preferredTimescale <= 0 {
            self.init(kind: .invalid)
        } else if seconds.isInfinite {
            self.init(kind: seconds > 0 ? .positiveInfinity : .negativeInfinity)
        } else {
            let scaled = (seconds * Double(preferredTimescale)).rounded(.toNearestOrAwayFromZero)
            guard let exact = Int64(exactly: scaled) else {
                self.init(kind: seconds > 0 ? .positiveInfinity : .negativeInfinity)
                return
            }
            self.init(
                value: exact, timescale: preferredTimescale,
                rounded: Double(exact) / Double(preferredTimescale) != seconds)
        }
    }

    /// Zero seconds.
    public static let zero = MediaTime(value: 0, timescale: 1)
    /// Not a time at all: the result of undefined operations.
    public static let invalid = MediaTime(kind: .invalid)
    /// A time that exists but is unknown, such as the duration of a live source.
    public static let indefinite = MediaTime(kind: .indefinite)
    /// Later than every numeric time.
    public static let positiveInfinity = MediaTime(kind: .positiveInfinity)
    /// Earlier than every numeric time.
    public static let negativeInfinity = MediaTime(kind: .negativeInfinity)

    /// `true` for every time but ``invalid``.
    public var isValid: Bool { kind != .invalid }
    /// `true` for ordinary finite times.
    public var isNumeric: Bool { kind == .numeric }
    /// `true` for ``indefinite``.
    public var isIndefinite: Bool { kind == .indefinite }
    /// `true` for ``positiveInfinity``.
    public var isPositiveInfinity: Bool { kind == .positiveInfinity }
    /// `true` for ``negativeInfinity``.
    public var isNegativeInfinity: Bool { kind == .negativeInfinity }

    /// The time in seconds as a floating-point number (NaN for invalid and indefinite times).
    public var seconds: Double {
        switch kind {
        case .numeric: return Double(value) / Double(timescale)
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        case .invalid, .indefinite: return .nan
        }
    }

    /// The same time on another timescale, rounding half away from zero when it is not exact.
    /// Non-numeric times are returned unchanged; an overflow gives ±infinity.
    /// - Parameter newScale: units per second of the result; zero or less gives ``invalid``.
    /// - Returns: the time on `newScale`; ``hasBeenRounded`` when it was rounded, here or before.
    public func converted(toTimescale newScale: Int32) -> MediaTime {
        guard kind == .numeric, newScale > 0 else { return newScale > 0 ? self : .invalid }
        if newScale == timescale { return self }
        guard let (q, exact) = RationalMath.rescale(value, multiplier: Int64(newScale), divisor: Int64(timescale)) else {
            return value > 0 ? .positiveInfinity : .negativeInfinity
        }
        return MediaTime(value: q, timescale: newScale, rounded: hasBeenRounded || !exact)
    }
}
