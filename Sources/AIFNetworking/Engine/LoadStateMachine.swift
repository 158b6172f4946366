import Foundation

/// The decisions of one load, as a value: which attempt is under way, what to do after each
/// thing that happens to it, and when it ends. It holds no resources and performs nothing — it
/// is told what happened (a credential came, an answer arrived, a wait ended) and what time it
/// is, and returns the next action — so every path a load can take is tested without a socket
/// or real time. ``Load`` owns one per load and performs its actions.
///
/// ```
///  start ─▶ credential ─▶ send ─▶ answer ─┬─ usable, or not to be retried ───────────────────▶ end
///    ▲      (if the load    │               ├─ withdrawn: the credential went stale ─▶ renew ─┐
///    │       uses one)      │               ├─ credential refused, not renewed yet ──▶ renew ─┤
///    │                      │               ├─ signing time refused, clock moved ─▶ start ─┐  │
///    │                      │               ├─ a download to start over (once) ────▶ start ─┤  │
///    │                      │               └─ retryable ─▶ ask plugins/budget ───┬─ no ─▶ end
///    │                      │                                                     └─ wait ─┤
///    └──────────────────────┼──────────────────────────────────────────────────────────────┘
///                           └◀──────────────────────────── renewed credential ◀───────────┘
///  a credential that cannot be had, a request that cannot be made ──▶ fail
///  cancelled, or the total timeout run out, at any step before the end ──▶ fail
///    (what the step under way produces is ignored)
///
///  preparing ─▶ prepared ─▶ start …   preparing ─▶ ended without sending (the cache answered,
///  or the load was refused)            end / fail / ended without sending ─▶ delivered (once)
/// ```
///
/// Between events the load is either worked on — prepared, or in a step the engine performs
/// itself (making a request, weighing an answer, telling the observers) — or it waits for a
/// step handed off (a transfer, a wait, a credential): ``Custody``. A cancellation that comes
/// while the load waits ends it at once; one that comes while it is worked on is kept and is
/// the next event the machine hears, so that nothing the load's observers hear comes after its
/// end; and while a transfer that uses what the load owns (its file, stream or upload) winds
/// down, the load ends when the transfer hands it back.
///
/// A load ends exactly once: after ``Action/end(_:)`` or ``Action/fail(_:)`` every event is
/// answered with ``Action/ignore``; and it is delivered exactly once (``delivered()``).
struct LoadStateMachine: Sendable {
    /// What the engine must do next.
    enum Action: Sendable, Equatable {
        /// Get the credential (at once when it is valid, else after the refresh).
        case getCredential
        /// The credential of `generation` was refused — for this request, or, when `heldBack`,
        /// for another while this one waited for a connection: get the renewed one.
        case renewCredential(after: Int, heldBack: Bool)
        /// Make, sign and send the attempt's request.
        case send(Send)
        /// Start the next attempt at once, for `reason`: the engine says why in its log, then
        /// reports ``LoadStateMachine/startedAgain(at:)``.
        case startAgain(StartAgain)
        /// The policy allows this retry: ask the manager's plugins and the
        /// proxy's budget, then report ``LoadStateMachine/retryAllowed(_:)`` or
        /// ``LoadStateMachine/retryDeclined(_:because:)``.
        case askToRetry(RetryPolicy.Attempt)
        /// Wait this long, then report ``LoadStateMachine/waitEnded(cancelled:at:)``.
        case wait(Duration)
        /// The last attempt's answer (or its sending failure) is the load's: check it, decode
        /// it, deliver it.
        case end(Ending)
        /// The load ends with this failure, before any answer it could deliver.
        case fail(Failure)
        /// Nothing: the load has ended.
        case ignore
    }

    /// An attempt to send.
    struct Send: Sendable, Equatable {
        /// The attempt's number: 1 for the first.
        var number: Int
        /// The credential to carry, or `nil` when the load uses none.
        var credential: Authenticator.Credential?
        /// The credential's generation.
        var generation: Int
        /// Whether a refusal of the credential marks it refused as the answer arrives (not
        /// for the one attempt after a renewal).
        var reportsRefusal: Bool
        /// What is left of the load's total timeout, if it has one: the attempt's own total.
        var remaining: Duration?
    }

