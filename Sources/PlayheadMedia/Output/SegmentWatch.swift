/// What tells a lent frame or buffer whether it is still wanted: a session's control (a seek
/// starts a newer segment; the session stops). The engine's `SessionControl` is the one conformer.
package protocol SegmentWatch: AnyObject, Sendable {
    /// Whether a seek has started a segment newer than `segment`.
    /// - Parameter segment: the segment a frame or buffer belongs to.
    /// - Returns: true when it is no longer wanted.
    func isSuperseded(_ segment: Int) -> Bool
    /// Whether the session has stopped.
    var isStopped: Bool { get }
}
