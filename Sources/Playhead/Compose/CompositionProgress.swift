import PlayheadMedia

/// What a render shows now, updated by the render thread after every frame: for a status report
/// (a channel's `/status`).
public struct CompositionProgress: Sendable {
    /// Frames rendered so far.
    public var frames = 0
    /// The canvas time of the last frame rendered.
    public var time = MediaTime.zero
    /// Realtime only: frames written more than half a frame after they were due, so far.
    public var lateFrames = 0
    /// Realtime only: how late each frame was written, in seconds (0 when on time).
    public var lateness = LatenessHistogram()
    /// Memory the layers' recorded pictures hold now (``Compositor/loopCacheBytes``), in bytes.
    public var loopCacheBytes = 0
    /// Each layer's current item (nil once its content has ended or it failed, and while a
    /// channel's layer waits to try its failed items again).
    public var layers: [LayerProgress] = []

    public struct LayerProgress: Sendable {
        public var id: CompositionLayer.ID
        /// The item's position in the layer's playlist (from 0).
        public var item: Int?
        public var source: String?
        /// A filler plays in place of a failed item.
        public var filler = false
        /// How long the item has played so far.
        public var position: MediaTime?
        public var loopsCompleted: Int
    }

    mutating func note(frame: Int, time: MediaTime, layers: [LayerReader], loopCacheBytes: Int) {
        frames = frame
        self.loopCacheBytes = loopCacheBytes
        self.time = time
        self.layers = layers.map { reader in
            let now = reader.now
            let start = reader.passes.last.map(\.layerStart)
            return LayerProgress(
                id: reader.id, item: now?.item, source: now?.source, filler: now?.filler ?? false,
                position: start.map { time - $0 }, loopsCompleted: reader.loopsCompleted)
        }
    }
}
