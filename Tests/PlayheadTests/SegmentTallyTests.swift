import Testing

@testable import Playhead
@testable import PlayheadMedia

/// A session's account of its current segment, and the one place that judges how the segment went:
/// what it keeps across segments, how damage adds up, and which evidence decides the status.
@Suite struct SegmentTallyTests {
    static let source = "clip.mp4"

    static func error(_ code: PlayheadError.Code, _ message: String, file: String? = nil) -> PlayheadError {
        PlayheadError(code: code, message: message, file: file)
    }

    static func damage(_ errors: PlayheadError...) -> DamageTally {
        var tally = DamageTally()
        for error in errors { tally.record(error) }
        return tally
    }

    /// A tally of a segment that decoded frames and reached a complete end.
    static func decoded(_ frames: Int = 10) -> SegmentTally {
        var tally = SegmentTally()
        tally.begin(0)
        tally.framesDecoded = frames
        tally.framesDelivered = frames
        tally.dataEnd = .complete
        return tally
    }

    static func status(_ tally: SegmentTally, cancelled: Bool = false, strict: Bool = false) -> DecodeResult.Status {
        tally.result(source: source, cancelled: cancelled, strict: strict).status
    }

    /// The failure a status carries, if it is one.
    static func failure(_ status: DecodeResult.Status) -> PlayheadError? {
        if case .failed(let error) = status { return error }
        return nil
    }

    /// A tally that belongs to no segment yet starts empty.
    @Test func aNewTallyIsEmptyAndBelongsToNoSegment() {
        let tally = SegmentTally()
        #expect(tally.segment == -1)
        #expect(tally.framesDecoded == 0 && tally.framesDelivered == 0 && tally.audioFrames == 0)
        #expect(tally.routesDone.isEmpty && !tally.limitReached && tally.dataEnd == nil)
        #expect(tally.damage.count == 0 && tally.damage.first == nil)
    }

    /// The result carries the tally's counts, times, size and audio, and the summed damage.
    @Test func theResultCarriesEveryCount() {
        var tally = Self.decoded(12)
        tally.framesDelivered = 9
        tally.firstPTS = MediaTime(value: 1, timescale: 25)
        tally.lastPTS = MediaTime(value: 9, timescale: 25)
        tally.outputSize = PixelSize(width: 64, height: 36)
        let audio = AudioStreamInfo(source: Self.source, sampleRate: 48_000, channelCount: 2)
        tally.audio = audio
        tally.audioFrames = 4_800
        let first = Self.error(.readFailed, "unreadable packet")
        tally.demuxDamage = Self.damage(first)
        tally.videoDamage = Self.damage(Self.error(.decodeFailed, "concealed"), Self.error(.decodeFailed, "rejected"))
        let result = tally.result(source: Self.source, cancelled: false, strict: false)
        #expect(result.source == Self.source)
        #expect(result.framesDecoded == 12)
        #expect(result.framesDelivered == 9)
        #expect(result.firstPresentationTime == MediaTime(value: 1, timescale: 25))
        #expect(result.lastPresentationTime == MediaTime(value: 9, timescale: 25))
        #expect(result.outputSize == PixelSize(width: 64, height: 36))
        #expect(result.audio == audio)
        #expect(result.audioFramesDelivered == 4_800)
        #expect(result.damagedPackets == 3, "one demuxer packet and two video packets")
        #expect(result.firstDamage == first)
        #expect(result.status == .completed, "damage in a lenient run is counted, not a failure")
    }

    /// A new segment starts its counts, times, end, errors and routes over, and keeps the damage of
    /// each stage, the audio format and the output size (they describe the data, not the segment).
    @Test func beginStartsANewAccountAndKeepsWhatDescribesTheData() {
        var tally = SegmentTally()
        tally.begin(1)
        let demux = Self.damage(Self.error(.readFailed, "d1"))
        let video = Self.damage(Self.error(.decodeFailed, "v1"), Self.error(.decodeFailed, "v2"))
        let audioDamage = Self.damage(Self.error(.decodeFailed, "a1"), Self.error(.decodeFailed, "a2"), Self.error(.decodeFailed, "a3"))
        let audio = AudioStreamInfo(source: Self.source, sampleRate: 44_100, channelCount: 1)
        tally.framesDecoded = 5
        tally.framesDelivered = 4
        tally.firstPTS = .zero
        tally.lastPTS = MediaTime(value: 3, timescale: 1)
        tally.outputSize = PixelSize(width: 8, height: 6)
        tally.dataEnd = .truncated(Self.error(.truncated, "cut"))
        tally.limitReached = true
        tally.conversionError = Self.error(.conversionFailed, "scale")
        tally.sinkError = Self.error(.writeFailed, "disk")
        tally.audioSinkError = Self.error(.writeFailed, "audio disk")
        tally.audio = audio
        tally.audioFrames = 1_024
        tally.demuxDamage = demux
        tally.videoDamage = video
        tally.audioDamage = audioDamage
        tally.routesDone = [.video, .audio]

        tally.begin(2)

        #expect(tally.segment == 2)
        #expect(tally.framesDecoded == 0 && tally.framesDelivered == 0 && tally.audioFrames == 0)
        #expect(tally.firstPTS == nil && tally.lastPTS == nil)
        #expect(tally.dataEnd == nil && !tally.limitReached)
        #expect(tally.conversionError == nil && tally.sinkError == nil && tally.audioSinkError == nil)
        #expect(tally.routesDone.isEmpty)
        // Kept, each in its own place (three different counts: a swap shows).
        #expect(tally.demuxDamage == demux)
        #expect(tally.videoDamage == video)
        #expect(tally.audioDamage == audioDamage)
        #expect(tally.audio == audio)
        #expect(tally.outputSize == PixelSize(width: 8, height: 6))
        #expect(tally.damage.count == 6)
    }

