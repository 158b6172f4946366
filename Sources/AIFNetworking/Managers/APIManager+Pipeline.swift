import Foundation

/// Where a load stands once the steps before sending have run. Not nested in the generic
/// manager, and the cached response travels boxed with its type erased: the common case, a
/// load to send, then needs no run-time type lookups to be passed around.
enum Stage: Sendable {
    /// Ended before sending (veto, invalid parameters, unknown service).
    case failed(APIError)
    /// Answered from the cache: an `APIResponse` of the manager's content type.
    case cached(any Sendable)
    /// Answered from the cache with an expired response: an `APIResponse` of the manager's
    /// content type; a refresh load is to follow.
    case stale(any Sendable)
    /// To be signed and sent.
    case send(LoadPlan)
}

extension APIManager {

    /// Starts a load: its object in the proxy's table, counted among the manager's.
    func startLoad() -> Load {
        proxy.begin(group: group, owner: owner)
    }

    /// Runs the steps before sending, on the caller's thread: reform, resolve, ask the plugins,
    /// validate, look up the cache (unless the load is the refresh of `refreshing`'s stale answer).
    func prepare(
        _ load: Load, parameters source: Parameters, transfer: LoadTransfer? = nil, refreshing: LoadID? = nil, at url: URL? = nil,
        call: CallAdditions = .none
    ) -> Stage {
        let id = load.id
        let service = serviceName
        let path = url?.absoluteString ?? path
        // A linked page's URL as errors, logs and observers show it: its credentials hidden.
        let shownPath = url.map { HTTPRequest.redactedURL($0) } ?? path
        let method = requestMethod
        // One list of plugins a load: the proxy's, then the manager's.
        let pluginList = proxy.plugins.isEmpty ? self.plugins : proxy.plugins + self.plugins
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
            if observation != nil || plugins != nil { load.listeners = (observation, plugins) }
        }
        func failure(_ kind: APIError.Kind, _ message: String, _ underlying: (any Error)? = nil) -> Stage {
            if !observed { observe(in: nil) }
            return .failed(APIError(kind, loadID: id, service: service, path: shownPath, message: message, underlyingError: underlying))
        }
        guard !service.rawValue.isEmpty else {
            return failure(.configuration, "\(type(of: self)) names no service: override serviceName or pass one to init")
        }
        if proxy.isShutDown {
            observe(in: nil)
            return .failed(proxy.shutDownRefusal(id, service: service, path: shownPath))
        }
        let parameters = reformParameters(source)
        let resolved: ServiceRegistry.ResolvedService
        do {
            resolved = try registry.resolve(service)
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
        if let url, !HTTPRequest.sameOrigin(url, resolved.environment.baseURL) {
            return failure(
                .invalidResponse,
                "the response linked the next page at \(HTTPRequest.redactedURL(url, keepingSignature: false)), outside the service's origin (\(resolved.environment.baseURL.absoluteString)); it was not loaded")
        }
        // The call's headers over the endpoint's; a body value encoded once, for every attempt.
        var headers = endpoint.headers
        if !call.headers.isEmpty { headers = headers.merging(call.headers) }
        // A load that is not safe to repeat gets its own idempotency key, when its policy makes
        // them: the same on each of its attempts, never another load's.
        if !method.isIdempotent, let fresh = (endpoint.retryPolicy ?? resolved.service.retryPolicy).newIdempotencyKey(for: method, given: headers) {
            headers.set(name: fresh.header, value: fresh.key)
        }
        var body = transfer?.body
        var bodyContentType: String?
        if let value = call.body ?? (transfer == nil ? endpoint.body : nil) {
            do throws(ServiceError) {
                let encoded = try proxy.generator.body(
                    encoding: value, as: call.bodyEncoding ?? endpoint.bodyEncoding, arrays: endpoint.arrayEncoding, for: resolved, path: shownPath)
                body = .bytes(encoded.data)
                // The encoder's type unless the call, the endpoint or the service names one.
                bodyContentType = encoded.contentType
            } catch {
                return failure(.invalidParameters, error.description, error)
            }
        }
        let keyPath = call.keyPath(path)
        var cacheUse: CacheUse?
        if let policy = endpoint.cachePolicy, transfer == nil {
            let lookup = cacheLookup(
                policy, id: id, path: keyPath, parameters: parameters, resolved: resolved, method: method, refreshing: refreshing, observation: observation)
            // A stale answer ends its load too; the caller starts the refresh, a load of its own.
            if let answer = lookup.answer { return answer }
            cacheUse = lookup.use
        }
        // One send serves identical loads only where the rule for sending again allows it.
        let coalesces = endpoint.coalescesIdenticalRequests && transfer == nil
            && (endpoint.retryPolicy ?? resolved.service.retryPolicy).verdict(
                onSending: HTTPRequest(method: method, url: resolved.environment.baseURL, body: body ?? .empty), again: .sharedWithIdenticalLoad) == .allowed
        return .send(LoadPlan(
            resolved: resolved, serviceName: service, path: path, keyPath: keyPath, shownPath: shownPath, method: method, parameters: parameters,
            headers: headers, query: call.query, body: body, bodyContentType: bodyContentType, bodyEncoding: endpoint.bodyEncoding, arrayEncoding: endpoint.arrayEncoding,
            placements: endpoint.parameterPlacements, timeouts: endpoint.timeouts, cache: cacheUse,
            coalesces: coalesces, retryPolicyOverride: endpoint.retryPolicy, errorPolicies: resolved.service.errorPolicies,
            authenticator: endpoint.usesAuthenticator ? resolved.authenticator : nil, transfer: transfer, observation: observation,
            plugins: plugins
        ))
    }

