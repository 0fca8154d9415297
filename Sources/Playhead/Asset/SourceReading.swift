import PlayheadMedia
import Synchronization

/// What the assets of one source (an asset and those ``Asset/selecting(_:)`` made of it) know of
/// its reading, under one lock. A source read once (``PlayheadMedia/MediaInput/isReadOnce``: a
/// pipe, standard input, a FIFO, a stream byte source) is opened by one of them alone, claimed
/// before its open, and by one open at a time: a second open would read from where the first one
/// stands, so it waits for the first and then takes what that one left (the probe's demuxer) or
/// finds the source read. Any asset whose source turned out unable to seek once open is not
/// opened by it again (nor are its bytes assumed to come again); what that one open found is
/// kept, so that a probe coming after a session's open answers from it.
final class SourceReading: Sendable {
    /// What a claim allows.
    enum Claim: Equatable {
        /// The caller opens the source.
        case open
        /// Another open of the source (read once) is under way, the one of this number: wait for
        /// it, then look again, naming it (its waiters share its failure).
        case wait(Int)
    }

    private struct State {
        /// The fresh demuxers of a source that cannot seek, kept for the next user of the asset
        /// whose token each carries (its selection chose its tracks): one per asset, so that two
        /// selections of a URL that cannot seek (two HLS variants) do not drop each other's.
        var kept: [Int: DemuxerBox] = [:]
        /// The asset that holds a source read once: the one that opened it, or is opening it.
        var holder: Int?
        /// Whether the holder's open of a source read once is under way (for a probe: until it
        /// has handed its demuxer back).
        var opening = false
        /// The number of the last open of a source read once, counted from 1.
        var opens = 0
        /// The last of those that failed, by number: the opens waiting for it fail with it (a
        /// FIFO without a writer times out once, not once per waiter in turn), unless it was
        /// cancelled (its opener was, not the source's reading).
        var failure: (open: Int, error: PlayheadError)?
        /// The assets that opened their source and found it cannot seek.
        var usedUp: Set<Int> = []
        /// What those opens found, by asset.
        var found: [Int: AssetDescription] = [:]
    }

    private let state = Locked(State())
    /// Wakes the waits for an open under way (each wait also looks again every slice).
    private let changed = ChangeSignal()

    /// Takes the kept demuxer when it is the asset's of `token`; never blocks.
    /// - Parameter token: the asking asset's token.
    /// - Returns: the kept box, or nil when there is none or it is another asset's.
    func takeKept(token: Int) -> DemuxerBox? {
        state.withLock { state -> DemuxerBox? in
            state.kept.removeValue(forKey: token)
        }
    }

    /// Keeps a fresh demuxer of a source that cannot seek for the next user of its asset.
    /// - Parameter box: the demuxer, carrying its asset's token.
    func keep(_ box: DemuxerBox) {
        // The one it replaces (if any) is returned, so that it is closed once the lock is let go.
        _ = state.withLock { state -> DemuxerBox? in
            state.kept.updateValue(box, forKey: box.token)
        }
    }

    /// Forgets the asset of `token` (it is gone): its kept demuxer is dropped (nobody can take
    /// it); a source read once that it holds stays held (its bytes were read).
    /// - Parameter token: the asset's token.
    func discard(token: Int) {
        // Returned, so that it is closed once the lock is let go.
        _ = state.withLock { state -> DemuxerBox? in
            state.usedUp.remove(token)
            state.found[token] = nil
            return state.kept.removeValue(forKey: token)
        }
    }

