extension APIProxy {
    /// Hears the loads of a proxy from start to end: the place metrics, tracing and audit logs
    /// attach to the load engine.
    ///
    /// A proxy asks each of its observers (``APIProxy/init(transport:logger:retryBudget:offlineAfterFailures:recorder:observers:plugins:)``)
    /// for an observation when a load starts, on the caller's thread — so a task-local value such
    /// as the current trace context is the caller's — and tells that observation what happens to
    /// the load: each attempt as it starts and as it ends, retries, credential renewals, cache
    /// answers, and the end, exactly once. An observer reads; a ``LoadPlugin`` changes a load.
    ///
    /// ```swift
    /// struct SlowLoadReporter: APIProxy.LoadObserver {
    ///     func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
    ///         Stopwatch(load: load)
    ///     }
    /// }
    ///
    /// final class Stopwatch: APIProxy.LoadObservation {
    ///     let load: ObservedLoad
    ///     let started = ContinuousClock.now
    ///     init(load: ObservedLoad) { self.load = load }
    ///     func loadDidEnd(_ outcome: ObservedLoad.Outcome) {
    ///         if ContinuousClock.now - started > .seconds(2) { print("slow: \(load.path)") }
    ///     }
    /// }
    /// ```
    ///
    /// The calls come from whichever thread runs the load's step (the transport's thread or the
    /// load executor): keep them short and never block. The optional products
    /// `AIFNetworkingMetrics` (swift-metrics) and `AIFNetworkingTracing`
    /// (swift-distributed-tracing) are observers.
    public protocol LoadObserver: Sendable {
        /// Starts observing a load; `nil` to leave this one alone.
        ///
        /// - Parameter load: What the load is.
        /// - Returns: What hears the rest of the load, or `nil`.
        func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)?

        /// A backend's circuit changed state (``/AIFServices/CircuitBreaker``), as a load of the
        /// proxy found or left it: opened after a run of failures (or a failed probe), half-open
        /// once its cool-down passed, closed when its probes succeeded. Does nothing by default.
        ///
        /// - Parameters:
        ///   - change: From which state to which.
        ///   - service: The service.
        ///   - environment: Its environment: the circuit's backend.
        func circuitDidChange(_ change: CircuitBreaker.Change, service: ServiceName, environment: ServiceEnvironment.Name)
    }
}

extension APIProxy.LoadObserver {
    /// Does nothing.
    public func circuitDidChange(_ change: CircuitBreaker.Change, service: ServiceName, environment: ServiceEnvironment.Name) {}
}

extension APIProxy {
    /// One load as an observer hears it: it reads, it never changes the load (a plugin changes a
    /// request's headers: ``LoadPlugin/attemptWillBeSigned(_:headers:of:)``). Every method has an
    /// empty default.
    public protocol LoadObservation: AnyObject, Sendable {
        /// An attempt is about to be made, signed and sent — before the plugins add their headers.
        ///
        /// - Parameter attempt: The attempt's number, 1 for the first.
        func attemptWillStart(_ attempt: Int)

        /// An attempt ended: the server answered (any status), or the request failed.
        func attemptDidEnd(_ attempt: ObservedLoad.Attempt)

        /// The load is about to wait and send again.
        func loadWillRetry(_ retry: RetryPolicy.Attempt)

        /// The load's credential was refused; it waits for the renewed one and sends once more.
        func loadWillRenewCredential()

        /// The cache answered the load (a fresh or, with stale-while-revalidate, an expired entry)
        /// from `tier`; nothing is sent.
        func cacheDidAnswer(from tier: ResponseCache.Tier)

        /// The load ended, as its caller is told; called exactly once, last.
        func loadDidEnd(_ outcome: ObservedLoad.Outcome)
    }
}

extension APIProxy.LoadObservation {
    /// Does nothing.
    public func attemptWillStart(_ attempt: Int) {}
    /// Does nothing.
    public func attemptDidEnd(_ attempt: ObservedLoad.Attempt) {}
    /// Does nothing.
    public func loadWillRetry(_ retry: RetryPolicy.Attempt) {}
    /// Does nothing.
    public func loadWillRenewCredential() {}
    /// Does nothing.
    public func cacheDidAnswer(from tier: ResponseCache.Tier) {}
    /// Does nothing.
    public func loadDidEnd(_ outcome: ObservedLoad.Outcome) {}
}

