import Foundation

/// Where a load stands once the steps before sending have run. Not generic, and the cached
/// response travels boxed with its type erased: the common case, a load to send, then needs
/// no run-time type lookups to be passed around.
enum Stage: Sendable {
    /// Ended before sending (veto, invalid parameters, unknown service).
    case failed(APIError)
    /// Answered from the cache: an `APIResponse` of the subject's content type.
    case cached(any Sendable)
    /// Answered from the cache with an expired response: an `APIResponse` of the subject's
    /// content type; a refresh load is to follow.
    case stale(any Sendable)
    /// To be signed and sent.
    case send(LoadPlan)
}

extension Load {
    /// Runs the steps before sending, on the caller's thread: reforms the parameters, resolves
    /// the service, asks the plugins, validates, encodes a body value, looks up the cache
    /// (unless the load is a refresh), and makes the plan — or says how the load ends without
    /// sending.
    func prepare<Subject: LoadSubject>(for subject: Subject, _ input: LoadInput) -> Stage {
        let proxy = subject.proxy
        let endpoint = subject.endpoint
        let service = subject.serviceName
        let transfer = input.transfer
        let path = input.url?.absoluteString ?? subject.path
        // A linked page's URL as errors, logs and observers show it: its credentials hidden.
        let shownPath = input.url.map { HTTPRequest.redactedURL($0) } ?? path
        let method = subject.requestMethod
        // One list of plugins a load: the proxy's, then the subject's.
        let ownPlugins = subject.plugins
        let pluginList = proxy.plugins.isEmpty ? ownPlugins : proxy.plugins + ownPlugins
        var observed = false
        var observation: (any APIProxy.LoadObservation)?
        var plugins: LoadPlugins?
        /// Tells the observers and the plugins of the load, once its environment is known (or
        /// known not to be).
        func observe(in environment: ServiceEnvironment.Name?) {
            observed = true
            guard proxy.hasObservers || !pluginList.isEmpty else { return }
            let described = ObservedLoad(loadID: id, service: service, environment: environment, path: shownPath, method: method)
            observation = proxy.observation(of: described)
            if !pluginList.isEmpty { plugins = LoadPlugins(pluginList, load: described) }
            if observation != nil || plugins != nil { listeners = (observation, plugins) }
        }
        func failure(_ kind: APIError.Kind, _ message: String, _ underlying: (any Error)? = nil) -> Stage {
            if !observed { observe(in: nil) }
            return .failed(APIError(kind, loadID: id, service: service, path: shownPath, message: message, underlyingError: underlying))
        }
        guard !service.rawValue.isEmpty else {
            return failure(.configuration, "\(type(of: subject)) names no service: override serviceName or pass one to init")
        }
        if proxy.isShutDown {
            observe(in: nil)
            return .failed(proxy.shutDownRefusal(id, service: service, path: shownPath))
        }
        let parameters = subject.reformParameters(input.parameters)
        let resolved: ServiceRegistry.ResolvedService
        do {
            resolved = try subject.registry.resolve(service)
        } catch {
            return failure(.configuration, error.description, error)
        }
        observe(in: resolved.environmentName)
        do {
            try plugins?.willStart(parameters: parameters)
            try endpoint.validateParameters?(parameters)
        } catch {
            return failure(.invalidParameters, "the parameters were rejected: \(error)", error)
        }
        // A linked URL is followed only on the service's own origin: its credentials and
        // signature are for that origin alone.
        if let url = input.url, !HTTPRequest.sameOrigin(url, resolved.environment.baseURL) {
            return failure(
                .invalidResponse,
                "the response linked the next page at \(HTTPRequest.redactedURL(url, keepingSignature: false)), outside the service's origin (\(resolved.environment.baseURL.absoluteString)); it was not loaded")
        }
        // The call's headers over the endpoint's; a body value encoded once, for every attempt.
        var headers = endpoint.headers
        if !input.call.headers.isEmpty { headers = headers.merging(input.call.headers) }
        // A load that is not safe to repeat gets its own idempotency key, when its policy makes
        // them: the same on each of its attempts, never another load's. A GraphQL operation
        // needs none (a query) or must not rely on one (a mutation whose server ignores them).
        let operation = endpoint.graphQL
        if !method.isIdempotent, operation?.repeatable == nil, let fresh = (endpoint.retryPolicy ?? resolved.service.retryPolicy).newIdempotencyKey(for: method, given: headers) {
            headers.set(name: fresh.header, value: fresh.key)
        }
        var body = transfer?.body
        var bodyContentType: String?
        if let value = input.call.body ?? (transfer == nil ? endpoint.body : nil) {
            do throws(ServiceError) {
                let encoded = try proxy.generator.body(
                    encoding: value, as: input.call.bodyEncoding ?? endpoint.bodyEncoding, arrays: endpoint.arrayEncoding, for: resolved, path: shownPath)
                body = .bytes(encoded.data)
                // The encoder's type unless the call, the endpoint or the service names one.
                bodyContentType = encoded.contentType
            } catch {
                return failure(.invalidParameters, error.description, error)
            }
        }
        // A GraphQL operation: the parameters are its variables, sent in its body or its query;
        // what is sent as parameters, and what identifies the load, are then others.
        var graphQLParameters: (sent: Parameters, key: Parameters)?
        if let operation {
            if operation.kind == .mutation, method != .post {
                return failure(.configuration, "a GraphQL mutation is sent with POST, not \(method)")
            }
            let key = operation.identity(variables: parameters)
            if method == .get {
                guard let query = operation.queryParameters(variables: parameters) else {
                    return failure(.invalidParameters, "a GraphQL variable holds a number JSON cannot write (NaN or an infinity)")
                }
                graphQLParameters = (query, key)
            } else {
                guard let data = operation.body(variables: parameters) else {
                    return failure(.invalidParameters, "a GraphQL variable holds a number JSON cannot write (NaN or an infinity)")
                }
                body = .bytes(data)
                bodyContentType = "application/json"
                graphQLParameters = (Parameters(), key)
            }
        }
        let keyPath = input.call.keyPath(path)
        var cacheUse: CacheUse?
        if let policy = endpoint.cachePolicy, transfer == nil {
            let lookup = cacheLookup(
                policy, of: subject, path: keyPath, parameters: graphQLParameters?.key ?? parameters, resolved: resolved, method: method, refreshing: input.refreshing,
                observation: observation)
            // A stale answer ends its load too; the engine starts the refresh, a load of its own.
            if let answer = lookup.answer { return answer }
            cacheUse = lookup.use
        }
        // One send serves identical loads only where the rule for sending again allows it.
        let coalesces = endpoint.coalescesIdenticalRequests && transfer == nil
            && (endpoint.retryPolicy ?? resolved.service.retryPolicy).verdict(
                onSending: HTTPRequest(method: method, url: resolved.environment.baseURL, body: body ?? .empty), again: .sharedWithIdenticalLoad) == .allowed
        return .send(LoadPlan(
            resolved: resolved, serviceName: service, path: path, keyPath: keyPath, shownPath: shownPath, method: method, parameters: graphQLParameters?.sent ?? parameters,
            headers: headers, query: input.call.query, body: body, bodyContentType: bodyContentType, bodyEncoding: endpoint.bodyEncoding, arrayEncoding: endpoint.arrayEncoding,
            placements: endpoint.parameterPlacements, timeouts: endpoint.timeouts, cache: cacheUse,
            coalesces: coalesces, retryPolicyOverride: endpoint.retryPolicy, errorPolicies: resolved.service.errorPolicies,
            authenticator: endpoint.usesAuthenticator ? resolved.authenticator : nil, transfer: transfer, observation: observation,
            plugins: plugins, graphQL: operation
        ))
    }

