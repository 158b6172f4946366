import Foundation

/// The library's one redirect loop: sends a request through a single-exchange `send`, and
/// while the answer is a redirect to follow (``HTTPRequest/redirected(by:)``), sends the next
/// hop — after `prepareHop`, where a signer signs it afresh — until a final response, an error,
/// or one redirect more than `maxRedirects`.
///
/// ```
///  start ──▶ send hop ──▶ response ──┬─ not a redirect ──────────────▶ deliver(response)
///               ▲                    ├─ redirect, over the limit ────▶ deliver(tooManyRedirects)
///               │                    ├─ bad Location / prepare fails ▶ deliver(error)
///               └── prepareHop(next) ┘─ redirect
///  a hop's error ─────────────────────────────────────────────────────▶ deliver(error)
/// ```
///
/// Every hop's exchange ends exactly once (the ``HTTPTransport`` contract), and each ending
/// either starts exactly one next hop or delivers: so the completion runs exactly once.
/// Cancelling the `cancellation` it was given (the caller's own: a load's, a task's) stops the
/// hop in flight, or the next one the moment it is attached.
///
/// When the first request has a total timeout, it bounds the whole chain: each later hop gets
/// what is left of it.
final class RedirectingSend<Failure: Error>: Sendable {
    /// One exchange: sends `hop` with no redirect following of its own and calls the
    /// completion exactly once.
    typealias Exchange = @Sendable (_ hop: HTTPRequest, _ completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) ->
        any CancellableTransfer
    /// Turns the next hop into the request to send (re-signing it, say). Gets the hop and the
    /// first request.
    typealias PrepareHop = @Sendable (_ hop: HTTPRequest, _ original: HTTPRequest) throws(Failure) -> HTTPRequest
    typealias Completion = @Sendable (Result<HTTPResponse, Failure>) -> Void

    private let original: HTTPRequest
    private let maxRedirects: Int
    private let prepareHop: PrepareHop?
    private let exchange: Exchange
    private let mapError: @Sendable (TransportError) -> Failure
    private let cancellation: AsyncCancellation
    private let observer: (any ResponseObserver)?
    /// When the chain must be over, if the first request had a total timeout.
    private let deadline: ContinuousClock.Instant?

    /// Creates the loop; ``start(completion:)`` sends the first hop.
    ///
    /// - Parameters:
    ///   - request: The first request, sent as it is.
    ///   - maxRedirects: How many redirects to follow; negative for none.
    ///   - prepareHop: Applied to every hop after the first, or `nil`.
    ///   - mapError: How a transport error becomes the completion's error.
    ///   - cancellation: Where each hop's transfer is attached, to be cancelled.
    ///   - observer: Shown every response, redirects included, or `nil`.
    ///   - exchange: Sends one hop.
    init(
        request: HTTPRequest, maxRedirects: Int, prepareHop: PrepareHop?, mapError: @escaping @Sendable (TransportError) -> Failure,
        cancellation: AsyncCancellation, observer: (any ResponseObserver)? = nil, exchange: @escaping Exchange
    ) {
        original = request
        self.cancellation = cancellation
        self.observer = observer
        self.maxRedirects = maxRedirects
        self.prepareHop = prepareHop
        self.mapError = mapError
        self.exchange = exchange
        deadline = request.timeouts?.total.map { ContinuousClock.now + $0 }
    }

    /// Sends the first request. Call once.
    ///
    /// - Parameter completion: Called exactly once with the final outcome.
    func start(completion: @escaping Completion) {
        submit(original, redirects: 0, completion: completion)
    }

    private func submit(_ request: HTTPRequest, redirects: Int, completion: @escaping Completion) {
        var hop = request
        hop.redirects = .never
        let transfer = exchange(hop) { [self, hop] result in
            arrived(result, for: hop, redirects: redirects, completion: completion)
        }
        cancellation.attach(transfer)
    }

    private func arrived(_ result: Result<HTTPResponse, TransportError>, for hop: HTTPRequest, redirects: Int, completion: @escaping Completion) {
        let response: HTTPResponse
        switch result {
        case .success(let received): response = received
        case .failure(let error): return completion(.failure(mapError(error)))
        }
        observer?.record(response)
        guard maxRedirects >= 0, HTTPRequest.isRedirect(response.statusCode) else {
            return completion(.success(Self.final(response, redirects: redirects)))
        }
        do throws(TransportError) {
            guard var next = try hop.redirected(by: response) else { return completion(.success(Self.final(response, redirects: redirects))) }
            guard redirects < maxRedirects else {
                throw TransportError(
                    .tooManyRedirects, url: original.location.text,
                    detail: "more than \(maxRedirects) redirects (the last from \(TransportError.redactingPassword(in: hop.location.text)))"
                )
            }
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else {
                    throw TransportError(.totalTimeout, url: hop.location.text, detail: "the total timeout ran out while following redirects")
                }
                next.timeouts?.total = left
            }
            if let prepareHop {
                do {
                    next = try prepareHop(next, original)
                } catch {
                    return completion(.failure(error))
                }
            }
            submit(next, redirects: redirects + 1, completion: completion)
        } catch {
            completion(.failure(mapError(error)))
        }
    }

    /// The last hop's response, counting the redirects that led to it.
    private static func final(_ response: HTTPResponse, redirects: Int) -> HTTPResponse {
        guard redirects > 0 else { return response }
        var response = response
        response.metrics.redirectCount = redirects
        return response
    }
}

extension RedirectingSend where Failure == TransportError {
    /// A loop whose errors are the transport's own.
    convenience init(request: HTTPRequest, maxRedirects: Int, cancellation: AsyncCancellation, exchange: @escaping Exchange) {
        self.init(request: request, maxRedirects: maxRedirects, prepareHop: nil, mapError: { $0 }, cancellation: cancellation, exchange: exchange)
    }
}

extension RedirectingSend {
    /// Starts the loop and waits for its outcome; cancelling the calling task cancels it.
    func response() async throws(Failure) -> HTTPResponse {
        let result = await withTaskCancellationHandler {
            // An unsafe continuation is sound: the loop calls its completion exactly once.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<HTTPResponse, Failure>, Never>) in
                start { continuation.resume(returning: $0) }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }
}

/// Is shown every response of a redirect loop, the redirects' included (the signing layer's
/// clock-skew estimate learns from their `Date` headers).
protocol ResponseObserver: Sendable {
    /// Takes note of a response.
    func record(_ response: HTTPResponse)
}
