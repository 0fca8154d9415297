import PlayheadMedia

/// How a player holds one of its outputs — the one rule for its frame output (``SharedOutput``)
/// and its audio output (``SharedAudioOutput``), used under each one's lock: open until the
/// player finishes or gives it up; claimed (``OutputClaims``) from the player's first write until
/// then; refused for good when another writer held it at that first write — a player never
/// finishes or gives up what another wrote.
struct PlayerOutputHold {
    /// The output, by identity (its owner keeps the object alive).
    let output: ObjectIdentifier
    /// The player, as the writer of its outputs (the frame and audio outputs may be one object).
    let writer: OutputWriter
    /// What a write after the end is told.
    let closedMessage: String
    private(set) var closed = false
    private var claim: OutputClaim?
    private var refused = false

    init(_ output: AnyObject, writer: OutputWriter, closedMessage: String) {
        self.output = ObjectIdentifier(output)
        self.writer = writer
        self.closedMessage = closedMessage
    }

    /// Before a write: the output is open and the player's.
    /// - Throws: `state.invalidState` once closed, or when another writer holds the output.
    mutating func checkWritable() throws(PlayheadError) {
        if closed { throw PlayheadError(code: .invalidState, message: closedMessage) }
        try own()
    }

    /// Closes the output and completes it with `finish`, unless another writer holds it.
    /// - Parameter finish: completes the output.
    /// - Throws: `state.invalidState` for an output another writer holds; `finish`'s error.
    mutating func finish(_ finish: () throws(PlayheadError) -> Void) throws(PlayheadError) {
        closed = true
        try own()
        defer { release() }
        try finish()
    }

    /// Closes the output and gives it up with `abort`, unless another writer holds it.
    /// - Parameters:
    ///   - onlyIfOpen: leave an output already finished or given up as it is (a player let go of).
    ///   - abort: gives the output up.
    mutating func giveUp(onlyIfOpen: Bool, _ abort: () -> Void) {
        if onlyIfOpen, closed { return }
        closed = true
        do throws(PlayheadError) {
            try own()
        } catch {
            // Another writer's: not this player's to give up.
            return
        }
        abort()
        release()
    }

    private mutating func own() throws(PlayheadError) {
        guard claim == nil else { return }
        if refused { throw Self.refusal }
        do throws(PlayheadError) {
            claim = try OutputClaims.claim(identities: [output], for: writer, file: nil)
        } catch {
            refused = true
            throw error
        }
    }

    private static let refusal = PlayheadError(
        code: .invalidState, message: "the player's output was being written by another session, render or player when it began")

    private mutating func release() {
        claim?.release()
        claim = nil
    }
}
