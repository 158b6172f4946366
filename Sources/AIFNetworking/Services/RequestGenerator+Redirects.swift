import Foundation

extension RequestGenerator {
    /// Sends a generated request, following redirects through the library's one redirect loop
    /// (the rules of ``HTTPRequest/redirected(by:)``) and signing every hop afresh.
    ///
    /// A signature covers the exact URL, so it cannot be carried to a redirect's target: each
    /// hop within the first request's origin has its old signature fields removed and is
    /// signed again with a fresh time and nonce. A hop to another origin goes without any
    /// signature (a signature names no host, so one made for another origin could be replayed
    /// against this service), and, as with every request, without `Authorization` or
    /// `Cookie`.
    ///
    /// - Parameters:
    ///   - request: A request from ``makeRequest(for:methodName:method:parameters:headers:bodyEncoding:rawBody:signingContext:)``.
    ///   - resolved: The service and environment it was made for.
    ///   - transport: Where to send it.
    ///   - maxRedirects: How many redirects to follow; 10 by default.
    /// - Returns: The final response. Every response, redirects' included, teaches the
    ///   environment's ``ResolvedService/clockSkew``, which corrects the time of re-signed hops.
    /// - Throws: ``TransportError`` from the transport (``TransportError/Code-swift.struct/tooManyRedirects``
    ///   past the limit), or ``ServiceError`` when a hop cannot be signed.
    public func send(
        _ request: HTTPRequest,
        for resolved: ResolvedService,
        through transport: any HTTPTransport,
        maxRedirects: Int = 10
    ) async throws -> HTTPResponse {
        let cancellation = AsyncCancellation()
        let result = await withTaskCancellationHandler {
            // An unsafe continuation is sound: the send calls its completion exactly once.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<HTTPResponse, any Error>, Never>) in
                send(request, for: resolved, maxRedirects: maxRedirects, cancellation: cancellation) { hop, done in
                    transport.send(hop, progress: nil, completion: done)
                } completion: {
                    continuation.resume(returning: $0)
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Sends a generated request as `exchange` sends one hop, following redirects through the
    /// library's redirect loop with hops re-signed as ``send(_:for:through:maxRedirects:)``
    /// describes, every response shown to the environment's clock. The loop is made only when
    /// the first response is a redirect.
    ///
    /// - Parameters:
    ///   - request: The first request.
    ///   - resolved: The service and environment it was made for.
    ///   - maxRedirects: How many redirects to follow.
    ///   - cancellation: Where each hop's transfer is attached, to be cancelled.
    ///   - exchange: Sends one hop.
    ///   - completion: Called exactly once, with the final response or the error.
    func send(
        _ request: HTTPRequest, for resolved: ResolvedService, maxRedirects: Int, cancellation: AsyncCancellation,
        exchange: @escaping RedirectingSend<any Error>.Exchange, completion: @escaping RedirectingSend<any Error>.Completion
    ) {
        let sentAt = ContinuousClock.now
        let clockSkew = resolved.clockSkew
        var first = request
        first.redirects = .never
        let transfer = exchange(first) { [self] result in
            guard let redirect = result.redirectToFollow(maxRedirects: maxRedirects, observer: clockSkew) else {
                return completion(result.mapError { $0 })
            }
            var prepareHop: RedirectingSend<any Error>.PrepareHop?
            if resolved.isSigned {
                prepareHop = { @Sendable [self] hop, original throws(any Error) in
                    try resigned(hop, original: original, for: resolved, clockSkew: clockSkew)
                }
            }
            let hops = RedirectingSend(
                request: request, sentAt: sentAt, maxRedirects: maxRedirects, prepareHop: prepareHop, mapError: { $0 }, cancellation: cancellation,
                observer: clockSkew, exchange: exchange)
            hops.follow(redirect, completion: completion)
        }
        cancellation.attach(transfer)
    }

    /// A redirect hop of a signed request: the old signature removed, then signed afresh when
    /// it stays within the first request's origin.
    private func resigned(_ hop: HTTPRequest, original: HTTPRequest, for resolved: ResolvedService, clockSkew: ClockSkew) throws(ServiceError) -> HTTPRequest {
        var next = hop
        let items = PercentEncoding.queryItems(of: hop.url)
        if items.contains(where: { Self.signatureQueryFields.contains($0.name) }) {
            next.url = PercentEncoding.url(hop.url, replacingQueryWith: items.filter { !Self.signatureQueryFields.contains($0.name) })
        }
        for name in Self.signatureHeaderNames {
            next.headers.remove(name: name)
        }
        guard HTTPRequest.sameOrigin(original.url, next.url) else { return next }
        return try sign(next, for: resolved, context: clockSkew.context())
    }

    /// The query fields the built-in signers add.
    static let signatureQueryFields: Set<String> = ["api_key", "timestamp", "nonce", "sign"]
    /// The headers the built-in signers add.
    static let signatureHeaderNames = ["X-API-Key", "X-Timestamp", "X-Nonce", "X-Signature", "Signature", "Signature-Input", "Content-Digest"]
}

extension ClockSkew: ResponseObserver {
    /// Learns from the response's `Date` header, received now.
    func record(_ response: HTTPResponse) {
        record(response, receivedAt: Date())
    }
}