    /// Claims the source for an open by the asset of `token`, or says why it may not open it yet
    /// or at all.
    /// - Parameters:
    ///   - token: the asset that would open it.
    ///   - readOnce: whether the source can be read only once (known before it is opened).
    ///   - file: the source's display name, for the error.
    ///   - waitedFor: the number of the open the caller waited for, if it did.
    /// - Returns: ``Claim/open`` when the caller opens it (it must then call ``opened(token:canSeek:found:handsBack:)``
    ///   or ``openFailed(token:error:)``); ``Claim/wait(_:)`` when another open of it is under way.
    /// - Throws: the error of the open the caller waited for, when it failed (not cancelled);
    ///   `demux.seekFailed` when that asset read a source that cannot seek already;
    ///   `state.invalidArgument` when another asset of a source read once holds it.
    func claim(token: Int, readOnce: Bool, file: String, waitedFor: Int? = nil) throws(PlayheadError) -> Claim {
        let answer = state.withLock { state -> Result<Claim, PlayheadError> in
            // First: an open under way (or a probe that has opened it and is handing its demuxer
            // back for this asset).
            if readOnce, state.opening, state.holder == token { return .success(.wait(state.opens)) }
            if let waitedFor, let failure = state.failure, failure.open == waitedFor { return .failure(failure.error) }
            if state.usedUp.contains(token) {
                return .failure(
                    PlayheadError(
                        code: .seekFailed,
                        message:
                            "the source cannot seek or be opened again (a pipe, standard input, a stream byte source, a network stream that cannot seek) and was read already",
                        file: file))
            }
            guard readOnce else { return .success(.open) }
            if let holder = state.holder, holder != token {
                return .failure(
                    PlayheadError(
                        code: .invalidArgument,
                        message:
                            "the source is read once (a pipe, standard input, a stream byte source) and another asset of it (another selection, another item) reads it: "
                            + "give the selection when the asset is made (AssetOptions.selection), not to an item or to Asset.selecting",
                        file: file))
            }
            state.holder = token
            state.opening = true
            state.opens += 1
            return .success(.open)
        }
        return try answer.get()
    }

    /// Ends a claim whose open failed: the opens that waited for it fail with it (unless it was
    /// cancelled). When it read none of the source's bytes, a later open may try; when it did,
    /// the source read once is used up for that asset (another open would read from where this
    /// one stopped) and stays held.
    /// - Parameters:
    ///   - token: the asset whose open failed.
    ///   - error: why.
    ///   - readBytes: whether the open had read bytes of the source.
    func openFailed(token: Int, error: PlayheadError, readBytes: Bool = false) {
        state.withLock { state in
            guard state.holder == token, state.opening else { return }
            state.opening = false
            if error.code != .cancelled { state.failure = (state.opens, error) }
            if readBytes { state.usedUp.insert(token) }
            if !state.usedUp.contains(token) { state.holder = nil }
        }
        signal()
    }

    /// Records an open that succeeded: a source that cannot seek is not opened by that asset
    /// again, and what the open found is kept for its probe.
    /// - Parameters:
    ///   - token: the asset that opened it.
    ///   - canSeek: whether the opened source can seek.
    ///   - found: what the open found (asked only when the source cannot seek).
    ///   - handsBack: whether the opener (a probe) hands its demuxer back for the next user:
    ///     another open waits until it has (``handedBack(token:)``), not only until now.
    func opened(token: Int, canSeek: Bool, found: () -> AssetDescription, handsBack: Bool) {
        let description = canSeek ? nil : found()
        state.withLock { state in
            if let description {
                state.usedUp.insert(token)
                state.found[token] = description
            }
            if state.holder == token, !handsBack { state.opening = false }
        }
        signal()
    }

    /// Ends an open under way whose opener handed its demuxer back (kept by ``keep(_:)``, or
    /// closed when it was not fresh).
    /// - Parameter token: the asset that opened it.
    func handedBack(token: Int) {
        state.withLock { state in
            if state.holder == token { state.opening = false }
        }
        signal()
    }

    /// What the open of an asset whose source cannot seek found, for its probe.
    /// - Parameter token: the asset.
    /// - Returns: the description, or nil when no such open was made.
    func found(token: Int) -> AssetDescription? {
        state.withLock { $0.found[token] }
    }

    /// Waits (blocking: on a worker thread) a little for an open under way to end; the caller
    /// looks again after.
    /// - Parameters:
    ///   - interrupt: the waiter's flag: its raise or deadline ends the wait.
    ///   - file: the source's display name, for the error.
    /// - Throws: `state.cancelled` when `interrupt` is raised, `io.timedOut` at its deadline (if
    ///   it has one; the caller bounds the whole wait by its open timeout).
    func waitForTheOpenUnderWay(interrupt: InterruptFlag, file: String) throws(PlayheadError) {
        if let stopped = interrupt.stopped(file: file) { throw stopped }
        changed.wait()
        if let stopped = interrupt.stopped(file: file) { throw stopped }
    }

    private func signal() { changed.signal() }
}
