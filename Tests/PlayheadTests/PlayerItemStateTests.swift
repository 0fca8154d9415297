import Testing

@testable import Playhead
@testable import PlayheadMedia

@Suite struct PlayerItemStateTests {
    let failure = PlayheadError(code: .openFailed, message: "damaged", file: "a.mp4")

    @Test func statusOnlyMovesForward() {
        var state = PlayerItemState<Int>()
        let steps: [PlayerItemStatus] = [.readyToPlay, .readyToPlay, .unknown, .failed(failure), .readyToPlay, .failed(failure)]
        var accepted: [Bool] = []
        for step in steps { accepted.append(state.transition(to: step)) }
        #expect(accepted == [true, false, false, true, false, false])
        #expect(state.status == .failed(failure))
    }

    @Test func newObserverGetsTheCurrentStatusFirst() {
        var state = PlayerItemState<Int>()
        _ = state.transition(to: .readyToPlay)
        state.add(1)
        let batch = state.beginDelivery()
        #expect(batch?.map(\.event) == [.statusChanged(.readyToPlay)])
        #expect(batch?.map(\.to) == [[1]])
    }

    @Test func eventsQueuedDuringDeliveryFollowInOrder() {
        var state = PlayerItemState<Int>()
        state.add(1)
        let first = state.beginDelivery()
        #expect(first?.count == 1)
        // While delivering, another caller's events are only queued…
        state.post(.stalled)
        #expect(state.beginDelivery() == nil)
        _ = state.transition(to: .readyToPlay)
        // …and the deliverer picks them up in order.
        #expect(state.continueDelivery()?.map(\.event) == [.stalled, .statusChanged(.readyToPlay)])
        #expect(state.continueDelivery() == nil)
        // Delivery ended: the next caller delivers.
        state.post(.stalled)
        #expect(state.beginDelivery()?.map(\.event) == [.stalled])
    }

    @Test func removedObserverGetsNothingQueued() {
        var state = PlayerItemState<Int>()
        state.add(1)
        state.add(2)
        state.post(.stalled)
        state.remove(1)
        let batch = state.beginDelivery()
        #expect(batch?.allSatisfy { !$0.to.contains(1) } == true)
        #expect(batch?.last?.to == [2])
    }

    @Test func nothingIsQueuedWithoutObservers() {
        var state = PlayerItemState<Int>()
        state.post(.stalled)
        _ = state.transition(to: .readyToPlay)
        #expect(state.beginDelivery() == nil)
    }
}
