// The product's one dependency, swift-metrics, comes only with the package's `Metrics` trait, so
// that packages using the core library alone never resolve it:
//     .package(url: "…/AIFNetworking.git", from: "…", traits: ["Metrics"])
#if Metrics
import AIFNetworking
import CoreMetrics
import Metrics
@_spi(CrossModule) import AIFTransport

/// Reports every load of the proxies it observes to swift-metrics: counters, timers and an
/// in-flight meter, labelled by service, environment and path (and how the load ended).
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())   // the application's choice, once
/// let proxy = APIProxy(observers: [MetricsObserver()])
/// ```
///
/// The library never bootstraps a metrics backend; until the application does, swift-metrics
/// drops everything. The metrics, each with the dimensions `service`, `environment` and
/// `method` (the manager's path):
///
/// | Label | Kind | Also by | What |
/// |---|---|---|---|
/// | `aif_loads_started_total` | counter | | loads started |
/// | `aif_loads_ended_total` | counter | `outcome` | loads ended: `success`, or the ``APIError/Kind/identifier`` |
/// | `aif_load_duration` | timer | `outcome` | from start to end, waits and retries included |
/// | `aif_loads_in_flight` | meter | | loads started and not yet ended |
/// | `aif_attempts_total` | counter | `status` | requests sent: `2xx` … `5xx`, or `error` when none came back (a request the transport sent again on a fresh connection counts once more, as `error`: its first send's answer was lost) |
/// | `aif_attempt_duration` | timer | | each request, as libcurl measured it |
/// | `aif_attempt_phase_duration` | timer | `phase` | `dns`, `connect` and `tls`: each phase's own length; `first_byte`: from the start to the first byte of the answer |
/// | `aif_bytes_sent_total`, `aif_bytes_received_total` | counter | | header and body bytes on the wire |
/// | `aif_connections_total` | counter | `state` | requests on a new connection (`opened`) or a kept one (`reused`) |
/// | `aif_retries_total` | counter | | retries started |
/// | `aif_credential_refreshes_total` | counter | | loads that waited for a renewed credential |
/// | `aif_cache_hits_total` | counter | `tier` | loads the cache answered: `memory` or `disk` |
/// | `aif_circuit_state` | gauge | | the backend's circuit (service and environment; no `method`): 0 closed, 1 half-open, 2 open |
/// | `aif_circuit_changes_total` | counter | `state` | the circuit's changes, by the state entered: `open`, `half-open`, `closed` |
///
/// A phase that did not happen (no TLS; a reused connection has no DNS or connect) is not
/// recorded. The metric objects are made once for each service, environment and path
/// and kept, so a load costs a dictionary lookup, not a round of factory calls. With no backend
/// bootstrapped when the observer is made (swift-metrics' no-op factory), it leaves every load
/// alone: the metrics would go nowhere, and could not go anywhere later either, as swift-metrics
/// hands each metric its backend when it is made.
public struct MetricsObserver: APIProxy.LoadObserver {
    /// `nil` when the factory is swift-metrics' no-op one: every load is then left alone.
    private let registry: MetricsRegistry?

    /// Creates the observer.
    ///
    /// - Parameters:
    ///   - prefix: What each label starts with, before `_`; `aif` by default.
    ///   - factory: Where the metrics go; by default the one the application bootstrapped
    ///     (`MetricsSystem.factory`), read when the observer is made. Pass one to keep tests
    ///     apart from the process's backend.
    public init(prefix: String = "aif", factory: (any MetricsFactory)? = nil) {
        let factory = factory ?? MetricsSystem.factory
        registry = factory is NOOPMetricsHandler ? nil : MetricsRegistry(prefix: prefix, factory: factory)
    }

