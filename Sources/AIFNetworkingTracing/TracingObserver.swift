// The product's one dependency, swift-distributed-tracing, comes only with the package's `Tracing` trait, so
// that packages using the core library alone never resolve it:
//     .package(url: "…/AIFNetworking.git", from: "…", traits: ["Tracing"])
#if Tracing
import AIFNetworking
@_spi(CrossModule) import AIFTransport
import Foundation
import Tracing

/// Traces every load of the proxies it observes with swift-distributed-tracing: a span for the
/// load, and under it a client span for each request sent; and, as one of the proxy's plugins
/// too, injects the trace context into that request before it is signed (an observer reads, a
/// plugin changes a request).
///
/// ```swift
/// InstrumentationSystem.bootstrap(tracer)   // the application's choice (swift-otel, …), once
/// let tracing = TracingObserver()
/// let proxy = APIProxy(observers: [tracing], plugins: [tracing])
/// ```
///
/// The tracer is the one in effect where the load starts (`InstrumentationSystem.tracer`: a
/// `withTracer` scope's, else the bootstrapped one); with none, the observer does nothing. The
/// load's span is a child of the caller's current `ServiceContext`, so a load made while
/// handling a traced request joins its trace.
///
/// **The load span** (`internal`), named `GET goods/list` — the HTTP method and the manager's
/// path — carries `aif.service`, `aif.environment`, `aif.method_name`, `aif.request_id`,
/// `http.request.method`, and at the end `aif.attempts`, `aif.outcome`, the cache tier that
/// answered (`aif.cache.tier`), and the error, if any.
///
/// **Each attempt's span** (`client`), named like the load's, carries OpenTelemetry's HTTP
/// client attributes: `http.request.method`, `url.full` (without its query, which may carry a
/// key or a signature), `url.scheme`, `server.address`, `server.port`,
/// `http.request.resend_count` (from the second attempt on), `aif.resends` (when the transport
/// sent the attempt again on a fresh connection, a reused one having closed before answering),
/// `http.response.status_code`,
/// `error.type` (the status for 4xx and 5xx, else the transport failure's code), and the
/// error recorded on the span. Retries and credential renewals are events on the load span.
///
/// **Propagation.** Among the proxy's plugins, the observer injects the attempt's context into
/// the request's headers (the tracer decides the headers: W3C `traceparent` and `tracestate`
/// with OpenTelemetry's) before the request is signed, so a signing scheme that covers headers
/// covers them, and each attempt sends its own span as the parent. Among the observers only, it
/// traces without propagating.
public final class TracingObserver: APIProxy.LoadObserver, LoadPlugin {
    private let tracer: (any Tracer)?
    /// The loads being traced, by ID: the plugin finds the attempt's span here.
    private let traces = Locked<[LoadID: LoadTrace]>([:])

    /// Creates the observer.
    ///
    /// - Parameter tracer: The tracer to use; by default the one in effect where each load
    ///   starts (`InstrumentationSystem.tracer`).
    public init(tracer: (any Tracer)? = nil) {
        self.tracer = tracer
    }

    /// Starts the load's span, unless no tracer is in effect.
    public func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
        let tracer = tracer ?? InstrumentationSystem.tracer
        if tracer is NoOpTracer { return nil }
        let id = load.loadID
        let trace = LoadTrace(load, tracer: tracer, parent: ServiceContext.current ?? .topLevel) { [weak self] in
            self?.traces.withLock { _ = $0.removeValue(forKey: id) }
        }
        traces.withLock { $0[id] = trace }
        return trace
    }

    /// Injects the context of the load's attempt under way into its request's headers, before
    /// they are signed.
    public func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad) {
        traces.withLock { $0[load.loadID] }?.injectAttempt(into: &headers)
    }
}

/// One load's spans.
private final class LoadTrace: APIProxy.LoadObservation {
    private let tracer: any Tracer
    private let loadSpan: any Span
    private let name: String
    /// The span of the attempt under way (attempts of one load never overlap).
    private let attemptSpan = Locked<(any Span)?>(nil)

    /// Told once, as the load ends: the observer forgets the load.
    private let ended: @Sendable () -> Void

