/// Where a transport hands a completion: a place that runs plain work later, never on the
/// caller's stack, and that work must not block.
///
/// The library has two: its load executor (a few Dispatch workers that take work from one
/// queue) and a ``CurlTransport``'s own thread (`BatchingTransport.ownThreadExecutor`). Loads run
/// their steps — signing, decoding, validation, hooks — where their proxy's load placement
/// puts them. A speed mechanism of the package's, not public API.
package protocol CompletionExecutor: AnyObject, Sendable {
    /// Runs `work` there, later.
    ///
    /// - Parameter work: What to run.
    func run(_ work: @escaping @Sendable () -> Void)

    /// Runs `deliveries` — the completions of a batch of finished transfers, each of which
    /// may ``run(_:)`` work here — on the calling thread, so that an executor can take that
    /// work up on this thread afterwards instead of waking another. The default just calls
    /// `deliveries`.
    ///
    /// - Parameter deliveries: The batch's completions.
    func runBatch(_ deliveries: () -> Void)
}

extension CompletionExecutor {
    /// Calls `deliveries`.
    ///
    /// - Parameter deliveries: The batch's completions.
    public func runBatch(_ deliveries: () -> Void) {
        deliveries()
    }
}

extension DrainingExecutor: CompletionExecutor {}

extension CurlEventLoop: CompletionExecutor {}
