import PlayheadMedia

/// The one audio sink of a player, fed in turn by the audio presenters of successive items (and
/// loop iterations), sample for sample. It holds the player's audio format: the configured one,
/// its missing fields taken from the first item that presents audio; every item's audio is
/// converted to it, so one WAV file (or device) takes them all.
///
/// Every use of the sink is made under one lock, and once the owner finished or gave it up it is
/// closed: a buffer a presenter still had on its way is refused (`state.invalidState`), never
/// written after the end was told or beside a give-up on another thread.
final class SharedAudioOutput: Sendable {
    private let sink: any AudioSink
    private let configured: AudioFormat
    private let fixed: Locked<AudioFormat?>
    /// The owner finished or gave the sink up, and the claim the player holds on the sink
    /// (``OutputClaims``) from its first samples until it ends it.
    private let state = Locked(Ownership())

    private struct Ownership {
        var closed = false
        var claim: OutputClaim?
        /// Another writer had the sink when the player first wrote.
        var refused = false
    }
    /// The player, as the writer of its outputs (the frame and audio outputs may be one object).
    private let writer: OutputWriter

    init(_ sink: any AudioSink, format: AudioFormat, writer: OutputWriter) {
        self.sink = sink
        self.writer = writer
        self.configured = format
        let complete = format.sampleRate != nil && format.channelCount != nil
        self.fixed = Locked(complete ? format : nil)
    }

    /// Begins a stream in the sink.
    /// - Parameter info: the stream's rate and channel count.
    /// - Throws: `state.invalidState` once closed, or when another session, render or player
    ///   writes the sink; the sink's error.
    func begin(_ info: AudioStreamInfo) throws(PlayheadError) {
        try whileOpen { () throws(PlayheadError) in try sink.begin(info) }
    }

    /// Writes a buffer to the sink.
    /// - Parameter buffer: the samples.
    /// - Throws: `state.invalidState` once closed; the sink's error.
    func write(_ buffer: AudioBuffer) throws(PlayheadError) {
        try whileOpen { () throws(PlayheadError) in try sink.write(buffer) }
    }

    /// Completes the sink (the player's `finishOutput`), unless another writer holds it.
    /// - Throws: `state.invalidState` for a sink another writer holds; the sink's error.
    func finish() throws(PlayheadError) {
        try state.withLock { (s: inout Ownership) throws(PlayheadError) in
            s.closed = true
            try own(&s)
            defer { Self.release(&s) }
            try sink.finish()
        }
    }

    /// Gives the sink up (the player's `abortOutput`), unless another writer holds it.
    func abort() {
        state.withLock { s in
            s.closed = true
            giveUp(&s)
        }
    }

    /// Gives the sink up unless its owner already finished or gave it up (a player let go of).
    func giveUpIfOpen() {
        state.withLock { s in
            guard !s.closed else { return }
            s.closed = true
            giveUp(&s)
        }
    }

    private func giveUp(_ s: inout Ownership) {
        do throws(PlayheadError) {
            try own(&s)
        } catch {
            // Another writer's: not this player's to give up.
            return
        }
        sink.abort()
        Self.release(&s)
    }

    /// Claims the sink for the player unless it holds it already. A sink the player was refused
    /// (another writer had it when the player first wrote) stays refused: the player never
    /// finishes or gives up what another wrote.
    private func own(_ s: inout Ownership) throws(PlayheadError) {
        guard s.claim == nil else { return }
        if s.refused { throw Self.refusal }
        do throws(PlayheadError) {
            s.claim = try OutputClaims.claim([sink], for: writer, file: nil)
        } catch {
            s.refused = true
            throw error
        }
    }

    private static let refusal = PlayheadError(
        code: .invalidState, message: "the player's output was being written by another session, render or player when it began")

    private static func release(_ s: inout Ownership) {
        s.claim?.release()
        s.claim = nil
    }

    private func whileOpen(_ body: () throws(PlayheadError) -> Void) throws(PlayheadError) {
        try state.withLock { (s: inout Ownership) throws(PlayheadError) in
            if s.closed { throw PlayheadError(code: .invalidState, message: "the player's audio output was already completed or given up") }
            try own(&s)
            try body()
        }
    }

    /// The player's audio format, once known.
    var format: AudioFormat? { fixed.withLock { $0 } }

    /// Fixes the format from `source` (the first item presenting audio) unless it is known already.
    func fix(from source: AudioStreamInfo) -> AudioFormat {
        fixed.withLock { f in
            if let f { return f }
            let format = AudioFormat(
                sampleRate: configured.sampleRate ?? source.sampleRate, channelCount: configured.channelCount ?? source.channelCount)
            f = format
            return format
        }
    }
}
