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

extension APIManager {
    /// Looks the load up in the cache when the endpoint has a ``Endpoint/cachePolicy``: returns the
    /// stage that answers it (a fresh entry, or a stale one to be refreshed), or what the load
    /// carries to use the cache when it is sent. A refresh load (`refreshing` set) is never
    /// answered from the cache.
    @inline(never)
    func cacheLookup(
        _ policy: ResponseCache.Policy, id: LoadID, path: String, parameters: Parameters, resolved: ServiceRegistry.ResolvedService, method: HTTPMethod,
        refreshing: LoadID?, observation: (any APIProxy.LoadObservation)?
    ) -> (answer: Stage?, use: CacheUse) {
        let key = ResponseCache.Key(
            service: serviceName, environment: resolved.environmentName, method: method, path: path, parameters: parameters,
            version: "\(resolved.service.cacheVersion).\(policy.version)", schema: SchemaFingerprint.of(Content.self))
        let now = cache.date(on: proxy.clock)
        let entry = cache.entry(for: key, counting: refreshing == nil, at: now)
        if let entry, refreshing == nil {
            let age = entry.age(at: now)
            if entry.isFresh(at: now), let response = cachedResponse(entry, key: key, origin: .cache(age: age), id: id, parameters: parameters, resolved: resolved) {
                proxy.logCacheHit(id, path: key.path, service: key.service, bytes: entry.response.body.count)
                observation?.cacheDidAnswer(from: entry.tier)
                return (.cached(response), CacheUse(cache: cache, key: key, policy: policy, stored: nil, refreshes: nil, clock: proxy.clock))
            }
            if let window = policy.staleWhileRevalidate, now < entry.expiresAt.addingTimeInterval(window.timeInterval),
                let response = cachedResponse(entry, key: key, origin: .staleCache(age: age), id: id, parameters: parameters, resolved: resolved)
            {
                cache.count { $0.staleServed += 1 }
                proxy.logCacheHit(id, path: key.path, service: key.service, bytes: entry.response.body.count)
                observation?.cacheDidAnswer(from: entry.tier)
                return (.stale(response), CacheUse(cache: cache, key: key, policy: policy, stored: entry, refreshes: nil, clock: proxy.clock))
            }
        }
        // Any entry found rides along: an expired one (or a fresh one that would not decode)
        // for the conditional request and the fallback.
        return (nil, CacheUse(cache: cache, key: key, policy: policy, stored: entry, refreshes: refreshing, clock: proxy.clock))
    }

    /// A cache entry as this manager's response: its content decoded if it was read from the
    /// persistent store (and then kept in memory), or `nil` if it does not decode.
    func cachedResponse(
        _ entry: ResponseCache.Entry, key: ResponseCache.Key, origin: HTTPResponse.Origin, id: LoadID, parameters: Parameters, resolved: ServiceRegistry.ResolvedService
    ) -> APIResponse<Content>? {
        let content: Content
        if let kept = entry.content as? Content {
            content = kept
        } else {
            guard let decoded = try? decodeContent(from: entry.response, service: resolved.service) else { return nil }
            content = decoded
            cache.promote(entry, content: decoded, for: key)
        }
        return APIResponse(loadID: id, response: entry.response, content: content, request: entry.request, parameters: parameters, origin: origin)
    }

    /// Answers a load that failed for want of a network with a stored response, when the
    /// policy allows. Out of line: only failures with a fallback policy come here.
    @inline(never)
    static func offlineFallback(
        for error: APIError, _ use: CacheUse, plan: LoadPlan, id: LoadID, manager: APIManager<Content>?
    ) -> APIResponse<Content>? {
        guard let (entry, age) = use.fallback(for: error), let manager,
            let response = manager.cachedResponse(
                entry, key: use.key, origin: .offlineFallback(age: age, reason: error.kind), id: id, parameters: plan.parameters, resolved: plan.resolved)
        else { return nil }
        use.cache.count { $0.offlineFallbacks += 1 }
        manager.proxy.logOfflineFallback(id, age: age, reason: error.kind)
        return response
    }
}
