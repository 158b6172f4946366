/// The lifecycle of one transfer, as a value: what has happened to it, and what the event loop
/// must do about each event. It holds no resources and performs nothing, so it can be tested
/// without I/O; ``Transfer`` owns one and performs the actions it returns.
///
/// ```
///   pending ──start──▶ running ──done──▶ finished
///      │                  │
///      └──cancel──────────┴──cancel/shutdown──▶ finished
/// ```
///
/// Whatever the order of events, exactly one action delivers an outcome; every event after
/// that is ignored. That is where "every request ends exactly once" is enforced.
struct TransferStateMachine: Sendable {
    /// How a transfer ended.
    enum Outcome: Sendable, Equatable {
        case completed
        case failed
        case cancelled
    }

    enum State: Sendable, Equatable {
        /// Submitted, not yet handed to libcurl.
        case pending
        /// Added to the multi handle.
        case running
        /// Ended; the outcome has been (or is being) delivered.
        case finished(Outcome)
    }

    /// What to do when the loop picks the transfer up.
    enum StartAction: Equatable {
        /// Configure an easy handle and add it to the multi handle.
        case addToMulti
        /// Nothing: the transfer already ended (cancelled before it started).
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

    /// What to do when the transfer is cancelled (by its task or by shutdown).
    enum CancelAction: Equatable {
        /// It never reached libcurl: deliver the cancellation.
        case deliverCancellation
        /// Remove the handle from the multi handle, then deliver the cancellation.
        case removeAndDeliverCancellation
        /// It already ended: nothing to do.
        case ignore
    }

    private(set) var state: State = .pending

    /// Whether an outcome has been decided.
    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    mutating func start() -> StartAction {
        switch state {
        case .pending:
            state = .running
            return .addToMulti
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

    mutating func cancel() -> CancelAction {
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