    /// Starts counting a load (unless no backend was bootstrapped).
    public func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
        guard let registry else { return nil }
        let metrics = registry.metrics(service: load.service.rawValue, environment: load.environment?.rawValue ?? "", method: load.path)
        metrics.started.increment()
        metrics.inFlight.increment()
        return LoadMetricsObservation(metrics: metrics)
    }

    /// Sets the backend's circuit gauge and counts the change (unless no backend was
    /// bootstrapped).
    public func circuitDidChange(_ change: CircuitBreaker.Change, service: ServiceName, environment: ServiceEnvironment.Name) {
        registry?.circuitChanged(change, service: service.rawValue, environment: environment.rawValue)
    }
}

/// What one load reports, from start to end.
private final class LoadMetricsObservation: APIProxy.LoadObservation {
    private let metrics: EndpointMetrics
    private let started = ContinuousClock.now

    init(metrics: EndpointMetrics) {
        self.metrics = metrics
    }

    func attemptDidEnd(_ attempt: ObservedLoad.Attempt) {
        if attempt.resends > 0 { metrics.attempts(status: nil).increment(by: attempt.resends) }
        guard case .success(let response) = attempt.result else {
            metrics.attempts(status: nil).increment()
            return
        }
        metrics.attempts(status: response.statusCode).increment()
        let timings = response.metrics
        metrics.attemptDuration.record(duration: timings.total)
        if timings.nameLookup > .zero { metrics.phase(.dns).record(duration: timings.nameLookup) }
        if timings.connect > timings.nameLookup { metrics.phase(.connect).record(duration: timings.connect - timings.nameLookup) }
        if timings.tlsHandshake > timings.connect { metrics.phase(.tls).record(duration: timings.tlsHandshake - timings.connect) }
        if timings.timeToFirstByte > .zero { metrics.phase(.firstByte).record(duration: timings.timeToFirstByte) }
        metrics.bytesSent.increment(by: timings.bytesSent)
        metrics.bytesReceived.increment(by: timings.bytesReceived)
        (timings.reusedConnection ? metrics.connectionsReused : metrics.connectionsOpened).increment()
    }

    func loadWillRetry(_ retry: RetryPolicy.Attempt) {
        metrics.retries.increment()
    }

    func loadWillRenewCredential() {
        metrics.credentialRefreshes.increment()
    }

    func cacheDidAnswer(from tier: ResponseCache.Tier) {
        switch tier {
        case .memory: metrics.memoryCacheHits.increment()
        case .persistent: metrics.diskCacheHits.increment()
        }
    }

    func loadDidEnd(_ outcome: ObservedLoad.Outcome) {
        metrics.inFlight.decrement()
        let ended = metrics.ended(outcome: outcome.outcomeClass)
        ended.count.increment()
        ended.duration.record(duration: ContinuousClock.now - started)
    }
}

/// The metric objects of every endpoint seen, made on first use.
private final class MetricsRegistry: Sendable {
    private struct Key: Hashable {
        let service: String
        let environment: String
        let method: String
    }

    private let prefix: String
    private let factory: any MetricsFactory
    private let endpoints = Locked<[Key: EndpointMetrics]>([:])

    init(prefix: String, factory: any MetricsFactory) {
        self.prefix = prefix
        self.factory = factory
    }

    /// Records a circuit's change: rare, so its metric objects are made each time.
    func circuitChanged(_ change: CircuitBreaker.Change, service: String, environment: String) {
        let dimensions = [("service", service), ("environment", environment)]
        let level = switch change.to {
        case .closed: 0
        case .halfOpen: 1
        case .open: 2
        }
        Gauge(label: "\(prefix)_circuit_state", dimensions: dimensions, factory: factory).record(level)
        Counter(label: "\(prefix)_circuit_changes_total", dimensions: dimensions + [("state", change.to.description)], factory: factory).increment()
    }

    func metrics(service: String, environment: String, method: String) -> EndpointMetrics {
        let key = Key(service: service, environment: environment, method: method)
        if let known = endpoints.withLock({ $0[key] }) { return known }
        // Made outside the lock (the factory may take locks of its own); a rare race makes two,
        // and the first one filed is kept.
        let made = EndpointMetrics(
            prefix: prefix, dimensions: [("service", service), ("environment", environment), ("method", method)], factory: factory)
        return endpoints.withLock { endpoints in
            if let known = endpoints[key] { return known }
            endpoints[key] = made
            return made
        }
    }
}