    init(_ load: ObservedLoad, tracer: any Tracer, parent: ServiceContext, ended: @escaping @Sendable () -> Void) {
        self.tracer = tracer
        self.ended = ended
        name = "\(load.method.rawValue) \(load.path)"
        loadSpan = tracer.startSpan(name, context: parent, ofKind: .internal)
        loadSpan.updateAttributes { attributes in
            attributes["aif.service"] = load.service.rawValue
            if let environment = load.environment { attributes["aif.environment"] = environment.rawValue }
            attributes["aif.method_name"] = load.path
            attributes["aif.request_id"] = Int(load.loadID.rawValue)
            attributes["http.request.method"] = load.method.rawValue
        }
    }

    func attemptWillStart(_ attempt: Int) {
        let span = tracer.startSpan(name, context: loadSpan.context, ofKind: .client)
        if attempt > 1 { span.attributes["http.request.resend_count"] = attempt - 1 }
        // A span left by an attempt that never ended (its request could not be made) ends now.
        let unfinished = attemptSpan.withLock { held in
            defer { held = span }
            return held
        }
        unfinished?.end()
    }

    /// Writes the attempt's span's context into its request's headers.
    func injectAttempt(into headers: inout HTTPHeaders) {
        guard let span = attemptSpan.withLock({ $0 }) else { return }
        tracer.inject(span.context, into: &headers, using: HeaderInjector())
    }

    func attemptDidEnd(_ attempt: ObservedLoad.Attempt) {
        guard let span = attemptSpan.withLock({ $0.take() }) else { return }
        let url = attempt.request.url
        span.updateAttributes { attributes in
            attributes["url.full"] = attempt.redactedURL
            if let scheme = url.scheme { attributes["url.scheme"] = scheme }
            if let host = url.host { attributes["server.address"] = host }
            if let port = url.port ?? Self.defaultPort(url.scheme) { attributes["server.port"] = port }
        }
        if attempt.resends > 0 { span.attributes["aif.resends"] = attempt.resends }
        switch attempt.result {
        case .success(let response):
            span.attributes["http.response.status_code"] = response.statusCode
            if response.statusCode >= 400 {
                span.attributes["error.type"] = String(response.statusCode)
                span.setStatus(SpanStatus(code: .error))
            }
        case .failure(let error):
            span.attributes["error.type"] = Self.errorType(error)
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: "\(error)"))
        }
        span.end()
    }

    func loadWillRetry(_ retry: RetryPolicy.Attempt) {
        var attributes = SpanAttributes()
        attributes["aif.retry.attempt"] = retry.number
        attributes["aif.retry.delay_ms"] = Int(retry.delay / .milliseconds(1))
        attributes["aif.retry.reason"] = "\(retry.reason)"
        loadSpan.addEvent(SpanEvent(name: "retry", attributes: attributes))
    }

    func loadWillRenewCredential() {
        loadSpan.addEvent(SpanEvent(name: "credential_renewal"))
    }

    func cacheDidAnswer(from tier: ResponseCache.Tier) {
        loadSpan.attributes["aif.cache.tier"] = tier == .memory ? "memory" : "disk"
    }

    func loadDidEnd(_ outcome: ObservedLoad.Outcome) {
        attemptSpan.withLock { $0.take() }?.end()
        loadSpan.updateAttributes { attributes in
            attributes["aif.attempts"] = outcome.attempts
            attributes["aif.outcome"] = outcome.outcomeClass
            if let status = outcome.statusCode { attributes["http.response.status_code"] = status }
        }
        if let error = outcome.error {
            loadSpan.attributes["error.type"] = error.kind.identifier
            loadSpan.recordError(error)
            loadSpan.setStatus(SpanStatus(code: .error, message: error.message))
        }
        loadSpan.end()
        ended()
    }

    private static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme {
        case "https": 443
        case "http": 80
        default: nil
        }
    }

    /// What failed, in a word: the transport error's code in snake case (`connect_timeout`),
    /// or the error's type.
    private static func errorType(_ error: any Error) -> String {
        if let transport = error as? TransportError { return "\(transport.code)".replacingOccurrences(of: " ", with: "_").lowercased() }
        return String(describing: type(of: error))
    }
}

/// Writes a tracer's propagation fields into a request's headers.
private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.set(name: key, value: value)
    }
}

#else
#warning("AIFNetworkingTracing is empty: enable the AIFNetworking package's \"Tracing\" trait (traits: [\"Tracing\"]) to build it")
#endif
