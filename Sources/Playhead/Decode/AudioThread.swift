import PlayheadMedia

/// The audio thread of a session: owns the audio stage (decoder, resampler) and, through it, the
/// audio sink. Each segment restarts the stage at the segment's audio start; the audio ends where
/// the data does, at the segment's end time, or where the video stopped early.
struct AudioThread {
    let pipeline: DecodePipeline
    let route: PacketRoute
    let stage: AudioStage
    let sink: any AudioSink
    /// Without video, the audio's first buffer is what lands a seek.
    let hasVideo: Bool

    func run() {
        let control = pipeline.control
        var segment = -1
        var active = false
        var begun = false
        do throws(PlayheadError) {
            try route.consume(dropping: control) { (holder) throws(PlayheadError) -> Bool in
                switch holder.content {
                case .start(let start):
                    if !begun {
                        try stage.begin()
                        begun = true
                        let info = stage.info
                        pipeline.tally.withLock { $0.audio = info }
                    }
                    segment = start.segment.number
                    stage.segment = (segment, control)
                    if !hasVideo {
                        // Without video, the audio's first buffer is what lands a seek.
                        let number = segment
                        stage.onFirstBuffer = { control.firstFrame(of: number, at: $0) }
                    }
                    try stage.restart(start: start.audioStart, end: start.audioEnd, timelineStart: start.timelineStart)
                    (sink as? SegmentFollowing)?.segmentBegins(start)
                    active = true
                case .packet:
                    guard active, holder.segment == segment else { return true }
                    if let cutoff = pipeline.videoCutoff.withLock({ $0 }), cutoff.segment == segment { stage.cut(at: cutoff.time) }
                    try stage.feed(holder.packet)
                    report(segment)
                    if stage.reachedEnd {
                        active = false
                        end(segment)
                    }
                case .end:
                    guard active, holder.segment == segment else { return true }
                    try stage.finish()
                    active = false
                    end(segment)
                }
                return true
            }
        } catch {
            let damage = stage.decoder.damage
            pipeline.fail {
                $0.audioSinkError = error
                $0.audioDamage = damage
            }
        }
    }

    private func report(_ segment: Int) {
        let frames = stage.framesDelivered
        let damage = stage.decoder.damage
        pipeline.tally.withLock {
            guard $0.segment == segment else { return }
            $0.audioFrames = frames
            $0.audioDamage = damage
        }
    }

    private func end(_ segment: Int) {
        report(segment)
        pipeline.routeDone(.audio, of: segment)
        pipeline.control.routeEnded(.audio, of: segment, report: pipeline.report())
    }
}
