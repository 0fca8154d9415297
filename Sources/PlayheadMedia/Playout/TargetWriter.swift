internal import CFFmpeg
import Foundation

/// How one of a channel's targets is doing.
public struct ChannelTargetStatus: Sendable, Codable {
    public enum State: String, Sendable, Codable {
        case connecting, connected, reconnecting, finished, failed
    }

    public var target: String
    public var state: State
    /// Times it was opened (the first open connects it; one after a drop, once it has held).
    public var connects = 0
    /// Times it dropped (a write or an open failed) after being connected.
    public var drops = 0
    /// Output frames that did not reach it (while it was down or behind).
    public var framesDropped = 0
    public var framesWritten = 0
    public var lastError: String?
    /// Seconds since the target was last connected (or since it began connecting); nil while it is
    /// connected, or once it ended.
    public var downFor: Double?
}

/// Writes the channel's packets to one target on a thread of its own, so that a slow or dropped
/// target never holds up the channel or the others. What happens to each packet, when the target
/// is opened and what a failure does is its ``TargetWriterStateMachine``'s decision (bounded
/// queue, resumption at keyframes, reconnection with back-off, a recording given up for good);
/// this type performs it: it holds the queue and the connection, and runs the thread.
final class TargetWriter: @unchecked Sendable {
    // @unchecked Sendable: `queue`, `machine`, `intake` and `spare` are read and written only
    // under `condition`'s lock; the connection and the HLS folder belong to the writer thread (its
    // `run`), which alone opens, writes and closes them.
    let target: ChannelTarget
    private let condition = NSCondition()
    private var queue: [(packet: OwnedPacket, video: Bool)] = []
    /// Whether the channel still sends packets.
    private enum Intake {
        case sending
        /// It finished (told where its picture and sound end: a recording's tracks end there) or
        /// gave up (nil): the writer writes what is queued, then ends.
        case closing(ChannelEnds?)
    }
    private var intake = Intake.sending
    private var spare: [OwnedPacket] = []
    private var machine: TargetWriterStateMachine
    private let deadline = OutputDeadline()
    private let done = DispatchSemaphore(value: 0)
    private let parameters: Parameters

    /// Packets queued at most (about 15 s of a 25 fps channel with its sound).
    static let queueLimit = 1200

    struct Parameters: @unchecked Sendable {
        // @unchecked Sendable: the encoder contexts are only read (their parameters copied into a
        // new muxer's streams) by the writer thread, and live as long as the channel sink that
        // owns the encoders, which joins every writer before it lets them go.
        var video: UnsafeMutablePointer<AVCodecContext>
        var audio: UnsafeMutablePointer<AVCodecContext>?
        var videoTimeBase: AVRational
        var audioTimeBase: AVRational
        var segmentSeconds: Double
        var openTimeout: Double
        var writeTimeout: Double
    }

    init(target: ChannelTarget, parameters: Parameters) {
        self.target = target
        self.parameters = parameters
        machine = TargetWriterStateMachine(
            name: target.description, recovery: target.isNetwork || target.kind == .hls ? .reconnects : .givesUp, now: Self.now(),
            // An HLS folder proves itself by a segment's end: past a segment and a half of writing.
            provingSeconds: target.kind == .hls ? 1.5 * parameters.segmentSeconds + 1 : 2)
        WorkerPool.shared.run("playhead.channel.target") { [self] in
            run()
            done.signal()
        }
    }

    var status: ChannelTargetStatus {
        condition.lock()
        defer { condition.unlock() }
        var status = machine.status
        status.downFor = machine.downSince.map { max(0, Self.now() - $0) }
        return status
    }

    /// Queues a copy of `packet` (the channel's thread; never blocks).
    func send(_ packet: UnsafeMutablePointer<AVPacket>, video: Bool) {
        condition.lock()
        defer { condition.unlock() }
        guard case .sending = intake else { return }
        let key = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
        guard machine.admit(video: video, keyframe: key, queued: queue.count, limit: Self.queueLimit) else { return }
        let copy: OwnedPacket
        if let reused = spare.popLast() { copy = reused } else if let made = try? OwnedPacket() { copy = made } else { return }
        guard av_packet_ref(copy.pointer, packet) >= 0 else { return }
        queue.append((copy, video))
        condition.signal()
    }

