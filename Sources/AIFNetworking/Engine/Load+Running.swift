import Foundation

/// A load's outcome as its caller gets it.
typealias LoadOutcome<Content: Decodable & Sendable> = Result<APIResponse<Content>, APIError>

extension Load {
    /// Runs the load from its preparation to its delivery, the one path of every face:
    /// prepares it, sends it — or ends it without sending — and hands its outcome, checked,
    /// decoded, recorded and told to the observers and the plugins, to `delivery`, once. An
    /// expired answer from the cache starts its refresh, a load of its own, when the input
    /// says so.
    ///
    /// - Parameters:
    ///   - subject: What the load is of; held weakly once the load is handed to its steps.
    ///   - input: Its parameters, and what moves besides them.
    ///   - delivery: Where the outcome goes, and to whom.
    ///   - completion: The caller's, for ``LoadDelivery/caller(on:)``: gets the outcome.
    func run<Subject: LoadSubject>(
        of subject: Subject, _ input: LoadInput, delivery: LoadDelivery, then completion: (@Sendable (LoadOutcome<Subject.Content>) -> Void)? = nil
    ) {
        let executor: any StepExecutor
        if case .caller(let on) = delivery {
            executor = on
        } else {
            executor = subject.proxy.loadExecutor
        }
        let stage = prepare(for: subject, input)
        guard case .send(let plan) = stage else {
            // Ended without sending, still off the caller's stack, like every load (the subject
            // held until then): where the delegates hear it, when they do — a cancellation until
            // then ends it as cancelled — else where its steps run.
            let ending: @Sendable () -> Void = { [self] in
                let outcome = endWithoutSending(stage, of: subject, delivery: delivery)
                if case .stale = stage, input.refreshesStale, case .success = outcome {
                    var refresh = input
                    refresh.refreshing = id
                    subject.proxy.begin(group: subject.group, owner: subject.owner).run(of: subject, refresh, delivery: delivery.tellsDelegates ? .delegates : .nobody)
                }
                completion?(outcome)
            }
            return delivery.tellsDelegates ? subject.callbackExecutor.run(ending) : executor.run(ending)
        }
        // The subject held weakly: a load does not keep its manager alive; a manager
        // deallocated meanwhile cancels its loads, which then end without it.
        let proxy = subject.proxy
        let transfer = input.transfer
        start(plan, on: executor) { [weak subject, self] ending in
            let outcome = Self.conclude(ending, plan: plan, id: id, subject: subject)
            if case .failure = outcome { transfer?.download?.abandon() }
            guard let subject else {
                proxy.endAbandoned(self, plan: plan)
                completion?(outcome)
                return
            }
            finish(outcome, of: subject, delivery: delivery)
            completion?(outcome)
        }
    }

    /// Ends a load that sent nothing (it failed before sending, or the cache answered) — as
    /// cancelled, if it was cancelled first — and delivers it.
    @discardableResult
    func endWithoutSending<Subject: LoadSubject>(
        _ stage: Stage, of subject: Subject, delivery: LoadDelivery
    ) -> LoadOutcome<Subject.Content> {
        let outcome: LoadOutcome<Subject.Content>
        if let cancellation = endBeforeSending() {
            outcome = .failure(APIError(
                cancellation.kind, loadID: id, service: subject.serviceName, path: subject.path, message: "the request was cancelled\(cancellation.because)"))
        } else {
            switch stage {
            case .failed(let error):
                outcome = .failure(error)
            case .cached(let answer), .stale(let answer):
                // Put there by `prepare` for this subject, so of its type.
                outcome = .success(answer as! APIResponse<Subject.Content>)
            case .send:
                preconditionFailure("a load to send ends through its attempts")
            }
        }
        finish(outcome, of: subject, delivery: delivery)
        return outcome
    }

    /// Ends the load exactly once, with `outcome`: takes it out of the proxy's table, tells its
    /// observers, has the subject record it, and hands it to the plugins and — when the
    /// delivery says so — the delegates. A second call does nothing.
    func finish<Subject: LoadSubject>(_ outcome: LoadOutcome<Subject.Content>, of subject: Subject, delivery: LoadDelivery) {
        guard delivered() else { return }
        let observed = ObservedLoad.Outcome(outcome)
        let (observation, plugins) = listeners
        observation?.loadDidEnd(observed)
        subject.loadEnded(id, with: outcome)
        if delivery.tellsDelegates {
            subject.callbackExecutor.run { [weak subject] in
                if let subject {
                    subject.tellDelegates(outcome, observed, plugins: plugins)
                } else {
                    plugins?.didEnd(observed)
                }
            }
        } else {
            _ = plugins?.willDeliver(outcome)
            plugins?.didEnd(observed)
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
