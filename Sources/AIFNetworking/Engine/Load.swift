import Foundation
@_spi(CrossModule) import AIFTransport

/// How a load's attempts ended, for the load to check, decode and deliver (``Load/conclude(_:plan:id:subject:)``).
enum LoadEnding: Sendable {
    /// The last attempt's exchange, or the failure that sending it ended with; `notRetried`
    /// says why a failure the retry policy weighed was not retried, and `retryableAt` when
    /// the server said it could be sent again, when that wait was not made.
    case answered(Result<Exchange, APIError>, attempts: Int, notRetried: String?, retryableAt: Date? = nil)
    /// The load failed before it had an answer to deliver.
    case failed(APIError)
}

/// The one object of a load, from its ID to its delivery: the proxy's table holds it while the
/// load is in flight, and nothing else about the load. It prepares itself from what it is of
/// (``LoadSubject``: the manager's endpoint) into a plan (``prepare(for:_:)``); then it
/// performs what the load's ``LoadStateMachine`` decides — gets the credential, makes, signs
/// and sends each attempt through the proxy, waits before a retry on the proxy's clock — and
/// tells the machine what came of it, until the machine ends the load; then it checks and
/// decodes the answer and delivers the outcome where its face said, once
/// (``run(of:_:delivery:then:)``). While the attempts run it does not call into the manager: the
/// plugins' word on a retry comes through the plan. A load answered from the cache, or refused
/// before sending, ends through it too.
///
/// A cancellation is an event of the load like the others. While the load waits for a step
/// outside it — a transfer, a wait, a credential's refresh — the cancellation ends it
/// at once: the step is stopped and whatever it produces afterwards is ignored, so a transport
/// slow to give up a transfer does not hold up the load's ending. While the load is worked on
/// — prepared, or it makes a request, weighs an answer, tells the
/// observers — the cancellation is the next event the machine hears, so that nothing the
/// load's observers hear comes after its end; and so it is while a transfer that writes into
/// the load's file or stream, or reads its upload, winds down — the load ends once the
/// transfer has let go of them.
final class Load: InFlightLoad {
    /// The load's ID.
    let id: LoadID
    /// The group it was started in, if any.
    let group: APIProxy.LoadGroup?
    /// Its manager's loads, which it counts itself in while it is in flight.
    let owner: LoadOwner?
    private let proxy: APIProxy
    private let clock: any LoadClock
    /// When the load was made, on its clock: its total timeout counts from here, its
    /// preparation included.
    private let startedAt: Duration
    /// What the load runs with, given as it starts: set once, then only read. Unchecked for
    /// Sendable, with a reason: ``start(_:on:completion:)`` writes it before the load's first
    /// event, and every read is on a path that starts after that write — the load's own steps,
    /// which `start` begins, or a cancellation that finds the load waiting for a step it handed
    /// off, which it learns under the state's lock, taken by `start` after the write. (An
    /// `AtomicLazyReference` runs unspecialized from its library on every read, which a load
    /// makes many of: see `Benchmarks/history/notes.md`.)
    nonisolated(unsafe) private var given: Run?
    /// The load's decisions, and whether it is worked on; each event is told under this lock,
    /// and its action performed outside it.
    private let state = Locked(State())

    /// What a load's attempts run with once it is prepared.
    private final class Run: Sendable {
        let plan: LoadPlan
        let executor: any StepExecutor
        /// Stops the step under way: each transfer, wait and credential request is attached to it.
        let steps = AsyncCancellation()

        init(_ plan: LoadPlan, executor: any StepExecutor) {
            self.plan = plan
            self.executor = executor
        }
    }

    private struct State {
        /// The load's decisions and who has it, from its preparation to its delivery.
        var machine = LoadStateMachine()
        /// The timer of the load's total timeout while the load waits for a credential: cancelled
        /// as the credential comes or the load ends.
        var deadline: (any CancellableTransfer)?
        /// What hears the load, when the proxy has observers.
        var observation: (any APIProxy.LoadObservation)?
        /// The manager's plugins as the load started, when it had any.
        var plugins: LoadPlugins?
        /// Gets the ending, given as the load starts; taken out as it is called. The caller's
        /// closure usually holds the load (it finishes the load with it): kept past
        /// the ending, it would keep the load, its request and its answer alive for ever.
        var completion: (@Sendable (LoadEnding) -> Void)?

        var hasEnded: Bool { machine.hasEnded }
    }

