import Foundation

extension APIManager {
    typealias LoadCompletion = @Sendable (Result<APIResponse<Content>, APIError>) -> Void

    /// The load engine: gets the credential when the service has an ``Authenticator``, signs
    /// and sends the request (redirects followed and re-signed, identical loads coalesced when
    /// the plan says so), sends it again as the plan's ``RetryPolicy`` allows — or once more
    /// after the credential was refreshed — checks and decodes the response, and calls
    /// `completion` exactly once with the outcome, on `runner`. Both faces run it: the delegate
    /// face ends the load in the completion, the async face resumes its caller.
    ///
    /// ```
    ///  attempt ─▶ credential ─▶ sign, send ─▶ 2xx ──────────────────────────────────▶ conclude
    ///     ▲        (may wait      │
    ///     │        for refresh)   └─ failure ─┬─ credential expired, not yet renewed ─▶ renew ─┐
    ///     │                                   ├─ retryable, allowed ─▶ wait ─┐               │
    ///     └───────────────────────────────────┴──────────────────────────────┴───────────────┘
    ///                                         └─ otherwise ──────────────────────────▶ conclude
    /// ```
    ///
    /// Holds the manager only while a step runs, so a manager let go of mid-flight is
    /// deallocated (and its loads cancelled).
    static func run(
        _ plan: LoadPlan, id: RequestID, manager reference: WeakReference<APIManager<Content>>, proxy: APIProxy,
        cancellation: AsyncCancellation, runner: any CompletionExecutor, completion: @escaping LoadCompletion
    ) {
        proxy.retryBudget.recordLoad()
        let load = LoadContext(plan: plan, id: id, proxy: proxy, cancellation: cancellation, runner: runner)
        start(Attempt(), load, manager: reference, completion: completion)
    }

    /// Starts an attempt: gets the credential, if the service has an authenticator, and sends.
    private static func start(_ attempt: Attempt, _ load: LoadContext, manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion) {
        guard let authenticator = load.plan.authenticator else {
            return send(attempt, credential: nil, load, manager: reference, completion: completion)
        }
        authenticator.acquire(on: load.runner, cancellation: load.cancellation) { outcome in
            switch outcome {
            case .credential(let credential, let generation):
                var attempt = attempt
                attempt.credentialGeneration = generation
                send(attempt, credential: credential, load, manager: reference, completion: completion)
            case .failed(let failure):
                completion(.failure(authenticationFailed(failure, load, attempts: attempt.number - 1)))
            case .cancelled:
                completion(.failure(load.plan.error(.cancelled, id: load.id, "the request was cancelled while the credential was refreshed", attempts: attempt.number - 1)))
            }
        }
    }

    /// Makes, signs and sends one attempt's request, and handles its outcome.
    private static func send(
        _ attempt: Attempt, credential: Credential?, _ load: LoadContext, manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion
    ) {
        let plan = load.plan
        if plan.transfer != nil { return sendTransfer(attempt, credential: credential, load, manager: reference, completion: completion) }
        var attempt = attempt
        attempt.signingOffset = plan.resolved.clockSkew.offset
        let request: HTTPRequest
        switch makeRequest(
            plan, attempt: attempt, credential: credential, signingContext: .now(clockOffset: attempt.signingOffset),
            remaining: attempt.deadline.map { $0 - ContinuousClock.now })
        {
        case .success(let made): request = made
        case .failure(let error): return fail(plan.error(.configuration, id: load.id, error.description, error, attempts: attempt.number - 1), completion)
        }
        if let failure = beginFirstAttempt(&attempt, request, plan, load, manager: reference) { return fail(failure, completion) }
        let sent = attempt
        load.proxy.send(request, for: plan.resolved, id: load.id, coalescingKey: plan.coalescingKey, cancellation: load.cancellation, runner: load.runner) { result in
            if wasWithdrawn(result), let authenticator = plan.authenticator {
                return renewCredential(after: sent, heldBack: true, authenticator, load, manager: reference, completion: completion)
            }
            plan.observation?.attemptDidEnd(ObservedAttempt(number: sent.number, request: request, result: result))
            if case .success(let response) = result, response.isSuccess || response.statusCode == 304 && plan.cache != nil, plan.errorPolicies == nil,
                plan.authenticator?.expiredApplicationCodes.isEmpty ?? true
            {
                return completion(conclude(.success(Exchange(request: request, response: response)), plan: plan, id: load.id, attempts: sent.number, manager: reference))
            }
            afterFailure(result, of: request, sent, load, manager: reference, completion: completion)
        }
    }

