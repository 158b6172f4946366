import Foundation
@_spi(CrossModule) import AIFTransport

/// An answer a stand-in transport gives after a delay, ending its request exactly once:
/// delivered when the delay is over, or cancelled before — whichever comes first.
package final class DelayedAnswer: CancellableTransfer {
    private let completion: Locked<(@Sendable (Result<HTTPResponse, TransportError>) -> Void)?>
    private let url: String

    private init(url: String, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
        self.url = url
        self.completion = Locked(completion)
    }

    /// Calls `completion` with `outcome` after `delay`, unless the returned
    /// handle is cancelled first (then with ``/AIFTransport/TransportError/Code-swift.struct/cancelled``, at once).
    /// A response's body goes to the request's ``/AIFTransport/HTTPRequest/bodyReceiver`` when it takes it, as
    /// a transport's would (a download's file).
    ///
    /// - Parameters:
    ///   - outcome: The answer.
    ///   - delay: How long to hold it back.
    ///   - wait: Runs its work once the delay is over: a test's clock; a Dispatch timer when `nil`.
    ///   - request: The request answered.
    ///   - url: The request's URL as errors show it.
    ///   - completion: Called exactly once.
    /// - Returns: The handle that cancels the answer.
    public static func schedule(
        _ outcome: Result<HTTPResponse, TransportError>, after delay: Duration, on wait: (@Sendable (Duration, @escaping @Sendable () -> Void) -> Void)? = nil, to request: HTTPRequest, url: String,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> DelayedAnswer {
        let answer = DelayedAnswer(url: url, completion: completion)
        let receiver = request.bodyReceiver
        (wait ?? SystemLoadClock().schedule)(delay) {
            answer.deliver(outcome.flatMap { response in
                guard let receiver else { return .success(response) }
                return handing(response, to: receiver, url: url)
            })
        }
        return answer
    }

    /// The response with its body handed to `receiver`, if it takes it.
    private static func handing(_ response: HTTPResponse, to receiver: any HTTPRequest.BodyReceiver, url: String) -> Result<HTTPResponse, TransportError> {
        guard !response.body.isEmpty else { return .success(response) }
        do {
            guard try receiver.willReceiveBody(statusCode: response.statusCode, headers: response.headers) else { return .success(response) }
            try response.body.withUnsafeBytes { try receiver.receive($0) }
        } catch {
            return .failure(TransportError(.bodyDestinationFailed, url: url, detail: String(describing: error)))
        }
        var taken = response
        taken.body = Data()
        return .success(taken)
    }

    private func deliver(_ outcome: Result<HTTPResponse, TransportError>) {
        completion.withLock { taken in defer { taken = nil }; return taken }?(outcome)
    }

    /// Ends the request as cancelled, unless its answer came already.
    public func cancel() {
        deliver(.failure(TransportError(.cancelled, url: url, detail: "cancelled before its answer was due")))
    }
}
