import Foundation

/// An answer a stand-in transport gives after a delay, ending its request exactly once:
/// delivered when the delay is over, or cancelled before — whichever comes first.
@_spi(Support)
public final class DelayedAnswer: CancellableTransfer {
    private let completion: Locked<(@Sendable (Result<HTTPResponse, TransportError>) -> Void)?>
    private let url: String

    private init(url: String, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        self.url = url
        self.completion = Locked(completion)
    }

    /// Calls `completion` with `outcome` after `delay`, on a Dispatch queue, unless the returned
    /// handle is cancelled first (then with ``TransportError/Code-swift.struct/cancelled``, at once).
    ///
    /// - Parameters:
    ///   - outcome: The answer.
    ///   - delay: How long to hold it back.
    ///   - url: The request's URL, for the cancellation's error.
    ///   - completion: Called exactly once.
    /// - Returns: The handle that cancels the answer.
    public static func schedule(
        _ outcome: Result<HTTPResponse, TransportError>, after delay: Duration, url: String,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> DelayedAnswer {
        let answer = DelayedAnswer(url: url, completion: completion)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.timeInterval) { answer.deliver(outcome) }
        return answer
    }

    private func deliver(_ outcome: Result<HTTPResponse, TransportError>) {
        completion.withLock { taken in defer { taken = nil }; return taken }?(outcome)
    }

    /// Ends the request as cancelled, unless its answer came already.
    public func cancel() {
        deliver(.failure(TransportError(.cancelled, url: url, detail: "cancelled before its answer was due")))
    }
}
