import Foundation

extension APIManager {
    /// Where a load stands once the steps before sending have run.
    enum Stage: Sendable {
        /// Ended before sending (veto, invalid parameters, unknown service).
        case failed(APIError)
        /// Answered from the cache.
        case cached(APIResponse<Content>)
        /// To be signed and sent.
        case send(Plan)
    }

    /// Everything needed to sign, send and check a request, read from the manager when the load
    /// started.
    struct Plan: Sendable {
        var resolved: ResolvedService
        var serviceName: ServiceName
        var methodName: String
        var method: HTTPMethod
        var parameters: Parameters
        var headers: HTTPHeaders
        var bodyEncoding: BodyEncoding?
        var timeouts: Timeouts?
        var cacheKey: CacheKey?
        var cacheLifetime: Duration
        var coalesces: Bool
    }

    /// Enters a load in the proxy's table and the manager's.
    func startLoad() -> RequestID {
        let id = proxy.begin(group: group)
        state.withLock { _ = $0.inFlight.insert(id) }
        return id
    }

    /// Runs the steps before sending, on the caller's thread: reform, veto, validate, resolve,
    /// look up the cache.
    func prepare(id: RequestID, parameters source: Parameters) -> Stage {
        let service = serviceName
        let methodName = methodName
        func failure(_ kind: APIError.Kind, _ message: String, _ underlying: (any Error)? = nil) -> Stage {
            .failed(APIError(kind, requestID: id, service: service, methodName: methodName, message: message, underlyingError: underlying))
        }
        guard !service.rawValue.isEmpty else {
            return failure(.configuration, "\(type(of: self)) names no service: override serviceName or pass one to init")
        }
        let parameters = reformParams(source)
        let interceptor = interceptor
        guard shouldCallAPI(with: parameters), interceptor?.shouldCallAPI(self, with: parameters) ?? true else {
            return failure(.vetoedByInterceptor, "an interceptor declined the call")
        }
        do {
            try validate(parameters: parameters)
            try validator?.validate(parameters: parameters, for: self)
        } catch {
            return failure(.invalidParameters, "the parameters were rejected: \(error)", error)
        }
        let resolved: ResolvedService
        do {
            resolved = try registry.resolve(service)
        } catch {
            return failure(.configuration, error.description, error)
        }
        let method = requestMethod
        var cacheKey: CacheKey?
        if shouldCache {
            let key = CacheKey(service: service, environment: resolved.environmentName, method: method, methodName: methodName, parameters: parameters)
            if let entry = cache.entry(for: key) {
                if let response = cachedResponse(entry, id: id, parameters: parameters, service: resolved.service) {
                    proxy.logCacheHit(id, methodName: methodName, service: service, bytes: entry.response.body.count)
                    return .cached(response)
                }
            }
            cacheKey = key
        }
        let coalesces = coalescesIdenticalRequests && method == .get
        return .send(Plan(
            resolved: resolved, serviceName: service, methodName: methodName, method: method, parameters: parameters,
            headers: headers, bodyEncoding: bodyEncoding, timeouts: timeouts, cacheKey: cacheKey, cacheLifetime: cacheLifetime,
            coalesces: coalesces
        ))
    }

    private func cachedResponse(_ entry: ResponseCache.Entry, id: RequestID, parameters: Parameters, service: any Service) -> APIResponse<Content>? {
        let content = (entry.content as? Content) ?? (try? decodeContent(from: entry.response, service: service))
        guard let content else { return nil }
        return APIResponse(requestID: id, response: entry.response, content: content, request: entry.request, parameters: parameters, isFromCache: true)
    }

