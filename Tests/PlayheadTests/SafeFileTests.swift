import Foundation
import Testing

@testable import Playhead

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
