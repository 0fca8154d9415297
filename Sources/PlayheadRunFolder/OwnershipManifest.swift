import Playhead

/// What a name in an output folder is, as far as ownership goes.
package struct FoundEntry: Hashable, Sendable {
    package enum Kind: String, Codable, Sendable { case folder, file, other }
    package var kind: Kind
    package var identity: FileIdentity
    /// Owned by the user running this process.
    package var ownedByUs: Bool

    package init(kind: Kind, identity: FileIdentity, ownedByUs: Bool) {
        self.kind = kind
        self.identity = identity
        self.ownedByUs = ownedByUs
    }
}

/// The record (`.playhead.json`) of what runs of playhead created in an output folder: for each
/// name, the folder or file it created there. A name is ours only while it still points at that
/// very object (same device, inode and stamp, same kind, owned by us): a folder the user deleted
/// and made again, or a file put in its place, is not ours any more — even when the file system
/// gives it the inode number ours had.
///
/// A pure value: reading the disk is ``OutputFolder``'s job.
package struct OwnershipManifest: Codable, Hashable, Sendable {
    package struct Entry: Codable, Hashable, Sendable {
        package var kind: FoundEntry.Kind
        /// The objects the name may point at: normally one; two while a file is being replaced
        /// (the old one, and the new one about to take the name), so that a crash between the
        /// rename and the next record leaves the name ours either way.
        package var identities: [FileIdentity]
    }

    package var version = 1
    package var entries: [String: Entry] = [:]

    package init() {}

    /// Whether `name`, found as `found` (nil: nothing there), is an output of an earlier run that
    /// may be replaced.
    package func owns(_ name: String, found: FoundEntry) -> Bool {
        guard let entry = entries[name], found.ownedByUs, found.kind == entry.kind else { return false }
        return entry.identities.contains(found.identity)
    }

    /// Records that `name` is now `identity` (replacing what it was).
    package mutating func record(_ name: String, kind: FoundEntry.Kind, identity: FileIdentity) {
        entries[name] = Entry(kind: kind, identities: [identity])
    }

    /// Records that `name` is about to become `identity`, while still being what it was.
    package mutating func recordPending(_ name: String, kind: FoundEntry.Kind, identity: FileIdentity) {
        var entry = entries[name] ?? Entry(kind: kind, identities: [])
        if entry.kind != kind { entry = Entry(kind: kind, identities: []) }
        if !entry.identities.contains(identity) { entry.identities.append(identity) }
        entries[name] = entry
    }

    /// Forgets `name` (it was removed, or found to be someone else's).
    package mutating func forget(_ name: String) {
        entries[name] = nil
    }
}

/// The names playhead gives the files it writes inside an output's folder: made here (or by the
/// owner that writes them: ``ImageSequenceSink/fileName(number:format:)``, ``SafeFile``'s
/// temporary names) and read back here, so a name cannot be written one way and counted another.
/// Only such names are ever removed from a folder of an earlier run: anything else found there
/// is left alone.
package enum OutputNames {
    /// The MP4 export of `play` and `compose`.
    package static let video = "video.mp4"
    /// The Y4M stream of `play` and `compose`.
    package static let frames = "frames.y4m"
    /// The sound beside frames that are not an MP4.
    package static let audio = "audio.wav"
    /// The extensions a contact sheet is written with.
    package static let sheetExtensions = ["png", "jpg"]
    /// The extensions a thumbnail is written with.
    package static let thumbnailExtensions = ["png", "ppm"]
    /// The extensions a subtitle track is written with.
    package static let subtitleExtensions = ["srt", "vtt", "ass", "json"]

    /// `subtitles.srt`, `subtitles.vtt`, `subtitles.ass`, `subtitles.json`.
    /// - Parameter fileExtension: the form's extension.
    /// - Returns: the file's name.
    package static func subtitles(_ fileExtension: String) -> String { "subtitles." + fileExtension }

    /// `cue-000001-1.png`: the Nth picture of the Nth cue of a bitmap subtitle track (both from 1),
    /// beside its `subtitles.json`.
    /// - Parameters:
    ///   - cue: the cue's number, padded with zeros to six digits.
    ///   - picture: the picture's number within the cue.
    /// - Returns: the file's name.
    package static func subtitlePicture(cue: Int, picture: Int) -> String {
        let digits = String(cue)
        return cuePrefix + String(repeating: "0", count: max(0, cueDigits - digits.count)) + digits + "-" + String(picture) + ".png"
    }

    /// `sheet.png`, `sheet.jpg`.
    /// - Parameter fileExtension: the sheet's format's extension.
    /// - Returns: the file's name.
    package static func sheet(_ fileExtension: String) -> String { "sheet." + fileExtension }

    /// `thumb-0001.png`: a file's thumbnails, numbered from 1 in ascending time order.
    /// - Parameters:
    ///   - number: the thumbnail's number, padded with zeros to four digits.
    ///   - fileExtension: its format's extension.
    /// - Returns: the file's name.
    package static func thumbnail(number: Int, fileExtension: String) -> String {
        let digits = String(number)
        return thumbnailPrefix + String(repeating: "0", count: max(0, thumbnailDigits - digits.count)) + digits + "." + fileExtension
    }

    /// `frame-000001.png`, `thumb-0001.ppm`, `frames.y4m`, `audio.wav`, and the temporary names of
    /// any of them (`.frames.y4m.k3j9x2.partial`).
    package static func isOutputFile(_ name: String) -> Bool {
        if isFinalOutputName(name) { return true }
        return temporaryTarget(of: name).map(isFinalOutputName) ?? false
    }

    /// The final name of a temporary file (`.audio.wav.1x2y3z.partial` → `audio.wav`).
    package static func temporaryTarget(of name: String) -> String? {
        SafeFile.finalName(ofTemporaryName: name)
    }

    private static func isFinalOutputName(_ name: String) -> Bool {
        if [video, frames, audio].contains(name) || sheetExtensions.map(sheet).contains(name) { return true }
        if subtitleExtensions.map(subtitles).contains(name) { return true }
        if ImageSequenceSink.number(inFileName: name) != nil { return true }
        return isThumbnail(name) || isSubtitlePicture(name)
    }

    private static func isSubtitlePicture(_ name: String) -> Bool {
        guard name.hasPrefix(cuePrefix), name.hasSuffix(".png") else { return false }
        let parts = name.dropFirst(cuePrefix.count).dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        let numeric = { (part: Substring) in !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
        return parts.count == 2 && parts[0].count >= cueDigits && numeric(parts[0]) && numeric(parts[1])
    }

    private static func isThumbnail(_ name: String) -> Bool {
        guard name.hasPrefix(thumbnailPrefix), let dot = name.lastIndex(of: ".") else { return false }
        let digits = name[name.index(name.startIndex, offsetBy: thumbnailPrefix.count)..<dot]
        return digits.count >= thumbnailDigits && digits.allSatisfy { $0.isASCII && $0.isNumber }
            && thumbnailExtensions.contains(String(name[name.index(after: dot)...]))
    }

    private static let cuePrefix = "cue-"
    private static let cueDigits = 6
    private static let thumbnailPrefix = "thumb-"
    private static let thumbnailDigits = 4
}
