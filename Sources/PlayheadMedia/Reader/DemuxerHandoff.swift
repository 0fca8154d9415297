/// An opened ``Demuxer`` on its way from one owner to the next (a probe to a session, a finished
/// session to the next loop iteration).
///
/// `@unchecked Sendable` is safe because a box is only ever made by the owner giving the demuxer
/// up, which keeps no reference to it, and is opened (`take`) once, under the lock of whoever
/// holds the box, by the one owner that receives it; the demuxer is never touched by two threads
/// at once.
package final class DemuxerBox: @unchecked Sendable {
    private var demuxer: Demuxer?
    /// `true` when the source cannot be opened again (a pipe, a FIFO, standard input).
    package let isOneShot: Bool
    /// The asset whose demuxer it is.
    package let token: Int

    package init(_ demuxer: Demuxer, token: Int) {
        self.demuxer = demuxer
        self.isOneShot = !demuxer.canSeek
        self.token = token
    }

    /// The demuxer; nil when already taken.
    package func take() -> Demuxer? {
        defer { demuxer = nil }
        return demuxer
    }
}

/// Opened demuxers not in use, kept so that the next user of the same asset (a session after a
/// probe, the next loop iteration, the next image request) need not open and analyse the source
/// again. Bounded: past `capacity`, the longest idle is closed (on a worker thread: closing a
/// network source may block). A source that cannot be reopened is not kept here but by its asset.
package final class IdleDemuxers: Sendable {
    package static let shared = IdleDemuxers(capacity: 8)

    private let capacity: Int
    private let boxes = Locked<[DemuxerBox]>([])

    init(capacity: Int) { self.capacity = capacity }

    /// Keeps `box` for its asset.
    package func put(_ box: DemuxerBox) {
        let evicted = boxes.withLock { boxes -> [DemuxerBox] in
            boxes.append(box)
            guard boxes.count > capacity else { return [] }
            let excess = boxes.count - capacity
            defer { boxes.removeFirst(excess) }
            return Array(boxes.prefix(excess))
        }
        guard !evicted.isEmpty else { return }
        WorkerPool.shared.run("playhead.close") { for box in evicted { _ = box.take() } }
    }

    /// Closes the idle demuxers of the asset `token` (the asset is gone: nobody can take them), on
    /// a worker thread.
    package func discard(token: Int) {
        let gone = boxes.withLock { boxes -> [DemuxerBox] in
            let matching = boxes.filter { $0.token == token }
            boxes.removeAll { $0.token == token }
            return matching
        }
        guard !gone.isEmpty else { return }
        WorkerPool.shared.run("playhead.close") { for box in gone { _ = box.take() } }
    }

    /// An idle demuxer of the asset `token`, if one is kept.
    package func take(token: Int) -> DemuxerBox? {
        boxes.withLock { boxes in
            guard let index = boxes.lastIndex(where: { $0.token == token }) else { return nil }
            return boxes.remove(at: index)
        }
    }
}