    private var run: Run {
        guard let run = given else { preconditionFailure("load \(id) was worked on before it started") }
        return run
    }
    private var plan: LoadPlan { run.plan }
    private var executor: any StepExecutor { run.executor }
    private var steps: AsyncCancellation { run.steps }

    /// Makes the object of a new load, prepared until ``start(_:on:completion:)``
    /// or ``endBeforeSending()``.
    ///
    /// - Parameters:
    ///   - id: The load's ID.
    ///   - proxy: Where its requests are sent, its retries budgeted and its steps logged.
    ///   - group: The group it is started in, if any.
    ///   - owner: Its manager's loads, if a manager starts it.
    init(id: LoadID, proxy: APIProxy, group: APIProxy.LoadGroup? = nil, owner: LoadOwner? = nil) {
        self.id = id
        self.proxy = proxy
        self.group = group
        self.owner = owner
        clock = proxy.clock
        startedAt = clock.now
    }

    /// What hears the load: the proxy's observers' observation and the manager's plugins, when
    /// there are any; set once as the load is prepared, read as it ends.
    var listeners: (observation: (any APIProxy.LoadObservation)?, plugins: LoadPlugins?) {
        get { state.withLock { ($0.observation, $0.plugins) } }
        set { state.withLock { ($0.observation, $0.plugins) = newValue } }
    }

    /// Runs the load: its attempts until one is delivered or the load fails (or is cancelled —
    /// as it may have been while it was prepared). Called where the load was prepared; its first
    /// step, and every later one, runs on `executor`, and `completion` is called there, exactly
    /// once.
    ///
    /// - Parameters:
    ///   - plan: What was read as the load was prepared.
    ///   - executor: Where every step after the first runs.
    ///   - completion: Gets the ending.
    func start(_ plan: LoadPlan, on executor: any StepExecutor, completion: @escaping @Sendable (LoadEnding) -> Void) {
        given = Run(plan, executor: executor)
        state.withLock { state in
            state.completion = completion
            state.machine.prepared(usesCredential: plan.authenticator != nil, isSigned: plan.isSigned, clockTolerance: plan.resolved.clockSkew.tolerance)
        }
        proxy.retryBudget.recordLoad(at: startedAt)
        executor.run { [self] in
            // The load's one deadline counts from its making, on its clock (see ``handOffWatchingDeadline(_:)``).
            perform(decide { $0.start(totalTimeout: self.plan.totalTimeout, startedAt: startedAt, on: clock) })
        }
    }

    /// Ends a load that sends nothing (answered from the cache, or refused before sending);
    /// returns the cancellation that came first, if one did, its answer then to be dropped for
    /// the cancellation.
    func endBeforeSending() -> LoadStateMachine.Cancellation? {
        state.withLock { $0.machine.endedWithoutSending() }
    }

    /// The load's outcome was handed to its caller (or, its manager gone, to nobody): it leaves
    /// the proxy's table. `false` after the first time, when nothing is to be delivered again.
    @discardableResult
    func delivered() -> Bool {
        guard state.withLock({ $0.machine.delivered() }) else { return false }
        proxy.end(self)
        return true
    }

    /// Cancels the load, unless it has ended: at once (its ending told on the executor) while it
    /// waits for a step handed off, which is stopped; once a stopped transfer that holds the
    /// load's file, stream or upload has let go of them; else as the next event the machine
    /// hears (``LoadStateMachine/Custody``). The first cancellation's cause is the one the load
    /// ends with.
    func cancel(_ cause: LoadStateMachine.Cancellation) {
        let (action, stopsStep) = state.withLock { $0.machine.cancel(cause) }
        // A step is handed off only once the load has started.
        if stopsStep { steps.cancel() }
        guard case .fail(let failure) = action else { return }
        executor.run { [self] in
            complete(.failed(plan.error(failure.kind, id: id, failure.message, nil, attempts: failure.attempts)))
        }
    }

    /// Tells the ending, the first time only.
    private func complete(_ ending: LoadEnding) {
        let (completion, deadline) = state.withLock { state in
            defer { (state.completion, state.deadline) = (nil, nil) }
            return (state.completion, state.deadline)
        }
        deadline?.cancel()
        completion?(ending)
    }

    /// Tells the machine of an event — or of the cancellation asked for meanwhile — and
    /// returns what to do.
    @inline(__always)
    private func decide(_ event: (inout LoadStateMachine) -> LoadStateMachine.Action) -> LoadStateMachine.Action {
        state.withLock { $0.machine.hear(event) }
    }