    /// Looks the load up in the cache when the endpoint has a ``Endpoint/cachePolicy``: returns the
    /// stage that answers it (a fresh entry, or a stale one to be refreshed), or what the load
    /// carries to use the cache when it is sent. A refresh load (`refreshing` set) is never
    /// answered from the cache.
    @inline(never)
    private func cacheLookup<Subject: LoadSubject>(
        _ policy: ResponseCache.Policy, of subject: Subject, path: String, parameters: Parameters, resolved: ServiceRegistry.ResolvedService,
        method: HTTPMethod, refreshing: LoadID?, observation: (any APIProxy.LoadObservation)?
    ) -> (answer: Stage?, use: CacheUse) {
        let (cache, proxy) = (subject.cache, subject.proxy)
        let key = ResponseCache.Key(
            service: subject.serviceName, environment: resolved.environmentName, method: method, path: path, parameters: parameters,
            version: "\(resolved.service.cacheVersion).\(policy.version)", schema: SchemaFingerprint.of(Subject.Content.self))
        let now = cache.date(on: proxy.clock)
        let entry = cache.entry(for: key, counting: refreshing == nil, at: now)
        if let entry, refreshing == nil {
            let age = entry.age(at: now)
            if entry.isFresh(at: now),
                let response = Self.cachedResponse(entry, of: subject, key: key, origin: .cache(age: age), id: id, parameters: parameters, resolved: resolved)
            {
                proxy.logCacheHit(id, path: key.path, service: key.service, bytes: entry.response.body.count)
                observation?.cacheDidAnswer(from: entry.tier)
                return (.cached(response), CacheUse(cache: cache, key: key, policy: policy, stored: nil, refreshes: nil, clock: proxy.clock))
            }
            if let window = policy.staleWhileRevalidate, now < entry.expiresAt.addingTimeInterval(window.timeInterval),
                let response = Self.cachedResponse(entry, of: subject, key: key, origin: .staleCache(age: age), id: id, parameters: parameters, resolved: resolved)
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

    /// A cache entry as the subject's response: its content decoded if it was read from the
    /// persistent store (and then kept in memory), or `nil` if it does not decode.
    static func cachedResponse<Subject: LoadSubject>(
        _ entry: ResponseCache.Entry, of subject: Subject, key: ResponseCache.Key, origin: HTTPResponse.Origin, id: LoadID, parameters: Parameters,
        resolved: ServiceRegistry.ResolvedService
    ) -> APIResponse<Subject.Content>? {
        let content: Subject.Content
        if let kept = entry.content as? Subject.Content {
            content = kept
        } else {
            guard let decoded = try? subject.decodeContent(from: entry.response, service: resolved.service) else { return nil }
            content = decoded
            subject.cache.promote(entry, content: decoded, for: key)
        }
        return APIResponse(loadID: id, response: entry.response, content: content, request: entry.request, parameters: parameters, origin: origin)
    }
}
