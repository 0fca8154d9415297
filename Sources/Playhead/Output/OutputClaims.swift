import PlayheadMedia
import Synchronization

/// The outputs being written now, process-wide: a frame or audio sink is written by one writer
/// (a session, a render, a player) at a time. Two writers at once would interleave their frames
/// in one file (or race inside an app's own sink), so the second is refused with
/// `state.invalidState` before it touches the output — the first writer's output is left as it
/// is. One after another is fine: an output is free again once its writer let go of it.
///
/// A writer is an ``OutputWriter``: claims of one writer on one output nest (a player whose frame
/// and audio outputs are one object claims it twice). An output is known by its object identity,
/// held only while a writer keeps the object alive (it holds a strong reference while it writes),
/// so an identity is never reused while claimed.
enum OutputClaims {
    /// Who holds an output, and how many of its claims do.
    private struct Holder {
        var writer: ObjectIdentifier
        var count: Int
    }

    private static let held = Locked<[ObjectIdentifier: Holder]>([:])

    /// Claims every one of `outputs` (nil ones skipped) for `writer`, or none of them when one is
    /// being written by another writer.
    /// - Parameters:
    ///   - outputs: the objects the writer will write to.
    ///   - writer: who claims them.
    ///   - file: the display name of what the writer reads, for the error.
    /// - Returns: the claim, to be released when the writer lets go.
    /// - Throws: `state.invalidState` naming the writer when an output is another writer's.
    static func claim(_ outputs: [AnyObject?], for writer: OutputWriter, file: String?) throws(PlayheadError) -> OutputClaim {
        try claim(identities: outputs.compactMap { $0.map(ObjectIdentifier.init) }, for: writer, file: file)
    }

    /// As ``claim(_:for:file:)``, for outputs known by identity, which their holder keeps alive.
    static func claim(identities: [ObjectIdentifier], for writer: OutputWriter, file: String?) throws(PlayheadError) -> OutputClaim {
        let ids = Array(Set(identities))
        let me = ObjectIdentifier(writer)
        let taken = held.withLock { held -> Bool in
            guard ids.allSatisfy({ held[$0].map { $0.writer == me } ?? true }) else { return false }
            for id in ids { held[id, default: Holder(writer: me, count: 0)].count += 1 }
            return true
        }
        guard taken else {
            throw PlayheadError(
                code: .invalidState,
                message: "\(writer.name) was given an output that another session, render or player is writing: an output takes one writer at a time",
                file: file)
        }
        return OutputClaim(ids: ids, writer: writer)
    }

    /// Those of `outputs` that no writer holds, claimed for `writer` (a refused writer gives up
    /// the outputs it was given that are free, so that their consumers are told the end).
    /// - Parameters:
    ///   - outputs: the objects the writer was given.
    ///   - writer: who claims them.
    /// - Returns: the claim on the free ones (its ``OutputClaim/covers(_:)`` says which).
    static func claimFree(_ outputs: [AnyObject?], for writer: OutputWriter) -> OutputClaim {
        let me = ObjectIdentifier(writer)
        let ids = held.withLock { held -> [ObjectIdentifier] in
            let free = Set(outputs.compactMap { $0.map(ObjectIdentifier.init) }).filter { held[$0] == nil }
            for id in free { held[id] = Holder(writer: me, count: 1) }
            return Array(free)
        }
        return OutputClaim(ids: ids, writer: writer)
    }

    /// A run that is refused gives up the outputs it was given that no other writer holds: each
    /// is aborted once (a stream's consumer gets its end rather than waiting for ever); those
    /// another writer holds are left as that writer has them.
    /// - Parameters:
    ///   - frames: the run's frame sink.
    ///   - sound: its audio sink, if any.
    ///   - writer: the refused run.
    static func giveUpFree(frames: any FrameSink, sound: (any AudioSink)?, for writer: OutputWriter) {
        let spare = claimFree([frames, sound], for: writer)
        if spare.covers(frames) { frames.abort() }
        if let sound, sound !== frames, spare.covers(sound) { sound.abort() }
        spare.release()
    }

    /// Claims a run's outputs for `writer`, or — when another writer holds one — gives up the free
    /// ones (``giveUpFree(frames:sound:for:)``) and throws.
    /// - Parameters:
    ///   - frames: the run's frame sink.
    ///   - sound: its audio sink, if any.
    ///   - writer: who claims them.
    ///   - file: the file named in the error.
    /// - Returns: the claim, released when the run lets go of its outputs.
    /// - Throws: `state.invalidState` naming the writer that holds an output.
    static func claimOrGiveUp(
        frames: any FrameSink, sound: (any AudioSink)?, for writer: OutputWriter, file: String?
    ) throws(PlayheadError)
        -> OutputClaim
    {
        do throws(PlayheadError) {
            return try claim([frames, sound], for: writer, file: file)
        } catch {
            giveUpFree(frames: frames, sound: sound, for: writer)
            throw error
        }
    }

    /// Whether `output` is being written now.
    /// - Parameter output: an output object.
    /// - Returns: `true` while a writer holds a claim on it.
    static func isClaimed(_ output: AnyObject) -> Bool {
        held.withLock { $0[ObjectIdentifier(output)] != nil }
    }

    fileprivate static func release(_ ids: [ObjectIdentifier], from writer: OutputWriter) {
        let me = ObjectIdentifier(writer)
        held.withLock { held in
            for id in ids {
                guard var holder = held[id], holder.writer == me else { continue }
                holder.count -= 1
                held[id] = holder.count > 0 ? holder : nil
            }
        }
    }
}

/// Who writes outputs (a session's run, a render, a player), for ``OutputClaims``.
final class OutputWriter: Sendable {
    /// How a refusal names it ("this session").
    let name: String

    init(_ name: String) { self.name = name }
}

/// The outputs one writer claimed (``OutputClaims``); released once, when the writer lets go.
final class OutputClaim: Sendable {
    private let ids: [ObjectIdentifier]
    /// Kept alive (its identity unique) while the claim is held.
    private let writer: OutputWriter
    private let released = Atomic(false)

    fileprivate init(ids: [ObjectIdentifier], writer: OutputWriter) {
        self.ids = ids
        self.writer = writer
    }

    /// A claim dropped without a release (a writer let go of) frees its outputs too.
    deinit { release() }

    /// Whether the claim holds `output`.
    /// - Parameter output: an output object.
    /// - Returns: `true` when it is one of the claimed outputs.
    func covers(_ output: AnyObject) -> Bool { ids.contains(ObjectIdentifier(output)) }

    /// Frees the outputs for another writer; only the first call does anything.
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        OutputClaims.release(ids, from: writer)
    }
}