    /// On the first attempt (made once, even when it is made again after it was held back):
    /// notes the load's deadline and calls the `afterCallingAPI` hooks. Returns the error that
    /// ends the load when the manager is gone.
    @inline(__always)
    private static func beginFirstAttempt(
        _ attempt: inout Attempt, _ request: HTTPRequest, _ plan: LoadPlan, _ load: LoadContext, manager reference: WeakReference<APIManager<Content>>
    ) -> APIError? {
        guard !attempt.began else { return nil }
        attempt.began = true
        attempt.deadline = request.timeouts?.total.map { ContinuousClock.now + $0 }
        guard let manager = reference.object else {
            return plan.error(.cancelled, id: load.id, "the manager was deallocated", attempts: 0)
        }
        manager.afterCallingAPI(with: plan.parameters)
        manager.interceptor?.afterCallingAPI(manager, with: plan.parameters)
        return nil
    }

    /// ``send(_:credential:_:manager:completion:)`` for a load that moves more than its
    /// parameters: a download's attempt writes to the partial file, asking for what it lacks
    /// (with the range in place before signing); progress is reported; a download's answer is
    /// judged before the usual handling. Out of line: most loads are not transfers.
    @inline(never)
    private static func sendTransfer(
        _ attempt: Attempt, credential: Credential?, _ load: LoadContext, manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion
    ) {
        let plan = load.plan
        var attempt = attempt
        attempt.signingOffset = plan.resolved.clockSkew.offset
        var writer: DownloadWriter?
        if let download = plan.transfer?.download {
            do throws(DownloadError) {
                writer = try download.beginAttempt(identity: plan.downloadIdentity)
            } catch {
                return fail(plan.error(.transport, id: load.id, error.description, error, attempts: attempt.number - 1), completion)
            }
        }
        let request: HTTPRequest
        switch makeRequest(
            plan, attempt: attempt, credential: credential, signingContext: .now(clockOffset: attempt.signingOffset),
            remaining: attempt.deadline.map { $0 - ContinuousClock.now }, writer: writer)
        {
        case .success(let made): request = made
        case .failure(let error): return fail(plan.error(.configuration, id: load.id, error.description, error, attempts: attempt.number - 1), completion)
        }
        if let failure = beginFirstAttempt(&attempt, request, plan, load, manager: reference) { return fail(failure, completion) }
        let sent = attempt
        let attemptWriter = writer
        load.proxy.send(
            request, for: plan.resolved, id: load.id, coalescingKey: nil, cancellation: load.cancellation, runner: load.runner,
            progress: plan.transfer?.progressReporter(for: writer)
        ) { result in
            if wasWithdrawn(result), let authenticator = plan.authenticator {
                return renewCredential(after: sent, heldBack: true, authenticator, load, manager: reference, completion: completion)
            }
            plan.observation?.attemptDidEnd(ObservedAttempt(number: sent.number, request: request, result: result))
            plan.transfer?.progress?.flush()
            if let writer = attemptWriter, case .success(let response) = result {
                return afterDownloadAnswer(response, writer, of: request, sent, load, manager: reference, completion: completion)
            }
            if plan.transfer?.stream?.tookBody == true {
                // Its body went to the reader as it came: nothing is sent again after that.
                return endStreamed(result, of: request, sent, load, manager: reference, completion: completion)
            }
            if case .success(let response) = result, response.isSuccess, plan.errorPolicies == nil, plan.authenticator?.expiredApplicationCodes.isEmpty ?? true {
                return completion(conclude(.success(Exchange(request: request, response: response)), plan: plan, id: load.id, attempts: sent.number, manager: reference))
            }
            afterFailure(result, of: request, sent, load, manager: reference, completion: completion)
        }
    }

