import PlayheadMedia

/// A sink that follows a session's segments: told, on the thread that feeds it, before the first
/// frame (or buffer) of each segment. A player's presenters use it to place a seek's frames on
/// the player's timeline.
protocol SegmentFollowing: AnyObject {
    func segmentBegins(_ start: SegmentStart)
}

/// The output thread: hands each segment's canvases to the frame sink, tells the session when a
/// segment's first frame is out (a seek has landed) and when its video ended.
struct OutputStage {
    let pipeline: DecodePipeline
    let canvases: CanvasPool

    func run(sink: any FrameSink, info: FrameStreamInfo?) {
        let control = pipeline.control
        var segment = -1
        var firstSeen = false
        var formatName: String?
        var sinkFailed = false
        do throws(PlayheadError) {
            if let info { try sink.begin(info) }
            while let slot = canvases.ready.receive() {
                let canvas = canvases.slots[slot]
                defer { canvases.free.send(slot) }
                if control.isSuperseded(canvas.segment) { continue }
                switch canvas.content {
                case .start(let start):
                    segment = start.segment.number
                    firstSeen = false
                    (sink as? SegmentFollowing)?.segmentBegins(start)
                case .frame:
                    guard canvas.segment == segment, let info else { continue }
                    if !firstSeen {
                        firstSeen = true
                        control.firstFrame(of: segment, at: canvas.presentationTime)
                    }
                    let frame = canvas.frame
                    if formatName == nil { formatName = frame.formatName }
                    var view = VideoFrame(
                        presentationTime: canvas.presentationTime, duration: canvas.duration, index: canvas.index,
                        source: info.source, size: frame.size, pixelFormat: info.pixelFormat,
                        pixelFormatName: formatName ?? "", picture: frame, segment: segment, control: control)
                    let time = canvas.presentationTime
                    let end = canvas.duration.isNumeric ? time + canvas.duration : time
                    // Near its declared end, the picture has ended: the frames still to come are
                    // those the decoder holds until the data ends.
                    let nearEnd = info.pictureEnd.map { !(end + FrameStreamInfo.nearEnd < $0) } ?? false
                    view.keepsSoundPast = nearEnd
                    try sink.write(view)
                    pipeline.tally.withLock {
                        guard $0.segment == segment else { return }
                        $0.framesDelivered += 1
                        if $0.firstPTS == nil { $0.firstPTS = time }
                        $0.lastPTS = time
                        $0.videoEnd = end
                        if nearEnd { $0.videoEnded = true }
                    }
                case .end:
                    guard canvas.segment == segment else { continue }
                    pipeline.tally.withLock { if $0.segment == segment { $0.videoEnded = true } }
                    (sink as? any PictureEndFollowing)?.pictureEnded()
                    control.routeEnded(.video, of: segment, report: pipeline.report())
                }
            }
        } catch {
            sinkFailed = true
            pipeline.fail { if $0.segment == segment || segment == -1 { $0.sinkError = error } }
        }
        Self.close(sink, pipeline: pipeline, failed: sinkFailed)
    }

    /// A session without video: the frame sink gets nothing, and is closed with the session.
    static func finishEmpty(_ sink: any FrameSink, pipeline: DecodePipeline) {
        pipeline.control.waitUntilStopped()
        close(sink, pipeline: pipeline, failed: false)
    }

    /// Completes the sink when the session's (last) segment completed, gives it up otherwise.
    private static func close(_ sink: any FrameSink, pipeline: DecodePipeline, failed: Bool) {
        if !failed, case .completed = pipeline.report().status {
            do throws(PlayheadError) {
                try sink.finish()
            } catch {
                pipeline.tally.withLock { $0.sinkError = $0.sinkError ?? error }
                sink.abort()
            }
        } else {
            sink.abort()
        }
    }
}