    /// Why an attempt starts again at once.
    enum StartAgain: Sendable, Equatable {
        /// The server refused the signing time and its `Date` moved the environment's clock
        /// correction to `offset` seconds: sign again with it.
        case clockCorrected(offset: TimeInterval)
        /// A download's partial file did not match the server's: ask for the whole file.
        case downloadStartsOver
    }

    /// How a load ends with its last answer.
    struct Ending: Sendable, Equatable {
        /// How many times the request was sent: the attempts, and the transport's resends.
        var attempts: Int
        /// Why a failure the policy would retry was not retried, for the log and the error.
        var notRetried: String?
        /// The error handler the service's policy names for the answer, to be told of it.
        var handler: String?
        /// When the server said the request may be sent again, when that wait is what the load
        /// did not make (past its wait budget, its total timeout, the longest wait).
        var retryableAt: Date? = nil
    }

    /// How a load fails before it has an answer to deliver.
    struct Failure: Sendable, Equatable {
        var kind: APIError.Kind
        var message: String
        /// How many times the request was sent: the attempts, and the transport's resends.
        var attempts: Int
    }

    /// What the engine knows of an attempt's answer.
    struct Answer: Sendable {
        /// What came back: a response, or the transport's failure (or another, such as a
        /// redirect hop that could not be signed).
        var outcome: Result<HTTPResponse, any Error>
        /// The request the attempt sent (the retry policy weighs its method and body).
        var request: HTTPRequest
        /// What the service's rules say about the response; empty when there is nothing to
        /// judge (a success and no rules that look into successes).
        var judgement = Judgement()
        /// The environment's clock correction now, in seconds.
        var clockOffset: TimeInterval = 0
        /// Whether the body went to its reader as it came (nothing is sent again after that).
        var bodyWentToReader = false
        /// A download's verdict on a response, if the load downloads.
        var download: DownloadVerdict?

        /// How many times the transport sent the request again on a fresh connection.
        var resends: Int {
            switch outcome {
            case .success(let response): response.metrics.resends
            case .failure(let error): (error as? TransportError)?.resends ?? 0
            }
        }
    }

    /// What the service's rules say about a response.
    struct Judgement: Sendable, Equatable {
        /// Whether the service was asked for its veto: `veto` is then its answer, which the
        /// check of the response uses rather than asking again.
        var askedService = false
        /// The service's veto, if it refused the response.
        var veto: ServiceVeto?
        /// The code in a failed status's error body, when the error policies looked for one.
        var bodyCode: String?
        /// The application error code: the veto's, else the error body's.
        var code: String? { veto?.code ?? bodyCode }
        /// The policy the service's ``/AIFServices/ErrorPolicies`` give the response, if any.
        var errorPolicy: ErrorPolicies.Action?
        /// Whether the response says the credential expired (a status or a veto code the
        /// authenticator names).
        var credentialExpired = false
    }

    /// A download's verdict on a response.
    enum DownloadVerdict: Sendable, Equatable {
        /// The file is complete.
        case finished
        /// The partial file did not match the server's and was emptied: ask for the whole.
        case startOver
        /// The response brings no file.
        case notTheFile
    }

    private enum Phase: Sendable, Equatable {
        /// It is prepared: its parameters reformed, the plugins asked, the cache looked up.
        case preparing
        case idle
        case gettingCredential
        case sending
        case renewingCredential(heldBack: Bool)
        case askingToRetry
        case waiting
        /// Its outcome is decided, and on its way to its caller.
        case ended
        /// Its outcome was handed to its caller.
        case delivered
    }

