/// Where a transport hands a completion: a place that runs plain work later, never on the
/// caller's stack, and that work must not block.
///
/// The library has three: its load executor (a concurrent Dispatch queue), a
/// ``CurlTransport``'s own thread (`BatchingTransport.ownThreadExecutor`), and the executor of
/// an async-face load, which wakes the task awaiting the load. Delegate-face loads run their
/// steps — signing, decoding, validation, hooks — where their proxy's choice of executor puts
/// them; async-face loads in their task. A speed mechanism of the package's, not public API.
package protocol StepExecutor: AnyObject, Sendable {
    /// Runs `work` there, later.
    ///
    /// - Parameter work: What to run.
    func run(_ work: @escaping @Sendable () -> Void)

    /// Whether a ``CurlTransport`` hands this executor its work together with the other
    /// transfers that finished in the same turn of its loop, from one Dispatch block, rather
    /// than from its own thread one at a time: for an executor whose `run` wakes a task, which
    /// on a busy CPU would take the CPU from the loop at each wake-up. `false` unless an
    /// executor says otherwise.
    var takesWorkInBatches: Bool { get }
}

extension StepExecutor {
    /// `false`: work is handed over as each transfer finishes.
    package var takesWorkInBatches: Bool { false }
}

extension CurlEventLoop: StepExecutor {}
