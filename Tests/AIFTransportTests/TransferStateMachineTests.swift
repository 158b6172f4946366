@testable import AIFTransport
@testable import TestSupport
import Testing

@Suite("Transfer state machine")
struct TransferStateMachineTests {
    @Test func startThenDoneDeliversOnce() {
        var machine = TransferStateMachine()
        #expect(machine.start() == .addToMulti)
        #expect(machine.done(succeeded: true) == .removeAndDeliver)
        #expect(machine.state == .finished(.completed))
        #expect(machine.cancel() == .ignore)
        #expect(machine.done(succeeded: false) == .ignore)
    }

    @Test func failedTransferIsRecordedAsFailed() {
        var machine = TransferStateMachine()
        _ = machine.start()
        #expect(machine.done(succeeded: false) == .removeAndDeliver)
        #expect(machine.state == .finished(.failed))
    }

    @Test func cancelBeforeStartIsDeliveredWhenTheStartArrives() {
        var machine = TransferStateMachine()
        #expect(machine.cancel() == .deferUntilStart)
        #expect(machine.cancel() == .ignore)
        #expect(machine.state == .pending(cancelRequested: true))
        #expect(machine.start() == .deliverCancellation)
        #expect(machine.start() == .ignore)
        #expect(machine.done(succeeded: true) == .ignore)
        #expect(machine.state == .finished(.cancelled))
    }

    @Test func shutdownEndsPendingAndRunningTransfers() {
        var pending = TransferStateMachine()
        #expect(pending.shutDown() == .deliverCancellation)
        #expect(pending.start() == .ignore)
        var requested = TransferStateMachine()
        _ = requested.cancel()
        #expect(requested.shutDown() == .deliverCancellation)
        var running = TransferStateMachine()
        _ = running.start()
        #expect(running.shutDown() == .removeAndDeliverCancellation)
        #expect(running.shutDown() == .ignore)
        #expect(running.cancel() == .ignore)
    }

    @Test func cancelWhileRunningRemovesTheHandle() {
        var machine = TransferStateMachine()
        _ = machine.start()
        #expect(machine.cancel() == .removeAndDeliverCancellation)
        #expect(machine.cancel() == .ignore)
        #expect(machine.done(succeeded: true) == .ignore)
    }

    @Test func aTimeoutEndsOnlyARunningTransferOnce() {
        var pending = TransferStateMachine()
        #expect(pending.timeOut() == .ignore)
        #expect(pending.state == .pending(cancelRequested: false))
        var running = TransferStateMachine()
        _ = running.start()
        #expect(running.timeOut() == .removeAndDeliverTimeout)
        #expect(running.state == .finished(.failed))
        #expect(running.timeOut() == .ignore)
        #expect(running.done(succeeded: true) == .ignore)
        #expect(running.cancel() == .ignore)
        #expect(running.shutDown() == .ignore)
    }

    @Test func startFailureDeliversOnce() {
        var machine = TransferStateMachine()
        _ = machine.start()
        #expect(machine.startFailed() == .deliverFailure)
        #expect(machine.startFailed() == .ignore)
        #expect(machine.cancel() == .ignore)
        #expect(machine.state == .finished(.failed))
    }

    /// Every sequence of up to six events delivers at most one outcome, and exactly one as soon
    /// as a terminal event has happened: done or a timeout after a start, a cancel when the
    /// transfer has started (or starts later), a shutdown, a start failure.
    @Test func everyEventSequenceDeliversAtMostOnce() {
        enum Event: CaseIterable { case start, doneOK, doneFailed, timeOut, cancel, shutDown, startFailed }
        func deliveries(_ events: [Event]) -> (count: Int, terminal: Bool) {
            var machine = TransferStateMachine()
            var count = 0
            var started = false
            var cancelled = false
            var terminal = false
            for event in events {
                switch event {
                case .start:
                    switch machine.start() {
                    case .addToMulti: started = true
                    case .deliverCancellation: count += 1
                    case .ignore: break
                    }
                    if cancelled { terminal = true }
                case .doneOK, .doneFailed:
                    if machine.done(succeeded: event == .doneOK) == .removeAndDeliver { count += 1 }
                    if started { terminal = true }
                case .timeOut:
                    if machine.timeOut() == .removeAndDeliverTimeout { count += 1 }
                    if started { terminal = true }
                case .cancel:
                    switch machine.cancel() {
                    case .deliverCancellation, .removeAndDeliverCancellation: count += 1
                    case .deferUntilStart, .ignore: break
                    }
                    cancelled = true
                    if started { terminal = true }
                case .shutDown:
                    if machine.shutDown() != .ignore { count += 1 }
                    terminal = true
                case .startFailed:
                    if machine.startFailed() == .deliverFailure { count += 1 }
                    terminal = true
                }
            }
            return (count, terminal)
        }
        var sequences: [[Event]] = [[]]
        var checked = 0
        for _ in 0..<6 {
            sequences = sequences.flatMap { prefix in Event.allCases.map { prefix + [$0] } }
            for sequence in sequences {
                let (count, terminal) = deliveries(sequence)
                #expect(count <= 1, "delivered \(count) times for \(sequence)")
                if terminal { #expect(count == 1, "delivered \(count) times for \(sequence)") }
                checked += 1
            }
        }
        #expect(checked == 7 + 49 + 343 + 2401 + 16807 + 117_649)
    }
}
