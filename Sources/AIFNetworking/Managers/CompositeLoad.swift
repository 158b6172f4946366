/// Runs a load made of other loads (an ``APIBatch``, an ``APIChain``) as one entry in a
/// proxy's table: it has a load ID of its own, and cancelling that ID — or its group, or all
/// of the proxy's loads — cancels the task that runs it, and so the member loads under way. The
/// task is the composite load's one object: its cancellation says that the load was cancelled.
enum CompositeLoad {
    /// A composite load in the proxy's table: cancels its task — once there is one, for the
    /// load is entered before the task starts, which could otherwise end before it was entered.
    private final class TaskLoad<Outcome: Sendable>: InFlightLoad {
        let id: LoadID
        let group: LoadGroup?
        var owner: LoadOwner? { nil }
        private let state = Locked<(task: Task<Outcome, Never>?, cancelled: Bool)>((nil, false))

        init(id: LoadID, group: LoadGroup?) {
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
            state.withLock { state in
                state.cancelled = true
                return state.task
            }?.cancel()
        }
    }

    /// The async face: runs `body` and returns its outcome (and whether the load was cancelled);
    /// cancelling the calling task cancels it.
    static func run<Outcome: Sendable>(
        proxy: APIProxy, group: LoadGroup?, _ body: @escaping @Sendable (LoadID) async -> Outcome
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
    /// `executor` with the outcome, unless the load was cancelled.
    static func start<Outcome: Sendable>(
        proxy: APIProxy, group: LoadGroup?, executor: CallbackExecutor,
        _ body: @escaping @Sendable (LoadID) async -> Outcome, deliver: @escaping @Sendable (Outcome) -> Void
    ) -> LoadID {
        let id = proxy.newID()
        let load = TaskLoad<Void>(id: id, group: group)
        proxy.enter(load)
        load.run(Task {
            let outcome = await body(id)
            proxy.end(load)
            if !Task.isCancelled { executor.run { deliver(outcome) } }
        })
        return id
    }
}
