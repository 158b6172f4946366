import Foundation

/// What a load that caches carries from its start to its end: where its response is filed,
/// the endpoint's policy, and the expired entry found when it started (for a conditional
/// request and a fallback). Not nested in the generic manager, so its type is known at compile
/// time.
final class CacheUse: Sendable {
    let cache: ResponseCache
    let key: ResponseCache.Key
    let policy: ResponseCache.Policy
    /// The entry found expired when the load started, if any.
    let stored: ResponseCache.Entry?
    /// The load whose stale answer this load refreshes, if it is a refresh.
    let refreshes: LoadID?
    /// The load's clock (its proxy's), which the cache's lifetimes are measured on.
    let clock: any LoadClock

    init(cache: ResponseCache, key: ResponseCache.Key, policy: ResponseCache.Policy, stored: ResponseCache.Entry?, refreshes: LoadID?, clock: any LoadClock) {
        self.cache = cache
        self.key = key
        self.policy = policy
        self.stored = stored
        self.refreshes = refreshes
        self.clock = clock
    }

    /// The time now, for the cache (see ``ResponseCache/date(on:)``).
    var now: Date { cache.date(on: clock) }

    /// Stores the load's response, decoded into `content`, dated now.
    func store(_ response: HTTPResponse, request: HTTPRequest, content: any Sendable) {
        cache.store(response, request: request, content: content, for: key, policy: policy, at: now)
    }

    /// `If-None-Match` and `If-Modified-Since` from the stored entry's validators, when the
    /// policy revalidates.
    var conditionalHeaders: [(name: String, value: String)] {
        guard policy.revalidationWindow != nil, let headers = stored?.response.headers else { return [] }
        var conditions: [(name: String, value: String)] = []
        if let tag = headers["ETag"] { conditions.append(("If-None-Match", tag)) }
        if let modified = headers["Last-Modified"] { conditions.append(("If-Modified-Since", modified)) }
        return conditions
    }

    /// The stored response a `304 Not Modified` answer confirms, brought up to date; `nil`
    /// when the answer is not one, or the load asked nothing conditionally.
    func revalidated(by response: HTTPResponse) -> HTTPResponse? {
        guard response.statusCode == 304, let stored, !conditionalHeaders.isEmpty else { return nil }
        return cache.revalidated(stored, by: response)
    }

    /// The entry to answer a failed load with, when the policy falls back and the failure is a
    /// missing network or a timeout, with its age; never for a refresh (its stale answer was
    /// just delivered).
    func fallback(for error: APIError) -> (entry: ResponseCache.Entry, age: Duration)? {
        guard let limit = policy.offlineFallback, refreshes == nil, error.kind == .noNetwork || error.kind == .timeout else { return nil }
        let now = now
        guard let entry = cache.entry(for: key, counting: false, at: now) ?? stored else { return nil }
        let age = entry.age(at: now)
        return age <= limit ? (entry, age) : nil
    }
}
