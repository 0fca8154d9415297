import Foundation
import Playhead

/// The live view on a terminal: one line per running session, redrawn in place. Used by the one
/// task that draws.
final class ProgressDisplay {
    private var drawnLines = 0
    private let names: [SessionID: String]

    init(names: [SessionID: String]) {
        self.names = names
    }

    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    func draw(_ progress: [SessionProgress], finished: Int, total: Int) {
        var lines = progress.map { p -> String in
            let name = names[p.id] ?? p.source
            var line = "  \(name)  frame \(p.framesPresented)"
            switch p.loop {
            case .count(let n): line += "  loop \(min(p.loopsCompleted + 1, n))/\(n)"
            case .forever: line += "  loop \(p.loopsCompleted + 1)"
            case .none: break
            }
            return line
        }
        lines.insert("playing \(progress.count), done \(finished) of \(total)", at: 0)
        let controls = drawnLines > 0 ? "\u{1B}[\(drawnLines)F\u{1B}[J" : ""
        drawnLines = lines.count
        Console.errControlling(controls, lines.joined(separator: "\n") + "\n")
    }

    func clear() {
        guard drawnLines > 0 else { return }
        Console.errControlling("\u{1B}[\(drawnLines)F\u{1B}[J", "")
        drawnLines = 0
    }
}