    /// Hands a step off (`start` starts it; its outcome comes back through ``resume()``): the
    /// load is not worked on until then — unless a cancellation came meanwhile, which ends the
    /// load instead. A step that `holdsLoad` (its file, stream or upload) is stopped by a
    /// cancellation, and the load ends when its outcome comes back.
    ///
    /// The load's total timeout is one deadline, set as the load started, and each step is held
    /// to what is left of it: an attempt's request carries it as its own total (the transport
    /// ends the transfer then), a wait before a retry is never longer, and a wait for a
    /// credential, whose refresh has a timeout of its own, is handed off watching it
    /// (``handOffWatchingDeadline(_:)``).
    @inline(__always)
    private func handOff(holdsLoad: Bool = false, _ start: () -> Void) {
        if let cancelled = state.withLock({ $0.machine.handOff(holdsLoad: holdsLoad) }) { return perform(cancelled) }
        start()
    }

    /// Hands off a wait for a credential, whose end the load's total timeout may come before:
    /// the clock tells the load when it runs out (``disarmDeadline()`` as the credential comes).
    @inline(never)
    private func handOffWatchingDeadline(_ start: () -> Void) {
        let remaining = state.withLock { $0.machine.remaining(on: clock) }
        if let remaining {
            let timer = clock.scheduleDeadline(after: max(remaining, .zero)) { [weak self] in self?.cancel(.totalTimeout) }
            let stale = state.withLock { state -> (any CancellableTransfer)? in
                defer { state.deadline = state.hasEnded ? nil : timer }
                return state.hasEnded ? timer : state.deadline
            }
            stale?.cancel()
        }
        handOff(start)
    }

    /// Stops the clock's timer of the load's total timeout, if one is armed.
    @inline(never)
    private func disarmDeadline() {
        let timer = state.withLock { state in
            defer { state.deadline = nil }
            return state.deadline
        }
        timer?.cancel()
    }

    /// The load is worked on again, on the outcome of the step it handed off; `false` when the load
    /// ended meanwhile (cancelled), the outcome to be ignored.
    @inline(__always)
    private func resume() -> Bool {
        state.withLock { $0.machine.stepReturned() }
    }

    // MARK: Performing

    /// Performs `action`; `underlying` is the error behind a failure.
    private func perform(_ action: LoadStateMachine.Action, underlying: (any Error)? = nil) {
        switch action {
        case .getCredential:
            guard let authenticator = plan.authenticator else { preconditionFailure("a credential for a load without an authenticator") }
            handOffWatchingDeadline {
                authenticator.acquire(on: executor, cancellation: steps, clock: clock) { [self] outcome in
                    if resume() { credentialCame(outcome) }
                }
            }
        case .renewCredential(let generation, let heldBack):
            guard let authenticator = plan.authenticator else { preconditionFailure("a credential for a load without an authenticator") }
            proxy.logRenewal(id, generation: generation, heldBack: heldBack)
            plan.observation?.loadWillRenewCredential()
            handOffWatchingDeadline {
                authenticator.renew(after: generation, on: executor, cancellation: steps, clock: clock) { [self] outcome in
                    if resume() { credentialCame(outcome) }
                }
            }
        case .send(let attempt):
            send(attempt)
        case .startAgain(.clockCorrected(let offset)):
            proxy.logClockResend(id, offset: offset)
            perform(decide { $0.startedAgain(on: clock) })
        case .startAgain(.downloadStartsOver):
            proxy.logNoRetry(id, "the partial file does not match the server's; asking for the whole file")
            perform(decide { $0.startedAgain(on: clock) })
        case .wait(let delay):
            let wait = PendingStep<Void>(on: executor) { [self] resumed in
                if resume() { perform(decide { $0.waitEnded(cancelled: resumed == nil, on: clock) }) }
            }
            handOff {
                steps.attach(wait)
                wait.resume(after: delay, on: clock, with: ())
            }
        case .fail(let failure):
            complete(.failed(plan.error(failure.kind, id: id, failure.message, underlying, attempts: failure.attempts)))
        case .askToRetry, .end:
            preconditionFailure("the load's machine decided \(action) without an answer")
        case .ignore:
            break
        }
    }

