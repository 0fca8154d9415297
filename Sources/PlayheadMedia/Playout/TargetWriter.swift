internal import CFFmpeg
import Foundation

/// How one of a channel's targets is doing.
public struct ChannelTargetStatus: Sendable, Codable {
    public enum State: String, Sendable, Codable {
        case connecting, connected, reconnecting, finished, failed
    }

    public var target: String
    public var state: State
    /// Times it was opened (connected).
    public var connects = 0
    /// Times it dropped (a write or an open failed) after being connected.
    public var drops = 0
    /// Output frames that did not reach it (while it was down or behind).
    public var framesDropped = 0
    public var framesWritten = 0
    public var lastError: String?
}

/// Writes the channel's packets to one target on a thread of its own, so that a slow or dropped
/// target never holds up the channel or the others: packets wait in a bounded queue (beyond it
/// they are dropped, and the target resumes at the next keyframe); a network target or an HLS
/// folder that fails is reopened with back-off (1, 2, 4 … 30 s) while the channel goes on — the
/// frames in between are counted as dropped, never queued without bound — and resumes at a
/// keyframe. A recording or standard output that fails is given up (a recording keeps what it
/// has, as a partial file).
package final class TargetWriter: @unchecked Sendable {
    // @unchecked Sendable: `queue`, `status` and the flags are read and written only under
    // `condition`'s lock; the connection and the encoder parameters belong to the writer thread
    // (its `run`), which alone opens, writes and closes it.
    let target: ChannelTarget
    private let condition = NSCondition()
    private var queue: [(packet: OwnedPacket, video: Bool)] = []
    private var closing = false
    private var spare: [OwnedPacket] = []
    /// Packets of this target were dropped: it takes up again at the next video keyframe.
    private var waitingForKeyframe = true
    private var statusValue: ChannelTargetStatus
    private let deadline = OutputDeadline()
    private let done = DispatchSemaphore(value: 0)
    private let parameters: Parameters

    /// Packets queued at most (about 15 s of a 25 fps channel with its sound).
    static let queueLimit = 1200

    package struct Parameters: @unchecked Sendable {
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
        statusValue = ChannelTargetStatus(target: target.description, state: .connecting)
        WorkerPool.shared.run("playhead.channel.target") { [self] in
            run()
            done.signal()
        }
    }

    package var status: ChannelTargetStatus {
        condition.lock()
        defer { condition.unlock() }
        return statusValue
    }

    /// Queues a copy of `packet` (the channel's thread; never blocks).
    func send(_ packet: UnsafeMutablePointer<AVPacket>, video: Bool) {
        condition.lock()
        defer { condition.unlock() }
        guard !closing else { return }
        let key = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
        if queue.count >= Self.queueLimit || (waitingForKeyframe && !(video && key)) {
            // Behind (or resuming): drop until a video keyframe can start the target again.
            if queue.count >= Self.queueLimit { waitingForKeyframe = true }
            if video { statusValue.framesDropped += 1 }
            return
        }
        waitingForKeyframe = false
        let copy: OwnedPacket
        if let reused = spare.popLast() { copy = reused } else if let made = try? OwnedPacket() { copy = made } else { return }
        guard av_packet_ref(copy.pointer, packet) >= 0 else { return }
        queue.append((copy, video))
        condition.signal()
    }

    /// No more packets: the writer writes what is queued, completes the target, and ends.
    /// Waits for it (at most `timeout` seconds for a stalled target, then gives it up).
    func finish(timeout: Double) {
        condition.lock()
        closing = true
        condition.broadcast()
        condition.unlock()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            deadline.stop()
            done.wait()
        }
    }

    /// Gives up at once (a stop without completing): nothing more is written.
    package func abort() {
        deadline.stop()
        condition.lock()
        closing = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        done.wait()
    }

    // MARK: The writer thread

    private func run() {
        var connection: TargetConnection?
        var backoff = 1.0
        var retryAt: Date?
        var firstVideo: Int64?
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            let next = queue.isEmpty ? nil : queue.removeFirst()
            let ending = closing && queue.isEmpty && next == nil
            condition.unlock()
            if ending || deadline.isStopping {
                if let connection, !deadline.isStopping {
                    do throws(PlayheadError) {
                        try connection.finish(timeout: parameters.writeTimeout)
                        update { $0.state = .finished }
                    } catch {
                        update {
                            $0.state = .failed
                            $0.lastError = error.description
                        }
                    }
                } else {
                    connection?.abandon()
                    update { if $0.state != .failed { $0.state = .finished } }
                }
                return
            }
            guard let (packet, video) = next else { continue }
            defer {
                av_packet_unref(packet.pointer)
                condition.lock()
                spare.append(packet)
                condition.unlock()
            }
            if connection == nil {
                if let retryAt, Date() < retryAt {
                    if video { update { $0.framesDropped += 1 } }
                    continue
                }
                // A target opens (again) at a keyframe.
                guard video, packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 else {
                    if video { update { $0.framesDropped += 1 } }
                    continue
                }
                do throws(PlayheadError) {
                    connection = try TargetConnection(
                        target: target, video: parameters.video, audio: parameters.audio,
                        segmentSeconds: parameters.segmentSeconds, deadline: deadline, openTimeout: parameters.openTimeout)
                    firstVideo = nil
                    backoff = 1
                    retryAt = nil
                    update {
                        $0.state = .connected
                        $0.connects += 1
                        $0.lastError = nil
                    }
                } catch {
                    if deadline.isStopping { continue }
                    if !target.isNetwork && target.kind != .hls {
                        update {
                            $0.state = .failed
                            $0.lastError = error.description
                        }
                        drainForever()
                        return
                    }
                    retryAt = Date().addingTimeInterval(backoff)
                    backoff = min(30, backoff * 2)
                    update {
                        $0.state = .reconnecting
                        $0.lastError = error.description
                        $0.framesDropped += 1
                    }
                    continue
                }
            }
            guard let open = connection else { continue }
            // An RTMP connection starts its timestamps at 0 (servers expect it); others keep the
            // channel's timeline.
            if target.kind == .rtmp {
                let p = packet.pointer.pointee
                if firstVideo == nil {
                    firstVideo = av_rescale_q(p.pts, video ? parameters.videoTimeBase : parameters.audioTimeBase, parameters.videoTimeBase)
                }
                let offset = av_rescale_q(firstVideo ?? 0, parameters.videoTimeBase, video ? parameters.videoTimeBase : parameters.audioTimeBase)
                packet.pointer.pointee.pts -= offset
                packet.pointer.pointee.dts -= offset
                if packet.pointer.pointee.dts < 0 { continue }
            }
            do throws(PlayheadError) {
                try open.write(
                    packet.pointer, video: video, timeBase: video ? parameters.videoTimeBase : parameters.audioTimeBase,
                    timeout: parameters.writeTimeout)
                if video { update { $0.framesWritten += 1 } }
            } catch {
                open.abandon()
                connection = nil
                if deadline.isStopping { continue }
                if !target.isNetwork && target.kind != .hls {
                    update {
                        $0.state = .failed
                        $0.lastError = error.description
                        $0.drops += 1
                    }
                    drainForever()
                    return
                }
                retryAt = Date().addingTimeInterval(backoff)
                backoff = min(30, backoff * 2)
                update {
                    $0.state = .reconnecting
                    $0.lastError = error.description
                    $0.drops += 1
                }
            }
        }
    }

    /// A target given up: packets sent from now on are dropped (and counted) until the channel ends.
    private func drainForever() {
        condition.lock()
        while true {
            let dropped = queue.filter(\.video).count
            for item in queue { av_packet_unref(item.packet.pointer) }
            queue.removeAll()
            statusValue.framesDropped += dropped
            if closing { break }
            condition.wait()
        }
        condition.unlock()
    }

    private func update(_ change: (inout ChannelTargetStatus) -> Void) {
        condition.lock()
        change(&statusValue)
        condition.unlock()
    }
}
