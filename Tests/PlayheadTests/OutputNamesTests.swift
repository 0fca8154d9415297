import Testing

@testable import PlayheadMedia
@testable import PlayheadRunFolder

/// The names a run folder holds are made and read by one rule each: every name a writer makes
/// is one that a later run may clean up, and nothing else is.
@Suite struct OutputNamesTests {
    @Test func everyNameAWriterMakesIsOurs() {
        var made = [OutputNames.video, OutputNames.frames, OutputNames.audio] + OutputNames.sheetExtensions.map(OutputNames.sheet)
        for number in [1, 42, 999_999, 1_000_000] {
            for format in ImageSequenceSink.Format.allCases { made.append(ImageSequenceSink.fileName(number: number, format: format)) }
        }
        for number in [1, 9999, 10_000] {
            for fileExtension in OutputNames.thumbnailExtensions { made.append(OutputNames.thumbnail(number: number, fileExtension: fileExtension)) }
        }
        for (cue, picture) in [(1, 1), (42, 2), (1_000_000, 12)] { made.append(OutputNames.subtitlePicture(cue: cue, picture: picture)) }
        for name in made {
            #expect(OutputNames.isOutputFile(name), "\(name)")
            let temporary = SafeFile.temporaryName(for: name, suffix: SafeFile.randomSuffix())
            #expect(OutputNames.isOutputFile(temporary) && OutputNames.temporaryTarget(of: temporary) == name, "\(temporary)")
        }
        let read = ImageSequenceSink.number(inFileName: ImageSequenceSink.fileName(number: 42, format: .ppm))
        #expect(read?.number == 42 && read?.format == .ppm, "\(String(describing: read))")
        #expect(OutputNames.thumbnail(number: 7, fileExtension: "png") == "thumb-0007.png")
        #expect(OutputNames.subtitlePicture(cue: 7, picture: 2) == "cue-000007-2.png")
    }

    @Test func aUsersNamesAreNotOurs() {
        for name in [
            "video.mov", "Video.mp4", "frames.y4m~", "audio.wav.bak", "sheet.gif", "frame-1.png", "frame-000001.jpg", "frame-00000a.png",
            "thumb-001.png", "thumb-0001.jpg", "thumb-0001", "frame-", ".video.mp4.partial", ".video.mp4.ABC.partial", "..partial",
            ".notes.txt.k3j9x2.partial", "my-frame-000001.png", "cue-00001-1.png", "cue-000001.png", "cue-000001-.png", "cue-000001-1.jpg",
            "cue-000001-1-2.png", "cue-00000a-1.png",
        ] {
            #expect(!OutputNames.isOutputFile(name), "\(name)")
        }
        #expect(ImageSequenceSink.number(inFileName: "frame-00000a.png") == nil)
        #expect(SafeFile.finalName(ofTemporaryName: ".notes.txt.k3j9x2.partial") == "notes.txt", "a temporary name of a user's file")
    }
}
