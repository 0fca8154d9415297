import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Outputs are written under unpredictable temporary names beside their target, never through a
/// planted name or link, and never over what is not theirs unless told to replace.
@Suite struct SafeFileTests {
    func folder() throws -> String {
        let path = NSTemporaryDirectory() + "playhead-safefile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func temporaryNamesAreBesideTheTargetHiddenAndUnpredictable() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try SafeFile.create(for: dir + "/frame.png"), b = try SafeFile.create(for: dir + "/frame.png")
        #expect(a.temporaryPath.hasPrefix(dir + "/.frame.png."))
        #expect(a.temporaryPath.hasSuffix(".partial"))
        #expect(a.temporaryPath != b.temporaryPath)
        a.discard()
        b.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty, "discarding leaves nothing")
    }

    @Test func aPlantedLinkIsNeverFollowed() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim.txt"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        // A link planted at the final name: replacing puts the file in the link's place; the
        // link's target is untouched.
        try FileManager.default.createSymbolicLink(atPath: dir + "/out.png", withDestinationPath: victim)
        try Array("new".utf8).withUnsafeBytes { try SafeFile.write($0, to: dir + "/out.png") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: dir + "/out.png", encoding: .utf8) == "new")
    }

    /// The last resort on a full disk: a record written with room set aside takes a longer
    /// version in place; a file without the room, a link, or a file with a second name (a hard
    /// link planted at the record's name) is never written into.
    @Test func aRecordIsRewrittenInPlaceOnlyWhenItIsOnlyOursAndHasRoom() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let record = dir + "/summary.json"
        try SafeFile.write(Array("running".utf8), to: record, room: 16 << 10)
        let longer = [UInt8](repeating: UInt8(ascii: "x"), count: 9000)
        let rewritten = SafeFile.rewriteInPlace(longer, at: record)
        #expect(rewritten != nil)
        #expect(FileManager.default.contents(atPath: record) == Data(longer))
        let shorter = Array("finished".utf8)
        #expect(SafeFile.rewriteInPlace(shorter, at: record) != nil)
        #expect(FileManager.default.contents(atPath: record) == Data(shorter), "cut to the new length")

        let tight = dir + "/tight.json"
        try SafeFile.write(Array("running".utf8), to: tight)
        #expect(SafeFile.rewriteInPlace([UInt8](repeating: 0, count: 1 << 20), at: tight) == nil, "no room for a megabyte")

        let precious = dir + "/precious.txt"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: precious))
        let linked = dir + "/linked.json"
        try FileManager.default.linkItem(atPath: precious, toPath: linked)
        #expect(SafeFile.rewriteInPlace(shorter, at: linked) == nil)
        let symbolic = dir + "/symbolic.json"
        try FileManager.default.createSymbolicLink(atPath: symbolic, withDestinationPath: precious)
        #expect(SafeFile.rewriteInPlace(shorter, at: symbolic) == nil)
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "precious")
    }

    @Test func withoutReplacingAnExistingFileIsLeftAlone() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/summary.json"
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: PlayheadError.self) {
            try Array("ours".utf8).withUnsafeBytes { try SafeFile.write($0, to: path, replacing: false) }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "theirs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["summary.json"], "no temporary file left")
    }
}
