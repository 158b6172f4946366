import Foundation
@_spi(CrossModule) import AIFTransport

extension APIProxy {
    /// Sends a request made for `resolved` (``/AIFServices/ServiceRegistry/ResolvedService/makeRequest(path:method:parameters:headers:bodyEncoding:arrays:query:rawBody:rawBodyContentType:placements:credential:signingContext:)``), as a manager's load sends
    /// one: redirects followed as the ``transport``'s ``/AIFTransport/HTTPTransport/redirects`` (or the
    /// request's own) allow, each hop within the first request's origin signed afresh and no
    /// signature carried to another origin, every response shown to the environment's
    /// ``/AIFServices/ServiceRegistry/ResolvedService/clockSkew``. Cancelling the calling task cancels the hop in flight.
    ///
    /// ```swift
    /// let resolved = try ServiceRegistry.shared.resolve("shop")
    /// let request = try resolved.makeRequest(path: "goods/{id}", method: .get, parameters: ["id": 42])
    /// let response = try await APIProxy.shared.send(request, for: resolved)
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - resolved: The service and environment it was made for.
    /// - Returns: The final response.
    /// - Throws: ``/AIFTransport/TransportError`` from the transport (``/AIFTransport/TransportError/Code-swift.struct/tooManyRedirects``
    ///   past the limit; ``/AIFTransport/TransportError/Code-swift.struct/transportShutDown`` once the proxy is
    ///   shut down), or ``/AIFServices/ServiceError`` when a hop cannot be signed.
    public func send(_ request: HTTPRequest, for resolved: ServiceRegistry.ResolvedService) async throws -> HTTPResponse {
        if isShutDown {
            throw TransportError(.transportShutDown, url: HTTPRequest.redactedURL(request.url), detail: "the proxy is shut down (APIProxy.shutdown(deadline:)); nothing was sent")
        }
        let cancellation = AsyncCancellation()
        let result = await withTaskCancellationHandler {
            await AwaitingTaskExecutor.outcome { executor, completion in
                send(request, for: resolved, executor: executor, cancellation: cancellation, completion: completion)
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Sends one load's request: each hop through the transport — a mock environment's
    /// fixtures, or ``transport`` (through a recorder when the proxy records) — as one exchange
    /// completing on `executor`, redirects followed through the library's one redirect loop with
    /// the hops of a signed service signed afresh,
    /// every response shown to the environment's ``/AIFServices/ServiceRegistry/ResolvedService/clockSkew``.
    ///
    /// - Parameters:
    ///   - request: The load's request.
    ///   - resolved: The service and environment it was made for.
    ///   - executor: Where each hop's outcome is handled and `completion` called.
    ///   - cancellation: Where each hop's transfer is attached, to be cancelled.
    ///   - progress: Told of each hop's bytes on the transport's thread, or `nil`.
    ///   - completion: Called exactly once, on `executor`.
    func send(
        _ request: HTTPRequest, for resolved: ServiceRegistry.ResolvedService, executor: any StepExecutor, cancellation: AsyncCancellation,
        progress: (@Sendable (TransferProgress) -> Void)? = nil, completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        let route = route(for: resolved)
        let maxRedirects = (request.redirects ?? transport.redirects).maxRedirects
        let exchange: RedirectingSend<any Error>.Exchange = { hop, done in
            route.exchange(hop, progress: progress, through: executor, completion: done)
        }
        // The server's clock read, each hop signed and the chain's time counted on the proxy's
        // clock (read now only when the request has a total timeout for a chain to keep to).
        let clock = clock
        let sentAt = request.timeouts?.total == nil ? .zero : clock.now
        let clockSkew = clock.dateObserver(for: resolved.clockSkew)
        // The first hop's answer may come, and the load go on, before `exchange` returns. (An
        // exchange follows no redirect, whatever the request's policy: this loop follows them.)
        cancellation.attach {
            exchange(request) { [generator] result in
                guard let redirect = result.redirectToFollow(maxRedirects: maxRedirects, observer: clockSkew) else {
                    return completion(result.mapError { $0 })
                }
                var prepareHop: RedirectingSend<any Error>.PrepareHop?
                if resolved.isSigned {
                    prepareHop = { @Sendable hop, original throws(any Error) in try generator.signedAgain(hop, after: original, for: resolved, at: clock.date) }
                }
                let hops = RedirectingSend(
                    request: request, timeLeft: Self.timeLeft(of: request, sentAt: sentAt, on: clock), maxRedirects: maxRedirects, prepareHop: prepareHop, mapError: { $0 }, cancellation: cancellation,
                    observer: clockSkew, exchange: exchange)
                hops.follow(redirect, completion: completion)
            }
        }
    }

    /// What is left of `request`'s total timeout, sent at `sentAt` on `clock`; `nil` for none.
    private static func timeLeft(of request: HTTPRequest, sentAt: Duration, on clock: any LoadClock) -> (@Sendable () -> Duration)? {
        guard let total = request.timeouts?.total else { return nil }
        return { sentAt + total - clock.now }
    }

    /// What the loads of `resolved` are sent through: a mock environment's fixtures; else the
    /// proxy's ``transport``, wrapped in a recorder when the proxy records.
    private func route(for resolved: ServiceRegistry.ResolvedService) -> ExchangeRoute {
        if let behavior = resolved.environment.mock { return ExchangeRoute(mockTransport(behavior, resolved.environment)) }
        guard let recorder else { return transportRoute }
        return ExchangeRoute(recordingTransport(recorder, for: resolved))
    }

    @inline(never)
    private func recordingTransport(_ recorder: FixtureTransport.Recorder, for resolved: ServiceRegistry.ResolvedService) -> any HTTPTransport {
        RecordingTransport(base: transport, recorder: recorder, resolved: resolved, logger: logger)
    }

    /// The transport of a mock environment's loads.
    @inline(never)
    private func mockTransport(_ behavior: ServiceEnvironment.MockBehavior, _ environment: ServiceEnvironment) -> FixtureTransport {
        let key = MockTransportKey(behavior: behavior, baseURL: environment.baseURL, apiVersion: environment.apiVersion)
        return mockTransports.withLock { transports in
            if let known = transports[key] { return known }
            let made = FixtureTransport(behavior: behavior, environment: environment)
            transports[key] = made
            return made
        }
    }
}