    /// A download's answer: the file is complete (the load concludes), or was emptied by a 416
    /// (asked again at once without a range, once), or did not come (the answer goes through
    /// the usual failure handling — a retry then resumes the partial file).
    @inline(never)
    private static func afterDownloadAnswer(
        _ response: HTTPResponse, _ writer: DownloadWriter, of request: HTTPRequest, _ attempt: Attempt, _ load: LoadContext,
        manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion
    ) {
        let plan = load.plan
        let verdict: DownloadWriter.Verdict
        do throws(DownloadError) {
            verdict = try writer.verdict(on: response)
        } catch {
            let kind: APIError.Kind = if case .file = error.reason { .transport } else { .invalidResponse }
            return completion(.failure(plan.error(kind, id: load.id, error.description, error, response, attempts: attempt.number)))
        }
        switch verdict {
        case .finished(let file):
            plan.transfer?.download?.finished(file)
            completion(conclude(.success(Exchange(request: request, response: response)), plan: plan, id: load.id, attempts: attempt.number, manager: reference))
        case .startOver where plan.transfer?.download?.restartOnce() == true:
            load.proxy.logNoRetry(load.id, "the partial file does not match the server's; asking for the whole file")
            var next = attempt
            next.number += 1
            start(next, load, manager: reference, completion: completion)
        case .startOver, .notTheFile:
            afterFailure(.success(response), of: request, attempt, load, manager: reference, completion: completion)
        }
    }

    /// Ends a streamed load whose body went to its reader: with the answer, or the failure that
    /// cut the body short (which the reader is told too).
    @inline(never)
    private static func endStreamed(
        _ result: Result<HTTPResponse, any Error>, of request: HTTPRequest, _ attempt: Attempt, _ load: LoadContext,
        manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion
    ) {
        let plan = load.plan
        let exchange = result.map { Exchange(request: request, response: $0) }.mapError {
            APIError.sending($0, id: load.id, service: plan.serviceName, methodName: plan.methodName).counting(attempts: attempt.number)
        }
        completion(conclude(exchange, plan: plan, id: load.id, attempts: attempt.number, manager: reference))
    }

    /// Ends a load whose request could not be made. Out of line, so that the engine itself
    /// does not look up the response types' metadata.
    @inline(never)
    private static func fail(_ error: APIError, _ completion: LoadCompletion) {
        completion(.failure(error))
    }

