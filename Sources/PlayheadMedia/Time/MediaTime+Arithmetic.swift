extension MediaTime: Comparable, Hashable {
    /// Exact comparison. Order: negative infinity < numeric times < positive infinity < indefinite < invalid.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) < 0
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) == 0
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        if kind == .numeric {
            // Equal times must hash equally: hash the reduced fraction.
            let g = RationalMath.gcd(value.magnitude, UInt64(timescale))
            hasher.combine(value / Int64(g))
            hasher.combine(Int64(timescale) / Int64(g))
        }
    }

    private var orderRank: Int {
        switch kind {
        case .negativeInfinity: return 0
        case .numeric: return 1
        case .positiveInfinity: return 2
        case .indefinite: return 3
        case .invalid: return 4
        }
    }

    /// -1, 0 or 1 as `lhs` is earlier than, equal to or later than `rhs`.
    /// - Parameters:
    ///   - lhs: a time.
    ///   - rhs: the time it is compared with.
    /// - Returns: -1, 0 or 1, in the order `<` follows (times that are not numbers are ordered by kind).
    public static func compare(_ lhs: MediaTime, _ rhs: MediaTime) -> Int {
        if lhs.orderRank != rhs.orderRank { return lhs.orderRank < rhs.orderRank ? -1 : 1 }
        guard lhs.kind == .numeric else { return 0 }
        if lhs.timescale == rhs.timescale { return lhs.value == rhs.value ? 0 : (lhs.value < rhs.value ? -1 : 1) }
        // Cross-multiply in 128 bits: exact for every pair of numeric times.
        let a = lhs.value.multipliedFullWidth(by: Int64(rhs.timescale))
        let b = rhs.value.multipliedFullWidth(by: Int64(lhs.timescale))
        if a.high != b.high { return a.high < b.high ? -1 : 1 }
        if a.low != b.low { return a.low < b.low ? -1 : 1 }
        return 0
    }

    /// The sum of two times: exact on the least common multiple of their timescales when it fits, else on the
    /// larger timescale, rounded.
    /// - Parameters:
    ///   - lhs: a time.
    ///   - rhs: the time added to it.
    /// - Returns: the sum; ``invalid`` when either is invalid or for +∞ + −∞; ``indefinite`` when either is
    ///   indefinite; ±infinity when either is infinite or the sum overflows.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negateRight: false)
    }

    /// The difference of two times, `lhs + (-rhs)`.
    /// - Parameters:
    ///   - lhs: a time.
    ///   - rhs: the time taken from it.
    /// - Returns: the difference, by the rules of `+`.
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negateRight: true)
    }

    /// The time negated: the infinities exchanged; invalid and indefinite times as they are.
    /// - Parameter time: the time to negate.
    /// - Returns: `-time`; ``positiveInfinity`` for the one value whose negation does not fit.
    public static prefix func - (time: MediaTime) -> MediaTime {
        switch time.kind {
        case .numeric:
            guard time.value != .min else { return .positiveInfinity }
            return MediaTime(value: -time.value, timescale: time.timescale, rounded: time.hasBeenRounded)
        case .positiveInfinity: return .negativeInfinity
        case .negativeInfinity: return .positiveInfinity
        case .invalid, .indefinite: return time
        }
    }

    /// Adds `rhs` to `lhs`, by the rules of `+`.
    /// - Parameters:
    ///   - lhs: the time changed.
    ///   - rhs: the time added.
    public static func += (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs + rhs }
    /// Takes `rhs` from `lhs`, by the rules of `-`.
    /// - Parameters:
    ///   - lhs: the time changed.
    ///   - rhs: the time taken away.
    public static func -= (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs - rhs }

    /// The time multiplied by a whole number (exact unless it overflows, which gives ±infinity).
    /// - Parameters:
    ///   - lhs: a time.
    ///   - rhs: the whole number it is multiplied by.
    /// - Returns: the product; an infinity times 0 is ``invalid``; invalid and indefinite times as they are.
    public static func * (lhs: MediaTime, rhs: Int64) -> MediaTime {
        switch lhs.kind {
        case .numeric:
            let (product, overflow) = lhs.value.multipliedReportingOverflow(by: rhs)
            if overflow { return (lhs.value < 0) != (rhs < 0) ? .negativeInfinity : .positiveInfinity }
            return MediaTime(value: product, timescale: lhs.timescale, rounded: lhs.hasBeenRounded)
        case .positiveInfinity, .negativeInfinity:
            if rhs == 0 { return .invalid }
            return rhs > 0 ? lhs : -lhs
        case .invalid, .indefinite:
            return lhs
        }
    }

    private static func combine(_ lhs: MediaTime, _ rawRHS: MediaTime, negateRight: Bool) -> MediaTime {
        let rhs = negateRight ? -rawRHS : rawRHS
        switch (lhs.kind, rhs.kind) {
        case (.invalid, _), (_, .invalid): return .invalid
        case (.positiveInfinity, .negativeInfinity), (.negativeInfinity, .positiveInfinity): return .invalid
        case (.indefinite, _), (_, .indefinite): return .indefinite
        case (.positiveInfinity, _), (_, .positiveInfinity): return .positiveInfinity
        case (.negativeInfinity, _), (_, .negativeInfinity): return .negativeInfinity
        case (.numeric, .numeric): break
        }
        let rounded = lhs.hasBeenRounded || rhs.hasBeenRounded
        // Exact path: the least common multiple of the timescales, when it fits.
        let g = RationalMath.gcd(UInt64(lhs.timescale), UInt64(rhs.timescale))
        let lcm = Int64(lhs.timescale) / Int64(g) * Int64(rhs.timescale)
        var scale = Int32(clamping: lcm)
        var exact = lcm <= Int64(Int32.max)
        if !exact { scale = max(lhs.timescale, rhs.timescale) }
        guard let (a, aExact) = RationalMath.rescale(lhs.value, multiplier: Int64(scale), divisor: Int64(lhs.timescale)),
            let (b, bExact) = RationalMath.rescale(rhs.value, multiplier: Int64(scale), divisor: Int64(rhs.timescale))
        else {
            return lhs.seconds + rhs.seconds > 0 ? .positiveInfinity : .negativeInfinity
        }
        exact = exact && aExact && bExact
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { return a > 0 ? .positiveInfinity : .negativeInfinity }
        return MediaTime(value: sum, timescale: scale, rounded: rounded || !exact)
    }
}

extension MediaTime: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .numeric: return "\(value)/\(timescale) (\(seconds)s)"
        case .invalid: return "invalid"
        case .indefinite: return "indefinite"
        case .positiveInfinity: return "+infinity"
        case .negativeInfinity: return "-infinity"
        }
    }
}

/// Integer helpers shared by the time types.
enum RationalMath {
    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : x
    }

    /// `value * multiplier / divisor` rounded half away from zero, computed in 128 bits.
    /// Returns nil when the result does not fit in 64 bits; `exact` tells whether it rounded.
    static func rescale(_ value: Int64, multiplier: Int64, divisor: Int64) -> (Int64, exact: Bool)? {
        precondition(divisor > 0 && multiplier >= 0)
        let negative = value < 0
        let product = value.magnitude.multipliedFullWidth(by: multiplier.magnitude)
        guard product.high < divisor.magnitude else { return nil }
        let (q, r) = divisor.magnitude.dividingFullWidth(product)
        var magnitude = q
        if r != 0, r >= divisor.magnitude - r { magnitude += 1 }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        let result = Int64(magnitude)
        return (negative ? -result : result, r == 0)
    }
}
