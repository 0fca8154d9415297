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

/// The names playhead gives the files it writes inside an output's folder. Only such names are
/// ever removed from a folder of an earlier run: anything else found there is left alone.
package enum OutputNames {
    /// `frame-000001.png`, `thumb-0001.ppm`, `frames.y4m`, `audio.wav`, and the temporary names of
    /// any of them (`.frames.y4m.k3j9x2.partial`).
    package static func isOutputFile(_ name: String) -> Bool {
        if isFinalOutputName(name) { return true }
        return temporaryTarget(of: name).map(isFinalOutputName) ?? false
    }

    /// The final name of a temporary file (`.audio.wav.1x2y3z.partial` → `audio.wav`).
    package static func temporaryTarget(of name: String) -> String? {
        guard name.hasPrefix("."), name.hasSuffix(".partial") else { return nil }
        let inner = name.dropFirst().dropLast(".partial".count)
        guard let dot = inner.lastIndex(of: "."), dot > inner.startIndex else { return nil }
        let suffix = inner[inner.index(after: dot)...]
        guard !suffix.isEmpty, suffix.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLowercase) }) else { return nil }
        return String(inner[..<dot])
    }

    private static func isFinalOutputName(_ name: String) -> Bool {
        if ["frames.y4m", "video.mp4", "audio.wav", "sheet.png", "sheet.jpg"].contains(name) { return true }
        for (prefix, digits) in [("frame-", 6), ("thumb-", 4)] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dot = rest.firstIndex(of: ".") else { return false }
            let number = rest[..<dot], ext = rest[rest.index(after: dot)...]
            return number.count >= digits && number.allSatisfy { $0.isASCII && $0.isNumber } && (ext == "png" || ext == "ppm")
        }
        return false
    }
}
