internal import CFFmpeg

/// When an MP4 whose picture and sound arrive from two threads may write its header, and when it
/// is complete. Pure: the writer asks it at every step and does what it says.
///
/// The header names every stream, so it waits until each side has either begun (its format is
/// known) or is known not to come (finished or given up without beginning, or still silent when
/// the packets held back reach their bound). Until then encoded packets are held back. The file
/// is complete when both sides have finished; a side that begins after the header was written
/// without it is refused.
struct MP4ExportPlan: Equatable {
    enum Side: Equatable {
        case awaited
        case began
        /// Will not be in the file.
        case absent
    }

    enum Action: Equatable {
        case none
        case writeHeader
        case complete
        /// Both at once: the last side finished before the header could be written.
        case writeHeaderAndComplete
    }

    enum Refusal: Error, Equatable {
        /// The side begins after the header was written without it.
        case tooLate
        /// The side began already (a picture begins once).
        case alreadyBegun
        /// The file was completed or given up.
        case ended
    }

    private(set) var video: Side = .awaited
    private(set) var sound: Side
    private(set) var headerWritten = false
    private(set) var videoFinished = false
    private(set) var soundFinished: Bool
    private(set) var ended = false

    /// With `separateSound`, the sound comes from its own thread and finishes on its own; without,
    /// there is no sound unless ``soundPrepared()`` says so before the picture begins.
    init(separateSound: Bool) {
        sound = separateSound ? .awaited : .absent
        soundFinished = !separateSound
    }

    /// The sound's format given with the picture's (same thread, before the picture begins).
    mutating func soundPrepared() throws(Refusal) {
        guard !ended else { throw .ended }
        guard video == .awaited, !headerWritten else { throw .tooLate }
        sound = .began
    }

    mutating func videoBegan() throws(Refusal) -> Action {
        guard !ended else { throw .ended }
        guard video == .awaited else { throw video == .began ? .alreadyBegun : .tooLate }
        video = .began
        return headerIfReady()
    }

    /// The sound begins (again, for each following item of a player: accepted while it began).
    mutating func soundBegan() throws(Refusal) -> Action {
        guard !ended else { throw .ended }
        switch sound {
        case .began: return .none
        case .absent: throw .tooLate
        case .awaited:
            sound = .began
            return headerIfReady()
        }
    }

    mutating func videoEnded() -> Action {
        guard !ended, !videoFinished else { return .none }
        videoFinished = true
        if video == .awaited { video = .absent }
        return afterFinish()
    }

    mutating func soundEnded() -> Action {
        guard !ended, !soundFinished else { return .none }
        soundFinished = true
        if sound == .awaited { sound = .absent }
        return afterFinish()
    }

    /// The packets held back reached their bound: a side that has not begun will not be in the file.
    mutating func holdingTooMuch() -> Action {
        guard !ended, !headerWritten else { return .none }
        if video == .awaited { video = .absent }
        if sound == .awaited { sound = .absent }
        return headerIfReady()
    }

    /// Giving up: true the first time (the writer then keeps what it wrote).
    mutating func abort() -> Bool {
        guard !ended else { return false }
        ended = true
        return true
    }

    private mutating func headerIfReady() -> Action {
        guard !headerWritten, video != .awaited, sound != .awaited, video == .began || sound == .began else { return .none }
        headerWritten = true
        return .writeHeader
    }

    private mutating func afterFinish() -> Action {
        let header = headerIfReady()
        guard videoFinished, soundFinished else { return header }
        ended = true
        return header == .writeHeader ? .writeHeaderAndComplete : .complete
    }
}
