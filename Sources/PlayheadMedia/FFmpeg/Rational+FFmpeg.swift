internal import CFFmpeg

extension MediaTime {
    /// An FFmpeg timestamp in `timeBase` units, exactly when the time base allows it.
    /// `AV_NOPTS_VALUE` gives ``invalid``.
    init(ffmpegTimestamp ts: Int64, timeBase: AVRational) {
        guard ts != FFmpegConstants.noPTS, timeBase.num > 0, timeBase.den > 0 else {
            self = .invalid
            return
        }
        if timeBase.num == 1 {
            self.init(value: ts, timescale: timeBase.den)
            return
        }
        let (product, overflow) = ts.multipliedReportingOverflow(by: Int64(timeBase.num))
        if !overflow {
            self.init(value: product, timescale: timeBase.den)
        } else {
            // Too large to keep exactly: the nearest time on the stream's own timescale.
            let seconds = Double(ts) * Double(timeBase.num) / Double(timeBase.den)
            self = MediaTime(seconds: seconds, preferredTimescale: timeBase.den)
        }
    }

    /// How a time that falls between two ticks of a time base is placed.
    package enum TickRounding: Sendable {
        /// The nearest tick.
        case nearest
        /// The tick at or before it: for "at or before t" (the frame displayed at t).
        case down
        /// The tick at or after it: for "at or after t" (the first frame starting inside a window).
        case up

        var ffmpeg: AVRounding {
            switch self {
            case .nearest: return AV_ROUND_NEAR_INF
            case .down: return AV_ROUND_DOWN
            case .up: return AV_ROUND_UP
            }
        }
    }

    /// A timestamp in `timeBase` units, exactly when the time base allows it; the "no time" tick
    /// (``FFmpegConstants/noPTS``) gives ``invalid``.
    /// - Parameters:
    ///   - ticks: the timestamp.
    ///   - timeBase: the seconds one tick lasts.
    package init(ticks: Int64, timeBase: Rational) { self.init(ffmpegTimestamp: ticks, timeBase: timeBase.ffmpeg) }

    /// The time in `timeBase` units, placed by `rounding`; ``FFmpegConstants/noPTS`` when not numeric.
    /// - Parameters:
    ///   - timeBase: the seconds one tick lasts.
    ///   - rounding: how a time between two ticks is placed.
    /// - Returns: the timestamp.
    package func ticks(in timeBase: Rational, rounding: TickRounding = .nearest) -> Int64 {
        ffmpegTimestamp(in: timeBase.ffmpeg, rounding: rounding)
    }

    /// The time in `timeBase` units, or `AV_NOPTS_VALUE` when not numeric.
    func ffmpegTimestamp(in timeBase: AVRational, rounding: TickRounding = .nearest) -> Int64 {
        guard isNumeric, timeBase.num > 0, timeBase.den > 0 else { return FFmpegConstants.noPTS }
        return av_rescale_q_rnd(
            value, AVRational(num: 1, den: timescale), timeBase,
            AVRounding(rawValue: rounding.ffmpeg.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
    }
}

package enum FFmpegConstants {
    package static let noPTS = playhead_nopts_value()
    static let timeBaseQ = playhead_time_base_q()
}

extension AVRational {
    var isValidPositive: Bool { num > 0 && den > 0 }
    var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
}
