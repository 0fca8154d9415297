// playhead-bench: in-process measurements for the scripts in benchmarks/ (not part of the CLI).
//
//   playhead-bench seeks FILE [--count N] [--seed S]
//     N exact seeks of a paused Player to random times, each timed from the call to the moment the
//     frame displayed at the target is decoded and converted (the seek returns then). Prints one
//     JSON object: {"times": [...], "seconds": [...]}.
import Foundation
import Playhead

struct Arguments {
    var command = ""
    var file = ""
    var count = 100
    var seed: UInt64 = 1

    init(_ list: [String]) throws {
        var rest = list.makeIterator()
        command = rest.next() ?? ""
        file = rest.next() ?? ""
        while let flag = rest.next() {
            guard let value = rest.next() else { throw Usage() }
            switch flag {
            case "--count": count = Int(value) ?? count
            case "--seed": seed = UInt64(value) ?? seed
            default: throw Usage()
            }
        }
        guard command == "seeks", !file.isEmpty, count > 0 else { throw Usage() }
    }
}

struct Usage: Error {}

/// SplitMix64, so the script can give ffmpeg the same times.
struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func measureSeeks(_ arguments: Arguments) async throws -> (times: [Double], seconds: [Double]) {
    let asset = Asset(path: arguments.file)
    let duration = try await asset.load(.duration)
    let player = Player(item: PlayerItem(asset: asset), output: NullSink(pixelFormat: .rgb24))
    var random = Seeded(state: arguments.seed)
    // The player opens and decodes its first frame before the clock starts.
    _ = await player.seek(to: .zero)
    var times: [Double] = [], seconds: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<arguments.count {
        let millis = Int64.random(in: 0..<Int64(duration.seconds * 1000), using: &random)
        let target = MediaTime(value: millis, timescale: 1000)
        let start = clock.now
        guard await player.seek(to: target) != nil else { throw Usage() }
        let elapsed = clock.now - start
        times.append(target.seconds)
        seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    player.replaceCurrentItem(with: nil)
    return (times, seconds)
}

/// Writes all of `data` with write(2); false when the descriptor refused (closed, full, gone).
func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
    data.withUnsafeBytes { DescriptorWrite.all($0, to: descriptor) } == 0
}

// A reader gone away is a failed write (exit 1), not a death by SIGPIPE.
signal(SIGPIPE, SIG_IGN)
do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    let (times, seconds) = try await measureSeeks(arguments)
    let json = try JSONSerialization.data(withJSONObject: ["times": times, "seconds": seconds])
    // write(2), checked: a closed or full standard output is an exit status, not a crash.
    if !writeAll(json + Data("\n".utf8), to: STDOUT_FILENO) { exit(1) }
} catch {
    _ = writeAll(Data("usage: playhead-bench seeks FILE [--count N] [--seed S] (\(error))\n".utf8), to: STDERR_FILENO)
    exit(2)
}
