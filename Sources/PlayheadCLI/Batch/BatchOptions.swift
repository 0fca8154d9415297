import ArgumentParser

/// The options that make a command run over a manifest, a shard at a time, with results as JSON
/// Lines (shared by `probe`, `play` and `thumbnails`).
struct BatchOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Read the sources from FILE (- for standard input): one per line, # comments, or JSON Lines with \"source\" (and for thumbnails \"at\").",
            valueName: "file"))
    var manifest: String?

    @Option(help: ArgumentHelp("Take shard K of N of the manifest (by a stable hash of each source).", valueName: "K/N"))
    var shard: String?

    @Option(
        help: ArgumentHelp(
            "The number of shards, when the index comes from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID.", valueName: "N")
    )
    var shards: Int?

    @Option(help: ArgumentHelp("Append one JSON object per finished source to FILE (JSON Lines). probe without it prints them.", valueName: "file"))
    var results: String?

    @Flag(help: "Skip the sources the --results file already holds (a torn last line is redone).")
    var resume = false

    @Option(
        name: .customLong("progress-interval"),
        help: ArgumentHelp("Without a terminal, a progress line on standard error every SECONDS (0: none).", valueName: "seconds"))
    var progressInterval: Double = 10

    var isBatch: Bool { manifest != nil }

    func validate(paths: [String], resultsRequired: Bool) throws {
        guard manifest != nil else {
            if shard != nil || shards != nil || results != nil || resume {
                throw ValidationError("--shard, --shards, --results and --resume go with --manifest")
            }
            return
        }
        if !paths.isEmpty { throw ValidationError("give sources either as arguments or with --manifest, not both") }
        if resume, results == nil { throw ValidationError("--resume needs the --results file to go on from") }
        if resultsRequired, results == nil { throw ValidationError("--manifest needs --results FILE.jsonl for this command") }
        if !(progressInterval == 0 || (progressInterval >= 0.1 && progressInterval <= 86_400)) {
            throw ValidationError("--progress-interval must be 0 (none) or 0.1 … 86400 seconds")
        }
        if let shard, Shard.parse(shard) == nil { throw ValidationError("--shard takes K/N with 0 <= K < N, like 3/16") }
        if let shards, shards < 1 || shards > 1_000_000 { throw ValidationError("--shards must be 1 … 1000000") }
    }
}
