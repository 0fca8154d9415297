import Foundation

/// The part of a manifest one process takes: the sources whose stable hash falls in shard
/// `index` of `count`. The hash depends only on the source, so adding lines to a manifest never
/// moves the others between shards.
struct Shard: Sendable, Equatable, CustomStringConvertible {
    var index: Int
    var count: Int

    static let whole = Shard(index: 0, count: 1)

    var description: String { "\(index)/\(count)" }

    func contains(_ source: String) -> Bool {
        count == 1 || Int(StableHash.of(source) % UInt64(count)) == index
    }

    /// Where the shard came from, for the record.
    enum Origin: String, Encodable, Sendable {
        case argument = "--shard", kubernetes = "JOB_COMPLETION_INDEX", slurm = "SLURM_ARRAY_TASK_ID", none
    }

    /// `K/N` with 0 ≤ K < N ≤ 1,000,000.
    static func parse(_ text: String) -> Shard? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, n <= 1_000_000, k >= 0, k < n else { return nil }
        return Shard(index: k, count: n)
    }

    /// The shard to take: `--shard` if given; else a Kubernetes Indexed Job's
    /// `JOB_COMPLETION_INDEX` with `--shards N`; else a Slurm array's `SLURM_ARRAY_TASK_ID` — with
    /// `--shards N` the task ID is the shard number (so `--array=3` reruns shard 3 alone), without
    /// it the task counted from `SLURM_ARRAY_TASK_MIN` among `SLURM_ARRAY_TASK_COUNT` tasks of an
    /// array without steps or gaps; else the whole manifest. A variable that is there but does
    /// not make sense is an error, never ignored.
    static func resolve(argument: String?, shards: Int?, environment: [String: String]) throws -> (Shard, Origin) {
        if let argument {
            guard let shard = parse(argument) else { throw ShardError("--shard takes K/N with 0 <= K < N, like 3/16 (got \(argument))") }
            if let shards, shards != shard.count { throw ShardError("--shard \(argument) and --shards \(shards) disagree") }
            return (shard, .argument)
        }
        if let index = environment["JOB_COMPLETION_INDEX"] {
            guard let shards else { throw ShardError("JOB_COMPLETION_INDEX is set: give --shards N (the Job's completions)") }
            guard let k = Int(index), let shard = parse("\(k)/\(shards)") else {
                throw ShardError("JOB_COMPLETION_INDEX=\(index) is not an index below --shards \(shards)")
            }
            return (shard, .kubernetes)
        }
        if let id = environment["SLURM_ARRAY_TASK_ID"] {
            guard let task = Int(id) else { throw ShardError("SLURM_ARRAY_TASK_ID=\(id) is not a number") }
            if let shards {
                // The array's indices are the shard numbers: `--array=3` reruns shard 3 of N alone.
                guard let shard = parse("\(task)/\(shards)") else {
                    throw ShardError("SLURM_ARRAY_TASK_ID=\(id) is not a shard of --shards \(shards) (use --array=0-\(shards - 1), or a part of it)")
                }
                return (shard, .slurm)
            }
            let count = environment["SLURM_ARRAY_TASK_COUNT"].flatMap { Int($0) }
            let minimum = environment["SLURM_ARRAY_TASK_MIN"].flatMap { Int($0) } ?? 0
            let maximum = environment["SLURM_ARRAY_TASK_MAX"].flatMap { Int($0) }
            let step = environment["SLURM_ARRAY_TASK_STEP"].flatMap { Int($0) } ?? 1
            guard let count else { throw ShardError("SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT: give --shards N") }
            // The shard count is the number of tasks only for an array without gaps: a step or a
            // list would leave shards that no task takes.
            guard step == 1, maximum.map({ $0 - minimum + 1 == count }) ?? true else {
                throw ShardError(
                    "the Slurm array has a step or gaps (tasks \(minimum)…\(maximum.map(String.init) ?? "?"), step \(step), \(count) tasks): "
                        + "submit --array=0-\(count - 1), or give --shards N so that task IDs are shard numbers")
            }
            guard let shard = parse("\(task - minimum)/\(count)") else {
                throw ShardError("SLURM_ARRAY_TASK_ID=\(id) (from \(minimum), \(count) tasks) is not a task of the array")
            }
            return (shard, .slurm)
        }
        if let shards, shards != 1 { throw ShardError("--shards \(shards) needs --shard K/\(shards), JOB_COMPLETION_INDEX or a Slurm array") }
        return (.whole, .none)
    }
}

struct ShardError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// FNV-1a over the source's bytes, then a 64-bit finaliser (so the low bits used by `%` are well
/// mixed): the same on every machine and in every release.
enum StableHash {
    static func of(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }

    /// A second, independent hash: with the first, a 128-bit fingerprint for remembering which
    /// sources are done without keeping their text.
    static func second(_ text: String) -> UInt64 {
        var hash: UInt64 = 0x84222325_cbf29ce4
        for byte in text.utf8.reversed() {
            hash = (hash ^ UInt64(byte)) &* 0x9e37_79b9_7f4a_7c15
            hash ^= hash >> 29
        }
        return hash
    }

    /// 16 hexadecimal digits of the first hash: the stable key of a source's output folder.
    static func key(_ text: String) -> String {
        let hex = String(of(text), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
