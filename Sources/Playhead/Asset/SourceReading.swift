import PlayheadMedia
import Synchronization

/// What the assets of one source (an asset and those ``Asset/selecting(_:)`` made of it) know of
/// its reading, under one lock. A source read once (``PlayheadMedia/MediaInput/isReadOnce``: a
/// pipe, standard input, a FIFO, a stream byte source) is opened by one of them alone, claimed
/// before its open: a second open would read from where the first one stands. Any asset whose
/// source turned out unable to seek once open is not opened by it again (nor are its bytes
/// assumed to come again).
final class SourceReading: Sendable {
    private struct State {
        /// A fresh demuxer of a source that cannot seek, kept for the next user of the asset
        /// whose token it carries (its selection chose its tracks).
        var kept: DemuxerBox?
        /// The asset that holds a source read once: the one that opened it, or is opening it.
        var holder: Int?
        /// The assets that opened their source and found it cannot seek.
        var usedUp: Set<Int> = []
    }

    private let state = Locked(State())

    /// Takes the kept demuxer when it is the asset's of `token`; never blocks.
    /// - Parameter token: the asking asset's token.
    /// - Returns: the kept box, or nil when there is none or it is another asset's.
    func takeKept(token: Int) -> DemuxerBox? {
        state.withLock { state -> DemuxerBox? in
            guard let found = state.kept, found.token == token else { return nil }
            state.kept = nil
            return found
        }
    }

    /// Keeps a fresh demuxer of a source that cannot seek for the next user of its asset.
    /// - Parameter box: the demuxer, carrying its asset's token.
    func keep(_ box: DemuxerBox) {
        // The one it replaces (if any) is returned, so that it is closed once the lock is let go.
        _ = state.withLock { state -> DemuxerBox? in
            defer { state.kept = box }
            return state.kept
        }
    }

    /// Forgets the asset of `token` (it is gone): its kept demuxer is dropped (nobody can take
    /// it); a source read once that it holds stays held (its bytes were read).
    /// - Parameter token: the asset's token.
    func discard(token: Int) {
        // Returned, so that it is closed once the lock is let go.
        _ = state.withLock { state -> DemuxerBox? in
            state.usedUp.remove(token)
            guard state.kept?.token == token else { return nil }
            defer { state.kept = nil }
            return state.kept
        }
    }

    /// Claims the source for an open by the asset of `token`, or says why it may not open it.
    /// - Parameters:
    ///   - token: the asset that would open it.
    ///   - readOnce: whether the source can be read only once (known before it is opened).
    ///   - file: the source's display name, for the error.
    /// - Throws: `demux.seekFailed` when that asset read a source that cannot seek already;
    ///   `state.invalidArgument` when another asset of a source read once holds it.
    func claim(token: Int, readOnce: Bool, file: String) throws(PlayheadError) {
        let refusal = state.withLock { state -> PlayheadError? in
            if state.usedUp.contains(token) {
                return PlayheadError(
                    code: .seekFailed,
                    message:
                        "the source cannot seek or be opened again (a pipe, standard input, a stream byte source, a network stream that cannot seek) and was read already",
                    file: file)
            }
            guard readOnce else { return nil }
            if let holder = state.holder, holder != token {
                return PlayheadError(
                    code: .invalidArgument,
                    message:
                        "the source is read once (a pipe, standard input, a stream byte source) and another asset of it (another selection, another item) reads it: "
                        + "give the selection when the asset is made (AssetOptions.selection), not to an item or to Asset.selecting",
                    file: file)
            }
            state.holder = token
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Ends a claim whose open failed: nothing was opened, another open may try.
    /// - Parameter token: the asset whose open failed.
    func openFailed(token: Int) {
        state.withLock { state in
            if state.holder == token, !state.usedUp.contains(token) { state.holder = nil }
        }
    }

    /// Records that the asset of `token` opened its source and it cannot seek: it is not opened
    /// by that asset again.
    /// - Parameter token: the asset that opened it.
    func openedUnseekable(token: Int) {
        state.withLock { state in _ = state.usedUp.insert(token) }
    }
}
