import Logging
extension APIProxy {
    /// Sends a request made for a load: through the redirect loop (each
    /// hop of a signed request signed afresh), sharing one transfer with identical loads in
    /// flight when `coalescingKey` is set, logging the request and its outcome, showing the
    /// outcome to the proxy's ``connectivity``, and calling
    /// `completion` exactly once, on `executor`.
    ///
    /// - Parameters:
    ///   - request: A request made for the load.
    ///   - resolved: The service and environment it was made for.
    ///   - id: The load's ID, for the log and the coalescer.
    ///   - coalescingKey: Identical loads' shared key, or `nil` to send alone.
    ///   - cancellation: Cancels the load's part: its transfer (each hop's in turn), or its
    ///     place among a coalesced transfer's waiters.
    ///   - executor: Where `completion` (and the signing of redirect hops) runs.
    ///   - progress: Told of each hop's bytes on the transport's thread, or `nil`.
    ///   - completion: Gets the final response, or the transport's or signing's error.
    func send(
        _ request: HTTPRequest, for resolved: ServiceRegistry.ResolvedService, id: LoadID, coalescingKey: String?, cancellation: AsyncCancellation,
        executor: any StepExecutor, progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {
        // The time is read for the log's durations only, when it writes them.
        let started = logger.logLevel <= .info ? clock.now : .zero
        logSending(request, id: id)
        let logged: @Sendable (Result<HTTPResponse, any Error>) -> Void = { [self] result in
            switch result {
            case .success(let response): logReceiving(response, for: request, id: id, started: started)
            case .failure(let error): logFailure(error, for: request, id: id, started: started)
            }
            connectivityMonitor.record(result)
            completion(result)
        }
        guard let coalescingKey else {
            // The load's own cancellation takes each hop's transfer.
            send(request, for: resolved, executor: executor, cancellation: cancellation, progress: progress, completion: logged)
            return
        }
        // The flight may land, and the load go on, before `join` returns. The flight lands on
        // the executor of the load that started it; each load aboard goes on on its own.
        cancellation.attach {
            coalescer.join(coalescingKey, id: id, completion: { result in executor.run { logged(result) } }) { [self] landed in
                // The flight's transfers, cancelled when every load aboard has left.
                let flight = AsyncCancellation()
                send(request, for: resolved, executor: executor, cancellation: flight, completion: landed)
                return flight
            }
        }
    }
}
