/// The lifecycle of one transfer, as a value: what has happened to it, and what the event loop
/// must do about each event. It holds no resources and performs nothing, so it can be tested
/// without I/O; ``Transfer`` owns one and performs the actions it returns.
///
/// ```
///   pending ──start──▶ running ──done──▶ finished
///      │                  │
///      │                  ├──timeOut─────────▶ finished (failed)
///      │                  └──cancel / shutdown──▶ finished (cancelled)
///      ├──shutdown──────────────────────────────▶ finished (cancelled)
///      └──cancel──▶ pending, cancel requested ──start / shutdown──▶ finished (cancelled)
/// ```
///
/// A cancellation that reaches the loop before the transfer's start command (the async face
/// cancels a transfer it has not submitted yet when its task was already cancelled) is only
/// noted; the transfer then ends as cancelled when its start arrives, without ever being
/// added to libcurl. Whatever the order of events, exactly one action delivers an outcome;
/// every event after that is ignored. That is where "every request ends exactly once" is
/// enforced.
struct TransferStateMachine: Sendable {
    /// How a transfer ended.
    enum Outcome: Sendable, Equatable {
        case completed
        case failed
        case cancelled
    }

    enum State: Sendable, Equatable {
        /// Not yet handed to libcurl; `cancelRequested` when a cancellation came first.
        case pending(cancelRequested: Bool)
        /// Added to the multi handle.
        case running
        /// Ended; the outcome has been (or is being) delivered.
        case finished(Outcome)
    }

    /// What to do when the loop picks the transfer up.
    enum StartAction: Equatable {
        /// Configure an easy handle and add it to the multi handle.
        case addToMulti
        /// A cancellation came first: deliver it, never touching libcurl.
        case deliverCancellation
        /// Nothing: the transfer already ended.
        case ignore
    }

    /// What to do when configuring or adding the transfer failed.
    enum StartFailureAction: Equatable {
        /// Release what was set up and deliver the failure.
        case deliverFailure
        case ignore
    }

    /// What to do when libcurl reports the transfer done.
    enum DoneAction: Equatable {
        /// Remove the handle from the multi handle and deliver the response or error.
        case removeAndDeliver
        case ignore
    }

    /// What to do when the transfer's total timeout runs out.
    enum TimeoutAction: Equatable {
        /// Remove the handle from the multi handle, then deliver the timeout.
        case removeAndDeliverTimeout
        /// It is not running (its deadline is kept only while it runs) or already ended.
        case ignore
    }

    /// What to do when the transfer is cancelled (by its task or by shutdown).
    enum CancelAction: Equatable {
        /// It never reached libcurl: deliver the cancellation.
        case deliverCancellation
        /// Remove the handle from the multi handle, then deliver the cancellation.
        case removeAndDeliverCancellation
        /// Its start has not arrived yet: the cancellation is noted and delivered at start.
        case deferUntilStart
        /// It already ended: nothing to do.
        case ignore
    }

    private(set) var state: State = .pending(cancelRequested: false)

    /// Whether an outcome has been decided.
    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    mutating func start() -> StartAction {
        switch state {
        case .pending(cancelRequested: false):
            state = .running
            return .addToMulti
        case .pending(cancelRequested: true):
            state = .finished(.cancelled)
            return .deliverCancellation
        case .running, .finished:
            return .ignore
        }
    }

    mutating func startFailed() -> StartFailureAction {
        switch state {
        case .pending, .running:
            state = .finished(.failed)
            return .deliverFailure
        case .finished:
            return .ignore
        }
    }

    /// libcurl finished the transfer; `succeeded` says whether it produced a response.
    mutating func done(succeeded: Bool) -> DoneAction {
        switch state {
        case .running:
            state = .finished(succeeded ? .completed : .failed)
            return .removeAndDeliver
        case .pending, .finished:
            return .ignore
        }
    }

    /// The event loop found the transfer's total deadline passed.
    mutating func timeOut() -> TimeoutAction {
        switch state {
        case .running:
            state = .finished(.failed)
            return .removeAndDeliverTimeout
        case .pending, .finished:
            return .ignore
        }
    }

    /// Cancellation by the transfer's task or Swift `Task`.
    mutating func cancel() -> CancelAction {
        switch state {
        case .pending(cancelRequested: false):
            state = .pending(cancelRequested: true)
            return .deferUntilStart
        case .pending(cancelRequested: true), .finished:
            return .ignore
        case .running:
            state = .finished(.cancelled)
            return .removeAndDeliverCancellation
        }
    }

    /// The transport is shutting down: whatever has not ended ends now, as cancelled.
    mutating func shutDown() -> CancelAction {
        switch state {
        case .pending:
            state = .finished(.cancelled)
            return .deliverCancellation
        case .running:
            state = .finished(.cancelled)
            return .removeAndDeliverCancellation
        case .finished:
            return .ignore
        }
    }
}
