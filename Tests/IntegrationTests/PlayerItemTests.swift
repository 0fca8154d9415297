import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct PlayerItemTests {
    @Test func goodClipBecomesReadyWithItsProperties() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("rotated-90.mp4")))
        let observer = RecordingObserver()
        item.addObserver(observer)
        #expect(item.status == .unknown)
        await item.prepare()
        #expect(item.status == .readyToPlay)
        #expect(item.duration == MediaTime(value: 2, timescale: 1))
        #expect(item.presentationSize == PixelSize(width: 180, height: 320))
        #expect(observer.events == [.statusChanged(.unknown), .statusChanged(.readyToPlay)])
    }

    @Test func badClipFailsAndSaysWhy() async throws {
        let path = try Fixtures.clip("bad-truncated.mp4")
        let item = PlayerItem(asset: Asset(path: path))
        await item.prepare()
        guard case .failed(let error) = item.status else {
            Issue.record("expected failed, got \(item.status)")
            return
        }
        #expect(error.file == path)
        // A late observer still learns the status first.
        let observer = RecordingObserver()
        item.addObserver(observer)
        #expect(observer.events == [.statusChanged(.failed(error))])
    }

    @Test func releasedObserverReceivesNothingAndIsNotKept() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        weak var released: RecordingObserver?
        do {
            let observer = RecordingObserver()
            released = observer
            item.addObserver(observer)
        }
        #expect(released == nil, "the item must not keep its observer alive")
        await item.prepare()
        item.post(.stalled)
        #expect(item.status == .readyToPlay)
    }

    @Test func eventsArriveInOrderUnderConcurrentPosting() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let observer = RecordingObserver()
        item.addObserver(observer)
        // Eight tasks each post 200 numbered jumps; every observer must see each task's jumps in
        // its own order, all of them, and never two callbacks at once.
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<200 {
                        item.post(.timeJumped(from: MediaTime(value: Int64(task), timescale: 1), to: MediaTime(value: Int64(i), timescale: 1)))
                    }
                }
            }
        }
        let jumps = observer.events.compactMap { event -> (Int64, Int64)? in
            if case .timeJumped(let from, let to) = event { return (from.value, to.value) }
            return nil
        }
        #expect(jumps.count == 8 * 200)
        for task in 0..<8 {
            #expect(jumps.filter { $0.0 == Int64(task) }.map(\.1) == (0..<200).map(Int64.init))
        }
        #expect(observer.maximumConcurrentCallbacks == 1)
    }

    @Test func eventPostedFromACallbackIsDeliveredAfterIt() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let observer = RecordingObserver(onEvent: { item, event in
            if event == .stalled { item.post(.playedToEnd(at: .zero)) }
        })
        item.addObserver(observer)
        item.post(.stalled)
        #expect(observer.events == [.statusChanged(.unknown), .stalled, .playedToEnd(at: .zero)])
        #expect(observer.maximumConcurrentCallbacks == 1)
    }

    @Test func eventsAsAnAsyncSequence() async throws {
        let item = PlayerItem(asset: Asset(path: try Fixtures.clip("h264-aac.mp4")))
        let events = item.events
        await item.prepare()
        item.post(.playedToEnd(at: MediaTime(value: 2, timescale: 1)))
        var seen: [PlayerItemEvent] = []
        for await event in events {
            seen.append(event)
            if seen.count == 3 { break }
        }
        #expect(seen == [.statusChanged(.unknown), .statusChanged(.readyToPlay), .playedToEnd(at: MediaTime(value: 2, timescale: 1))])
        #expect(item.currentTime == MediaTime(value: 2, timescale: 1))
    }
}
