import PlayheadMedia

/// The outputs being written now, process-wide: a frame or audio sink is written by one session,
/// render or player at a time. Two writers at once would interleave their frames in one file
/// (or race inside an app's own sink), so the second is refused with `state.invalidState` before
/// it touches the output — the first writer's output is left as it is. One after another is
/// fine: an output is free again once its writer ended.
///
/// An output is known by its object identity, held only while a writer keeps the object alive
/// (it holds a strong reference for its whole run), so an identity is never reused while claimed.
enum OutputClaims {
    private static let held = Locked<Set<ObjectIdentifier>>([])

    /// Claims every one of `outputs` (nil ones skipped), or none of them when one is being
    /// written already.
    /// - Parameters:
    ///   - outputs: the objects the writer will write to.
    ///   - writer: what is refused, for the message ("this session", "this render", "this player").
    ///   - file: the display name of what the writer reads, for the error.
    /// - Returns: the claim, to be released when the writer ends.
    /// - Throws: `state.invalidState` naming the writer when an output is being written by another.
    static func claim(_ outputs: [AnyObject?], by writer: String, file: String?) throws(PlayheadError) -> OutputClaim {
        let ids = Array(Set(outputs.compactMap { $0.map(ObjectIdentifier.init) }))
        let taken = held.withLock { held -> Bool in
            guard held.isDisjoint(with: ids) else { return false }
            held.formUnion(ids)
            return true
        }
        guard taken else {
            throw PlayheadError(
                code: .invalidState,
                message: "\(writer) was given an output that another session, render or player is writing: an output takes one writer at a time",
                file: file)
        }
        return OutputClaim(ids: ids)
    }

    /// Whether `output` is being written now.
    /// - Parameter output: an output object.
    /// - Returns: `true` while a writer holds a claim on it.
    static func isClaimed(_ output: AnyObject) -> Bool {
        held.withLock { $0.contains(ObjectIdentifier(output)) }
    }

    fileprivate static func release(_ ids: [ObjectIdentifier]) {
        held.withLock { held in
            for id in ids { held.remove(id) }
        }
    }
}

/// The outputs one writer claimed (``OutputClaims``); released once, when the writer ends.
struct OutputClaim: Sendable {
    fileprivate let ids: [ObjectIdentifier]

    /// Frees the outputs for another writer.
    func release() { OutputClaims.release(ids) }
}
