import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct GeometryAndErrorTests {
    @Test func presentationSizeStretchesByPixelAspectThenTurns() {
        let stored = PixelSize(width: 240, height: 180)
        #expect(
            stored.presentationSize(pixelAspectRatio: PixelAspectRatio(horizontal: 4, vertical: 3), orientation: .identity)
                == PixelSize(width: 320, height: 180))
        let landscape = PixelSize(width: 320, height: 180)
        #expect(
            landscape.presentationSize(pixelAspectRatio: .square, orientation: VideoOrientation(rotation: 90))
                == PixelSize(width: 180, height: 320))
        #expect(
            landscape.presentationSize(pixelAspectRatio: .square, orientation: VideoOrientation(rotation: 180))
                == landscape)
        // DV NTSC widescreen: 720x480 with 32:27 pixels shows as 853x480.
        #expect(
            PixelSize(width: 720, height: 480).presentationSize(
                pixelAspectRatio: PixelAspectRatio(horizontal: 32, vertical: 27), orientation: .identity)
                == PixelSize(width: 853, height: 480))
    }

    @Test func orientationNormalizesToQuarterTurns() {
        #expect(VideoOrientation(rotation: -90).rotation == 270)
        #expect(VideoOrientation(rotation: 450).rotation == 90)
        #expect(VideoOrientation(rotation: 89).rotation == 90)
        #expect(VideoOrientation(rotation: 359).rotation == 0)
        #expect(VideoOrientation(rotation: 270).swapsDimensions)
        #expect(!VideoOrientation(rotation: 180).swapsDimensions)
    }

    @Test func errorCodesBelongToTheirStage() {
        #expect(PlayheadError.Code.fileNotFound.family == .io)
        #expect(PlayheadError.Code.unrecognizedFormat.family == .demux)
        #expect(PlayheadError.Code.decoderNotFound.family == .decode)
        #expect(PlayheadError.Code.writeFailed.family == .output)
        #expect(PlayheadError.Code.cancelled.family == .state)
        #expect(PlayheadError.Code.emptyFile.description == "demux.emptyFile")
    }

    @Test func errorDescriptionNamesFileAndCause() {
        let error = PlayheadError(
            code: .openFailed, message: "damaged", file: "/media/a.mp4",
            cause: .init(function: "avformat_open_input", errorNumber: -1, text: "Invalid data"))
        #expect(error.description == "[demux.openFailed] /media/a.mp4: damaged (avformat_open_input: Invalid data (-1))")
    }

    /// A stall that interrupted a call which still returned success names the timeout as its
    /// cause, not "Success (0)"; a call that failed keeps its own code.
    @Test func aStallNamesTheTimeoutAsItsCause() {
        let interrupted = FFmpegError.stalled(function: "avformat_seek_file", result: 0, file: "http://host/a.mp4")
        #expect(interrupted.code == .timedOut)
        #expect(interrupted.cause?.errorNumber == FFmpegError.timedOut)
        #expect(interrupted.cause?.text.contains("Success") == false, "\(interrupted)")
        let failed = FFmpegError.stalled(function: "av_read_frame", result: FFmpegError.exit, file: "http://host/a.mp4")
        #expect(failed.cause?.errorNumber == FFmpegError.exit)
    }
}
