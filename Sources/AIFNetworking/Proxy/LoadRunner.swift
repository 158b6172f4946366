/// Where a proxy's delegate-face loads do their work (signing, decoding, validation,
/// `.immediate` delivery) between the steps of their pipeline: the library's load executor, or
/// the transport's own thread. Such loads are driven by completion handlers rather than by a
/// task each — no task to create, no executor switches, no continuation — and hop here from the
/// transport's completion.
protocol LoadRunner: Sendable {
    /// Runs `work` there, later: never on the caller's stack.
    func run(_ work: @escaping @Sendable () -> Void)

    /// Whether a ``CurlTransport`` should hand over the completions of the transfers that
    /// report here in its batches (from one Dispatch block per batch, like the tasks it
    /// resumes) rather than one by one on its own thread.
    var takesCurlCompletionsInBatches: Bool { get }
}

extension DrainingExecutor: LoadRunner {
    var takesCurlCompletionsInBatches: Bool { true }
}

extension CurlEventLoop: LoadRunner {
    var takesCurlCompletionsInBatches: Bool { false }
}

/// A load's task as the work the proxy stops when the load is cancelled.
struct TaskCancellation<Success: Sendable>: CancellableTransfer {
    let task: Task<Success, Never>

    func cancel() {
        task.cancel()
    }
}
