import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Bad input gets a typed error naming the file and the stage, quickly, and nothing crashes.
@Suite struct BadInputTests {
    static let expectations: [(String, PlayheadError.Code)] = [
        ("bad-empty.mp4", .emptyFile),
        ("bad-truncated.mp4", .openFailed),
        ("bad-random.mp4", .unrecognizedFormat),
        ("bad-text.mp4", .unrecognizedFormat),
    ]

    @Test(arguments: expectations.map(\.0))
    func badFileFailsClearlyAndQuickly(name: String) async throws {
        let path = try Fixtures.clip(name)
        let expectedCode = try #require(Self.expectations.first { $0.0 == name }?.1)
        let asset = Asset(path: path)
        let start = ContinuousClock.now
        let error = try await loadError(asset)
        let elapsed = ContinuousClock.now - start
        #expect(error.code == expectedCode)
        #expect(error.code.family == .demux)
        #expect(error.file == path)
        #expect(!error.message.isEmpty)
        // A no-hang bound: the suite runs many decodes in parallel on two cores, so wall time here
        // includes waiting for a core. The one-second figure is measured alone by benchmarks/probe.sh.
        #expect(elapsed < Bound.seconds(20), "took \(elapsed)")
        if case .failed(let kept) = await asset.status(of: .tracks) {
            #expect(kept == error)
        } else {
            Issue.record("tracks should be failed")
        }
    }

    @Test func missingPathAndDirectory() async throws {
        let missing = Fixtures.sampleMedia.appendingPathComponent("no-such-clip.mp4").path
        let missingError = try await loadError(Asset(path: missing))
        #expect(missingError.code == .fileNotFound)
        #expect(missingError.code.family == .io)
        #expect(missingError.file == missing)

        let directory = Fixtures.sampleMedia.path
        let directoryError = try await loadError(Asset(path: directory))
        #expect(directoryError.code == .notARegularFile)
        #expect(directoryError.file == directory)
    }

    @Test func failureIsKeptAndNotRetried() async throws {
        let asset = Asset(path: try Fixtures.clip("bad-text.mp4"))
        let first = try await loadError(asset)
        let second = try await loadError(asset)
        #expect(first == second)
    }

    private func loadError(_ asset: Asset) async throws -> PlayheadError {
        do {
            _ = try await asset.load(.tracks)
        } catch {
            return error
        }
        Issue.record("loading \(asset.source) should have failed")
        throw PlayheadError(code: .invalidState, message: "no error")
    }
}