    /// Performs `action`, which the machine decided about `answer`: asks the plugins and the
    /// budget about a retry, ends the load with the answer, or fails it (the answer's response
    /// kept with the error).
    private func perform(_ action: LoadStateMachine.Action, after answer: LoadStateMachine.Answer, underlying: (any Error)? = nil) {
        switch action {
        case .askToRetry(let retry):
            let next: LoadStateMachine.Action
            if let circuit = plan.resolved.circuitBreaker, let open = circuit.remainingOpen(at: clock.now) {
                next = decide { $0.retryDeclined(retry, because: "the circuit of \(plan.resolved.circuitName) is open for \(RetryPolicy.Reason.seconds(open)) s more") }
            } else if let plugins = plan.plugins, !plugins.allowRetry(retry) {
                next = decide { $0.retryDeclined(retry, because: "a plugin declined the retry") }
            } else if !proxy.retryBudget.spendRetry(at: clock.now) {
                next = decide { $0.retryDeclined(retry, because: "the proxy's retry budget is spent") }
            } else {
                proxy.logRetry(id, retry)
                plan.observation?.loadWillRetry(retry)
                next = decide { $0.retryAllowed(retry) }
            }
            perform(next, after: answer)
        case .end(let ending):
            end(ending, with: answer)
        case .fail(let failure):
            let response = try? answer.outcome.get()
            complete(.failed(plan.error(failure.kind, id: id, failure.message, underlying, response, attempts: failure.attempts)))
        default:
            perform(action, underlying: underlying)
        }
    }

    private func credentialCame(_ outcome: CredentialOutcome) {
        disarmDeadline()
        switch outcome {
        case .credential(let credential, let generation):
            perform(decide { $0.credentialArrived(credential, generation: generation, on: clock) })
        case .failed(let failure):
            perform(decide { $0.credentialFailed(failure) }, underlying: failure.underlying)
        case .cancelled:
            perform(decide { $0.credentialWaitCancelled() })
        }
    }

    /// Makes, signs and sends an attempt's request — a download's attempt writing to its
    /// partial file, asking for what it lacks — and tells the machine of its answer.
    private func send(_ attempt: LoadStateMachine.Send) {
        var admission = CircuitBreaker.Machine.Admission.send
        if let circuit = plan.resolved.circuitBreaker {
            let change: CircuitBreaker.Change?
            (admission, change) = circuit.admit(at: clock.now)
            if let change { proxy.circuitChanged(change, of: plan.resolved) }
            if case .refuse(let nextProbeIn) = admission { return refuse(nextProbeIn: nextProbeIn) }
        }
        let isProbe = admission == .probe
        /// Stops before sending: a probe's place goes to the next request.
        func stop(_ kind: APIError.Kind, _ error: some Error & CustomStringConvertible) {
            if isProbe { _ = plan.resolved.circuitBreaker?.record(.failure(CancellationError()), probe: true, at: clock.now) }
            perform(decide { $0.stopped(kind, error.description) }, underlying: error)
        }
        var writer: DownloadWriter?
        if let download = plan.transfer?.download {
            do throws(FileDownload.Failure) {
                writer = try download.beginAttempt(identity: plan.downloadIdentity)
            } catch {
                return stop(.transport, error)
            }
        }
        let signingOffset = plan.resolved.clockSkew.offset
        let request: HTTPRequest
        do throws(ServiceError) {
            request = try makeRequest(attempt, signingContext: .at(clock.date, clockOffset: signingOffset), writer: writer)
        } catch {
            return stop(.configuration, error)
        }
        let number = state.withLock { state in
            state.machine.requestMade(signingOffset: signingOffset)
            return state.machine.number
        }
        let attemptWriter = writer
        handOff(holdsLoad: plan.transfer != nil) {
            proxy.send(
                request, for: plan.resolved, id: id, coalescingKey: plan.coalescingKey, cancellation: steps, executor: executor,
                progress: plan.transfer?.progressReporter(for: attemptWriter)
            ) { [self] result in
                // Whatever became of the load, the backend's circuit hears how its request ended.
                if let circuit = plan.resolved.circuitBreaker, let change = circuit.record(result, probe: isProbe, at: clock.now) {
                    proxy.circuitChanged(change, of: plan.resolved)
                }
                if resume() { answered(result, to: request, attempt: number, writer: attemptWriter) }
            }
        }
    }