    /// After an attempt that failed (or whose 2xx body may carry an application code a policy
    /// names): signs again for a refused time, renews the credential and sends once more, tells
    /// an error handler, or waits and retries when the retry policy, the proxy's budget and the
    /// interceptor all allow it; otherwise ends the load with the attempt's outcome. Out of
    /// line: most loads never come here.
    @inline(never)
    private static func afterFailure(
        _ result: Result<HTTPResponse, any Error>, of request: HTTPRequest, _ attempt: Attempt, _ load: LoadContext,
        manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion
    ) {
        let plan = load.plan
        /// Ends the load with the attempt's outcome; a failure says why it was not retried
        /// when a retry was weighed.
        func end(notRetried note: String? = nil) {
            let exchange: Result<Exchange, APIError>
            switch result {
            case .success(let response): exchange = .success(Exchange(request: request, response: response))
            case .failure(let error):
                exchange = .failure(APIError.sending(error, id: load.id, service: plan.serviceName, methodName: plan.methodName).counting(attempts: attempt.number))
            }
            let concluded = conclude(exchange, plan: plan, id: load.id, attempts: attempt.number, manager: reference)
            guard let note else { return completion(concluded) }
            load.proxy.logNoRetry(load.id, note)
            completion(concluded.mapError { $0.explaining(notRetried: note) })
        }
        var errorPolicy: ErrorPolicy?
        var veto: ServiceVeto?
        if case .success(let response) = result {
            veto = plan.resolved.service.veto(response)
            errorPolicy = plan.errorPolicies?.policy(for: response, veto: veto)
            if !attempt.resignedForClock, response.statusCode == 401 || errorPolicy == .correctClock, isSigned(plan.resolved) {
                // Signed with a time the server refuses: when its answer's `Date` just moved the
                // environment's clock, signed again with the corrected time, at once, once.
                if clockMoved(since: attempt, plan.resolved) {
                    load.proxy.logClockResend(load.id, offset: plan.resolved.clockSkew.offset)
                    var next = attempt
                    next.number += 1
                    next.resignedForClock = true
                    return start(next, load, manager: reference, completion: completion)
                }
                if errorPolicy == .correctClock {
                    load.proxy.logNoRetry(load.id, "the server refused the signing time, but its Date header does not differ from the time signed with")
                    return end()
                }
            }
            if let authenticator = plan.authenticator, !attempt.renewedCredential,
                errorPolicy == .refreshCredentials || authenticator.isExpiry(response, veto: veto)
            {
                return renewCredential(after: attempt, authenticator, load, manager: reference, completion: completion)
            }
            if case .handler(let name)? = errorPolicy {
                let event = ErrorEvent(
                    handler: name, service: plan.serviceName, environment: plan.resolved.environmentName, statusCode: response.statusCode,
                    code: veto?.code, message: veto?.message)
                if plan.resolved.errorHandlers?.tell(event) != true { load.proxy.logMissingHandler(load.id, name) }
                return end()
            }
        }
        let outcome: Result<HTTPResponse, TransportError>
        var policyReason: RetryReason?
        switch result {
        case .success(let response) where errorPolicy == .retry:
            outcome = .success(response)
            policyReason = .errorPolicy(statusCode: response.statusCode, code: veto?.code)
        case .success(let response) where !response.isSuccess: outcome = .success(response)
        case .failure(let error as TransportError): outcome = .failure(error)
        default: return end()
        }
        let policy = plan.retryPolicy
        let decision = policy.decision(
            after: outcome, of: request, attempt: attempt.number, remaining: attempt.deadline.map { $0 - ContinuousClock.now },
            clockOffset: plan.resolved.clockSkew.offset, policyReason: policyReason)
        guard case .retry(let delay, let reason) = decision else {
            if case .deliver(let note?) = decision { return end(notRetried: note) }
            return end()
        }
        let retry = RetryAttempt(number: attempt.number + 1, maximum: policy.maxRetries + 1, reason: reason, delay: delay)
        if let manager = reference.object, let interceptor = manager.interceptor, !interceptor.shouldRetry(manager, attempt: retry) {
            return end(notRetried: "\(reason); an interceptor declined the retry")
        }
        guard load.proxy.retryBudget.spendRetry() else {
            return end(notRetried: "\(reason); the proxy's retry budget is spent")
        }
        load.proxy.logRetry(load.id, retry)
        plan.observation?.loadWillRetry(retry)
        var following = attempt
        following.number += 1
        let next = following
        let wait = PendingStep<Void>(on: load.runner) { resumed in
            guard resumed != nil else {
                return completion(.failure(plan.error(.cancelled, id: load.id, "the request was cancelled while waiting to retry", attempts: attempt.number)))
            }
            start(next, load, manager: reference, completion: completion)
        }
        load.cancellation.attach(wait)
        wait.resume(after: delay, with: ())
    }

    /// The attempt's credential was refused — for this request, or, when it was `heldBack`
    /// (withdrawn before it went out), for another one: gets the renewed one (refreshing it, or
    /// joining the refresh under way) and sends the request once more with it. A request held
    /// back was not sent: its attempt is made again, not counted twice.
    private static func renewCredential(
        after attempt: Attempt, heldBack: Bool = false, _ authenticator: Authenticator, _ load: LoadContext,
        manager reference: WeakReference<APIManager<Content>>, completion: @escaping LoadCompletion
    ) {
        load.proxy.logRenewal(load.id, generation: attempt.credentialGeneration, heldBack: heldBack)
        load.plan.observation?.loadWillRenewCredential()
        let attemptsMade = heldBack ? attempt.number - 1 : attempt.number
        authenticator.renew(after: attempt.credentialGeneration, on: load.runner, cancellation: load.cancellation) { outcome in
            switch outcome {
            case .credential(let credential, let generation):
                var next = attempt
                next.number = attemptsMade + 1
                next.renewedCredential = true
                next.credentialGeneration = generation
                send(next, credential: credential, load, manager: reference, completion: completion)
            case .failed(let failure):
                completion(.failure(authenticationFailed(failure, load, attempts: attemptsMade)))
            case .cancelled:
                completion(.failure(load.plan.error(.cancelled, id: load.id, "the request was cancelled while the credential was refreshed", attempts: attemptsMade)))
            }
        }
    }

