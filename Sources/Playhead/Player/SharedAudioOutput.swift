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
    /// Open or closed, and the player's hold on the sink (``PlayerOutputHold``).
    private let state: Locked<PlayerOutputHold>

    init(_ sink: any AudioSink, format: AudioFormat, writer: OutputWriter) {
        self.sink = sink
        self.state = Locked(PlayerOutputHold(sink, writer: writer, closedMessage: "the player's audio output was already completed or given up"))
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
        try state.withLock { (hold: inout PlayerOutputHold) throws(PlayheadError) in
            try hold.finish { () throws(PlayheadError) in try sink.finish() }
        }
    }

    /// The sound kept when the sink is given up ends at `seconds` on the player's timeline (where
    /// its picture stopped: no sound decoded ahead of it is kept past it).
    func keepSound(until seconds: Double) {
        state.withLock { hold in
            guard (try? hold.checkWritable()) != nil else { return }
            (sink as? any SoundEndCutting)?.keepSound(until: seconds)
        }
    }

    /// Gives the sink up (the player's `abortOutput`), unless another writer holds it.
    func abort() {
        state.withLock { hold in hold.giveUp(onlyIfOpen: false) { sink.abort() } }
    }

    /// Gives the sink up unless its owner already finished or gave it up (a player let go of).
    func giveUpIfOpen() {
        state.withLock { hold in hold.giveUp(onlyIfOpen: true) { sink.abort() } }
    }

    private func whileOpen(_ body: () throws(PlayheadError) -> Void) throws(PlayheadError) {
        try state.withLock { (hold: inout PlayerOutputHold) throws(PlayheadError) in
            try hold.checkWritable()
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
