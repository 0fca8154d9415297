import PlayheadMedia

/// What a session's stages report about the current segment, gathered under one lock and judged
/// in one place when the segment ends.
struct SegmentTally {
    var segment = -1
    var framesDecoded = 0
    var framesDelivered = 0
    var firstPTS: MediaTime?
    var lastPTS: MediaTime?
    /// Where the last frame delivered ends (its time and duration).
    var videoEnd: MediaTime?
    /// The picture reached its end (the sound may go on past it: a cover picture, a shorter track).
    var videoEnded = false
    var outputSize: PixelSize?
    /// How the data ended, when reading reached the end.
    var dataEnd: DataEnd?
    /// Delivery stopped at the frame limit or the end time (the rest of the data was not needed).
    var limitReached = false
    var conversionError: PlayheadError?
    var sinkError: PlayheadError?
    var audioSinkError: PlayheadError?
    var audio: AudioStreamInfo?
    var audioFrames = 0
    /// Damage met so far, by each stage (counted over the session: it describes the data).
    var demuxDamage = DamageTally()
    var videoDamage = DamageTally()
    var audioDamage = DamageTally()
    /// The stages that need no more packets of this segment (so the demuxer can stop reading).
    var routesDone: SegmentRoutes = []

    /// Starts a new segment's account (damage carries over).
    mutating func begin(_ number: Int) {
        let (demux, video, audioDamage, info, size) = (demuxDamage, videoDamage, self.audioDamage, audio, outputSize)
        self = SegmentTally()
        segment = number
        outputSize = size
        demuxDamage = demux
        videoDamage = video
        self.audioDamage = audioDamage
        audio = info
    }

    var damage: DamageTally {
        var all = demuxDamage
        all.add(videoDamage)
        all.add(audioDamage)
        return all
    }

    /// The segment's result. The one place that decides how a run went:
    /// - a sink that failed, then cancellation, then a failed conversion;
    /// - the data's end, unless delivery stopped before it was needed: truncated or failed reading
    ///   fails the run, with the evidence;
    /// - nothing decoded at all fails it;
    /// - damage is decoded past and counted; `strict` makes any a failure;
    /// - otherwise completed.
    func result(source: String, cancelled: Bool, strict: Bool) -> DecodeResult {
        var result = DecodeResult(source: source)
        result.framesDecoded = framesDecoded
        result.framesDelivered = framesDelivered
        result.firstPresentationTime = firstPTS
        result.lastPresentationTime = lastPTS
        result.outputSize = outputSize
        result.audio = audio
        result.audioFramesDelivered = audioFrames
        result.damagedPackets = damage.count
        result.firstDamage = damage.first
        result.status = status(source: source, cancelled: cancelled, strict: strict)
        return result
    }

    private func status(source: String, cancelled: Bool, strict: Bool) -> DecodeResult.Status {
        if let error = sinkError ?? audioSinkError { return .failed(error) }
        if cancelled { return .cancelled }
        if let error = conversionError { return .failed(error) }
        if !limitReached {
            if let error = dataEnd?.failure { return .failed(error) }
            if case .cancelled? = dataEnd { return .cancelled }
            if framesDecoded == 0 && audioFrames == 0 {
                return .failed(
                    damage.first.map { error in
                        error.with(message: "no frame could be decoded; first error: \(error.message)")
                    } ?? PlayheadError(code: .decodeFailed, message: "no frame could be decoded", file: source))
            }
        }
        if let error = damage.failure(strict: strict, file: source) { return .failed(error) }
        return .completed
    }
}