    /// Who has the load between two events.
    enum Custody: Sendable, Equatable {
        /// The engine works on it (prepares it, makes a request, weighs an answer, tells the
        /// observers): a cancellation is kept, to be the next event the machine hears.
        case worked(cancellation: Cancellation?)
        /// A step handed off has it (a transfer, a wait, a credential): a cancellation ends the
        /// load at once, and the step's outcome is ignored.
        case awaitingStep
        /// A step handed off uses what the load owns (its file, stream or upload): a
        /// cancellation stops the step and is heard when the step hands the load back.
        case lentToStep(cancellation: Cancellation?)
    }

    /// Whether the load carries an authenticator's credential.
    private(set) var usesCredential = false
    /// Whether the load's requests are signed.
    private(set) var isSigned = false
    /// How far the clock correction must move for a refused signing time to be signed again.
    private(set) var clockTolerance: TimeInterval = 0

    private var phase = Phase.preparing
    /// Who has the load now.
    private(set) var custody = Custody.worked(cancellation: nil)
    /// The attempt under way: 1 for the first.
    private(set) var number = 1
    /// When the load's total timeout ends, if it has one: from when the load started.
    private var deadline: Duration?
    /// The load's total timeout, if it has one.
    private var totalTimeout: Duration?
    /// The generation of the credential the attempt carries.
    private var generation = 0
    /// Whether the credential was renewed for this load already (once at most).
    private var renewedCredential = false
    /// The clock correction the attempt was signed with.
    private var signingOffset: TimeInterval = 0
    /// Whether the load was signed again after a refusal of its time (once at most).
    private var resignedForClock = false
    /// Whether a download started over (once at most).
    private var restartedDownload = false
    /// How many times the transport sent an attempt's request again on a fresh connection (a
    /// reused one closed before answering): counted with the attempts, since each could have
    /// reached the server.
    private var resends = 0
    /// How long the load has waited before its retries: its wait budget's spent part.
    private var waited = Duration.zero

    /// Creates the machine of a load about to be prepared.
    init() {}

    /// Whether the load has ended.
    var hasEnded: Bool { phase == .ended || phase == .delivered }

    // MARK: Custody

    /// Tells the machine of `event` — or, when a cancellation came while the load was worked on,
    /// of that cancellation instead — and returns what to do.
    @inline(__always)
    mutating func hear(_ event: (inout Self) -> Action) -> Action {
        if case .worked(let cause?) = custody {
            custody = .worked(cancellation: nil)
            return cancelled(cause)
        }
        return event(&self)
    }

    /// The load's caller (or its proxy, or its deadline) cancels it: what to do now, and whether
    /// the step handed off is to be stopped. Unless the load has ended, a cancellation ends it at
    /// once while it waits for a step; else it is kept for the next event (``hear(_:)``), or for
    /// the step that holds what the load owns to hand it back. The first cause is the one the
    /// load ends with.
    mutating func cancel(_ cause: Cancellation) -> (action: Action, stopsStep: Bool) {
        guard !hasEnded else { return (.ignore, false) }
        switch custody {
        case .worked(nil):
            custody = .worked(cancellation: cause)
            return (.ignore, false)
        case .lentToStep(nil):
            custody = .lentToStep(cancellation: cause)
            return (.ignore, true)
        case .worked, .lentToStep:
            return (.ignore, false)
        case .awaitingStep:
            return (cancelled(cause), true)
        }
    }

    /// The engine hands a step off (`holdsLoad`: one that uses the load's file, stream or
    /// upload). Returns the failure to end with instead, when a cancellation came meanwhile.
    mutating func handOff(holdsLoad: Bool) -> Action? {
        if case .worked(let cause?) = custody {
            custody = .worked(cancellation: nil)
            return cancelled(cause)
        }
        custody = holdsLoad ? .lentToStep(cancellation: nil) : .awaitingStep
        return nil
    }

