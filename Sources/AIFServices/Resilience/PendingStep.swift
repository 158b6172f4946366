import Foundation
@_spi(CrossModule) import AIFTransport

/// A load's next step while it waits — for a retry's delay, or for an ``Authenticator``'s
/// refresh: runs its continuation once, with the value it was resumed with or with `nil` when
/// cancelled first, on the load's executor.
///
/// Attached to the load's cancellation while it waits, so cancelling the load ends the wait at
/// once instead of when the timer fires or the refresh ends.
package final class PendingStep<Value: Sendable>: CancellableTransfer {
    private let continuation: Locked<(@Sendable (Value?) -> Void)?>
    private let executor: any StepExecutor

    /// Creates the step. Attach it to the load's cancellation before it can be resumed, so
    /// that nothing its continuation attaches there can be overwritten by it.
    ///
    /// - Parameters:
    ///   - executor: Where `continuation` runs.
    ///   - continuation: Called once: with the value, or `nil` when cancelled first.
    package init(on executor: any StepExecutor, then continuation: @escaping @Sendable (Value?) -> Void) {
        self.continuation = Locked(continuation)
        self.executor = executor
    }

    /// Goes on with `value`; nothing happens if the step was cancelled or resumed already.
    func resume(with value: Value) {
        end(value)
    }

    /// Goes on with `value` after `delay`, as `clock` measures it.
    package func resume(after delay: Duration, on clock: any LoadClock, with value: Value) {
        clock.schedule(after: delay) { [self] in end(value) }
    }

    /// Ends the wait now, as cancelled; nothing happens if it is over.
    package func cancel() {
        end(nil)
    }

    private func end(_ value: Value?) {
        guard let continuation = continuation.withLock({ held in
            defer { held = nil }
            return held
        }) else { return }
        executor.run { continuation(value) }
    }
}
