@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Testing

/// A step's handle that counts how often it is cancelled.
private final class CountedStep: CancellableTransfer {
    let cancels = Locked(0)

    func cancel() {
        cancels.withLock { $0 += 1 }
    }
}

/// A load's cancellation reaches the step under way, whatever the order in which its steps'
/// handles are attached.
@Suite("Async cancellation: the newest step is the one cancelled")
struct AsyncCancellationTests {
    /// The step after a transfer that ended before its start returned — its completion ran on
    /// another thread and the load went on to a retry's wait — is the one cancelled: the ended
    /// transfer's late attachment does not replace it. (It did, and a load cancelled during a
    /// `Retry-After` wait went on waiting: the TSan run of CI hung on it.)
    @Test func aStepThatEndedBeforeItsStartReturnedDoesNotHideTheNextOne() {
        let cancellation = AsyncCancellation()
        let ended = CountedStep()
        let wait = CountedStep()
        cancellation.attach {
            // The transfer's completion, before `send` returns: the load attaches its wait.
            cancellation.attach(wait)
            return ended
        }
        cancellation.cancel()
        #expect(wait.cancels.withLock { $0 } == 1)
        #expect(ended.cancels.withLock { $0 } == 0)
    }

    @Test func aStepAttachedAfterTheCancellationIsCancelledAtOnce() {
        let cancellation = AsyncCancellation()
        cancellation.cancel()
        let step = CountedStep()
        cancellation.attach { step }
        #expect(step.cancels.withLock { $0 } == 1)
        let late = CountedStep()
        cancellation.attach(late)
        #expect(late.cancels.withLock { $0 } == 1)
    }

    @Test func eachStepInTurnIsTheOneCancelledAndOnlyOnce() {
        let cancellation = AsyncCancellation()
        let steps = (0..<3).map { _ in CountedStep() }
        for step in steps {
            cancellation.attach { step }
        }
        cancellation.cancel()
        cancellation.cancel()
        #expect(steps.map { $0.cancels.withLock { $0 } } == [0, 0, 1])
    }
}
