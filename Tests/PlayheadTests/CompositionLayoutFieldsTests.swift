import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A layout's layer describes every part of a composition layer: a part added to
/// `CompositionLayer` and not to `CompositionLayout.Layer` would be lost on every live edit (and
/// left out of the equality that decides what changed), so this fails until both have it.
@Suite struct CompositionLayoutFieldsTests {
    @Test func aLayoutsLayerHasEveryPartOfACompositionLayer() {
        let layer = CompositionLayer(assets: [Asset(path: "/clips/a.mp4")], rect: PixelRect(x: 0, y: 0, width: 2, height: 2))
        let described = CompositionLayout.Layer(name: "a", sources: ["/clips/a.mp4"], rect: PixelRect(x: 0, y: 0, width: 2, height: 2))
        let parts = Set(Mirror(reflecting: layer).children.compactMap(\.label))
        let describedParts = Set(Mirror(reflecting: described).children.compactMap(\.label))
        // The playlist is its sources' assets; a layout's layer also has a name, and which of its
        // sources' tracks play (carried by the assets it opens: their options' selection).
        #expect(
            parts.subtracting(["assets"]) == describedParts.subtracting(["name", "sources", "selection"]),
            "\(parts.symmetricDifference(describedParts))")
        #expect(parts.contains("assets") && describedParts.contains("sources"))
        // And each part is carried into the layer it composes.
        let full = CompositionLayout.Layer(
            name: "b", sources: ["/clips/b.mp4"], rect: PixelRect(x: 1, y: 1, width: 4, height: 4), zIndex: 3, gravity: .resizeAspectFill,
            loop: .forever, timeRange: TimeRange(start: MediaTime(seconds: 1), duration: MediaTime(seconds: 2)), afterEnd: .clear,
            providesAudio: true, scheduledStart: Date(timeIntervalSince1970: 1_000))
        let composed = full.composed(assets: [Asset(path: "/clips/b.mp4")])
        for (label, value) in Mirror(reflecting: composed).children where label != "assets" {
            let same = Mirror(reflecting: full).children.first { $0.label == label }.map { "\($0.value)" }
            #expect(same == "\(value)", "\(label ?? "?"): \(String(describing: same)) composed as \(value)")
        }
    }
}
