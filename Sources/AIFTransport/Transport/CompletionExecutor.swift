/// Where a transport hands a completion: a place that runs plain work later, never on the
/// caller's stack, and that work must not block.
///
/// The library has two: its load executor (a concurrent Dispatch queue) and a
/// ``CurlTransport``'s own thread (`BatchingTransport.ownThreadExecutor`). Loads run
/// their steps — signing, decoding, validation, hooks — where their proxy's load placement
/// puts them. A speed mechanism of the package's, not public API.
package protocol CompletionExecutor: AnyObject, Sendable {
    /// Runs `work` there, later.
    ///
    /// - Parameter work: What to run.
    func run(_ work: @escaping @Sendable () -> Void)
}

extension CurlEventLoop: CompletionExecutor {}
