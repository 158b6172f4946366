extension APIProxy {
    /// ``send(_:for:id:coalescingKey:)`` for a load driven by completion handlers instead of a
    /// task (the delegate face): sends `request`, following redirects (each hop signed afresh,
    /// as ``RequestGenerator/send(_:for:through:maxRedirects:clockSkew:)`` does), logs, and
    /// calls `completion` exactly once, through `runner`. No coalescing: such loads take the
    /// task path.
    ///
    /// - Parameters:
    ///   - request: A request made by ``RequestGenerator``.
    ///   - resolved: The service and environment it was made for.
    ///   - id: The load's ID, for the log.
    ///   - cancellation: Cancels the transfer in flight (each hop's in turn).
    ///   - runner: Where `completion` (and the signing of redirect hops) runs.
    ///   - completion: Gets the final response, or the transport's or signing's error.
    func send(
        _ request: HTTPRequest, for resolved: ResolvedService, id: RequestID, cancellation: AsyncCancellation,
        runner: any LoadRunner, completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        logSending(request, id: id)
        let send = CompletionDrivenSend(
            proxy: self, request: request, resolved: resolved, id: id, cancellation: cancellation, runner: runner, completion: completion
        )
        send.submit(send.firstHop, redirects: 0)
    }
}

/// One completion-driven send: the state its hops share.
private final class CompletionDrivenSend: Sendable {
    let proxy: APIProxy
    let request: HTTPRequest
    let resolved: ResolvedService
    let id: RequestID
    let cancellation: AsyncCancellation
    let runner: any LoadRunner
    let completion: @Sendable (Result<HTTPResponse, any Error>) -> Void
    let started = ContinuousClock.now
    /// Whether redirects are followed here (re-signed) rather than by the transport.
    let signed: Bool

    init(
        proxy: APIProxy, request: HTTPRequest, resolved: ResolvedService, id: RequestID, cancellation: AsyncCancellation,
        runner: any LoadRunner, completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        self.proxy = proxy
        self.request = request
        self.resolved = resolved
        self.id = id
        self.cancellation = cancellation
        self.runner = runner
        self.completion = completion
        signed = resolved.environment.credentials != nil && resolved.service.signer != nil
    }

    var firstHop: HTTPRequest {
        var first = request
        if signed { first.redirects = .never }
        return first
    }

    func submit(_ hop: HTTPRequest, redirects: Int) {
        let arrived: @Sendable (Result<HTTPResponse, TransportError>) -> Void = { [self] result in
            runner.run { self.arrived(result, for: hop, redirects: redirects) }
        }
        let transfer: any CancellableTransfer
        if let curl = proxy.transport as? CurlTransport {
            transfer = curl.sendTransfer(hop, progress: nil, completingInBatches: runner.takesCurlCompletionsInBatches, completion: arrived)
        } else {
            transfer = proxy.transport.send(hop, progress: nil, completion: arrived)
        }
        cancellation.attach(transfer)
    }

    private func arrived(_ result: Result<HTTPResponse, TransportError>, for hop: HTTPRequest, redirects: Int) {
        let response: HTTPResponse
        switch result {
        case .success(let received): response = received
        case .failure(let error): return fail(error)
        }
        proxy.clockSkew.record(response)
        if signed {
            var redirects = redirects
            do {
                if let next = try proxy.generator.nextHop(
                    after: response, from: hop, redirects: &redirects, maxRedirects: proxy.maxRedirects, resolved: resolved, clockSkew: proxy.clockSkew
                ) {
                    return submit(next, redirects: redirects)
                }
            } catch {
                return fail(error)
            }
        }
        proxy.logReceiving(response, for: request, id: id, started: started)
        completion(.success(response))
    }

    private func fail(_ error: any Error) {
        proxy.logFailure(error, for: request, id: id, started: started)
        completion(.failure(error))
    }
}
