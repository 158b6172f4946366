import Foundation

/// The library's one redirect loop: after a first exchange answered with a redirect to follow
/// (``HTTPRequest/redirected(by:)``), sends the next hop — after `prepareHop`, where a signer
/// signs it afresh — and so on until a final response, an error, or one redirect more than
/// `maxRedirects`.
///
/// ```
///  first exchange ──▶ response ──┬─ not a redirect (no loop is made) ─▶ deliver(response)
///                                └─ redirect: make the loop, follow ─┐
///                ┌───────────────────────────────────────────────────┘
///                ▼
///  follow ──┬─ over the limit ──────────────▶ deliver(tooManyRedirects)
///     ▲     ├─ bad Location / prepare fails ▶ deliver(error)
///     │     └─ prepareHop(next), send hop ──▶ response ──┬─ not a redirect ─▶ deliver(response)
///     └──────────────────────────────────────────────────┘─ redirect
///  a hop's error ───────────────────────────────────────────────────────────▶ deliver(error)
/// ```
///
/// Most responses are not redirects, so the first hop is sent by the caller as a plain
/// exchange whose completion asks `redirectToFollow(maxRedirects:observer:)` of its outcome;
/// only when it is
/// one does the caller make this loop and hand it the response (``follow(_:completion:)``):
/// a request that is not redirected costs nothing here.
///
/// Every hop's exchange ends exactly once (the ``HTTPTransport`` contract), and each ending
/// either starts exactly one next hop or delivers: so the completion runs exactly once.
/// Cancelling the `cancellation` it was given stops the hop in flight, or the next one the
/// moment it is attached.
///
/// When the first request has a total timeout, it bounds the whole chain: each later hop gets
/// what is left of it.
package final class RedirectingSend<Failure: Error>: Sendable {
    /// One exchange: sends `hop` with no redirect following of its own and calls the
    /// completion exactly once.
    package typealias Exchange = @Sendable (_ hop: HTTPRequest, _ completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) ->
        any CancellableTransfer
    /// Turns the next hop into the request to send (re-signing it, say). Gets the hop and the
    /// first request.
    package typealias PrepareHop = @Sendable (_ hop: HTTPRequest, _ original: HTTPRequest) throws(Failure) -> HTTPRequest
    package typealias Completion = @Sendable (Result<HTTPResponse, Failure>) -> Void

    private let original: HTTPRequest
    private let maxRedirects: Int
    private let prepareHop: PrepareHop?
    private let exchange: Exchange
    private let mapError: @Sendable (TransportError) -> Failure
    private let cancellation: AsyncCancellation
    private let observer: (any ResponseObserver)?
    /// What is left of the chain's time, if the first request had a total timeout: read on the
    /// sender's clock, which the loop does not read itself.
    private let timeLeft: (@Sendable () -> Duration)?

    /// Creates the loop for a request whose first hop was answered with a redirect.
    ///
    /// - Parameters:
    ///   - request: The first request.
    ///   - timeLeft: What is left of the first request's total timeout, counted from when it was
    ///     sent on the sender's clock; `nil` when it has none.
    ///   - maxRedirects: How many redirects to follow.
    ///   - prepareHop: Applied to every hop after the first, or `nil`.
    ///   - mapError: How a transport error becomes the completion's error.
    ///   - cancellation: Where each later hop's transfer is attached, to be cancelled.
    ///   - observer: Shown every later hop's response, or `nil`.
    ///   - exchange: Sends one hop.
    package init(
        request: HTTPRequest, timeLeft: (@Sendable () -> Duration)?, maxRedirects: Int, prepareHop: PrepareHop?,
        mapError: @escaping @Sendable (TransportError) -> Failure, cancellation: AsyncCancellation, observer: (any ResponseObserver)? = nil,
        exchange: @escaping Exchange
    ) {
        original = request
        self.cancellation = cancellation
        self.observer = observer
        self.maxRedirects = maxRedirects
        self.prepareHop = prepareHop
        self.mapError = mapError
        self.exchange = exchange
        self.timeLeft = timeLeft
    }

    /// Follows the redirect the first request was answered with.
    ///
    /// - Parameters:
    ///   - response: The first exchange's response, a redirect (already shown to the observer).
    ///   - completion: Called exactly once with the final outcome.
    package func follow(_ response: HTTPResponse, completion: @escaping Completion) {
        follow(response, from: original, redirects: 0, resends: response.metrics.resends, completion: completion)
    }

    /// Sends `request`, the hop after `redirects` redirects; `resends` counts the requests the
    /// transport sent again on fresh connections for the hops before it.
    private func submit(_ request: HTTPRequest, redirects: Int, resends: Int, completion: @escaping Completion) {
        var hop = request
        hop.redirects = .never
        cancellation.attach {
            exchange(hop) { [self, hop] result in
                switch result {
                case .success(let response):
                    observer?.record(response)
                    let resends = resends + response.metrics.resends
                    guard HTTPRequest.isRedirect(response.statusCode) else {
                        return completion(.success(Self.final(response, redirects: redirects, resends: resends)))
                    }
                    follow(response, from: hop, redirects: redirects, resends: resends, completion: completion)
                case .failure(var error):
                    error.resends += resends
                    completion(.failure(mapError(error)))
                }
            }
        }
    }

    /// Sends the hop `response` (a redirect status, the answer to `hop`) points to.
    private func follow(_ response: HTTPResponse, from hop: HTTPRequest, redirects: Int, resends: Int, completion: @escaping Completion) {
        do throws(TransportError) {
            guard var next = try hop.redirected(by: response) else {
                return completion(.success(Self.final(response, redirects: redirects, resends: resends)))
            }
            guard redirects < maxRedirects else {
                throw TransportError(
                    .tooManyRedirects, url: original.location.text,
                    detail: "more than \(maxRedirects) redirects (the last from \(TransportError.redactingPassword(in: hop.location.text)))"
                )
            }
            if let timeLeft {
                let left = timeLeft()
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
            submit(next, redirects: redirects + 1, resends: resends, completion: completion)
        } catch {
            var error = error
            error.resends = resends
            completion(.failure(mapError(error)))
        }
    }

    /// The last hop's response, counting the redirects that led to it and the requests the
    /// transport sent again on the way (`resends`, the last hop's included).
    private static func final(_ response: HTTPResponse, redirects: Int, resends: Int) -> HTTPResponse {
        guard redirects > 0 || resends != response.metrics.resends else { return response }
        var response = response
        response.metrics.redirectCount = redirects
        response.metrics.resends = resends
        return response
    }
}

/// Is shown every response of a redirect loop, the redirects' included (the signing layer's
/// clock-skew estimate learns from their `Date` headers).
package protocol ResponseObserver: Sendable {
    /// Takes note of a response.
    func record(_ response: HTTPResponse)
}

extension Result where Success == HTTPResponse, Failure == TransportError {
    /// Looks at the outcome of a request's first exchange, before any redirect loop exists:
    /// shows a response to `observer`, and returns it when it is a redirect to follow — then
    /// make the loop and call its `follow(_:completion:)`; otherwise the outcome is final.
    ///
    /// - Parameters:
    ///   - maxRedirects: How many redirects the request follows; negative for none.
    ///   - observer: Shown the response, or `nil`.
    /// - Returns: The redirect response, or `nil` when the outcome is final.
    package func redirectToFollow(maxRedirects: Int, observer: (any ResponseObserver)? = nil) -> HTTPResponse? {
        guard case .success(let response) = self else { return nil }
        observer?.record(response)
        return maxRedirects >= 0 && HTTPRequest.isRedirect(response.statusCode) ? response : nil
    }
}
