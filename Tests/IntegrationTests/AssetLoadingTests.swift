import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Key loading against real files and a real slow source.
@Suite struct AssetLoadingTests {
    @Test func concurrentCallersShareOneLoad() async throws {
        let asset = Asset(path: try Fixtures.clip("h264-aac.mp4"))
        #expect(await asset.status(of: .tracks) == .notYetLoaded)
        async let a = asset.load(.tracks)
        async let b = asset.load(.duration)
        async let c = asset.load(.tracks, .isPlayable)
        let (tracks, duration, (tracksAgain, playable)) = try await (a, b, c)
        #expect(tracks == tracksAgain)
        #expect(tracks.count == 2)
        #expect(duration == MediaTime(value: 2, timescale: 1))
        #expect(playable)
        #expect(await asset.status(of: .tracks) == .loaded)
        #expect(await asset.status(of: .duration) == .loaded)
        #expect(await asset.status(of: .metadata) == .notYetLoaded)
        // Already loaded: answered from the snapshot.
        #expect(try await asset.load(.metadata)["encoder"] != nil)
    }

    @Test func cancelLoadingInterruptsASlowOpen() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let asset = Asset(url: URL(string: "tcp://127.0.0.1:\(server.port)")!)
        let load = Task { try await asset.load(.tracks) }
        try await waitUntilLoading(asset)
        // FFmpeg has connected (a loaded machine may take a while to start the probe).
        #expect(try await offPool { server.connectionPending(timeoutMilliseconds: 10_000) })
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        await asset.cancelLoading()
        let result = await load.result
        // Well before the 15 s open timeout (in ~0.1 s alone; the bound allows for a machine
        // loaded by the whole suite).
        #expect(ContinuousClock.now - start < Bound.seconds(10))
        #expect(throws: PlayheadError.self) { try result.get() }
        if case .failure(let error as PlayheadError) = result { #expect(error.code == .cancelled) }
        #expect(await asset.status(of: .tracks) == .cancelled)
        // FFmpeg's open itself stopped and closed its connection.
        #expect(try await offPool { server.peerClosesConnection(timeoutMilliseconds: 10_000) })
    }

    @Test func cancellingTheOnlyWaitingTaskInterruptsTheOpen() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let asset = Asset(url: URL(string: "tcp://127.0.0.1:\(server.port)")!)
        let load = Task { try await asset.load(.tracks) }
        try await waitUntilLoading(asset)
        #expect(try await offPool { server.connectionPending(timeoutMilliseconds: 10_000) })
        load.cancel()
        let result = await load.result
        if case .failure(let error as PlayheadError) = result {
            #expect(error.code == .cancelled)
        } else {
            Issue.record("expected a cancellation error, got \(result)")
        }
        // The probe itself was interrupted, not left running for nobody.
        try await waitUntil { await asset.status(of: .tracks) == .cancelled }
        #expect(try await offPool { server.peerClosesConnection(timeoutMilliseconds: 10_000) })
    }

    @Test func openTimeoutGivesUpOnASilentSource() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let asset = Asset(url: URL(string: "tcp://127.0.0.1:\(server.port)")!, options: AssetOptions(openTimeout: .milliseconds(300)))
        let start = ContinuousClock.now
        do {
            _ = try await asset.load(.tracks)
            Issue.record("a silent source should time out")
        } catch {
            #expect(error.code == .timedOut)
            #expect(error.message.contains("open timeout"))
        }
        // A bound against hanging, not a speed target: under the whole suite the probe may wait for a worker thread.
        #expect(ContinuousClock.now - start < Bound.seconds(20))
    }

    private func waitUntilLoading(_ asset: Asset) async throws {
        try await waitUntil { await asset.status(of: .tracks) == .loading }
    }

    private func waitUntil(_ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + Bound.seconds(20)
        while ContinuousClock.now < deadline {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("condition not reached within 20 s")
    }
}