    /// The step handed off came back with its outcome: `false` when the load ended meanwhile,
    /// the outcome to be ignored; else the load is worked on again (with the cancellation that
    /// came while a step held it, heard next).
    mutating func stepReturned() -> Bool {
        guard !hasEnded else { return false }
        if case .lentToStep(let cause) = custody {
            custody = .worked(cancellation: cause)
        } else {
            custody = .worked(cancellation: nil)
        }
        return true
    }

    // MARK: Events

    /// The load was prepared: what it will do is known.
    ///
    /// - Parameters:
    ///   - usesCredential: Whether the load carries an authenticator's credential.
    ///   - isSigned: Whether its requests are signed.
    ///   - clockTolerance: How far the environment's clock correction must have moved since an
    ///     attempt was signed for a refusal of its time to be signed again.
    mutating func prepared(usesCredential: Bool, isSigned: Bool, clockTolerance: TimeInterval) {
        guard phase == .preparing else {
            _ = unexpected("prepared")
            return
        }
        self.usesCredential = usesCredential
        self.isSigned = isSigned
        self.clockTolerance = clockTolerance
        phase = .idle
    }

    /// The load ended without sending: the cache answered, or it was refused before sending.
    /// Returns the cancellation that came first, if one did — the load then ends as cancelled.
    mutating func endedWithoutSending() -> Cancellation? {
        guard phase == .preparing else {
            _ = unexpected("an end without sending")
            return nil
        }
        phase = .ended
        guard case .worked(let cause?) = custody else { return nil }
        custody = .worked(cancellation: nil)
        return cause
    }

    /// The load's outcome is handed to its caller: `true` the first time, after its end; `false`
    /// after that, when nothing must be delivered again.
    mutating func delivered() -> Bool {
        guard phase == .ended else {
            assert(phase == .delivered, "a load was delivered in phase \(phase), before its end")
            return false
        }
        phase = .delivered
        return true
    }

    /// The load, prepared, starts its attempts; its total timeout, if it has one, counts from
    /// `startedAt` — when the load was made, its preparation included (now by default): each
    /// attempt is sent with what is left of it, no wait before a retry outlasts it, and when it
    /// runs out the engine reports ``cancelled(_:)`` with ``Cancellation/totalTimeout``, whatever
    /// the load is doing then. A preparation that took the whole of it ends the load before
    /// anything is sent.
    mutating func start(totalTimeout: Duration? = nil, startedAt: Duration? = nil, on clock: any LoadClock) -> Action {
        guard phase == .idle else { return unexpected("start") }
        self.totalTimeout = totalTimeout
        guard let totalTimeout else { return beginAttempt(on: clock) }
        let now = clock.now
        let deadline = (startedAt ?? now) + totalTimeout
        self.deadline = deadline
        guard deadline > now else {
            return fail(.timeout, "the load's total timeout of \(totalTimeout) ran out while it was prepared, before anything was sent", attempts: 0)
        }
        return beginAttempt(on: clock)
    }

    /// The credential the attempt asked for came (at once, after a refresh, or renewed).
    mutating func credentialArrived(_ credential: Authenticator.Credential, generation: Int, on clock: any LoadClock) -> Action {
        switch phase {
        case .gettingCredential:
            self.generation = generation
            return send(credential, on: clock)
        case .renewingCredential(let heldBack):
            if heldBack { number -= 1 }
            number += 1
            renewedCredential = true
            self.generation = generation
            return send(credential, on: clock)
        default:
            return unexpected("a credential")
        }
    }

    /// The credential could not be had: its refresh failed.
    mutating func credentialFailed(_ failure: AuthenticationFailure) -> Action {
        switch phase {
        case .gettingCredential: return fail(.authenticationFailed, failure.description, attempts: number - 1)
        case .renewingCredential(let heldBack): return fail(.authenticationFailed, failure.description, attempts: heldBack ? number - 1 : number)
        default: return unexpected("a failed credential")
        }
    }

    /// The load was cancelled while it waited for its credential.
    mutating func credentialWaitCancelled() -> Action {
        let message = "the request was cancelled while the credential was refreshed"
        switch phase {
        case .gettingCredential: return fail(.cancelled, message, attempts: number - 1)
        case .renewingCredential(let heldBack): return fail(.cancelled, message, attempts: heldBack ? number - 1 : number)
        default: return unexpected("a cancelled credential wait")
        }
    }

