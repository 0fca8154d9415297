import Foundation
import Playhead
import Testing

/// Contact sheets read back: the header and every picture's time by OCR (Debian's tesseract), the
/// pictures checked against the file, blank frames skipped.
@Suite struct ContactSheetTests {
    /// A 12 s 1280x720 clip with sound, named `name`, in a new folder.
    static func clip(_ name: String, filter: String? = nil, duration: Int = 12) async throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-sheet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        var arguments = [
            "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=\(duration)",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(duration)",
        ]
        if let filter { arguments += ["-vf", filter] }
        arguments += ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path]
        _ = try await Reference.run(try Reference.ffmpeg(), arguments)
        return (folder, path)
    }

    /// The text tesseract reads on `image` (scaled up three times: its labels are small), as
    /// sparse text; or in the rectangle `crop` (x, y, width, height) as one line, with only
    /// near-white pixels kept (a label's white text on its shaded box, the picture around it left
    /// out) and only the characters of a time allowed.
    /// With `label` false, the rectangle is read as a block of plain text (a header).
    static func ocr(_ image: String, crop: (Int, Int, Int, Int)? = nil, label: Bool = true) async throws -> String {
        let tesseract = "/usr/bin/tesseract"
        try #require(FileManager.default.isExecutableFile(atPath: tesseract), "tesseract missing: run scripts/test-servers.sh")
        let big = image + ".ocr-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: big) }
        var filter = "scale=iw*3:ih*3"
        var options = ["--psm", "11"]
        if let (x, y, w, h) = crop, !label {
            filter = "crop=\(w):\(h):\(x):\(y)," + filter
            options = ["--psm", "6"]
        } else if let (x, y, w, h) = crop {
            filter = "crop=\(w):\(h):\(x):\(y),format=gray,lut=y='if(gt(val,225),0,255)'," + filter
            options = ["--psm", "7", "-c", "tessedit_char_whitelist=0123456789:."]
        }
        _ = try await Reference.run(try Reference.ffmpeg(), ["-loglevel", "error", "-y", "-i", image, "-vf", filter, big])
        return String(decoding: try await Reference.run(tesseract, [big, "-"] + options), as: UTF8.self)
    }

    /// The size of an image, by ffprobe.
    static func size(_ image: String) async throws -> PixelSize {
        let text = String(
            decoding: try await Reference.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", image]),
            as: UTF8.self)
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        try #require(parts.count == 2, "ffprobe: \(text)")
        return PixelSize(width: parts[0], height: parts[1])
    }

    /// The digits of `text` (what OCR reads reliably of a time: its `:` and `.` it may take for
    /// `,` or `;`).
    static func digits(_ text: String) -> String { String(text.filter(\.isNumber)) }

    /// The `MM:SS.ss` times in `text`.
    static func times(in text: String) -> [String] {
        let pattern = /\d\d:\d\d\.\d\d/
        return text.matches(of: pattern).map { String($0.output) }
    }

    /// `MM:SS.ss`, cut to hundredths (how the sheet labels a time under an hour), worked out here
    /// from the summary's number.
    static func label(_ seconds: Double) -> String {
        let hundredths = Int((seconds * 100 + 1e-6).rounded(.down))
        return String(format: "%02d:%02d.%02d", hundredths / 6000, hundredths / 100 % 60, hundredths % 100)
    }

    static func summary(_ stdout: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    }

    @Test func headerAndEveryTimeReadBack() async throws {
        let (folder, path) = try await Self.clip("harbour-view.mp4")
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out").path
        let run = try await CLI.run(["thumbnails", "--out", out, "--count", "8", "--size", "400x225", "--sheet", "--json", path])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let files = try #require(try Self.summary(run.stdout)["files"] as? [[String: Any]])
        let images = try #require(files.first?["images"] as? [[String: Any]])
        let sheet = try #require(files.first?["sheet"] as? String)
        #expect(sheet == out + "/01-harbour-view.mp4/sheet.png")
        // The cells: 4 a row of 400x225 with 10 around each, the last row at the bottom; the
        // header above them.
        let size = try await Self.size(sheet)
        #expect(size.width == 10 + 4 * 410)
        let gridTop = size.height - 2 * 235
        let header = try await Self.ocr(sheet, crop: (0, 0, size.width, gridTop), label: false)
        // The header: the name, the duration (ffprobe's), the displayed size, the codecs.
        #expect(header.contains("harbour-view.mp4"), "OCR: \(header)")
        #expect(header.contains("Duration 00:12.00"), "OCR: \(header)")
        #expect(header.contains("1280x720"), "OCR: \(header)")
        #expect(header.contains("h264") && header.contains("aac"), "OCR: \(header)")
        #expect(gridTop > 60)
        // Every picture's label, in its bottom-right corner, is its actual time (not the
        // requested one: those differ here).
        let expected = try images.map { try Self.label(#require($0["actualTime"] as? Double)) }
        #expect(expected.count == 8)
        for (i, label) in expected.enumerated() {
            let x = 10 + (i % 4) * 410 + 200, y = gridTop + (i / 4) * 235 + 225 - 50
            let read = try await Self.ocr(sheet, crop: (x, y, 200, 50))
            #expect(Self.digits(read) == Self.digits(label), "picture \(i + 1): OCR read \(read), its time is \(label)")
        }
        #expect(images.map { $0["actualTime"] as? Double } != images.map { $0["requestedTime"] as? Double })
    }

    @Test func failedTimesAndFilesSayWhy() async throws {
        // A file name with a colon is a file's name, not a URL's scheme.
        let (folder, path) = try await Self.clip("take:2.mp4", duration: 4)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out").path
        let bad = try Fixtures.clip("bad-random.mp4")
        let run = try await CLI.run(
            ["thumbnails", "--out", out, "--at", "1,30", "--size", "400x225", "--sheet", "--overview", "--json", path, bad])
        #expect(run.status == 1)
        let summary = try Self.summary(run.stdout)
        let files = try #require(summary["files"] as? [[String: Any]])
        let sheet = try #require(files.first?["sheet"] as? String)
        let text = try await Self.ocr(sheet)
        // The time past the end is drawn as failed, with the reason the summary gives.
        #expect(text.contains("no image"), "OCR: \(text)")
        #expect(text.contains("the video ends at"), "OCR: \(text)")
        #expect(Self.times(in: text).contains("00:30.00"), "OCR: \(text)")
        // The overview: a row for each file, the bad one drawn as failed with its reason.
        let overview = try #require(summary["overview"] as? String)
        #expect(overview == out + "/overview.png")
        let whole = try await Self.ocr(overview)
        #expect(whole.contains("take:2.mp4") && whole.contains("bad-random.mp4"), "OCR: \(whole)")
        #expect(whole.contains("not a recognized media"), "OCR: \(whole)")
    }

    @Test func jpegSheetOfChosenColumns() async throws {
        let (folder, path) = try await Self.clip("columns.mp4", duration: 4)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out").path
        let run = try await CLI.run(
            ["thumbnails", "--out", out, "--count", "7", "--size", "200x150", "--sheet", "--sheet-format", "jpeg", "--sheet-columns", "3", path])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let sheet = out + "/01-columns.mp4/sheet.jpg"
        let probe = String(
            decoding: try await Reference.run(
                "/usr/bin/ffprobe",
                ["-v", "error", "-show_entries", "stream=codec_name,width", "-of", "csv=p=0", sheet]), as: UTF8.self)
        // Three cells of 200 and the spacing of 10 around each.
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,640")
        // Run again into the same folder: the earlier run's sheet is ours and is replaced.
        let again = try await CLI.run(
            ["thumbnails", "--out", out, "--count", "7", "--size", "200x150", "--sheet", "--sheet-format", "jpeg", "--sheet-columns", "3", path])
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: sheet))
        let usage = try await CLI.run(["thumbnails", "--out", out + "2", "--count", "2", "--sheet-columns", "3", path])
        #expect(usage.status == 2)
        // A sheet too large once its spacing is counted is refused before any work (65,536 wide
        // with 10 pixels around each of 1000 cells of 56).
        let wide = try await CLI.run([
            "thumbnails", "--out", out + "3", "--count", "1000", "--sheet", "--sheet-columns", "1000", "--size", "56x32", path,
        ])
        #expect(wide.status == 2 && wide.stderr.contains("too large"), "\(wide.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "3"))
    }

    /// A clip black for its first 1.5 s and its last second: without `--skip-blank` the first and last
    /// pictures are black; with it, none is, each moved to the nearest frame that is not (ffmpeg's
    /// decode of the file says which frames are black), and the summary says it moved.
    @Test func blankSkippingMovesNoPictureOntoABlankFrame() async throws {
        let (folder, path) = try await Self.clip("fades.mp4", filter: "drawbox=c=black:t=fill:enable='lt(t,1.5)+gte(t,9)'", duration: 10)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out").path
        let plain = try await CLI.run(["thumbnails", "--out", out + "-plain", "--count", "5", "--size", "160x90", "--json", path])
        #expect(plain.status == 0)
        let plainImages = try #require((try Self.summary(plain.stdout)["files"] as? [[String: Any]])?.first?["images"] as? [[String: Any]])
        let run = try await CLI.run(["thumbnails", "--out", out, "--count", "5", "--size", "160x90", "--skip-blank", "--json", path])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let images = try #require((try Self.summary(run.stdout)["files"] as? [[String: Any]])?.first?["images"] as? [[String: Any]])
        func isBlack(_ image: [String: Any]) async throws -> Bool {
            let file = try #require(image["path"] as? String)
            let pixels = try await Reference.run(
                try Reference.ffmpeg(), ["-loglevel", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "gray", "-"])
            return (pixels.max() ?? 0) < 40
        }
        // Times 1, 3, 5, 7, 9: the first and the last fall on black.
        let firstBlack = try await isBlack(plainImages[0]), lastBlack = try await isBlack(plainImages[4])
        #expect(firstBlack && lastBlack)
        for image in images {
            let black = try await isBlack(image)
            #expect(!black, "\(image)")
        }
        // Moved to the first frame after the black (frames are 0.04 s apart: 1.48 is the last
        // black one) and the last before it (9 s − 0.04).
        #expect(images[0]["movedFromBlank"] as? Double == 1)
        #expect(images[0]["actualTime"] as? Double == 1.52)
        #expect(images[4]["movedFromBlank"] as? Double == 9)
        #expect(images[4]["actualTime"] as? Double == 8.96)
        #expect(images[1..<4].allSatisfy { $0["movedFromBlank"] == nil })
    }
}
