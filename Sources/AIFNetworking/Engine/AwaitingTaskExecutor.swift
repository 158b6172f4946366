@_spi(CrossModule) import AIFTransport
/// Runs an async-face load's steps in the task that awaits the load: the task starts the load
/// itself, and each later step — the transport's answer, a wait's end, a credential, the
/// ending of a cancelled load — wakes the task, which performs the step where it stands. A
/// load then crosses threads twice (the task to the transport's thread, and back) rather
/// than four times through the library's load executor.
///
/// The task performs steps until its load has ended (``end()``, wherever the load's
/// completion runs). A step handed over after that — a coalesced transfer landing for the
/// loads that joined it, the log line of a transfer that outlived its cancelled load — runs
/// on the load executor instead, so that no step waits for a task that has left.
final class AwaitingTaskExecutor: StepExecutor {
    fileprivate struct State {
        /// Steps handed over and not yet taken by the task, oldest first.
        var steps: [@Sendable () -> Void] = []
        /// The task, when it waits for a step.
        var waiting: UnsafeContinuation<Void, Never>?
        /// Whether the load has ended: the task performs the steps handed over, then leaves.
        var hasEnded = false
        /// Whether the task has stopped performing steps.
        var hasLeft = false
    }

    private let state = Locked(State())

    /// `true`: each step wakes the task, so a transport hands the steps of the transfers that
    /// finish together over together (one thread woken for them, not one per step).
    var takesWorkInBatches: Bool { true }

    /// Starts work whose steps then run in the calling task, and returns its outcome.
    ///
    /// - Parameter start: Starts the work on the executor it is given; the work hands its
    ///   outcome, once, to the completion it is given.
    /// - Returns: The outcome.
    static func outcome<Outcome: Sendable>(
        of start: (_ executor: AwaitingTaskExecutor, _ completion: @escaping @Sendable (Outcome) -> Void) -> Void
    ) async -> Outcome {
        let executor = AwaitingTaskExecutor()
        let handedOver = Locked<Outcome?>(nil)
        start(executor) { outcome in
            handedOver.withLock { $0 = outcome }
            executor.end()
        }
        await executor.performSteps()
        guard let outcome = handedOver.withLock({ $0 }) else { preconditionFailure("the work ended without its outcome") }
        return outcome
    }

    /// Hands a step to the task (which is woken if it waits), or, once it has left, to the
    /// load executor.
    func run(_ step: @escaping @Sendable () -> Void) {
        let (waiting, taken) = state.withLock { state -> (UnsafeContinuation<Void, Never>?, Bool) in
            guard !state.hasLeft else { return (nil, false) }
            state.steps.append(step)
            defer { state.waiting = nil }
            return (state.waiting, true)
        }
        guard taken else { return LoadExecutor.shared.run(step) }
        waiting?.resume()
    }

    /// Tells the task that the load has ended (its outcome handed over): it leaves once it has
    /// performed the steps handed over so far.
    func end() {
        let waiting = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.hasEnded = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }

    /// Performs the steps handed over, in order, as they come — waiting when none is ready —
    /// until the load has ended and every step handed over until then is performed.
    func performSteps() async {
        while true {
            switch state.withLock({ $0.next() }) {
            case .perform(let steps):
                for step in steps { step() }
            case .leave:
                return
            case .wait:
                // An unsafe continuation is sound: whoever takes it from the state resumes it, once.
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    let waits = state.withLock { state -> Bool in
                        guard state.steps.isEmpty, !state.hasEnded else { return false }
                        state.waiting = continuation
                        return true
                    }
                    if !waits { continuation.resume() }
                }
            }
        }
    }
}

extension AwaitingTaskExecutor.State {
    /// What the task does next.
    enum Next {
        /// Performs these steps, handed over since it last looked.
        case perform([@Sendable () -> Void])
        /// Leaves: the load has ended and no step is left (later ones go to the load executor).
        case leave
        /// Waits for a step, or for the load's end.
        case wait
    }

    /// What the task does next: the steps handed over, taken; else leaving once the load has
    /// ended; else waiting.
    mutating func next() -> Next {
        if !steps.isEmpty {
            defer { steps = [] }
            return .perform(steps)
        }
        guard hasEnded else { return .wait }
        hasLeft = true
        return .leave
    }
}
