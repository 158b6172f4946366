extension HTTPResponse {
    /// Where an ``APIResponse`` came from (``APIResponse/origin``): the network, or the cache and how.
    public enum Origin: Sendable, Hashable {
        /// The server answered the load's request.
        case network
        /// The server answered the load's conditional request `304 Not Modified`: the stored
        /// body, with a new lifetime.
        case revalidated
        /// A fresh cached response; no request was sent.
        case cache(age: Duration)
        /// An expired cached response served at once while a refresh load runs
        /// (``ResponseCache/Policy/staleWhileRevalidate``); the refresh's response names this load in
        /// ``APIResponse/refreshes``.
        case staleCache(age: Duration)
        /// A stored response served because the load failed as `reason` (no network, or a
        /// timeout) — ``ResponseCache/Policy/offlineFallback``.
        case offlineFallback(age: Duration, reason: APIError.Kind)

        /// Whether the response is older than its cache lifetime.
        public var isStale: Bool {
            switch self {
            case .staleCache, .offlineFallback: true
            case .network, .revalidated, .cache: false
            }
        }

        /// How old the cached response is, when it came from the cache without a request.
        public var age: Duration? {
            switch self {
            case .cache(let age), .staleCache(let age), .offlineFallback(let age, _): age
            case .network, .revalidated: nil
            }
        }
    }
}