    /// No more packets: the writer writes what is queued, completes the target, and ends.
    /// Waits for it (at most `timeout` seconds for a stalled target, then gives it up).
    /// - Parameters:
    ///   - timeout: seconds to wait for a stalled target.
    ///   - ends: where the channel's picture and sound end (a recording's tracks end there).
    func finish(timeout: Double, ends: ChannelEnds? = nil) {
        condition.lock()
        intake = .closing(ends)
        condition.broadcast()
        condition.unlock()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            deadline.stop()
            done.wait()
        }
    }

    /// Gives up at once (a stop without completing): nothing more is written.
    func abort() {
        deadline.stop()
        condition.lock()
        intake = .closing(nil)
        for item in queue { av_packet_unref(item.packet.pointer) }
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        done.wait()
    }

    // MARK: The writer thread

    private static func now() -> Double { Double(DispatchTimeNanos.now()) / 1e9 }

    private func decide<T>(_ body: (inout TargetWriterStateMachine) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&machine)
    }

    /// The writer thread: takes each packet and does what the machine decides with it. The
    /// connection is open exactly while the machine's phase is `open` (it is made at an `open`
    /// step, given up at a failure, completed or given up at the end).
    private func run() {
        var connection: TargetConnection?
        /// An HLS target's files (its segments' names, its playlist's lock), kept across reopens.
        var hls: HLSFolder?
        while true {
            condition.lock()
            while queue.isEmpty, case .sending = intake { condition.wait() }
            let next = queue.isEmpty ? nil : queue.removeFirst()
            let ends: ChannelEnds? = if case .closing(let ends) = intake { ends } else { nil }
            condition.unlock()
            guard let (packet, video) = next else {
                close(connection, ends: ends)
                return
            }
            defer { recycle(packet) }
            let key = packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
            switch decide({ $0.step(video: video, keyframe: key, now: Self.now()) }) {
            case .drop:
                continue
            case .open:
                do throws(PlayheadError) {
                    if target.kind == .hls, hls == nil { hls = try HLSFolder(playlist: target.location) }
                    connection = try TargetConnection(
                        target: target, video: parameters.video, audio: parameters.audio,
                        segmentSeconds: parameters.segmentSeconds, deadline: deadline, openTimeout: parameters.openTimeout, hls: hls)
                    decide { $0.opened(now: Self.now()) }
                } catch {
                    let stopping = deadline.isStopping
                    decide { $0.openFailed(error.description, now: Self.now(), stopping: stopping) }
                    if giveUpIfFailed() { return }
                    continue
                }
            case .write:
                break
            }
            guard let open = connection else { continue }
            do throws(PlayheadError) {
                let written = try open.write(
                    packet.pointer, video: video, timeBase: video ? parameters.videoTimeBase : parameters.audioTimeBase,
                    timeout: parameters.writeTimeout)
                if written { decide { $0.wrote(video: video, now: Self.now()) } }
            } catch {
                open.abandon()
                connection = nil
                let stopping = deadline.isStopping
                decide { $0.writeFailed(error.description, now: Self.now(), stopping: stopping) }
                if giveUpIfFailed() { return }
            }
        }
    }

    /// The channel ended: the connection is completed (or, stopping or not open, given up).
    private func close(_ connection: TargetConnection?, ends: ChannelEnds?) {
        let stopping = deadline.isStopping
        let ending = decide { $0.end(stopping: stopping) }
        guard let connection else { return }
        switch ending {
        case .abandon:
            connection.abandon()
        case .complete:
            do throws(PlayheadError) {
                let kept = try connection.finish(timeout: parameters.writeTimeout, ends: ends)
                decide { $0.completed(at: kept, asked: connection.path) }
            } catch {
                decide { $0.completionFailed(error.description) }
            }
        }
    }

    /// A target given up for good: what waits is dropped (and counted) and the thread ends; the
    /// machine refuses every later packet.
    private func giveUpIfFailed() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard case .failed = machine.phase else { return false }
        machine.dropped(pictures: queue.filter(\.video).count)
        for item in queue { av_packet_unref(item.packet.pointer) }
        queue.removeAll()
        return true
    }

    private func recycle(_ packet: OwnedPacket) {
        av_packet_unref(packet.pointer)
        condition.lock()
        spare.append(packet)
        condition.unlock()
    }
}