    /// The attempt's request was made and is about to be sent, signed with the clock
    /// correction `signingOffset`.
    mutating func requestMade(signingOffset: TimeInterval) {
        self.signingOffset = signingOffset
    }

    /// What is left of the load's total timeout at `clock`'s time, when it has one.
    func remaining(on clock: any LoadClock) -> Duration? {
        deadline.map { $0 - clock.now }
    }

    /// The attempt could not be sent: `kind` and `message` say why (its request could not be
    /// made, its file could not be opened).
    mutating func stopped(_ kind: APIError.Kind, _ message: String) -> Action {
        guard phase == .sending else { return unexpected("a stop") }
        return fail(kind, message, attempts: number - 1)
    }

    /// The attempt's answer came but cannot be used, nor asked for again: a download's file
    /// could not be written or checked.
    mutating func answerUnusable(_ kind: APIError.Kind, _ message: String) -> Action {
        guard phase == .sending else { return unexpected("an unusable answer") }
        return fail(kind, message, attempts: number)
    }

    /// The attempt's answer arrived (or its failure).
    ///
    /// - Parameters:
    ///   - answer: What came back, and what the service's rules say about it.
    ///   - policy: The load's retry policy, read only when a retry is weighed.
    ///   - clock: Tells the time, for what is left of the load's total timeout and a
    ///     `Retry-After` date.
    ///   - random: Draws the jittered wait before a retry; the clock's jitter by default.
    mutating func answered(
        _ answer: Answer, policy: @autoclosure () -> RetryPolicy, on clock: any LoadClock,
        random: ((Duration) -> Duration)? = nil
    ) -> Action {
        guard phase == .sending else { return unexpected("an answer") }
        resends += answer.resends
        if answer.bodyWentToReader { return end() }
        let judgement = answer.judgement
        let response: HTTPResponse
        switch answer.outcome {
        case .failure(let error as TransportError) where error.code == .withdrawn && usesCredential:
            if let why = refusal(answer.request, .withdrawn, policy()) { return end(notRetried: "\(error.code); \(why)") }
            phase = .renewingCredential(heldBack: true)
            return .renewCredential(after: generation, heldBack: true)
        case .failure(let error as TransportError):
            return weighRetry(of: .failure(error), answer.request, policy(), reason: nil, on: clock, clockOffset: answer.clockOffset, random: random)
        case .failure:
            return end()
        case .success(let answered):
            response = answered
        }
        switch answer.download {
        case .finished?: return end()
        case .startOver? where !restartedDownload:
            if let why = refusal(answer.request, .downloadStartsOver, policy()) {
                return fail(.invalidResponse, "the partial file did not match the server's, and the whole file is not asked for again: \(why)", attempts: number)
            }
            restartedDownload = true
            return again(.downloadStartsOver)
        case .startOver?, .notTheFile?, nil: break
        }
        if !resignedForClock, isSigned, response.statusCode == 401 || judgement.errorPolicy == .correctClock {
            if abs(answer.clockOffset - signingOffset) > clockTolerance {
                if let why = refusal(answer.request, .clockCorrected, policy()) {
                    return end(notRetried: "the server refused the signing time; \(why)")
                }
                resignedForClock = true
                return again(.clockCorrected(offset: answer.clockOffset))
            }
            if judgement.errorPolicy == .correctClock {
                return end(notRetried: "the server refused the signing time, but its Date header does not differ from the time signed with")
            }
        }
        if usesCredential, !renewedCredential, judgement.errorPolicy == .refreshCredentials || judgement.credentialExpired {
            if let why = refusal(answer.request, .credentialRenewed, policy()) {
                return end(notRetried: "the server refused the credential; \(why)")
            }
            phase = .renewingCredential(heldBack: false)
            return .renewCredential(after: generation, heldBack: false)
        }
        if case .handler(let name)? = judgement.errorPolicy {
            return end(handler: name)
        }
        if judgement.errorPolicy == .retry {
            let reason = RetryPolicy.Reason.errorPolicy(statusCode: response.statusCode, code: judgement.code)
            return weighRetry(of: .success(response), answer.request, policy(), reason: reason, on: clock, clockOffset: answer.clockOffset, random: random)
        }
        guard !response.isSuccess else { return end() }
        return weighRetry(of: .success(response), answer.request, policy(), reason: nil, on: clock, clockOffset: answer.clockOffset, random: random)
    }

