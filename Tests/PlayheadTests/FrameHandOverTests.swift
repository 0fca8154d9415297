import Testing

@testable import PlayheadMedia

/// A composition's picture reaches an encoder as a reference, not a copy, and the composition
/// never draws over a picture an encoder still holds (it takes new buffers instead); a picture
/// whose producer reuses its buffers is copied.
@Suite struct FrameHandOverTests {
    private static let size = PixelSize(width: 64, height: 36)
    private static let white = RGBColor(red: 255, green: 255, blue: 255)

    private static func picture(_ colour: RGBColor) throws -> OwnedFrame {
        let frame = try OwnedFrame(size: size, format: .yuv420p)
        frame.fill(with: colour)
        return frame
    }

    private static func view(_ picture: OwnedFrame, sharable: Bool) -> VideoFrame {
        var frame = VideoFrame(
            presentationTime: .zero, duration: MediaTime(value: 1, timescale: 25), index: 0, source: "test", size: size,
            pixelFormat: .yuv420p, pixelFormatName: "yuv420p", picture: picture)
        frame.sharable = sharable
        return frame
    }

    /// The luma of the frame's first pixel.
    private static func luma(_ frame: OwnedFrame) -> UInt8? {
        frame.pointer.pointee.data.0?.pointee
    }

    @Test func aSharablePictureIsHeldByReferenceAndKeptWhenItsProducerDrawsAgain() throws {
        let producer = try Self.picture(Self.white)
        let holder = try OwnedFrame(size: Self.size, format: .yuv420p)
        try holder.hold(Self.view(producer, sharable: true), file: "test")
        #expect(holder.sharesBuffers(with: producer))
        let heldLuma = try #require(Self.luma(holder))
        // The producer's next picture goes into new buffers: the held one is unchanged.
        try producer.renewIfShared()
        #expect(!holder.sharesBuffers(with: producer))
        producer.fill(with: RGBColor(red: 0, green: 0, blue: 0))
        #expect(Self.luma(holder) == heldLuma)
        #expect(Self.luma(producer) != heldLuma)
    }

    @Test func aHeldPictureGivenBackLeavesItsProducersBuffersInPlace() throws {
        let producer = try Self.picture(Self.white)
        let buffers = producer.pointer.pointee.data.0
        let holder = try OwnedFrame(size: Self.size, format: .yuv420p)
        try holder.hold(Self.view(producer, sharable: true), file: "test")
        holder.releaseShared()
        #expect(holder.pointer.pointee.buf.0 == nil)
        // Its geometry stays, for the next picture.
        #expect(holder.size == Self.size && holder.pictureFormat == .yuv420p)
        try producer.renewIfShared()
        #expect(producer.pointer.pointee.data.0 == buffers)
        // The next copy allocates what the released reference took away.
        try holder.hold(Self.view(producer, sharable: false), file: "test")
        #expect(holder.pointer.pointee.buf.0 != nil && !holder.sharesBuffers(with: producer))
    }

    @Test func aPictureWhoseProducerReusesItsBuffersIsCopied() throws {
        let producer = try Self.picture(Self.white)
        let holder = try OwnedFrame(size: Self.size, format: .yuv420p)
        try holder.hold(Self.view(producer, sharable: false), file: "test")
        #expect(!holder.sharesBuffers(with: producer))
        let heldLuma = try #require(Self.luma(holder))
        producer.fill(with: RGBColor(red: 0, green: 0, blue: 0))
        #expect(Self.luma(holder) == heldLuma)
        // A copied picture is the holder's alone: giving back shared buffers keeps it.
        holder.releaseShared()
        #expect(holder.pointer.pointee.buf.0 != nil)
    }

    @Test func aPictureOfAnotherSizeOrFormatIsRefused() throws {
        let holder = try OwnedFrame(size: Self.size, format: .yuv420p)
        let larger = try OwnedFrame(size: PixelSize(width: 128, height: 72), format: .yuv420p)
        let rgb = try OwnedFrame(size: Self.size, format: .rgb24)
        for (other, sharable) in [(larger, true), (larger, false), (rgb, true), (rgb, false)] {
            var frame = Self.view(other, sharable: sharable)
            frame.sharable = sharable
            #expect(throws: PlayheadError.self) { try holder.hold(frame, file: "test") }
        }
        #expect(holder.size == Self.size)
    }
}