    /// Signs, sends and checks a request. Holds the manager only between awaits, so a manager
    /// let go of mid-flight is deallocated (and its loads cancelled).
    static func execute(_ stage: Stage, id: RequestID, manager reference: WeakReference<APIManager<Content>>) async -> Result<APIResponse<Content>, APIError> {
        guard case .send(let plan) = stage else { return .failure(APIError(.configuration, requestID: id, service: "", methodName: "", message: "nothing to send")) }
        func failure(_ kind: APIError.Kind, _ message: String, _ underlying: (any Error)? = nil, _ response: HTTPResponse? = nil) -> Result<APIResponse<Content>, APIError> {
            .failure(APIError(kind, requestID: id, service: plan.serviceName, methodName: plan.methodName, message: message, underlyingError: underlying, response: response))
        }
        guard let proxy = reference.object?.proxy else { return failure(.cancelled, "the manager was deallocated") }

        let request: HTTPRequest
        do {
            var made = try RequestGenerator().makeRequest(
                for: plan.resolved, methodName: plan.methodName, method: plan.method, parameters: plan.parameters,
                headers: plan.headers, bodyEncoding: plan.bodyEncoding, signingContext: proxy.clockSkew.context()
            )
            if let timeouts = plan.timeouts { made.timeouts = timeouts }
            request = made
        } catch {
            return failure(.configuration, error.description, error)
        }

        let coalescingKey = plan.coalesces ? CacheKey(
            service: plan.serviceName, environment: plan.resolved.environmentName, method: plan.method,
            methodName: plan.methodName, parameters: plan.parameters
        ).description : nil
        if let manager = reference.object {
            manager.afterCallingAPI(with: plan.parameters)
            manager.interceptor?.afterCallingAPI(manager, with: plan.parameters)
        }

        let response: HTTPResponse
        do {
            response = try await proxy.send(request, for: plan.resolved, id: id, coalescingKey: coalescingKey)
        } catch {
            return .failure(APIError.sending(error, id: id, service: plan.serviceName, methodName: plan.methodName))
        }
        guard let manager = reference.object else { return failure(.cancelled, "the manager was deallocated") }

        if let veto = plan.resolved.service.veto(response) {
            return failure(.serviceVeto(veto), "the service refused the response: \(veto)", veto, response)
        }
        guard response.isSuccess else {
            let preview = String(decoding: response.body.prefix(200), as: UTF8.self)
            return failure(.httpStatus(response.statusCode), "the server answered \(response.statusCode)" + (preview.isEmpty ? "" : ": \(preview)"), nil, response)
        }
        if response.body.isEmpty, !(Content.self == NoContent.self) {
            return failure(.noContent, "the \(response.statusCode) response has no body, but \(Content.self) was expected", nil, response)
        }
        let content: Content
        do {
            content = try manager.decodeContent(from: response, service: plan.resolved.service)
        } catch {
            let message = APIError.describeDecoding(error, body: response.body, contentType: response.headers["Content-Type"])
            return failure(.decodingFailed, "the body is not a \(Content.self): \(message)", error, response)
        }
        let apiResponse = APIResponse(requestID: id, response: response, content: content, request: request, parameters: plan.parameters, isFromCache: false)
        do {
            try manager.validate(response: apiResponse)
            try manager.validator?.validate(response: apiResponse, for: manager)
        } catch {
            return failure(.invalidResponse, "the response was rejected: \(error)", error, response)
        }
        if let key = plan.cacheKey {
            manager.cache.store(response, request: request, content: content, for: key, lifetime: plan.cacheLifetime)
        }
        return .success(apiResponse)
    }

    /// Ends a load that sent nothing (it failed before sending, or the cache answered).
    @discardableResult
    func finishWithoutSending(_ id: RequestID, _ stage: Stage, deliver: Bool) -> Result<APIResponse<Content>, APIError> {
        switch stage {
        case .failed(let error):
            return finish(id, .failure(error), deliver: deliver)
        case .cached(let response):
            afterCallingAPI(with: response.parameters)
            interceptor?.afterCallingAPI(self, with: response.parameters)
            return finish(id, .success(response), deliver: deliver)
        case .send:
            preconditionFailure("a load to send is finished by its task")
        }
    }

    /// Ends a load exactly once: takes it out of the tables, turns its outcome into a
    /// cancellation if it was cancelled meanwhile, records it, and hands it to the hooks and
    /// (when `deliver`) the delegate.
    @discardableResult
    func finish(_ id: RequestID, _ result: Result<APIResponse<Content>, APIError>, deliver: Bool) -> Result<APIResponse<Content>, APIError> {
        var outcome = result
        if proxy.end(id), !result.isCancellation {
            outcome = .failure(APIError(.cancelled, requestID: id, service: serviceName, methodName: methodName, message: "the request was cancelled"))
        }
        state.withLock { state in
            state.inFlight.remove(id)
            if !outcome.isCancellation { state.last = outcome }
        }
        loadDidEnd(id, result: outcome)
        if deliver {
            let outcome = outcome
            callbackExecutor.run { [weak self] in self?.perform(outcome, tellingDelegate: true) }
        } else {
            perform(outcome, tellingDelegate: false)
        }
        return outcome
    }

    /// The perform hooks around the delegate.
    private func perform(_ outcome: Result<APIResponse<Content>, APIError>, tellingDelegate: Bool) {
        let interceptor = interceptor
        switch outcome {
        case .success(let response):
            let own = beforePerformSuccess(with: response)
            let theirs = interceptor?.beforePerformSuccess(self, with: response) ?? true
            if tellingDelegate, own, theirs { delegate?.managerCallAPIDidSucceed(self, response: response) }
            afterPerformSuccess(with: response)
            interceptor?.afterPerformSuccess(self, with: response)
        case .failure(let error):
            let own = beforePerformFail(with: error)
            let theirs = interceptor?.beforePerformFail(self, with: error) ?? true
            if tellingDelegate, own, theirs, !error.isCancellation { delegate?.managerCallAPIDidFail(self, error: error) }
            afterPerformFail(with: error)
            interceptor?.afterPerformFail(self, with: error)
        }
    }
}

extension Result where Failure == APIError {
    /// Whether this is a cancellation.
    var isCancellation: Bool {
        if case .failure(let error) = self { return error.isCancellation }
        return false
    }
}
