import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct VideoGravityTests {
    let canvas = PixelSize(width: 640, height: 360)

    @Test func aspectFitPillarboxesA4x3Picture() {
        let layout = VideoGravity.resizeAspect.layout(stored: PixelSize(width: 320, height: 240), canvas: canvas)
        // 4:3 at height 360 is 480 wide: 80-pixel bars left and right.
        #expect(layout.content == PixelRect(x: 80, y: 0, width: 480, height: 360))
        #expect(layout.sourceCrop == PixelRect(x: 0, y: 0, width: 320, height: 240))
        #expect(layout.hasBars)
    }

    @Test func aspectFitLetterboxesAWidePicture() {
        let layout = VideoGravity.resizeAspect.layout(stored: PixelSize(width: 400, height: 100), canvas: canvas)
        #expect(layout.content == PixelRect(x: 0, y: 100, width: 640, height: 160))
    }

    @Test func aspectFillCropsTheOverflowCentered() {
        let layout = VideoGravity.resizeAspectFill.layout(stored: PixelSize(width: 320, height: 240), canvas: canvas)
        #expect(layout.content == PixelRect(size: canvas))
        #expect(!layout.hasBars)
        // 320 wide shown at 640: 180 source rows are visible, 30 cropped above and below.
        #expect(layout.sourceCrop == PixelRect(x: 0, y: 30, width: 320, height: 180))
    }

    @Test func stretchUsesEverything() {
        let layout = VideoGravity.resize.layout(stored: PixelSize(width: 320, height: 240), canvas: canvas)
        #expect(layout.content == PixelRect(size: canvas))
        #expect(layout.sourceCrop == PixelRect(x: 0, y: 0, width: 320, height: 240))
        #expect(layout.scaledSize == canvas)
    }

    @Test func anamorphicPixelsAreShownWide() {
        // 240x180 stored with 4:3 pixels shows as 320x180: exactly 16:9, no bars.
        let fit = VideoGravity.resizeAspect.layout(
            stored: PixelSize(width: 240, height: 180),
            pixelAspectRatio: PixelAspectRatio(horizontal: 4, vertical: 3), canvas: canvas)
        #expect(fit.content == PixelRect(size: canvas))
        // Filled into a square: the middle 180x180 of the shown picture, which is 135 stored columns.
        let fill = VideoGravity.resizeAspectFill.layout(
            stored: PixelSize(width: 240, height: 180),
            pixelAspectRatio: PixelAspectRatio(horizontal: 4, vertical: 3),
            canvas: PixelSize(width: 180, height: 180))
        #expect(fill.sourceCrop == PixelRect(x: 53, y: 0, width: 135, height: 180))
    }

    @Test func quarterTurnsSwapTheScaledSize() {
        // Stored 320x180 turned 90°: shown 180x320, fit into 640x360 as 202x360 (rounded to even).
        let layout = VideoGravity.resizeAspect.layout(
            stored: PixelSize(width: 320, height: 180),
            orientation: VideoOrientation(rotation: 90), canvas: canvas, alignment: 2)
        #expect(layout.content == PixelRect(x: 218, y: 0, width: 202, height: 360))
        #expect(layout.scaledSize == PixelSize(width: 360, height: 202))
        #expect(layout.content.x % 2 == 0 && layout.content.width % 2 == 0)
    }

    @Test func fillCropOfATurnedPictureMapsBackToStoredPixels() {
        // Stored 400x100, turned 90° clockwise: shown 100x400. Filled into 100x100 the middle
        // 100 shown rows are kept, which are the middle 100 stored columns.
        let turned = VideoGravity.resizeAspectFill.layout(
            stored: PixelSize(width: 400, height: 100),
            orientation: VideoOrientation(rotation: 90), canvas: PixelSize(width: 100, height: 100))
        #expect(turned.sourceCrop == PixelRect(x: 150, y: 0, width: 100, height: 100))
        // An off-center case: 270° with a crop that is not symmetric cannot happen with centered
        // gravity, so check 180° keeps a centered crop centered.
        let upsideDown = VideoGravity.resizeAspectFill.layout(
            stored: PixelSize(width: 400, height: 100),
            orientation: VideoOrientation(rotation: 180), canvas: PixelSize(width: 100, height: 100))
        #expect(upsideDown.sourceCrop == PixelRect(x: 150, y: 0, width: 100, height: 100))
    }
}
