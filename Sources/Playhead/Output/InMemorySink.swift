import PlayheadMedia

/// Keeps a copy of every frame in memory, packed (no row padding): for tests and small jobs.
public final class InMemorySink: FrameSink, Sendable {
    /// One kept frame.
    public struct Frame: Sendable, Hashable {
        public var index: Int
        public var presentationTime: MediaTime
        public var duration: MediaTime
        public var size: PixelSize
        /// Packed pixels, plane after plane, `visibleBytesPerRow` bytes per row.
        public var bytes: [UInt8]
    }

    public let pixelFormat: OutputPixelFormat
    private let state = Locked<(info: FrameStreamInfo?, frames: [Frame], finished: Bool)>((nil, [], false))
    private let limit: Int?

    /// Keeps frames in `pixelFormat` (rgb24 by default); only the first `limit` when given.
    /// - Parameters:
    ///   - pixelFormat: the layout frames are converted to.
    ///   - limit: the most frames kept (later ones are dropped); nil: every frame.
    public init(pixelFormat: OutputPixelFormat = .rgb24, limit: Int? = nil) {
        self.pixelFormat = pixelFormat
        self.limit = limit
    }

    public var frames: [Frame] { state.withLock { $0.frames } }
    public var streamInfo: FrameStreamInfo? { state.withLock { $0.info } }
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Notes the frames' description (``streamInfo``).
    /// - Parameter info: the frames' description.
    /// - Throws: never.
    public func begin(_ info: FrameStreamInfo) throws(PlayheadError) {
        state.withLock { $0.info = info }
    }

    /// Keeps a copy of the frame's visible pixels, unless `limit` frames are kept already.
    /// - Parameter frame: the frame.
    /// - Throws: never.
    public func write(_ frame: VideoFrame) throws(PlayheadError) {
        if let limit, state.withLock({ $0.frames.count }) >= limit { return }
        var bytes: [UInt8] = []
        for p in 0..<frame.planeCount {
            guard let plane = frame.plane(p) else { continue }
            for row in 0..<plane.rows {
                bytes.append(contentsOf: UnsafeBufferPointer(start: plane.baseAddress + row * plane.bytesPerRow, count: plane.visibleBytesPerRow))
            }
        }
        let kept = Frame(index: frame.index, presentationTime: frame.presentationTime, duration: frame.duration, size: frame.size, bytes: bytes)
        state.withLock { $0.frames.append(kept) }
    }

    /// Marks the sink finished (``isFinished``).
    /// - Throws: never.
    public func finish() throws(PlayheadError) { state.withLock { $0.finished = true } }
    /// Does nothing: the frames kept stay.
    public func abort() {}
}