    /// Runs a load from its preparation to its delivery, the one path of every face: prepares
    /// it, sends it through its engine — or ends it without sending — and hands its outcome,
    /// checked, decoded, recorded and told to the plugins and (when `delivers`) the delegates,
    /// to `done`: once, on `executor`, where the load's steps run. An expired answer from the
    /// cache starts its refresh, a load of its own, when `refreshesStale`.
    func run(
        _ load: Load, _ parameters: Parameters, transfer: LoadTransfer?, refreshing: LoadID?, refreshesStale: Bool = true, at url: URL?,
        call: CallAdditions, on executor: any StepExecutor, delivers: Bool, then done: @escaping @Sendable (Result<APIResponse<Content>, APIError>) -> Void
    ) {
        let stage = prepare(load, parameters: parameters, transfer: transfer, refreshing: refreshing, at: url, call: call)
        guard case .send(let plan) = stage else {
            // Ended without sending, still off the caller's stack, like every load (the manager
            // held until then): where the delegates hear it, when they do — a cancellation until
            // then ends it as cancelled — else where its steps run.
            let ending: @Sendable () -> Void = {
                let outcome = self.finishWithoutSending(load, stage, deliver: delivers)
                if case .stale = stage, refreshesStale, case .success = outcome {
                    self.loadData(with: parameters, onStart: nil, refreshing: load.id, deliver: delivers, at: url, call: call)
                }
                done(outcome)
            }
            return delivers ? callbackExecutor.run(ending) : executor.run(ending)
        }
        // The manager held weakly: a load does not keep it alive; a manager deallocated
        // meanwhile cancels its loads, which then end without it.
        executor.run { [weak self, proxy] in
            load.start(plan, on: executor) { [weak self] ending in
                let outcome = Self.conclude(ending, plan: plan, id: load.id, manager: self)
                if case .failure = outcome { transfer?.download?.abandon() }
                guard let self else {
                    proxy.endAbandoned(load, plan: plan)
                    return done(outcome)
                }
                done(self.finish(load, outcome, deliver: delivers))
            }
        }
    }

    /// The outcome of a load the engine ended: its failure, or its answer checked and decoded
    /// (``conclude(_:plan:id:attempts:manager:)``), a failure saying why it was not retried.
    static func conclude(_ ending: LoadEnding, plan: LoadPlan, id: LoadID, manager: APIManager<Content>?) -> Result<APIResponse<Content>, APIError> {
        switch ending {
        case .failed(let error):
            return .failure(error)
        case .answered(let exchange, let attempts, let note, let retryableAt):
            let concluded = conclude(exchange, plan: plan, id: id, attempts: attempts, manager: manager)
            guard let note else { return concluded }
            return concluded.mapError { $0.explaining(notRetried: note, retryableAt: retryableAt) }
        }
    }

