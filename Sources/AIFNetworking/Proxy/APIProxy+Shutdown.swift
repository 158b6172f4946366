import Foundation
import Logging
import Synchronization
@_spi(CrossModule) import AIFTransport

extension APIProxy {
    /// Whether ``shutdown(deadline:)`` has been called: from then on every new load is refused.
    public var isShutDown: Bool {
        refusesLoads.load(ordering: .relaxed)
    }

    /// Shuts the proxy down gracefully, as a server does when it is told to stop (SIGTERM on
    /// a deploy):
    ///
    /// 1. From the call on, every new load is refused: it ends at once with
    ///    ``APIError/Kind-swift.struct/shutDown`` and sends nothing — its delegate is told, its
    ///    awaiting caller gets the error.
    /// 2. The loads in flight go on, retries and waits included, until they end or `deadline`
    ///    has passed.
    /// 3. Those still in flight then are cancelled, each ending once with
    ///    ``APIError/Kind-swift.struct/shutDown`` (unlike a cancellation its caller asked for,
    ///    its delegate hears of it).
    /// 4. The ``transport`` is shut down (``/AIFTransport/HTTPTransport/shutdown()``: its
    ///    connections close; ``/AIFTransport/CurlTransport/shared`` stays up until the process
    ///    ends), and every response cache's persistent store keeps what it was given
    ///    (``ResponseCache/PersistentStore/flush()``).
    ///
    /// It returns when all of that is done. A second call, or one made while it runs, waits for
    /// the same shutdown; cancelling the calling task cuts the wait for the loads short (they
    /// are cancelled at once). The `AIFNetworkingLifecycle` product calls it when a
    /// swift-service-lifecycle `ServiceGroup` shuts down gracefully.
    ///
    /// ```swift
    /// await APIProxy.shared.shutdown(deadline: .seconds(20))
    /// ```
    ///
    /// - Parameter deadline: How long the loads in flight may take to end, on the proxy's
    ///   clock; 10 seconds by default.
    public func shutdown(deadline: Duration = .seconds(10)) async {
        let shutdown = table.withLock { table in
            if let running = table.shutdown { return running }
            // Under the table's lock: a load entered after this sees the refusal.
            refusesLoads.store(true, ordering: .relaxed)
            let running = Task { await self.shutDown(within: deadline) }
            table.shutdown = running
            return running
        }
        await withTaskCancellationHandler {
            await shutdown.value
        } onCancel: {
            cutShutdownShort()
        }
    }

    /// The error of a load refused because the proxy is shut down.
    func shutDownRefusal(_ id: LoadID, service: ServiceName, path: String) -> APIError {
        APIError(.shutDown, loadID: id, service: service, path: path, message: "the proxy is shut down (APIProxy.shutdown(deadline:)); nothing was sent")
    }

    private func shutDown(within deadline: Duration) async {
        let inFlight = table.withLock { $0.entries.count }
        logger.notice("shutting down: new loads are refused; \(Self.loads(inFlight)) in flight \(inFlight == 1 ? "has" : "have") \(RetryPolicy.Reason.seconds(deadline)) s to end")
        if await !noLoadsInFlight(before: deadline) {
            let stragglers = table.withLock { Array($0.entries.values) }
            logger.notice("shutdown deadline passed: cancelling \(Self.loads(stragglers.count)) still in flight")
            // A composite load ends as its members do (it does not hear this); one still
            // running after a short wind-down is cancelled as a whole.
            for load in stragglers { load.cancel(.shutdown) }
            if await !noLoadsInFlight(before: .seconds(1)) { cancelAll() }
        }
        transport.shutdown()
        ResponseCache.flushPersistentStores()
        logger.notice("shut down")
    }

    /// `1 load`, `3 loads`.
    private static func loads(_ count: Int) -> String {
        count == 1 ? "1 load" : "\(count) loads"
    }

    /// Returns `true` once no load is in flight; `false` when `limit` passes first, on the
    /// proxy's clock, or the shutdown is cut short.
    private func noLoadsInFlight(before limit: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let held = Locked<CheckedContinuation<Bool, Never>?>(continuation)
            let answer: @Sendable (Bool) -> Void = { value in
                held.withLock { held in
                    defer { held = nil }
                    return held
                }?.resume(returning: value)
            }
            let now = table.withLock { table -> Bool? in
                if table.isShutdownCutShort { return false }
                if table.entries.isEmpty { return true }
                table.whenEmpty.append(answer)
                return nil
            }
            if let now { return answer(now) }
            clock.schedule(after: limit) { answer(false) }
        }
    }

    /// Calls `tell` once no load is in flight — at once if none is, else as the last one leaves
    /// the table (or a shutdown is cut short). A test's way to know that every load has ended,
    /// and every delivery been decided.
    func whenNoLoadsInFlight(_ tell: @escaping @Sendable () -> Void) {
        let now = table.withLock { table -> Bool in
            if table.entries.isEmpty { return true }
            table.whenEmpty.append { _ in tell() }
            return false
        }
        if now { tell() }
    }

    /// Stops waiting for the loads in flight: a waiting shutdown cancels them now.
    private func cutShutdownShort() {
        let waiting = table.withLock { table in
            table.isShutdownCutShort = true
            defer { table.whenEmpty = [] }
            return table.whenEmpty
        }
        for answer in waiting { answer(false) }
    }
}
