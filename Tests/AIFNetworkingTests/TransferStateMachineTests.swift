@testable import AIFNetworking
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

    @Test func cancelBeforeStartDeliversAndStartIsIgnored() {
        var machine = TransferStateMachine()
        #expect(machine.cancel() == .deliverCancellation)
        #expect(machine.start() == .ignore)
        #expect(machine.done(succeeded: true) == .ignore)
        #expect(machine.state == .finished(.cancelled))
    }

    @Test func cancelWhileRunningRemovesTheHandle() {
        var machine = TransferStateMachine()
        _ = machine.start()
        #expect(machine.cancel() == .removeAndDeliverCancellation)
        #expect(machine.cancel() == .ignore)
        #expect(machine.done(succeeded: true) == .ignore)
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
    /// as a terminal event (done after start, cancel, start failure) has happened.
    @Test func everyEventSequenceDeliversAtMostOnce() {
        enum Event: CaseIterable { case start, doneOK, doneFailed, cancel, startFailed }
        func deliveries(_ events: [Event]) -> (count: Int, terminal: Bool) {
            var machine = TransferStateMachine()
            var count = 0
            var started = false
            var terminal = false
            for event in events {
                switch event {
                case .start:
                    if machine.start() == .addToMulti { started = true }
                case .doneOK, .doneFailed:
                    if machine.done(succeeded: event == .doneOK) == .removeAndDeliver { count += 1 }
                    if started { terminal = true }
                case .cancel:
                    if machine.cancel() != .ignore { count += 1 }
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
        #expect(checked == 5 + 25 + 125 + 625 + 3125 + 15625)
    }
}