    /// The damage of the three stages adds up; the first error is the demuxer's, else the video
    /// decoder's, else the audio decoder's (packets are read before they are decoded).
    @Test func damageAddsTheStagesAndKeepsTheFirstInStageOrder() {
        let d = Self.error(.readFailed, "demux"), v = Self.error(.decodeFailed, "video"), a = Self.error(.decodeFailed, "audio")
        var tally = SegmentTally()
        tally.demuxDamage = Self.damage(d, d)
        tally.videoDamage = Self.damage(v)
        tally.audioDamage = Self.damage(a, a, a)
        #expect(tally.damage.count == 6)
        #expect(tally.damage.first == d)
        tally.demuxDamage = DamageTally()
        #expect(tally.damage.count == 4)
        #expect(tally.damage.first == v)
        tally.videoDamage = DamageTally()
        #expect(tally.damage.count == 3)
        #expect(tally.damage.first == a)
        tally.audioDamage = DamageTally()
        #expect(tally.damage.count == 0 && tally.damage.first == nil)
    }

    /// A failed sink decides the status before anything else: cancellation, a conversion error,
    /// the data's end and strict damage all lose to it; the video sink's error comes first.
    @Test func aFailedSinkWinsOverEverything() {
        let sink = Self.error(.writeFailed, "video sink")
        let audioSink = Self.error(.diskFull, "audio sink")
        var tally = Self.decoded()
        tally.sinkError = sink
        tally.audioSinkError = audioSink
        tally.conversionError = Self.error(.conversionFailed, "scale")
        tally.dataEnd = .truncated(Self.error(.truncated, "cut"))
        tally.demuxDamage = Self.damage(Self.error(.readFailed, "bad"))
        #expect(Self.status(tally, cancelled: true, strict: true) == .failed(sink))
        tally.sinkError = nil
        #expect(Self.status(tally, cancelled: true, strict: true) == .failed(audioSink), "the audio sink's error alone")
    }

    /// Cancellation comes after a failed sink and before a conversion error, the data's end and
    /// strict damage.
    @Test func cancellationWinsOverEverythingButASink() {
        var tally = Self.decoded()
        tally.conversionError = Self.error(.conversionFailed, "scale")
        tally.dataEnd = .failed(Self.error(.readFailed, "gone"))
        tally.demuxDamage = Self.damage(Self.error(.readFailed, "bad"))
        #expect(Self.status(tally, cancelled: true, strict: true) == .cancelled)
    }

    /// A conversion error fails the run, even when the frame limit was reached.
    @Test func aConversionErrorFailsTheRunEvenAtTheLimit() {
        let conversion = Self.error(.conversionFailed, "scale")
        var tally = Self.decoded()
        tally.conversionError = conversion
        tally.dataEnd = .truncated(Self.error(.truncated, "cut"))
        #expect(Self.status(tally) == .failed(conversion), "before the data's end")
        tally.limitReached = true
        tally.dataEnd = nil
        #expect(Self.status(tally) == .failed(conversion))
    }

    /// Data cut short or reading that failed fails the run with that evidence, even with frames
    /// decoded; a complete end, or none reported, completes.
    @Test func theDataEndDecidesWhenItWasNeeded() {
        let cut = Self.error(.truncated, "moov says 300 frames, the data stops at 120")
        let gone = Self.error(.readFailed, "too many read errors")
        var tally = Self.decoded()
        tally.dataEnd = .truncated(cut)
        #expect(Self.status(tally) == .failed(cut))
        tally.dataEnd = .failed(gone)
        #expect(Self.status(tally) == .failed(gone))
        tally.dataEnd = .complete
        #expect(Self.status(tally) == .completed)
        tally.dataEnd = nil
        #expect(Self.status(tally) == .completed)
    }

