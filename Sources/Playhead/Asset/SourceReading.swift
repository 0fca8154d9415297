import PlayheadMedia
import Synchronization

/// What the assets of one source (an asset and those ``Asset/selecting(_:)`` made of it) know of
/// its reading. A source that cannot seek (a pipe, standard input, a stream byte source) is read
/// once among all of them: a second open would read from where the first one stands.
final class SourceReading: Sendable {
    /// A demuxer a probe opened on a source that cannot be opened again, kept for the first user
    /// of the asset whose token it carries (its selection chose its tracks).
    private let kept = Locked<DemuxerBox?>(nil)
    /// The token of the asset that opened a source that cannot seek; nil while none has.
    private let opener = Locked<Int?>(nil)

    /// Takes the kept demuxer when it is the asset's of `token`; never blocks.
    /// - Parameter token: the asking asset's token.
    /// - Returns: the kept box, or nil when there is none or it is another asset's.
    func takeKept(token: Int) -> DemuxerBox? {
        kept.withLock { box -> DemuxerBox? in
            guard let found = box, found.token == token else { return nil }
            box = nil
            return found
        }
    }

    /// Keeps a fresh demuxer of a source that cannot seek for the next user of its asset.
    /// - Parameter box: the demuxer, carrying its asset's token.
    func keep(_ box: DemuxerBox) {
        kept.withLock { $0 = box }
    }

    /// Drops the kept demuxer of the asset of `token` (that asset is gone: nobody can take it).
    /// - Parameter token: the asset's token.
    func discard(token: Int) {
        kept.withLock { box in
            if box?.token == token { box = nil }
        }
    }

    /// Why the asset of `token` may not open the source again; nil when it may.
    /// - Parameters:
    ///   - token: the asset that would open it.
    ///   - file: the source's display name, for the error.
    /// - Returns: `demux.seekFailed` when that asset read it already, `state.invalidArgument` when
    ///   another selection of it did.
    func refusal(token: Int, file: String) -> PlayheadError? {
        guard let first = opener.withLock({ $0 }) else { return nil }
        if first == token {
            return PlayheadError(
                code: .seekFailed,
                message: "the source cannot seek or be opened again (a pipe, standard input, a stream byte source) and was read already",
                file: file)
        }
        return PlayheadError(
            code: .invalidArgument,
            message:
                "the source is read once (a pipe, standard input, a stream byte source) and another selection of it read it already: "
                + "give the selection when the asset is made (AssetOptions.selection), not to an item or to Asset.selecting",
            file: file)
    }

    /// Records that the asset of `token` opened a source that cannot seek (the first to do so
    /// stays named).
    /// - Parameter token: the asset that opened it.
    func opened(token: Int) {
        opener.withLock { $0 = $0 ?? token }
    }
}