    /// Checks the response: the service's veto, the status, the body, decoding, validation;
    /// stores it in the cache when it passes. Inlined into the engine: each generic function
    /// looks up the metadata of the response types it touches on every call.
    @inline(__always)
    static func conclude(
        _ exchange: Result<Exchange, APIError>, plan: LoadPlan, id: LoadID, attempts: Int, manager: APIManager<Content>?
    ) -> Result<APIResponse<Content>, APIError> {
        let request: HTTPRequest
        var response: HTTPResponse
        var origin = HTTPResponse.Origin.network
        // The service's veto when the engine asked for it already — not when the cache's
        // response replaced the 304 it was asked about.
        var askedVeto: ServiceVeto?? = nil
        switch exchange {
        case .success(let exchange):
            request = exchange.request
            response = exchange.response
            askedVeto = exchange.veto
            if let use = plan.cache, let revalidated = use.revalidated(by: response) {
                response = revalidated
                origin = .revalidated
                askedVeto = nil
            }
        case .failure(let error):
            if let use = plan.cache, let fallback = offlineFallback(for: error, use, plan: plan, id: id, manager: manager) { return .success(fallback) }
            return .failure(error)
        }
        func failure(_ kind: APIError.Kind, _ message: String, _ underlying: (any Error)? = nil) -> Result<APIResponse<Content>, APIError> {
            .failure(plan.error(kind, id: id, message, underlying, response, attempts: attempts))
        }
        guard let manager else { return .failure(plan.error(.cancelled, id: id, "the manager was deallocated")) }

        // The body's JSON, parsed once: by the service's rule (in the engine, or here), then read
        // by the decoder. The response kept (cached, delivered) does not hold it.
        var json = response.json
        response.json = nil
        // The service judges the content of an answer whose status succeeded; a failed status
        // keeps its own error (its veto's code reached the error policies in the engine).
        guard response.isSuccess else {
            return .failure(statusError(response, request: request, plan: plan, id: id, attempts: attempts, manager: manager))
        }
        if let veto = askedVeto ?? plan.resolved.service.verdict(on: response, json: &json) {
            return .failure(vetoError(veto, response, plan: plan, id: id, attempts: attempts, manager: manager))
        }
        if response.body.isEmpty, !(Content.self == NoContent.self) {
            return failure(.noContent, "the \(response.statusCode) response has no body, but \(Content.self) was expected")
        }
        let content: Content
        do {
            var parsed = response
            parsed.json = json
            content = try manager.decodeContent(from: parsed, service: plan.resolved.service)
        } catch {
            let message = APIError.describeDecoding(error, body: response.body, contentType: response.headers["Content-Type"])
            return failure(.decodingFailed, "the body is not a \(Content.self): \(message)", error)
        }
        let apiResponse = APIResponse(
            loadID: id, response: response, content: content, request: request, parameters: plan.parameters, origin: origin, attempts: attempts,
            refreshes: plan.cache?.refreshes, warnings: warnings(in: json, of: plan.resolved.service))
        do {
            try manager.endpoint.validateResponse?(apiResponse)
            try plan.plugins?.didReceive(apiResponse)
        } catch {
            return failure(.invalidResponse, "the response was rejected: \(error)", error)
        }
        if let use = plan.cache {
            use.store(response, request: request, content: content)
        }
        return .success(apiResponse)
    }

    /// Ends a load that sent nothing (it failed before sending, or the cache answered) — as
    /// cancelled, if it was cancelled first.
    @discardableResult
    func finishWithoutSending(_ load: Load, _ stage: Stage, deliver: Bool) -> Result<APIResponse<Content>, APIError> {
        if let cancellation = load.endBeforeSending() {
            let error = APIError(cancellation.kind, loadID: load.id, service: serviceName, path: path, message: "the request was cancelled\(cancellation.because)")
            return finish(load, .failure(error), deliver: deliver)
        }
        switch stage {
        case .failed(let error):
            return finish(load, .failure(error), deliver: deliver)
        case .cached(let answer), .stale(let answer):
            // Put there by `prepare` of this manager, so of this type.
            let response = answer as! APIResponse<Content>
            return finish(load, .success(response), deliver: deliver)
        case .send:
            preconditionFailure("a load to send is finished by the load engine")
        }
    }

    /// Ends a load exactly once, with the outcome its object ended it with: takes it out of
    /// the tables, tells its observers, records it, and hands it to the plugins and (when
    /// `deliver`) the delegate.
    @discardableResult
    func finish(_ load: Load, _ outcome: Result<APIResponse<Content>, APIError>, deliver: Bool) -> Result<APIResponse<Content>, APIError> {
        let id = load.id
        guard load.delivered() else { return outcome }
        let observed = ObservedLoad.Outcome(outcome)
        let (observation, plugins) = load.listeners
        observation?.loadDidEnd(observed)
        if !outcome.isCancellation { state.withLock { $0.last = outcome } }
        loadDidEnd(id, result: outcome)
        if deliver {
            callbackExecutor.run { [weak self] in
                if let self {
                    self.deliver(outcome, observed, to: plugins)
                } else {
                    plugins?.didEnd(observed)
                }
            }
        } else {
            _ = plugins?.willDeliver(outcome)
            plugins?.didEnd(observed)
        }
        return outcome
    }

