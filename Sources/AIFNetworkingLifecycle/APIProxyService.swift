// The product's one dependency, swift-service-lifecycle, comes only with the package's
// `Lifecycle` trait, so that packages using the core library alone never resolve it:
//     .package(url: "…/AIFNetworking.git", from: "…", traits: ["Lifecycle"])
#if Lifecycle
import AIFNetworking
import ServiceLifecycle

/// A proxy as a swift-service-lifecycle `Service`: it runs until the `ServiceGroup` shuts down
/// gracefully (SIGTERM, when the group is configured for it), then shuts the proxy down —
/// new loads refused, the loads in flight given `shutdownDeadline` to end, the rest ended
/// with ``/AIFNetworking/APIError/Kind-swift.struct/shutDown``, the transport stopped and the
/// caches' stores flushed (``/AIFNetworking/APIProxy/shutdown(deadline:)``). If the group
/// cancels it instead, the loads in flight are ended at once.
///
/// A group shuts its services down in the reverse of their order, each once the one after it
/// has returned. Listed after the server whose handlers use it, the proxy goes first: from the
/// signal on, the loads the handlers start are refused (answer them with a 503), those under
/// way have the deadline to end, and the server then finishes requests whose loads have all
/// ended. Listed before it (as Hummingbird's `addServices` places services), the server first
/// finishes its requests, however long their loads take — bound that with the group's
/// `maximumGracefulShutdownDuration`, past which the group cancels the proxy's service, which
/// ends the loads at once.
///
/// ```swift
/// let group = ServiceGroup(
///     services: [application, APIProxyService(shutdownDeadline: .seconds(20))],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger)
/// try await group.run()
/// ```
public struct APIProxyService: ServiceLifecycle.Service {
    /// The proxy it shuts down.
    public let proxy: APIProxy
    /// How long the loads in flight may take to end once the shutdown begins.
    public let shutdownDeadline: Duration

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - proxy: The proxy to shut down; ``/AIFNetworking/APIProxy/shared`` by default.
    ///   - shutdownDeadline: How long the loads in flight may take to end; 10 seconds by default.
    public init(proxy: APIProxy = .shared, shutdownDeadline: Duration = .seconds(10)) {
        self.proxy = proxy
        self.shutdownDeadline = shutdownDeadline
    }

    /// Waits for the group's graceful shutdown (or its cancellation), then shuts the proxy
    /// down; returns once it is.
    public func run() async throws {
        // A cancellation (thrown here) cuts the shutdown's wait for the loads short: the task
        // is cancelled, and the shutdown hears it.
        try? await gracefulShutdown()
        await proxy.shutdown(deadline: shutdownDeadline)
    }
}
#endif