    /// Ends the load without sending: its backend's circuit is open.
    @inline(never)
    private func refuse(nextProbeIn: Duration?) {
        let when = nextProbeIn.map { "the next probe goes out in \(RetryPolicy.Reason.seconds($0)) s" } ?? "its probes are out"
        let message = "the circuit of \(plan.resolved.circuitName) is open (its requests failed too often in a row): nothing was sent; \(when)"
        let action = decide { $0.stopped(.circuitOpen, message) }
        guard case .fail(let failure) = action, failure.kind == .circuitOpen else { return perform(action) }
        let error = plan.error(failure.kind, id: id, failure.message, attempts: failure.attempts)
        complete(.failed(error.retryable(at: nextProbeIn.map { clock.date + $0.timeInterval })))
    }

    /// Tells the machine of the answer to attempt `number`, with what the download and the
    /// service's rules say about it.
    private func answered(_ result: Result<HTTPResponse, any Error>, to request: HTTPRequest, attempt number: Int, writer: DownloadWriter?) {
        let withdrawn = plan.authenticator != nil && Self.isWithdrawal(result)
        if !withdrawn { plan.observation?.attemptDidEnd(ObservedLoad.Attempt(number: number, request: request, result: result)) }
        var answer = LoadStateMachine.Answer(outcome: result, request: request, clockOffset: plan.resolved.clockSkew.offset)
        if let transfer = plan.transfer {
            transfer.progress?.flush()
            answer.bodyWentToReader = transfer.stream?.tookBody == true
        }
        if let writer, case .success(let response) = result {
            do throws(FileDownload.Failure) {
                answer.download = try downloadVerdict(writer, on: response)
            } catch {
                let kind: APIError.Kind = if case .file = error.reason { .transport } else { .invalidResponse }
                return perform(decide { $0.answerUnusable(kind, error.description) }, after: answer, underlying: error)
            }
        }
        if case .success(var response) = result, needsJudging(response) {
            answer.judgement = judge(&response)
            answer.outcome = .success(response)
        }
        perform(decide { $0.answered(answer, policy: plan.retryPolicy, on: clock) }, after: answer)
    }

    /// Ends the load with its last answer: tells the error handler the service's policy names,
    /// logs why a failure was not retried, and hands the exchange on, to be checked.
    private func end(_ ending: LoadStateMachine.Ending, with answer: LoadStateMachine.Answer) {
        if let handler = ending.handler, case .success(let response) = answer.outcome {
            let veto = answer.judgement.veto
            let event = ErrorPolicies.Event(
                handler: handler, service: plan.serviceName, environment: plan.resolved.environmentName, statusCode: response.statusCode,
                code: answer.judgement.code, message: veto?.message)
            if plan.resolved.errorHandlers?.tell(event, now: clock.now) != true { proxy.logMissingHandler(id, handler) }
        }
        if let note = ending.notRetried { proxy.logNoRetry(id, note) }
        let exchange: Result<Exchange, APIError>
        switch answer.outcome {
        case .success(let response):
            exchange = .success(Exchange(request: answer.request, response: response, veto: answer.judgement.askedService ? .some(answer.judgement.veto) : nil))
        case .failure(let error):
            exchange = .failure(APIError.sending(error, id: id, service: plan.serviceName, path: plan.shownPath).counting(attempts: ending.attempts))
        }
        complete(.answered(exchange, attempts: ending.attempts, notRetried: ending.notRetried, retryableAt: ending.retryableAt))
    }

    // MARK: Judging

    /// Whether the service's rules must look at `response`: it is not a success (or a 304 the
    /// cache revalidates with), or the service has rules that look into successes too.
    @inline(__always)
    private func needsJudging(_ response: HTTPResponse) -> Bool {
        let usable = response.isSuccess || response.statusCode == 304 && plan.cache != nil
        return !usable || plan.errorPolicies != nil || !(plan.authenticator?.expiredApplicationCodes.isEmpty ?? true)
    }

    /// What the service's veto, its error policies and the authenticator say about `response`.
    /// The body the service's rule parsed stays with the response, for the decoder.
    @inline(never)
    private func judge(_ response: inout HTTPResponse) -> LoadStateMachine.Judgement {
        var json = response.json
        let service = plan.resolved.service
        let veto = service.verdict(on: response, json: &json, graphQL: plan.readsGraphQLErrors)
        response.json = json
        // The application error code: the veto's, else — for a failed status, when the error
        // policies name codes — the error body's.
        var bodyCode: String?
        if veto?.code == nil, !response.isSuccess, let policies = plan.errorPolicies, !policies.codes.isEmpty {
            bodyCode = service.errorBody.code(in: response.body)
        }
        return LoadStateMachine.Judgement(
            askedService: true, veto: veto, bodyCode: bodyCode, errorPolicy: plan.errorPolicies?.policy(for: response, code: veto?.code ?? bodyCode),
            credentialExpired: plan.authenticator?.isExpiry(response, veto: veto) ?? false)
    }

