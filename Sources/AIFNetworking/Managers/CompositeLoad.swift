@_spi(CrossModule) import AIFTransport
/// Runs a load made of other loads (an ``APIBatch``, an ``APIChain``) as one entry in a
/// proxy's table: it has a load ID of its own, and cancelling that ID — or its group, or all
/// of the proxy's loads — cancels the task that runs it, and so the member loads under way. The
/// task is the composite load's one object: its cancellation says that the load was cancelled.
enum CompositeLoad {
    /// A composite load in the proxy's table: cancels its task — once there is one, for the
    /// load is entered before the task starts, which could otherwise end before it was entered.
    private final class TaskLoad<Outcome: Sendable>: InFlightLoad {
        let id: LoadID
        let group: APIProxy.LoadGroup?
        var owner: LoadOwner? { nil }
        private let state = Locked<(task: Task<Outcome, Never>?, cancelled: Bool, ended: Bool)>((nil, false, false))

        init(id: LoadID, group: APIProxy.LoadGroup?) {
            self.id = id
            self.group = group
        }

        /// Hands over the task, cancelled at once if the load was.
        func run(_ task: Task<Outcome, Never>) {
            if state.withLock({ state in state.task = task; return state.cancelled }) { task.cancel() }
        }

        /// Cancels the task — unless the proxy shuts down: a composite load ends as its members
        /// do, which the shutdown cancels.
        func cancel(_ cause: LoadStateMachine.Cancellation) {
            guard cause != .shutdown else { return }
            state.withLock { state -> Task<Outcome, Never>? in
                guard !state.ended else { return nil }
                state.cancelled = true
                return state.task
            }?.cancel()
        }

        /// Ends the load: after this, a cancellation changes nothing.
        /// - Returns: Whether it was cancelled first — then its outcome is told to no one.
        func end() -> Bool {
            state.withLock { state in
                state.ended = true
                return state.cancelled
            }
        }
    }

    /// The async face: runs `body` and returns its outcome (and whether the load was cancelled);
    /// cancelling the calling task cancels it.
    static func run<Outcome: Sendable>(
        proxy: APIProxy, group: APIProxy.LoadGroup?, _ body: @escaping @Sendable (LoadID) async -> Outcome
    ) async -> (id: LoadID, outcome: Outcome, cancelled: Bool) {
        let id = proxy.newID()
        let load = TaskLoad<(Outcome, Bool)>(id: id, group: group)
        proxy.enter(load)
        let task = Task { (await body(id), Task.isCancelled) }
        load.run(task)
        let (outcome, cancelled) = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            proxy.cancel(id)
        }
        proxy.end(load)
        return (id, outcome, cancelled)
    }

    /// The delegate face: starts `body` and returns its ID at once; `deliver` runs on
    /// `executor` with the outcome, unless the load was cancelled before it ended.
    static func start<Outcome: Sendable>(
        proxy: APIProxy, group: APIProxy.LoadGroup?, executor: CallbackExecutor,
        _ body: @escaping @Sendable (LoadID) async -> Outcome, deliver: @escaping @Sendable (Outcome) -> Void
    ) -> LoadID {
        let id = proxy.newID()
        let load = TaskLoad<Void>(id: id, group: group)
        proxy.enter(load)
        load.run(Task {
            let outcome = await body(id)
            // Told (or not) before it leaves the table: once no load is in flight, every
            // composite's delivery is decided, and made on its executor.
            if !load.end() { executor.run { deliver(outcome) } }
            proxy.end(load)
        })
        return id
    }
}