/// One endpoint's metrics (one service, environment and path).
private final class EndpointMetrics: Sendable {
    /// The phases of a transfer timed apart; the raw value indexes ``phases``.
    enum Phase: Int, CaseIterable {
        case dns, connect, tls, firstByte

        var label: String {
            switch self {
            case .dns: "dns"
            case .connect: "connect"
            case .tls: "tls"
            case .firstByte: "first_byte"
            }
        }
    }

    let started: Counter
    let inFlight: Meter
    let attemptDuration: Timer
    let bytesSent: Counter
    let bytesReceived: Counter
    let connectionsOpened: Counter
    let connectionsReused: Counter
    let retries: Counter
    let credentialRefreshes: Counter
    let memoryCacheHits: Counter
    let diskCacheHits: Counter
    private let phases: [Timer]
    /// By status class: `1xx` … `5xx`, then `error` (no answer, or a status outside 100–599).
    private let attemptsByStatus: [Counter]
    private let endedByOutcome = Locked<[String: (count: Counter, duration: Timer)]>([:])
    private let prefix: String
    private let dimensions: [(String, String)]
    private let factory: any MetricsFactory

    init(prefix: String, dimensions: [(String, String)], factory: any MetricsFactory) {
        self.prefix = prefix
        self.dimensions = dimensions
        self.factory = factory
        func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
            Counter(label: "\(prefix)_\(name)", dimensions: dimensions + extra, factory: factory)
        }
        func timer(_ name: String, _ extra: [(String, String)] = []) -> Timer {
            Timer(label: "\(prefix)_\(name)", dimensions: dimensions + extra, factory: factory)
        }
        started = counter("loads_started_total")
        inFlight = Meter(label: "\(prefix)_loads_in_flight", dimensions: dimensions, factory: factory)
        attemptDuration = timer("attempt_duration")
        bytesSent = counter("bytes_sent_total")
        bytesReceived = counter("bytes_received_total")
        connectionsOpened = counter("connections_total", [("state", "opened")])
        connectionsReused = counter("connections_total", [("state", "reused")])
        retries = counter("retries_total")
        credentialRefreshes = counter("credential_refreshes_total")
        memoryCacheHits = counter("cache_hits_total", [("tier", "memory")])
        diskCacheHits = counter("cache_hits_total", [("tier", "disk")])
        phases = Phase.allCases.map { timer("attempt_phase_duration", [("phase", $0.label)]) }
        attemptsByStatus = ["1xx", "2xx", "3xx", "4xx", "5xx", "error"].map { counter("attempts_total", [("status", $0)]) }
    }

    /// The attempts counter for an answer with `status`, or for no answer (`nil`).
    func attempts(status: Int?) -> Counter {
        guard let status, (100..<600).contains(status) else { return attemptsByStatus[5] }
        return attemptsByStatus[status / 100 - 1]
    }

    func phase(_ phase: Phase) -> Timer {
        phases[phase.rawValue]
    }

    /// The ended counter and duration timer for `outcome`, made on first use.
    func ended(outcome: String) -> (count: Counter, duration: Timer) {
        if let known = endedByOutcome.withLock({ $0[outcome] }) { return known }
        let extra = [("outcome", outcome)]
        let made = (
            Counter(label: "\(prefix)_loads_ended_total", dimensions: dimensions + extra, factory: factory),
            Timer(label: "\(prefix)_load_duration", dimensions: dimensions + extra, factory: factory)
        )
        return endedByOutcome.withLock { known in
            if let first = known[outcome] { return first }
            known[outcome] = made
            return made
        }
    }
}

#else
#warning("AIFNetworkingMetrics is empty: enable the AIFNetworking package's \"Metrics\" trait (traits: [\"Metrics\"]) to build it")
#endif