    /// The download's verdict on the answer to the attempt `writer` served; records the
    /// finished file.
    @inline(never)
    private func downloadVerdict(_ writer: DownloadWriter, on response: HTTPResponse) throws(FileDownload.Failure) -> LoadStateMachine.DownloadVerdict {
        switch try writer.verdict(on: response) {
        case .finished(let file):
            plan.transfer?.download?.finished(file)
            return .finished
        case .startOver: return .startOver
        case .notTheFile: return .notTheFile
        }
    }

    /// Whether the transport withdrew the attempt's request before it went out (its
    /// credential went stale while it waited for a connection; see ``SendingCondition``).
    @inline(__always)
    private static func isWithdrawal(_ result: Result<HTTPResponse, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return (error as? TransportError)?.code == .withdrawn
    }

    // MARK: Making the request

    /// Makes and signs the plan's request for `attempt` with `signingContext` (a fresh time and
    /// nonce), carrying the attempt's credential as the authenticator places it — and sent
    /// under the condition that the credential is still good when a connection is free for it
    /// — the cache's conditions, a download's range and the headers the load's observers add;
    /// what is left of the load's total timeout is the attempt's.
    @inline(__always)
    private func makeRequest(
        _ attempt: LoadStateMachine.Send, signingContext: SigningContext, writer: DownloadWriter?
    ) throws(ServiceError) -> HTTPRequest {
        var headers = plan.headers
        if let cache = plan.cache {
            // Before signing, as the range below: the conditions are part of what is signed.
            for (name, value) in cache.conditionalHeaders where !headers.contains(name) { headers.set(name: name, value: value) }
        }
        if let writer {
            // Before signing: a scheme that covers headers covers the range asked for.
            for (name, value) in writer.resumeHeaders { headers.set(name: name, value: value) }
        }
        // The observers hear the attempt start; then the plugins add their headers (a trace
        // context, for one) before signing: a scheme that covers headers covers them too.
        plan.observation?.attemptWillStart(attempt.number)
        plan.plugins?.attemptWillBeSigned(attempt.number, headers: &headers)
        let credential = attempt.credential.flatMap { credential in plan.authenticator.map { Authenticator.PlacedCredential(credential, as: $0.placement) } }
        var made = try plan.resolved.makeRequest(
            path: plan.path, method: plan.method, parameters: plan.parameters,
            headers: headers, bodyEncoding: plan.bodyEncoding, arrays: plan.arrayEncoding, query: plan.query, rawBody: plan.body,
            rawBodyContentType: plan.bodyContentType,
            placements: plan.placements, credential: credential, signingContext: signingContext
        )
        if let timeouts = plan.timeouts { made.timeouts = timeouts }
        if let declared = plan.declaredSafeToRepeat { made.declaredSafeToRepeat = declared }
        // The transport sends the request again on its own when a reused connection closed
        // before answering only if the policy's one rule for sending again allows it. A safe
        // method's request (GET, HEAD …) changes nothing however often it arrives: the rule
        // allows it unless its body is a stream, which is the transport's default, so a load
        // that succeeds never reads its policy.
        if !made.method.isSafe { made.isIdempotent = plan.retryPolicy.verdict(onSending: made, again: .reusedConnectionLost) == .allowed }
        if attempt.credential != nil, let authenticator = plan.authenticator {
            made.sendingCondition = authenticator.sendingCondition(generation: attempt.generation, reportsRefusal: attempt.reportsRefusal, clock: clock)
        }
        if let transfer = plan.transfer {
            made.bodyReceiver = writer ?? transfer.stream
            made.control = transfer.control
        }
        // The attempt has what is left of the load's one deadline as its own total.
        if let remaining = attempt.remaining {
            var timeouts = made.timeouts ?? HTTPRequest.Timeouts()
            timeouts.total = max(remaining, .milliseconds(1))
            made.timeouts = timeouts
        }
        return made
    }
}