    /// The plugins and the budget allow the retry the machine asked about.
    mutating func retryAllowed(_ retry: RetryPolicy.Attempt) -> Action {
        guard phase == .askingToRetry else { return unexpected("a retry allowed") }
        number += 1
        phase = .waiting
        waited += retry.delay
        return .wait(retry.delay)
    }

    /// The retry the machine asked about is declined: `why` says by what.
    mutating func retryDeclined(_ retry: RetryPolicy.Attempt, because why: String) -> Action {
        guard phase == .askingToRetry else { return unexpected("a retry declined") }
        return end(notRetried: "\(retry.reason); \(why)")
    }

    /// The wait before a retry ended — its time ran out, or the load was cancelled.
    mutating func waitEnded(cancelled: Bool, on clock: any LoadClock) -> Action {
        guard phase == .waiting else { return unexpected("the end of a wait") }
        guard !cancelled else { return fail(.cancelled, "the request was cancelled while waiting to retry", attempts: number - 1) }
        return beginAttempt(on: clock)
    }

    /// Why a load is cancelled.
    enum Cancellation: Sendable, Equatable {
        /// Its caller asked: by ID, group, or its task (``APIError/Kind-swift.struct/cancelled``).
        case asked
        /// Its proxy shut down, and the shutdown's deadline passed with the load still in
        /// flight (``APIError/Kind-swift.struct/shutDown``).
        case shutdown
        /// The load's total timeout ran out (``APIError/Kind-swift.struct/timeout``).
        case totalTimeout

        /// The kind of failure the load ends with.
        var kind: APIError.Kind {
            switch self {
            case .asked: .cancelled
            case .shutdown: .shutDown
            case .totalTimeout: .timeout
            }
        }

        /// What the failure's message says about the cause, after "the request was cancelled".
        var because: String { self == .shutdown ? ": the proxy shut down, and its deadline passed first" : "" }
    }

    /// The load was cancelled: it ends now, whatever it was doing, with ``Action/fail(_:)`` (the
    /// engine stops the step under way, and what that step produces afterwards is ignored);
    /// after its end a cancellation changes nothing. The attempts counted are those that could
    /// have reached the server: the one under way or being weighed included, not one still to
    /// come after a wait or a credential.
    mutating func cancelled(_ cause: Cancellation = .asked) -> Action {
        let kind = cause.kind
        if cause == .totalTimeout { return timedOut() }
        switch phase {
        case .ended, .delivered:
            return .ignore
        case .preparing, .idle:
            return fail(kind, "the request was cancelled\(cause.because)", attempts: number - 1)
        case .gettingCredential:
            return fail(kind, "the request was cancelled while the credential was refreshed\(cause.because)", attempts: number - 1)
        case .renewingCredential(let heldBack):
            return fail(kind, "the request was cancelled while the credential was refreshed\(cause.because)", attempts: heldBack ? number - 1 : number)
        case .sending, .askingToRetry:
            return fail(kind, "the request was cancelled\(cause.because)", attempts: number)
        case .waiting:
            return fail(kind, "the request was cancelled while waiting to retry\(cause.because)", attempts: number - 1)
        }
    }

