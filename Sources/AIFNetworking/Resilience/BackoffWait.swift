import Foundation

/// The wait before a retry: runs its continuation once, when the delay is over or when it is
/// cancelled — whichever comes first — on the load's executor.
///
/// Attached to the load's cancellation while it waits, so cancelling the load ends the wait at
/// once (`cancelled` is then `true`) instead of when the timer fires.
final class BackoffWait: CancellableTransfer {
    private let continuation: Locked<(@Sendable (_ cancelled: Bool) -> Void)?>
    private let runner: any CompletionExecutor

    /// Creates the wait; ``start(_:)`` starts it. Attach it to the load's cancellation first,
    /// so that nothing the continuation attaches can be overwritten by it.
    ///
    /// - Parameters:
    ///   - runner: Where `continuation` runs.
    ///   - continuation: Called once: `false` after the delay, `true` when cancelled first.
    init(on runner: any CompletionExecutor, then continuation: @escaping @Sendable (_ cancelled: Bool) -> Void) {
        self.continuation = Locked(continuation)
        self.runner = runner
    }

    /// Starts the timer.
    ///
    /// - Parameter delay: How long to wait.
    func start(_ delay: Duration) {
        let nanoseconds = max(Int(delay / .nanoseconds(1)), 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in end(cancelled: false) }
    }

    /// Ends the wait now, as cancelled; nothing happens if it is over.
    func cancel() {
        end(cancelled: true)
    }

    private func end(cancelled: Bool) {
        guard let continuation = continuation.withLock({ held in
            defer { held = nil }
            return held
        }) else { return }
        runner.run { continuation(cancelled) }
    }
}
