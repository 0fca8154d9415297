import ArgumentParser
import Playhead

/// `--loop N` (play N times) or `--loop forever`.
enum LoopArgument: ExpressibleByArgument, Equatable {
    case count(Int)
    case forever

    init?(argument: String) {
        if argument == "forever" {
            self = .forever
        } else if let n = Int(argument), n >= 1 {
            self = .count(n)
        } else {
            return nil
        }
    }

    var policy: LoopPolicy {
        switch self {
        case .count(1): return .none
        case .count(let n): return .count(n)
        case .forever: return .forever
        }
    }
}