/// A load as it starts.
public struct ObservedLoad: Sendable {
    /// The load's ID.
    public var loadID: LoadID
    /// The service it goes to.
    public var service: ServiceName
    /// The service's environment, or `nil` when the service could not be resolved (the load
    /// then fails at once).
    public var environment: ServiceEnvironment.Name?
    /// The manager's path (its path, or what it calls the endpoint).
    public var path: String
    /// The HTTP method.
    public var method: HTTPMethod

    /// Describes a load.
    public init(loadID: LoadID, service: ServiceName, environment: ServiceEnvironment.Name?, path: String, method: HTTPMethod) {
        self.loadID = loadID
        self.service = service
        self.environment = environment
        self.path = path
        self.method = method
    }
}

extension ObservedLoad {
    /// One attempt of a load, as it ended.
    public struct Attempt: Sendable {
        /// 1 for the first attempt.
        public var number: Int
        /// The request as sent: signed, with its credential — an observer that records it must
        /// leave out what is secret (``/AIFTransport/HTTPRequest/url``'s query may carry a key or a signature,
        /// and its headers the `Authorization`).
        public var request: HTTPRequest
        /// The answer (whatever its status), or why there was none.
        public var result: Result<HTTPResponse, any Error>

        /// Describes an attempt.
        public init(number: Int, request: HTTPRequest, result: Result<HTTPResponse, any Error>) {
            self.number = number
            self.request = request
            self.result = result
        }

        /// The request's URL without its query, fragment or user information — what an observer
        /// may record (the query may carry a key or a signature).
        public var redactedURL: String {
            ResponseCache.StoredResponse.storableURL(request.url)
        }

        /// How many times the transport sent the request again on a fresh connection in this
        /// attempt, because a connection it reused had closed before answering (only a request
        /// safe to repeat): the server may have seen the attempt `1 + resends` times.
        public var resends: Int {
            switch result {
            case .success(let response): response.metrics.resends
            case .failure(let error): (error as? TransportError)?.resends ?? 0
            }
        }

        /// The transfer's timings and byte counts, when the server answered.
        public var metrics: HTTPResponse.Metrics? {
            if case .success(let response) = result { response.metrics } else { nil }
        }
    }

    /// How a load ended.
    public struct Outcome: Sendable {
        /// The response's status, when there was a response (a cached one too).
        public var statusCode: Int?
        /// Where the response came from, when the load succeeded.
        public var origin: HTTPResponse.Origin?
        /// Why the load failed, when it did.
        public var error: APIError?
        /// The requests sent (0 when the cache answered or the load failed before sending), the
        /// transport's resends on fresh connections included.
        public var attempts: Int

        /// Describes an outcome.
        public init(statusCode: Int? = nil, origin: HTTPResponse.Origin? = nil, error: APIError? = nil, attempts: Int = 0) {
            self.statusCode = statusCode
            self.origin = origin
            self.error = error
            self.attempts = attempts
        }

        /// A load's result, as its caller is told it.
        init<Content>(_ result: Result<APIResponse<Content>, APIError>) {
            switch result {
            case .success(let response):
                let sent: Bool = switch response.origin {
                case .cache, .staleCache: false
                case .network, .revalidated, .offlineFallback: true
                }
                self.init(statusCode: response.statusCode, origin: response.origin, attempts: sent ? response.attempts : 0)
            case .failure(let error):
                self.init(statusCode: error.statusCode, error: error, attempts: error.attempts)
            }
        }

        /// Whether the load succeeded.
        public var succeeded: Bool { error == nil }

        /// A short name for how the load ended, for a metric's label: `success`, or the
        /// ``APIError/Kind/identifier`` (`http_status`, `timeout`, `cancelled`, …).
        public var outcomeClass: String {
            error?.kind.identifier ?? "success"
        }
    }
}
