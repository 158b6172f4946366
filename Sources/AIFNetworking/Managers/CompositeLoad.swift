/// Runs a load made of other loads (an ``APIBatch``, an ``APIChain``) as one entry in a
/// proxy's table: it has a request ID of its own, and cancelling that ID — or its group, or all
/// of the proxy's loads — cancels the task that runs it, and so the member loads under way.
enum CompositeLoad {
    /// Cancels the task running a composite load.
    private struct TaskCancellation<Outcome: Sendable>: CancellableTransfer {
        let task: Task<Outcome, Never>
        func cancel() { task.cancel() }
    }

    /// The async face: runs `body` and returns its outcome (and whether the load was cancelled);
    /// cancelling the calling task cancels it.
    static func run<Outcome: Sendable>(
        proxy: APIProxy, group: RequestGroup?, _ body: @escaping @Sendable (RequestID) async -> Outcome
    ) async -> (id: RequestID, outcome: Outcome, cancelled: Bool) {
        let id = proxy.begin(group: group)
        let task = Task { await body(id) }
        proxy.attach(id, work: TaskCancellation(task: task))
        let outcome = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            proxy.cancel(id)
        }
        return (id, outcome, proxy.end(id).cancelled)
    }

    /// The delegate face: starts `body` and returns its ID at once; `deliver` runs on
    /// `executor` with the outcome, unless the load was cancelled.
    static func start<Outcome: Sendable>(
        proxy: APIProxy, group: RequestGroup?, executor: CallbackExecutor,
        _ body: @escaping @Sendable (RequestID) async -> Outcome, deliver: @escaping @Sendable (Outcome) -> Void
    ) -> RequestID {
        let id = proxy.begin(group: group)
        let task = Task {
            let outcome = await body(id)
            if !proxy.end(id).cancelled { executor.run { deliver(outcome) } }
            return outcome
        }
        proxy.attach(id, work: TaskCancellation(task: task))
        return id
    }
}
