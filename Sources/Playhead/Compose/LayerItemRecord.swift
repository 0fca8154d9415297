import Foundation
import PlayheadMedia

/// What a composition's layer does when one of its items fails (missing, not media, damaged
/// past use, cut short).
public enum LayerFailurePolicy: Sendable {
    /// The item is passed over, as a queue player skips a failed item: the next plays from that
    /// moment; a layer whose every item failed stops (and shows the background) — in a channel,
    /// until the first failure is old enough to try that item again, when its playlist goes on.
    case passOver
    /// A filler plays for the failed item's slot — its time range's duration, else `slot` — then
    /// the next item: `asset`'s picture and sound (looping within the slot), or the background and
    /// silence when nil. A channel never stops for one broken clip.
    case filler(Asset?, slot: MediaTime)
}

/// One item a layer played, failed or filled, as it ended: what an as-run log records.
public struct LayerItemRecord: Sendable {
    public enum Status: String, Sendable {
        /// Played to its end, or until the layer stopped or changed.
        case played
        /// It failed at ``start`` + its length (``error`` says why).
        case failed
        /// A filler slot in place of a failed item.
        case filler
    }

    public var layer: CompositionLayer.ID
    /// The item's position in the layer's playlist (from 0).
    public var item: Int
    /// The source played (a filler's, or `background`, for a filler slot).
    public var source: String
    /// Where it began and ended on the composition's timeline.
    public var start: MediaTime
    public var end: MediaTime
    /// When it began on the wall clock, as rendered.
    public var wallClockStart: Date?
    public var status: Status
    public var error: PlayheadError?
    /// The item's integrated loudness (EBU R128, LUFS) when the compositor brings items to a
    /// loudness target and it was measured.
    public var loudness: Double?
    /// The asset played (for the loudness lookup).
    var asset: Asset?
}
