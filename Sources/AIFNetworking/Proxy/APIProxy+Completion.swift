extension APIProxy {
    /// ``send(_:for:id:coalescingKey:)`` for a load driven by completion handlers instead of a
    /// task (the delegate face): sends `request` through the redirect loop (each hop of a
    /// signed request signed afresh), logs, and calls `completion` exactly once, through
    /// `runner`. No coalescing: such loads take the task path.
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
        let started = ContinuousClock.now
        logSending(request, id: id)
        let send = redirectingSend(request, for: resolved, runner: runner)
        cancellation.attach(send)
        send.start { [self] result in
            switch result {
            case .success(let response): logReceiving(response, for: request, id: id, started: started)
            case .failure(let error): logFailure(error, for: request, id: id, started: started)
            }
            completion(result)
        }
    }
}
