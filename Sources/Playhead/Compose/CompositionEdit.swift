/// Changes to a compositor's layers made together (``Compositor/apply(_:)``): all of them or none,
/// taken by the render thread before the same frame. A layout's new version is one edit, so a
/// version that cannot be taken whole changes nothing.
public struct CompositionEdit: Sendable {
    /// Layers to remove (an identity not in the compositor is ignored).
    public var removals: [CompositionLayer.ID] = []
    /// Layers to replace, each at its next item boundary (an identity not in the compositor is ignored).
    public var updates: [(id: CompositionLayer.ID, layer: CompositionLayer)] = []
    /// Layers to add, in order.
    public var additions: [CompositionLayer] = []

    /// An edit that changes nothing yet.
    public init() {}
}