    /// The load's total timeout ran out: it ends, saying what it was doing.
    private mutating func timedOut() -> Action {
        let ranOut = "the load's total timeout of \(totalTimeout ?? .zero) ran out"
        switch phase {
        case .ended, .delivered:
            return .ignore
        case .preparing:
            return fail(.timeout, ranOut + " while it was prepared, before anything was sent", attempts: 0)
        case .idle:
            return fail(.timeout, ranOut + " before its next attempt was sent", attempts: number - 1)
        case .gettingCredential:
            return fail(.timeout, ranOut + " while it waited for its credential", attempts: number - 1)
        case .renewingCredential(let heldBack):
            return fail(.timeout, ranOut + " while it waited for its credential to be renewed", attempts: heldBack ? number - 1 : number)
        case .sending, .askingToRetry:
            return fail(.timeout, ranOut, attempts: number)
        case .waiting:
            return fail(.timeout, ranOut + " while it waited to retry", attempts: number - 1)
        }
    }

    /// The engine said why the attempt starts again (``Action/startAgain(_:)``).
    mutating func startedAgain(on clock: any LoadClock) -> Action {
        guard phase == .idle else { return unexpected("a start again") }
        return beginAttempt(on: clock)
    }

    // MARK: Steps

    private mutating func beginAttempt(on clock: any LoadClock) -> Action {
        guard usesCredential else { return send(nil, on: clock) }
        phase = .gettingCredential
        return .getCredential
    }

    private mutating func send(_ credential: Authenticator.Credential?, on clock: any LoadClock) -> Action {
        phase = .sending
        return .send(Send(
            number: number, credential: credential, generation: generation, reportsRefusal: !renewedCredential,
            remaining: deadline.map { $0 - clock.now }))
    }

    private mutating func again(_ reason: StartAgain) -> Action {
        number += 1
        phase = .idle
        return .startAgain(reason)
    }

    private mutating func weighRetry(
        of outcome: Result<HTTPResponse, TransportError>, _ request: HTTPRequest, _ policy: RetryPolicy, reason policyReason: RetryPolicy.Reason?,
        on clock: any LoadClock, clockOffset: TimeInterval, random: ((Duration) -> Duration)?
    ) -> Action {
        let decision = policy.decision(
            after: outcome, of: request, attempt: number, remaining: deadline.map { $0 - clock.now }, clockOffset: clockOffset, now: clock.date,
            random: random ?? clock.jitter(upTo:), policyReason: policyReason, waited: waited)
        switch decision {
        case .deliver(let note, let wait):
            return end(notRetried: note, retryableAt: wait.map { clock.date.addingTimeInterval($0.timeInterval) })
        case .retry(let delay, let reason, let header):
            let retry = RetryPolicy.Attempt(number: number + 1, maximum: policy.maxRetries + 1, reason: reason, delay: delay, waitHeader: header)
            phase = .askingToRetry
            return .askToRetry(retry)
        }
    }

    /// Why `request` must not go out again for `cause`, by the policy's one rule for sending
    /// again; `nil` when it may.
    private func refusal(_ request: HTTPRequest, _ cause: RetryPolicy.SendingAgain, _ policy: RetryPolicy) -> String? {
        if case .refused(let why) = policy.verdict(onSending: request, again: cause) { return why.description }
        return nil
    }

    private mutating func end(notRetried: String? = nil, handler: String? = nil, retryableAt: Date? = nil) -> Action {
        phase = .ended
        return .end(Ending(attempts: number + resends, notRetried: notRetried, handler: handler, retryableAt: retryableAt))
    }

    /// Ends the load with a failure after `attempts` attempts (and the transport's resends).
    private mutating func fail(_ kind: APIError.Kind, _ message: String, attempts: Int) -> Action {
        phase = .ended
        return .fail(Failure(kind: kind, message: message, attempts: attempts + resends))
    }

    /// An event the load's phase does not expect: after the end, every event is; before it,
    /// one is a defect of the engine, caught in debug builds.
    private func unexpected(_ event: StaticString) -> Action {
        assert(hasEnded, "the load engine reported \(event) in phase \(phase)")
        return .ignore
    }
}