    /// Reading that ended by cancellation is a cancelled run, though the caller did not say so.
    @Test func aCancelledReadIsACancelledRun() {
        var tally = Self.decoded()
        tally.dataEnd = .cancelled
        #expect(Self.status(tally, cancelled: false) == .cancelled)
        // Nothing decoded: still cancelled, not "no frame could be decoded".
        tally.framesDecoded = 0
        tally.framesDelivered = 0
        #expect(Self.status(tally, cancelled: false) == .cancelled)
    }

    /// When delivery stopped at the limit or the end time, the rest of the data was not needed:
    /// how it ends (cut short, failed, cancelled) does not matter.
    @Test func theLimitMakesTheDataEndIrrelevant() {
        var tally = Self.decoded(3)
        tally.limitReached = true
        for end: DataEnd in [.truncated(Self.error(.truncated, "cut")), .failed(Self.error(.readFailed, "gone")), .cancelled, .complete] {
            tally.dataEnd = end
            #expect(Self.status(tally) == .completed, "\(end)")
        }
    }

    /// Nothing decoded, video or audio, fails the run; with damage met, the first error is the
    /// evidence (its code and file, its message quoted).
    @Test func nothingDecodedFailsWithTheFirstDamageAsEvidence() {
        var tally = Self.decoded(0)
        tally.videoDamage = Self.damage(Self.error(.encrypted, "cenc packet", file: "other.mp4"), Self.error(.decodeFailed, "second"))
        let error = Self.failure(Self.status(tally))
        #expect(error?.code == .encrypted)
        #expect(error?.message == "no frame could be decoded; first error: cenc packet")
        #expect(error?.file == "other.mp4")
    }

    /// Nothing decoded and no damage: a decode failure that names the source.
    @Test func nothingDecodedWithoutDamageIsADecodeFailure() {
        let tally = Self.decoded(0)
        #expect(Self.status(tally) == .failed(PlayheadError(code: .decodeFailed, message: "no frame could be decoded", file: Self.source)))
    }

    /// Audio alone, or video alone, is something decoded.
    @Test func eitherVideoOrAudioIsEnough() {
        var tally = Self.decoded(0)
        tally.audioFrames = 1
        #expect(Self.status(tally) == .completed, "audio alone")
        tally.audioFrames = 0
        tally.framesDecoded = 1
        #expect(Self.status(tally) == .completed, "one video frame")
    }

    /// Data cut short is the evidence even when nothing was decoded (it says why).
    @Test func aCutDataEndWinsOverNothingDecoded() {
        let cut = Self.error(.truncated, "cut")
        var tally = Self.decoded(0)
        tally.dataEnd = .truncated(cut)
        tally.demuxDamage = Self.damage(Self.error(.readFailed, "bad"))
        #expect(Self.status(tally) == .failed(cut))
    }

    /// Damage is decoded past: a lenient run completes and counts it; a strict one fails with the
    /// count and the first error, naming the source when the error names no file.
    @Test func onlyAStrictRunFailsOnDamage() {
        var tally = Self.decoded()
        tally.demuxDamage = Self.damage(Self.error(.readFailed, "corrupt packet"))
        tally.audioDamage = Self.damage(Self.error(.decodeFailed, "bad frame"), Self.error(.decodeFailed, "bad frame"))
        #expect(Self.status(tally, strict: false) == .completed)
        let lenient = tally.result(source: Self.source, cancelled: false, strict: false)
        #expect(lenient.damagedPackets == 3)
        let error = Self.failure(Self.status(tally, strict: true))
        #expect(error?.code == .readFailed)
        #expect(error?.message == "3 damaged packet(s); first: corrupt packet")
        #expect(error?.file == Self.source)
        // An error that names its file keeps it.
        tally.demuxDamage = Self.damage(Self.error(.readFailed, "corrupt packet", file: "segment7.ts"))
        #expect(Self.failure(Self.status(tally, strict: true))?.file == "segment7.ts")
    }

    /// A strict run without damage completes.
    @Test func aStrictRunWithoutDamageCompletes() {
        #expect(Self.status(Self.decoded(), strict: true) == .completed)
    }

    /// Damage fails a strict run even when delivery stopped at the limit (the limit only makes the
    /// data's end irrelevant).
    @Test func strictDamageFailsEvenAtTheLimit() {
        var tally = Self.decoded()
        tally.limitReached = true
        tally.videoDamage = Self.damage(Self.error(.decodeFailed, "concealed"))
        #expect(Self.failure(Self.status(tally, strict: true))?.message == "1 damaged packet(s); first: concealed")
        #expect(Self.status(tally, strict: false) == .completed)
    }

    /// The data's end is judged before strict damage: a cut file fails with its own evidence.
    @Test func aCutDataEndWinsOverStrictDamage() {
        let cut = Self.error(.truncated, "cut")
        var tally = Self.decoded()
        tally.dataEnd = .truncated(cut)
        tally.videoDamage = Self.damage(Self.error(.decodeFailed, "concealed"))
        #expect(Self.status(tally, strict: true) == .failed(cut))
    }
}
