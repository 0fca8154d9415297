import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Where a contact sheet puts things, its labels' form and what counts as a blank picture: pure
/// arithmetic, no FFmpeg.
@Suite struct ContactSheetLayoutTests {
    static let cell = PixelSize(width: 160, height: 90)

    static func image(_ size: PixelSize, _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> GeneratedImage {
        var pixels: [UInt8] = []
        for y in 0..<size.height {
            for x in 0..<size.width {
                let (r, g, b) = pixel(x, y)
                pixels += [r, g, b]
            }
        }
        return GeneratedImage(checkedSize: size, pixels: pixels)
    }

    @Test func gridPicturesAndLabels() throws {
        let wide = ContactSheet.Cell(image: try GeneratedImage(size: Self.cell, gray: 9), label: "00:01.00")
        let narrow = ContactSheet.Cell(image: try GeneratedImage(size: PixelSize(width: 120, height: 90), gray: 9), label: "00:02.00")
        let failed = ContactSheet.Cell(failure: "the file ends at byte 10", label: "00:03.00")
        let section = ContactSheet.Section(title: "clip.mp4", details: ["Size 1 KiB"], cells: [wide, narrow, failed, wide, wide])
        let sheet = ContactSheet(sections: [section], columns: 4, cellSize: Self.cell)
        let sizes: [[PixelSize?]] = [[Self.cell, PixelSize(width: 120, height: 90), nil, Self.cell, Self.cell]]
        let layout = try SheetLayout(sheet: sheet, pictureSizes: sizes)
        // Four columns of 160 with 10 around each; two rows under the header, 10 below the last.
        #expect(layout.size.width == 10 + 4 * 170)
        let top = layout.size.height - 2 * 100
        #expect(layout.frames.first == PixelRect(x: 10, y: top, width: 160, height: 90))
        // The narrow picture is centred in its cell; the fifth starts the second row.
        #expect(layout.placements.map { [$0.cell, $0.x, $0.y] } == [[0, 10, top], [1, 180 + 20, top], [3, 520, top], [4, 10, top + 100]])
        #expect(layout.failures == [PixelRect(x: 350, y: top, width: 160, height: 90)])
        // Labels: at the bottom-right corner of each picture, boxed; the failed cell's text at its top-left.
        let labels = layout.texts.filter(\.boxed)
        #expect(labels.map(\.text) == ["00:01.00", "00:02.00", "00:01.00", "00:01.00"])
        #expect(labels[1].anchor == .bottomRight && labels[1].x == 200 + 120 - 3 && labels[1].y == top + 90 - 3)
        let failure = try #require(layout.texts.first { $0.text.hasPrefix("00:03.00") })
        #expect(failure.text.contains("no image:") && failure.x == 353 && failure.y == top + 3)
        // The header: the title in bold above its details, both at the left margin.
        #expect(layout.texts[0].text == "clip.mp4" && layout.texts[0].bold && layout.texts[0].y == 10)
        #expect(layout.texts[1].text == "Size 1 KiB" && layout.texts[1].y > layout.texts[0].y)
    }

    @Test func overviewHasARowPerFileAndFailedFilesSayWhy() throws {
        let good = ContactSheet.Section(title: "a.mp4", cells: [ContactSheet.Cell(image: try GeneratedImage(size: Self.cell, gray: 0), label: nil)])
        let bad = ContactSheet.Section(title: "b.mp4", cells: [], failure: "not a recognized media format")
        let sheet = ContactSheet(sections: [good, bad, good], columns: 3, cellSize: Self.cell)
        let layout = try SheetLayout(sheet: sheet, pictureSizes: [[Self.cell], [], [Self.cell]])
        #expect(layout.placements.count == 2)
        #expect(layout.failures.count == 1 && layout.failures[0].width == 3 * 170 - 10)
        #expect(layout.texts.contains { $0.text == "failed: not a recognized media format" })
        #expect(layout.texts.filter(\.bold).map(\.text) == ["a.mp4", "b.mp4", "a.mp4"])
    }

    @Test func absurdSheetsAreRefused() {
        let cells = [ContactSheet.Cell](repeating: ContactSheet.Cell(failure: "x", label: nil), count: 2)
        let section = ContactSheet.Section(title: "t", cells: cells)
        for (columns, cell) in [
            (0, Self.cell), (2, PixelSize(width: 0, height: 9)), (Int.max / 2, Self.cell), (1, PixelSize(width: 9, height: 40_000)),
        ] {
            #expect(throws: PlayheadError.self) {
                try SheetLayout(sheet: ContactSheet(sections: [section], columns: columns, cellSize: cell), pictureSizes: [[nil, nil]])
            }
        }
    }

    @Test func textIsFittedAndWrapped() {
        #expect(SheetLayout.fitted("short.mp4", width: 400, size: 10) == "short.mp4")
        let long = SheetLayout.fitted(String(repeating: "a", count: 50) + ".mp4", width: 120, size: 10)
        #expect(long.count == 20 && long.contains("…") && long.hasSuffix(".mp4"))
        #expect(SheetLayout.fitted("two\nlines", width: 400, size: 10) == "two lines")
        let wrapped = SheetLayout.wrapped("the file ends at byte 5946 but its index places media data", width: 120, height: 40, size: 10)
        #expect(wrapped.split(separator: "\n").allSatisfy { $0.count <= 20 })
        #expect(wrapped.split(separator: "\n").count == 40 / SheetLayout.lineHeight(10))
        #expect(wrapped.hasSuffix("…"))
    }

    @Test func timeLabels() {
        let minute = MediaTime(value: 60, timescale: 1)
        #expect(ContactSheet.timeLabel(MediaTime(value: 9999, timescale: 1000), duration: minute) == "00:09.99")
        #expect(ContactSheet.timeLabel(MediaTime(value: 29, timescale: 100), duration: minute) == "00:00.29")
        #expect(ContactSheet.timeLabel(MediaTime(value: 754, timescale: 10), duration: MediaTime(value: 600, timescale: 1)) == "01:15.40")
        let twoHours = MediaTime(value: 7200, timescale: 1)
        #expect(ContactSheet.timeLabel(MediaTime(value: 3725, timescale: 1), duration: twoHours) == "01:02:05")
        #expect(ContactSheet.timeLabel(.indefinite, duration: twoHours) == "00:00:00")
    }

    @Test func blankPictures() throws {
        let size = PixelSize(width: 64, height: 36)
        #expect(try GeneratedImage(size: size, gray: 0).isBlank)
        #expect(try GeneratedImage(size: size, gray: 255).isBlank)
        #expect(Self.image(size) { _, _ in (200, 30, 30) }.isBlank)
        // Sensor noise of a few levels is still blank.
        #expect(
            Self.image(size) { x, y in
                let n = UInt8((x * 7 + y * 13) % 9)
                return (n, n, n)
            }.isBlank)
        // A dim picture with something in it is not; nor two colours of one brightness.
        #expect(!Self.image(size) { x, _ in x < 32 ? (0, 0, 0) : (60, 60, 60) }.isBlank)
        #expect(!Self.image(size) { x, _ in x < 32 ? (255, 0, 0) : (0, 131, 0) }.isBlank)
        // A speck on black is blank; a title's few letters (1% of it) are not.
        #expect(Self.image(size) { x, y in x < 2 && y < 2 ? (255, 255, 255) : (0, 0, 0) }.isBlank)
        #expect(!Self.image(size) { x, y in x < 3 && y < 8 ? (255, 255, 255) : (0, 0, 0) }.isBlank)
    }
}