    /// Tells `delegate`, the ``mainActorDelegate``: here when this runs on the main actor (the
    /// `.mainActor` callback executor), on the main actor later otherwise.
    private func tell(_ delegate: any MainActorManagerDelegate<Content>, _ outcome: Result<APIResponse<Content>, APIError>) {
        @MainActor func tell() {
            switch outcome {
            case .success(let response): delegate.manager(self, didSucceedWith: response)
            case .failure(let error): delegate.manager(self, didFailWith: error)
            }
        }
        if isOnMainActor() {
            MainActor.assumeIsolated { tell() }
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated { tell() } }
        }
    }

    /// Tells the delegates of a load's outcome (never of a cancellation), unless a plugin
    /// says not to; the plugins hear before and after.
    private func deliver(_ outcome: Result<APIResponse<Content>, APIError>, _ observed: ObservedLoad.Outcome, to plugins: LoadPlugins?) {
        let tell = plugins?.willDeliver(outcome) ?? true
        if tell, !outcome.isCancellation {
            // Both delegates read at once: one lock, where each property takes its own.
            let (delegate, mainActorDelegate) = state.withLock { ($0.delegate, $0.mainActorDelegate) }
            switch outcome {
            case .success(let response): delegate?.manager(self, didSucceedWith: response)
            case .failure(let error): delegate?.manager(self, didFailWith: error)
            }
            if let mainActorDelegate { self.tell(mainActorDelegate, outcome) }
        }
        plugins?.didEnd(observed)
    }
}

extension Result where Failure == APIError {
    /// Whether this is a cancellation.
    var isCancellation: Bool {
        if case .failure(let error) = self { return error.isCancellation }
        return false
    }
}

extension APIManager {
    /// The warnings a success gave where the service's application error rule says, read off
    /// the body's parse.
    @inline(__always)
    static func warnings(in json: ParsedJSON?, of service: any Service) -> [String] {
        guard let json, let rule = service.applicationErrors, rule.warningsField != nil else { return [] }
        return rule.warnings(in: json.tape)
    }

    /// The error of an answer the service refused: its code and message as the server's
    /// (``APIError/serverCode``, ``APIError/serverMessage``), and the body decoded into the
    /// endpoint's or the service's error body type, as a failed status's would be — an
    /// envelope's refusal is typed like an error body.
    @inline(never)
    static func vetoError(
        _ veto: ServiceVeto, _ response: HTTPResponse, plan: LoadPlan, id: LoadID, attempts: Int, manager: APIManager<Content>
    ) -> APIError {
        let service = plan.resolved.service
        let decoded = service.errorBody.decoded(
            response.body, as: manager.endpoint.errorBody, decoder: manager.endpoint.decoder ?? service.decoder ?? FastJSONDecoder())
        let reading = ErrorBodyRule.Reading(message: veto.message == "no message" ? nil : veto.message, code: veto.code, decoded: decoded)
        return plan.error(.serviceVeto, id: id, "the service refused the response: \(veto)", veto, response, attempts: attempts).carrying(reading)
    }

    /// The error of a failed status: the server's message and code when the service's
    /// ``/AIFServices/Service/errorBody`` rule finds them in the body (else the body's start),
    /// every credential the request carried shown as `***`; the body decoded into the declared
    /// type rides along.
    static func statusError(
        _ response: HTTPResponse, request: HTTPRequest, plan: LoadPlan, id: LoadID, attempts: Int, manager: APIManager<Content>
    ) -> APIError {
        let service = plan.resolved.service
        let secrets = request.secretValues(in: plan.resolved.environment)
        var reading = service.errorBody.read(
            response.body, as: manager.endpoint.errorBody, decoder: manager.endpoint.decoder ?? service.decoder ?? FastJSONDecoder())
        reading.message = reading.message.map { bodyPreview(Data($0.utf8), limit: 500, hiding: secrets) }
        reading.code = reading.code.map { bodyPreview(Data($0.utf8), limit: 100, hiding: secrets) }
        var message = "the server answered \(response.statusCode)"
        if let code = reading.code { message += " (code \(code))" }
        if let said = reading.message {
            message += ": \(said)"
        } else {
            let preview = bodyPreview(response.body, limit: 200, hiding: secrets)
            if !preview.isEmpty { message += ": \(preview)" }
        }
        return plan.error(.httpStatus, id: id, message, nil, response, attempts: attempts).carrying(reading)
    }
}