    /// Whether the transport withdrew the attempt's request before it went out (its
    /// credential went stale while it waited for a connection; see ``SendingCondition``).
    @inline(__always)
    private static func wasWithdrawn(_ result: Result<HTTPResponse, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return (error as? TransportError)?.code == .withdrawn
    }

    /// Whether the service environment's requests are signed.
    private static func isSigned(_ resolved: ResolvedService) -> Bool {
        resolved.environment.credentials != nil && resolved.service.signer != nil
    }

    /// Whether the environment's clock correction now differs from the one the attempt was
    /// signed with by more than the tolerance: its refusal (a 401, or a code the service's
    /// policies map to ``ErrorPolicy/correctClock``) was for the signing time.
    private static func clockMoved(since attempt: Attempt, _ resolved: ResolvedService) -> Bool {
        abs(resolved.clockSkew.offset - attempt.signingOffset) > resolved.clockSkew.tolerance
    }

    private static func authenticationFailed(_ failure: AuthenticationFailure, _ load: LoadContext, attempts: Int) -> APIError {
        load.plan.error(.authenticationFailed, id: load.id, failure.description, failure.underlying, attempts: attempts)
    }

    /// Makes and signs the plan's request for `attempt` with `signingContext` (a fresh time and
    /// nonce), carrying `credential` as its authenticator places it — and sent under the
    /// condition that the credential is still good when a connection is free for it — and the
    /// headers the load's observers add; `remaining`, when given, becomes its total timeout
    /// (what is left of the load's, for a later attempt).
    @inline(__always)
    private static func makeRequest(
        _ plan: LoadPlan, attempt: Attempt, credential: Credential?, signingContext: SigningContext, remaining: Duration?, writer: DownloadWriter? = nil
    ) -> Result<HTTPRequest, ServiceError> {
        var headers = plan.headers
        if let cache = plan.cache {
            // Before signing, as the range below: the conditions are part of what is signed.
            for (name, value) in cache.conditionalHeaders where !headers.contains(name) { headers.set(name: name, value: value) }
        }
        if let writer {
            // Before signing: a scheme that covers headers covers the range asked for.
            for (name, value) in writer.resumeHeaders { headers.set(name: name, value: value) }
        }
        var parameters = plan.parameters
        if let credential, let authenticator = plan.authenticator {
            switch authenticator.placement {
            case .authorization(let scheme): headers.set(name: "Authorization", value: scheme.isEmpty ? credential.token : "\(scheme) \(credential.token)")
            case .parameter(let name): parameters[name] = .string(credential.token)
            }
        }
        // Before signing: a scheme that covers headers covers a trace context too.
        plan.observation?.attemptWillBeSigned(attempt.number, headers: &headers)
        do throws(ServiceError) {
            var made = try RequestGenerator().makeRequest(
                for: plan.resolved, methodName: plan.methodName, method: plan.method, parameters: parameters,
                headers: headers, bodyEncoding: plan.bodyEncoding, rawBody: plan.transfer?.body, signingContext: signingContext
            )
            if let timeouts = plan.timeouts { made.timeouts = timeouts }
            if credential != nil, let authenticator = plan.authenticator {
                made.sendingCondition = authenticator.sendingCondition(generation: attempt.credentialGeneration, reportsRefusal: !attempt.renewedCredential)
            }
            if let transfer = plan.transfer {
                made.bodyReceiver = writer ?? transfer.stream
                made.control = transfer.control
            }
            if let remaining {
                var timeouts = made.timeouts ?? Timeouts()
                timeouts.total = max(remaining, .milliseconds(1))
                made.timeouts = timeouts
            }
            return .success(made)
        } catch {
            return .failure(error)
        }
    }
}
