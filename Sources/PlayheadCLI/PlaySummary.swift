import Foundation
import Playhead

/// `summary.json` of a `play` run.
struct PlaySummary: Encodable {
    /// `running` while the run goes on; `finished`, or `cancelled` (with the signal) at the end.
    var state = RunState.finished
    var signal: String?
    var files: [FileReport]
    var elapsed: Double
    /// Present for `--queue` runs.
    var queue: QueueReport?
    /// Present for runs through the coordinator.
    var maxConcurrentSessions: Int?
    var peakConcurrentSessions: Int?

    init(files: [FileReport], elapsed: Double) {
        self.files = files
        self.elapsed = elapsed
    }
}

/// One file's line in the summary.
struct FileReport: Encodable {
    var path: String
    var output: String?
    var status: String
    var framesDecoded: Int
    var framesWritten: Int
    /// Damaged data decoded past (packets the container or a decoder rejected, frames decoded
    /// with concealed errors), and the first of them.
    var damagedPackets: Int
    var firstDamage: ErrorReport?
    /// `true` when the file did not complete and its output was kept as far as it got.
    var partial: Bool?
    var outputSize: SizeReport?
    var firstPTS: Double?
    var lastPTS: Double?
    var loopsCompleted: Int?
    /// Samples per channel written to `audioPath` (the file's audio.wav), when it has audio.
    var audioFrames: Int?
    var audioPath: String?
    var error: ErrorReport?

    init(path: String, output: String?, result: DecodeResult?, error: PlayheadError?) {
        self.path = SourceRedaction.redacted(path)
        self.output = output
        framesDecoded = result?.framesDecoded ?? 0
        framesWritten = output == nil ? 0 : (result?.framesDelivered ?? 0)
        damagedPackets = result?.damagedPackets ?? 0
        firstDamage = result?.firstDamage.map(ErrorReport.init)
        outputSize = result?.outputSize.map(SizeReport.init)
        firstPTS = result?.firstPresentationTime?.jsonSeconds
        lastPTS = result?.lastPresentationTime?.jsonSeconds
        switch result?.status {
        case .completed?:
            status = "completed"
        case .cancelled?:
            status = "cancelled"
        case .failed(let failure)?:
            status = "failed"
            self.error = ErrorReport(failure)
        case nil:
            status = "failed"
            self.error = error.map(ErrorReport.init)
        }
    }

    /// A file not done yet.
    init(running path: String) {
        self.path = SourceRedaction.redacted(path)
        status = "running"
        framesDecoded = 0
        framesWritten = 0
        damagedPackets = 0
    }

    /// A queued file's entry: frames that reached the output, and its share of those on disk.
    init(queued path: String, status: String, presented: Int, written: Int, error: PlayheadError?) {
        self.path = SourceRedaction.redacted(path)
        self.status = status
        framesDecoded = presented
        framesWritten = written
        damagedPackets = 0
        self.error = error.map(ErrorReport.init)
    }

    /// A file played through the coordinator.
    init(session outcome: SessionOutcome, path: String, output: String?, written: OutputLog.Entry) {
        self.path = SourceRedaction.redacted(path)
        self.output = output
        framesDecoded = outcome.framesPresented + outcome.framesDropped
        framesWritten = output == nil ? 0 : written.frames
        damagedPackets = outcome.damagedPackets
        firstDamage = outcome.firstDamage.map(ErrorReport.init)
        outputSize = written.size.map(SizeReport.init)
        firstPTS = written.first?.jsonSeconds
        lastPTS = written.last?.jsonSeconds
        loopsCompleted = outcome.loopsCompleted
        switch outcome.status {
        case .completed: status = "completed"
        case .cancelled: status = "cancelled"
        case .failed(let error):
            status = "failed"
            self.error = ErrorReport(error)
        }
    }

    /// The line printed when the file is done.
    var line: String {
        var text = "\(Console.name(path))  \(status)  \(framesWritten > 0 ? framesWritten : framesDecoded) frames"
        if let audioFrames { text += ", \(audioFrames) audio samples" }
        if damagedPackets > 0 { text += ", \(damagedPackets) damaged packet(s) decoded past" }
        if partial == true { text += " (partial output kept)" }
        if let output { text += " → \(output)" }
        if let error { text += "  [\(error.code)] \(error.reason)" }
        return text
    }
}

/// The queue's totals in `summary.json`.
struct QueueReport: Encodable {
    var output: String?
    var framesPresented: Int
    var framesDropped: Int
    var latenessP99: Double?
    var realtime: Bool
    /// Samples per channel in the queue's audio (`audioPath`, when written), and how often the
    /// realtime timeline moved to follow late audio.
    var audioFrames: Int?
    var audioResyncs: Int?
    var audioPath: String?
    /// Frames on disk in the queue's output.
    var framesWritten = 0
    /// `true` when not every file completed and the output was kept as far as it got.
    var partial: Bool?
}
