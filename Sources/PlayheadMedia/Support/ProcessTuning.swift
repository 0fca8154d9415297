internal import CPlayheadSystem

/// Settings that belong to the process rather than to one engine object; the CLI applies them at
/// start. An app embedding Playhead for a long loop can do the same (or set `MALLOC_ARENA_MAX`).
package enum ProcessTuning {
    /// Caps glibc's malloc arenas. Each new thread otherwise gets an arena of its own (up to 8 per
    /// core) that keeps what it frees; with worker threads coming and going over a long loop,
    /// resident memory crept up (about 8 KB per loop of a small clip, 125 KB per loop at 1080p)
    /// while the live heap stayed flat.
    package static func limitMallocArenas(to arenas: Int) {
        _ = playhead_limit_malloc_arenas(Int32(clamping: max(1, arenas)))
    }
}
