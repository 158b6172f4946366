@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import Foundation
import Testing

/// The load engine's decisions, with no socket and no real time: every path a load can take —
/// retries and their waits, `Retry-After` in each form, the total timeout, vetoes by the owner
/// or the budget, credential renewal (refused, expired by code, held back, failed), clock
/// re-signing, error policies, downloads starting over, streamed bodies, cancellation at each
/// point — and that a load ends exactly once.
extension LoadStateMachine {
    /// A machine whose load its manager has prepared, with this shape.
    init(usesCredential: Bool, isSigned: Bool, clockTolerance: TimeInterval) {
        self.init()
        prepared(usesCredential: usesCredential, isSigned: isSigned, clockTolerance: clockTolerance)
    }
}

@Suite("Load state machine")
struct LoadStateMachineTests {
    typealias Machine = LoadStateMachine
    typealias Action = LoadStateMachine.Action

    /// A time to count from, far from zero; the machine only ever subtracts times.
    static let t0 = Duration.seconds(86_400)
    /// The wall-clock time of the tests: Tue, 14 Nov 2023 22:13:20 GMT.
    static let date = Date(timeIntervalSince1970: 1_700_000_000)
    static let url = URL(string: "https://api.example.com/v1/goods")!
    /// Draws the longest wait the policy allows, so that waits are known.
    static func longest(_ ceiling: Duration) -> Duration { ceiling }

    /// A clock stopped `seconds` after ``t0``, its wall clock at `date`; it never waits.
    struct StoppedClock: LoadClock {
        let now: Duration
        let date: Date

        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
            Issue.record("the machine never waits itself")
        }
    }

    static func clock(_ seconds: Double = 0, date: Date = date) -> StoppedClock {
        StoppedClock(now: t0 + .milliseconds(Int64(seconds * 1000)), date: date)
    }

    static func request(_ method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(), body: HTTPRequest.Body = .empty) -> HTTPRequest {
        HTTPRequest(method: method, url: url, headers: headers, body: body)
    }

    static func answer(
        _ status: Int, headers: HTTPHeaders = HTTPHeaders(), to request: HTTPRequest = request(), judgement: Machine.Judgement = Machine.Judgement(),
        clockOffset: TimeInterval = 0, download: Machine.DownloadVerdict? = nil
    ) -> Machine.Answer {
        Machine.Answer(
            outcome: .success(HTTPResponse(statusCode: status, headers: headers, url: url)), request: request, judgement: judgement,
            clockOffset: clockOffset, download: download)
    }

    static func failure(_ code: TransportError.Code, to request: HTTPRequest = request()) -> Machine.Answer {
        Machine.Answer(outcome: .failure(TransportError(code, url: url.absoluteString, detail: "\(code)")), request: request)
    }

    static func send(
        _ number: Int, credential: Authenticator.Credential? = nil, generation: Int = 0, reportsRefusal: Bool = true, remaining: Duration? = nil
    ) -> Action {
        .send(Machine.Send(number: number, credential: credential, generation: generation, reportsRefusal: reportsRefusal, remaining: remaining))
    }

    static func end(_ attempts: Int, notRetried: String? = nil, handler: String? = nil) -> Action {
        .end(Machine.Ending(attempts: attempts, notRetried: notRetried, handler: handler))
    }

    static func fail(_ kind: APIError.Kind, _ message: String, attempts: Int) -> Action {
        .fail(Machine.Failure(kind: kind, message: message, attempts: attempts))
    }

    /// The retry an action asks about.
    static func retry(asked action: Action) -> RetryPolicy.Attempt {
        guard case .askToRetry(let retry) = action else {
            Issue.record("expected a retry to ask about, got \(action)")
            return RetryPolicy.Attempt(number: 0, maximum: 0, reason: .status(0, retryAfter: nil), delay: .zero)
        }
        return retry
    }

    /// A machine whose first attempt is under way (sent with no total timeout).
    static func sending(credential: Bool = false, signed: Bool = false) -> Machine {
        var machine = Machine(usesCredential: credential, isSigned: signed, clockTolerance: 30)
        if credential {
            #expect(machine.start(on: clock()) == .getCredential)
            #expect(machine.credentialArrived(Authenticator.Credential(token: "t1"), generation: 1, on: clock()) == send(1, credential: Authenticator.Credential(token: "t1"), generation: 1))
        } else {
            #expect(machine.start(on: clock()) == send(1))
        }
        machine.requestMade(signingOffset: 0)
        return machine
    }

    /// Every event a machine can be told; after the end, each must be ignored.
    static func expectEverythingIgnored(_ machine: Machine) {
        var machine = machine
        #expect(machine.hasEnded)
        #expect(machine.start(on: clock()) == .ignore)
        #expect(machine.credentialArrived(Authenticator.Credential(token: "late"), generation: 9, on: clock()) == .ignore)
        #expect(machine.credentialFailed(AuthenticationFailure(underlying: CancellationError())) == .ignore)
        #expect(machine.credentialWaitCancelled() == .ignore)
        #expect(machine.stopped(.configuration, "late") == .ignore)
        #expect(machine.answerUnusable(.transport, "late") == .ignore)
        #expect(machine.answered(answer(200), policy: .standard, on: clock()) == .ignore)
        let late = RetryPolicy.Attempt(number: 9, maximum: 9, reason: .status(503, retryAfter: nil), delay: .zero)
        #expect(machine.retryAllowed(late) == .ignore)
        #expect(machine.retryDeclined(late, because: "late") == .ignore)
        #expect(machine.waitEnded(cancelled: false, on: clock()) == .ignore)
        #expect(machine.startedAgain(on: clock()) == .ignore)
        #expect(machine.cancelled() == .ignore)
    }

    // MARK: Plain loads

    @Test func aSuccessEndsTheLoadAfterOneAttemptAndOnlyOnce() {
        var machine = Self.sending()
        #expect(machine.answered(Self.answer(200), policy: .standard, on: Self.clock()) == Self.end(1))
        Self.expectEverythingIgnored(machine)
    }

    @Test func aStatusThePolicyDoesNotRetryIsTheAnswerWithoutANote() {
        for status in [400, 404, 409, 500, 304] {
            var machine = Self.sending()
            #expect(machine.answered(Self.answer(status), policy: .standard, on: Self.clock()) == Self.end(1))
        }
    }

    @Test func aRequestThatCannotBeMadeFailsWithNoAttemptCounted() {
        var machine = Machine(usesCredential: false, isSigned: true, clockTolerance: 30)
        _ = machine.start(on: Self.clock())
        #expect(machine.stopped(.configuration, "no key") == Self.fail(.configuration, "no key", attempts: 0))
        Self.expectEverythingIgnored(machine)
    }

    // MARK: What the transport sent again

    @Test func whatTheTransportSentAgainCountsAsAttempts() {
        // A GET the transport sent again on a fresh connection (a reused one closed before
        // answering), then answered: two sends, one attempt of the engine's.
        var machine = Self.sending()
        var metrics = HTTPResponse.Metrics()
        metrics.resends = 1
        let resent = Machine.Answer(outcome: .success(HTTPResponse(statusCode: 200, url: Self.url, metrics: metrics)), request: Self.request())
        #expect(machine.answered(resent, policy: .standard, on: Self.clock()) == Self.end(2))
    }

    @Test func resendsOfEveryAttemptAddUpWithTheRetries() {
        var machine = Self.sending()
        // The first attempt's GET was sent again by the transport, and its answer lost again.
        let lost = TransportError(.responseLost, url: Self.url.absoluteString, detail: "lost", resends: 1)
        let first = machine.answered(Machine.Answer(outcome: .failure(lost), request: Self.request()), policy: .standard, on: Self.clock(), random: Self.longest)
        let retry = Self.retry(asked: first)
        #expect(retry.number == 2, "the policy counts its own attempts")
        #expect(retry.reason == .transportError(.responseLost))
        #expect(machine.retryAllowed(retry) == .wait(.milliseconds(500)))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(1)) == Self.send(2))
        // Two attempts and one resend: three copies may have reached the server.
        #expect(machine.answered(Self.answer(200), policy: .standard, on: Self.clock(1)) == Self.end(3))
    }

    @Test func aLostResponseOfAPostIsNotRetriedWithoutAKey() {
        var machine = Self.sending()
        let lost = TransportError(.responseLost, url: Self.url.absoluteString, detail: "lost")
        let answer = Machine.Answer(outcome: .failure(lost), request: Self.request(.post))
        #expect(machine.answered(answer, policy: .standard, on: Self.clock()) == Self.end(1, notRetried: "the transfer failed: response lost; POST is not retried without an idempotency key"))
        var keyed = Self.sending()
        let withKey = Machine.Answer(outcome: .failure(lost), request: Self.request(.post, headers: ["Idempotency-Key": "k"]))
        let policy = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")
        #expect(Self.retry(asked: keyed.answered(withKey, policy: policy, on: Self.clock())).number == 2)
    }

    // MARK: The server's word

    private static let advised = RetryPolicy(retryAdviceHeader: "Stripe-Should-Retry")

    @Test func theServerAskingForARetryRetriesAnyStatusAndMethod() {
        var machine = Self.sending()
        // A 409 to a POST without a key: neither is retried by the policy, but the server says.
        let answer = Self.answer(409, headers: ["Stripe-Should-Retry": "true"], to: Self.request(.post))
        let retry = Self.retry(asked: machine.answered(answer, policy: Self.advised, on: Self.clock(), random: Self.longest))
        #expect(retry.reason == .advised(statusCode: 409, header: "Stripe-Should-Retry"))
        #expect(retry.delay == .milliseconds(500))
        #expect("\(retry.reason)" == "the server answered 409 and asked for a retry (Stripe-Should-Retry: true)")
    }

    @Test func theServerAskingNotToRetryDeliversAtOnce() {
        var machine = Self.sending()
        let answer = Self.answer(503, headers: ["Stripe-Should-Retry": "false"])
        #expect(machine.answered(answer, policy: Self.advised, on: Self.clock())
            == Self.end(1, notRetried: "the server answered 503 and asked not to retry (Stripe-Should-Retry: false)"))
        // A status the policy would not retry anyway: no note.
        var other = Self.sending()
        #expect(other.answered(Self.answer(400, headers: ["Stripe-Should-Retry": "false"]), policy: Self.advised, on: Self.clock()) == Self.end(1))
    }

    @Test func aWordThatIsNeitherTrueNorFalseIsNotTheServers() {
        var machine = Self.sending()
        let answer = Self.answer(503, headers: ["Stripe-Should-Retry": "maybe"])
        #expect(Self.retry(asked: machine.answered(answer, policy: Self.advised, on: Self.clock())).reason == .status(503, retryAfter: nil))
        // Without the policy naming the header, the header says nothing.
        var unnamed = Self.sending()
        #expect(unnamed.answered(Self.answer(409, headers: ["Stripe-Should-Retry": "true"]), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func theServerSayingNoWinsOverAnErrorPolicy() {
        var machine = Self.sending()
        let policy = Machine.Judgement(bodyCode: "idempotency_key_in_use", errorPolicy: .retry)
        let answer = Self.answer(409, headers: ["Stripe-Should-Retry": "false"], judgement: policy)
        #expect(machine.answered(answer, policy: Self.advised, on: Self.clock())
            == Self.end(1, notRetried: "the server answered 409 and asked not to retry (Stripe-Should-Retry: false)"))
    }

    @Test func anErrorBodysCodeNamesTheRetryReason() {
        var machine = Self.sending()
        let policy = Machine.Judgement(bodyCode: "idempotency_key_in_use", errorPolicy: .retry)
        let retry = Self.retry(asked: machine.answered(Self.answer(409, judgement: policy), policy: .standard, on: Self.clock()))
        #expect(retry.reason == .errorPolicy(statusCode: 409, code: "idempotency_key_in_use"))
    }

    @Test func aWaitCancelledAfterAResendCountsIt() {
        var machine = Self.sending()
        let lost = TransportError(.responseLost, url: Self.url.absoluteString, detail: "lost", resends: 2)
        let retry = Self.retry(asked: machine.answered(Machine.Answer(outcome: .failure(lost), request: Self.request()), policy: .standard, on: Self.clock()))
        _ = machine.retryAllowed(retry)
        #expect(machine.waitEnded(cancelled: true, on: Self.clock()) == Self.fail(.cancelled, "the request was cancelled while waiting to retry", attempts: 3))
    }

    // MARK: Retries and their waits

    @Test func retriesWaitTwiceAsLongEachTimeThenStopWithANote() {
        var machine = Self.sending()
        let policy = RetryPolicy.standard
        let first = RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: nil), delay: .milliseconds(500))
        #expect(machine.answered(Self.answer(503), policy: policy, on: Self.clock(), random: Self.longest) == .askToRetry(first))
        #expect(machine.retryAllowed(first) == .wait(.milliseconds(500)))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(0.5)) == Self.send(2))
        machine.requestMade(signingOffset: 0)
        let second = RetryPolicy.Attempt(number: 3, maximum: 3, reason: .transportError(.connectionRefused), delay: .seconds(1))
        #expect(machine.answered(Self.failure(.connectionRefused), policy: policy, on: Self.clock(0.6), random: Self.longest) == .askToRetry(second))
        #expect(machine.retryAllowed(second) == .wait(.seconds(1)))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(1.6)) == Self.send(3))
        #expect(machine.answered(Self.answer(503), policy: policy, on: Self.clock(1.7))
            == Self.end(3, notRetried: "the server answered 503; no retries left after 3 attempts"))
        Self.expectEverythingIgnored(machine)
    }

    @Test func theWaitIsDrawnFromTheJitterUpToItsCeiling() {
        var machine = Self.sending()
        var ceilings: [Duration] = []
        let action = machine.answered(Self.answer(502), policy: .standard, on: Self.clock()) { ceiling in
            ceilings.append(ceiling)
            return .milliseconds(123)
        }
        #expect(ceilings == [.milliseconds(500)])
        #expect(action == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(502, retryAfter: nil), delay: .milliseconds(123))))
    }

    @Test func retryAfterInSecondsIsWaitedExactly() {
        var machine = Self.sending()
        let answer = Self.answer(429, headers: ["Retry-After": "2"])
        #expect(machine.answered(answer, policy: .standard, on: Self.clock(), random: Self.longest)
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(429, retryAfter: .seconds(2)), delay: .seconds(2), waitHeader: "Retry-After")))
    }

    @Test func retryAfterAsADateIsReadAgainstTheResponsesDate() {
        var machine = Self.sending()
        // Three seconds after the server's Date, whatever our clock says.
        let answer = Self.answer(503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:13:23 GMT", "Date": "Tue, 14 Nov 2023 22:13:20 GMT"])
        #expect(machine.answered(answer, policy: .standard, on: Self.clock(date: Self.date.addingTimeInterval(-500)))
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: .seconds(3)), delay: .seconds(3), waitHeader: "Retry-After")))
    }

    @Test func retryAfterAsADateWithoutDateIsReadAgainstOurClockCorrected() {
        var machine = Self.sending()
        // Our clock is 22:13:20; the server's is 2 s ahead; the date is 5 s after ours: 3 s to wait.
        let answer = Self.answer(503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:13:25 GMT"], clockOffset: 2)
        #expect(machine.answered(answer, policy: .standard, on: Self.clock())
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: .seconds(3)), delay: .seconds(3), waitHeader: "Retry-After")))
    }

    @Test func retryAfterInThePastIsNoWait() {
        var machine = Self.sending()
        let answer = Self.answer(503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:00:00 GMT"])
        #expect(machine.answered(answer, policy: .standard, on: Self.clock())
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: .zero), delay: .zero, waitHeader: "Retry-After")))
    }

    @Test func retryAfterThatIsNeitherFormIsIgnored() {
        var machine = Self.sending()
        let answer = Self.answer(503, headers: ["Retry-After": "soon"])
        #expect(machine.answered(answer, policy: .standard, on: Self.clock(), random: Self.longest)
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: nil), delay: .milliseconds(500))))
    }

    @Test func retryAfterLongerThanTheLongestWaitIsNotWaited() {
        var machine = Self.sending()
        let answer = Self.answer(503, headers: ["Retry-After": "31"])
        #expect(machine.answered(answer, policy: .standard, on: Self.clock())
            == .end(Machine.Ending(
                attempts: 1, notRetried: "the server answered 503 and asked to wait 31 s (Retry-After), longer than the longest wait (30 s)",
                retryableAt: Self.date.addingTimeInterval(31))))
    }

    @Test func aWaitThatOutlastsTheTotalTimeoutIsNotWaited() {
        var machine = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        _ = machine.start(totalTimeout: .seconds(2), on: Self.clock())
        let answer = Self.answer(503, headers: ["Retry-After": "1"])
        #expect(machine.answered(answer, policy: .standard, on: Self.clock(1.5))
            == .end(Machine.Ending(
                attempts: 1, notRetried: "the server answered 503 and asked to wait 1 s (Retry-After), but the load's total timeout ends first",
                retryableAt: Self.date.addingTimeInterval(1))))
    }

    @Test func waitsStayWithinTheLoadsWaitBudget() {
        // 20 s, then 15 s more would make 35: past the 30 s budget, delivered at once, saying
        // when the server said it could be sent again.
        var machine = Self.sending()
        let first = Self.retry(asked: machine.answered(Self.answer(503, headers: ["Retry-After": "20"]), policy: .standard, on: Self.clock()))
        #expect(machine.retryAllowed(first) == .wait(.seconds(20)))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(20)) == Self.send(2))
        #expect(machine.answered(Self.answer(503, headers: ["Retry-After": "15"]), policy: .standard, on: Self.clock(20))
            == .end(Machine.Ending(
                attempts: 2,
                notRetried: "the server answered 503 and asked to wait 15 s (Retry-After), would pass the load's wait budget (30 s in all, 20 s of it waited)",
                retryableAt: Self.date.addingTimeInterval(15))))
        // The policy's own backoff is held to it too, and says no time then.
        var backedOff = Self.sending()
        let tight = RetryPolicy(baseDelay: .seconds(2), maxTotalWait: .seconds(1))
        #expect(backedOff.answered(Self.answer(503), policy: tight, on: Self.clock(), random: Self.longest)
            == Self.end(1, notRetried: "the server answered 503; the next wait, 2 s, would pass the load's wait budget (1 s in all, 0 s of it waited)"))
    }

    @Test func aRateLimitsResetIsTheWait() {
        // GitHub's primary rate limit: a 403 with X-RateLimit-Remaining: 0 and the reset time.
        var machine = Self.sending()
        let policy = RetryPolicy(retryAfterStatusCodes: [403])
        let reset = "\(Int(Self.date.timeIntervalSince1970) + 4)"
        let github = Self.answer(403, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset, "Date": "Tue, 14 Nov 2023 22:13:20 GMT"])
        #expect(machine.answered(github, policy: policy, on: Self.clock())
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(403, retryAfter: .seconds(4)), delay: .seconds(4), waitHeader: "X-RateLimit-Reset")))
        // With requests left in the window, the 403 is a refusal, not a rate limit.
        var refused = Self.sending()
        let permission = Self.answer(403, headers: ["X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": reset])
        #expect(refused.answered(permission, policy: policy, on: Self.clock()) == Self.end(1))
    }

    @Test func aLaterAttemptGetsWhatIsLeftOfTheTotalTimeout() {
        var machine = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        _ = machine.start(totalTimeout: .seconds(10), on: Self.clock())
        let first = machine.answered(Self.answer(503, headers: ["Retry-After": "1"]), policy: .standard, on: Self.clock(2))
        #expect(machine.retryAllowed(Self.retry(asked: first)) == .wait(.seconds(1)))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(3.25)) == Self.send(2, remaining: .milliseconds(6750)))
        let second = machine.answered(Self.answer(503, headers: ["Retry-After": "1"]), policy: .standard, on: Self.clock(4))
        _ = machine.retryAllowed(Self.retry(asked: second))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(5)) == Self.send(3, remaining: .seconds(5)))
    }

    @Test func methodsThatAreNotIdempotentAreNotRetriedWithoutAKey() {
        var machine = Self.sending()
        let post = Self.request(.post)
        #expect(machine.answered(Self.answer(503, to: post), policy: .standard, on: Self.clock())
            == Self.end(1, notRetried: "the server answered 503; POST is not retried without an idempotency key"))
        var keyed = Self.sending()
        let policy = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")
        let withKey = Self.request(.post, headers: ["Idempotency-Key": "k1"])
        #expect(keyed.answered(Self.answer(503, to: withKey), policy: policy, on: Self.clock(), random: Self.longest)
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: nil), delay: .milliseconds(500))))
    }

    @Test func aStreamedRequestBodyIsNeverSentTwice() {
        var machine = Self.sending()
        let put = Self.request(.put, body: .stream(HTTPRequest.BodyStream(AsyncStream<Data> { $0.finish() })))
        #expect(machine.answered(Self.answer(503, to: put), policy: .standard, on: Self.clock())
            == Self.end(1, notRetried: "the server answered 503; the request body is a stream, which is sent once and cannot be sent again"))
    }

    @Test func transportFailuresThePolicyDoesNotNameAreTheAnswer() {
        for code in [TransportError.Code.tlsFailure, .cancelled, .invalidURL, .tooManyRedirects] {
            var machine = Self.sending()
            #expect(machine.answered(Self.failure(code), policy: .standard, on: Self.clock()) == Self.end(1))
        }
        var machine = Self.sending()
        let signingFailed = Machine.Answer(outcome: .failure(ServiceError.invalidURL(service: "shop", path: "goods", reason: "a hop could not be signed")), request: Self.request())
        #expect(machine.answered(signingFailed, policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func aPolicyWithNoRetriesSaysNothingAboutThem() {
        var machine = Self.sending()
        #expect(machine.answered(Self.answer(503), policy: .never, on: Self.clock()) == Self.end(1))
    }

    // MARK: Vetoes

    @Test func aPluginOrTheBudgetCanDeclineARetry() {
        for why in ["a plugin declined the retry", "the proxy's retry budget is spent"] {
            var machine = Self.sending()
            let asked = machine.answered(Self.answer(503), policy: .standard, on: Self.clock())
            #expect(machine.retryDeclined(Self.retry(asked: asked), because: why) == Self.end(1, notRetried: "the server answered 503; \(why)"))
            Self.expectEverythingIgnored(machine)
        }
    }

    // MARK: Credentials

    @Test func aRefusedCredentialIsRenewedOnceAndTheRetryDoesNotReportRefusals() {
        var machine = Self.sending(credential: true)
        let refused = Machine.Judgement(credentialExpired: true)
        #expect(machine.answered(Self.answer(401, judgement: refused), policy: .standard, on: Self.clock())
            == .renewCredential(after: 1, heldBack: false))
        let renewed = Authenticator.Credential(token: "t2")
        #expect(machine.credentialArrived(renewed, generation: 2, on: Self.clock(0.1)) == Self.send(2, credential: renewed, generation: 2, reportsRefusal: false))
        // Refused again: not renewed twice; a 401 is not retried either.
        #expect(machine.answered(Self.answer(401, judgement: refused), policy: .standard, on: Self.clock(0.2)) == Self.end(2))
    }

    @Test func anApplicationCodeThatMeansExpiredRenewsTheCredential() {
        var machine = Self.sending(credential: true)
        let expired = Machine.Judgement(veto: ServiceVeto(code: "token_expired", message: "expired"), credentialExpired: true)
        #expect(machine.answered(Self.answer(200, judgement: expired), policy: .standard, on: Self.clock())
            == .renewCredential(after: 1, heldBack: false))
    }

    @Test func theRefreshCredentialsPolicyRenewsTheCredential() {
        var machine = Self.sending(credential: true)
        let policy = Machine.Judgement(veto: ServiceVeto(code: "E42", message: "who are you"), errorPolicy: .refreshCredentials)
        #expect(machine.answered(Self.answer(403, judgement: policy), policy: .standard, on: Self.clock())
            == .renewCredential(after: 1, heldBack: false))
    }

    @Test func aLoadWithoutACredentialDoesNotRenewOne() {
        var machine = Self.sending()
        let expired = Machine.Judgement(credentialExpired: true)
        #expect(machine.answered(Self.answer(401, judgement: expired), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func aFailedRefreshFailsTheLoadCountingTheAttemptsSent() {
        let failure = AuthenticationFailure(underlying: CancellationError())
        var atStart = Machine(usesCredential: true, isSigned: false, clockTolerance: 30)
        #expect(atStart.start(on: Self.clock()) == .getCredential)
        #expect(atStart.credentialFailed(failure) == Self.fail(.authenticationFailed, failure.description, attempts: 0))
        Self.expectEverythingIgnored(atStart)

        var afterRefusal = Self.sending(credential: true)
        _ = afterRefusal.answered(Self.answer(401, judgement: Machine.Judgement(credentialExpired: true)), policy: .standard, on: Self.clock())
        #expect(afterRefusal.credentialFailed(failure) == Self.fail(.authenticationFailed, failure.description, attempts: 1))
    }

    /// The total timeout counts from the load's start and is an event of the load in every
    /// phase: it ends the load then, as timed out, saying what the load was doing, with the
    /// attempts that could have reached the server.
    @Test func theTotalTimeoutCountsFromTheLoadsMakingItsPreparationIncluded() {
        // Made at 0 s, prepared by 1.5 s, with 2 s in all: the attempt has half a second.
        var inTime = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        #expect(inTime.start(totalTimeout: .seconds(2), startedAt: Self.t0, on: Self.clock(1.5)) == Self.send(1, remaining: .milliseconds(500)))
        // Prepared by 2 s: nothing is sent.
        var late = Machine(usesCredential: true, isSigned: false, clockTolerance: 30)
        let action = late.start(totalTimeout: .seconds(2), startedAt: Self.t0, on: Self.clock(2))
        #expect(action == Self.fail(.timeout, "the load's total timeout of 2.0 seconds ran out while it was prepared, before anything was sent", attempts: 0))
        Self.expectEverythingIgnored(late)
    }

    @Test func theTotalTimeoutEndsTheLoadWhateverItDoes() {
        let ranOut = "the load's total timeout of 5.0 seconds ran out"
        // Waiting for its first credential: no attempt sent.
        var first = Machine(usesCredential: true, isSigned: false, clockTolerance: 30)
        #expect(first.start(totalTimeout: .seconds(5), on: Self.clock()) == .getCredential)
        #expect(first.cancelled(.totalTimeout) == Self.fail(.timeout, ranOut + " while it waited for its credential", attempts: 0))
        Self.expectEverythingIgnored(first)
        // Waiting for a renewed credential, after a refusal: one attempt sent.
        var renewing = Machine(usesCredential: true, isSigned: false, clockTolerance: 30)
        _ = renewing.start(totalTimeout: .seconds(5), on: Self.clock())
        _ = renewing.credentialArrived(Authenticator.Credential(token: "t1"), generation: 1, on: Self.clock())
        let refused = Machine.Judgement(credentialExpired: true)
        #expect(renewing.answered(Self.answer(401, judgement: refused), policy: .standard, on: Self.clock(1)) == .renewCredential(after: 1, heldBack: false))
        #expect(renewing.cancelled(.totalTimeout) == Self.fail(.timeout, ranOut + " while it waited for its credential to be renewed", attempts: 1))
        Self.expectEverythingIgnored(renewing)
        // While an attempt is under way: it counts.
        var sending = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        #expect(sending.start(totalTimeout: .seconds(5), on: Self.clock()) == Self.send(1, remaining: .seconds(5)))
        #expect(sending.cancelled(.totalTimeout) == Self.fail(.timeout, ranOut, attempts: 1))
        // Waiting to retry: the next attempt was not sent.
        var waiting = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        _ = waiting.start(totalTimeout: .seconds(5), on: Self.clock())
        let retry = Self.retry(asked: waiting.answered(Self.answer(503, headers: ["Retry-After": "1"]), policy: .standard, on: Self.clock(1)))
        #expect(waiting.retryAllowed(retry) == .wait(.seconds(1)))
        #expect(waiting.cancelled(.totalTimeout) == Self.fail(.timeout, ranOut + " while it waited to retry", attempts: 1))
        Self.expectEverythingIgnored(waiting)
        // Its first attempt gets all of it, counted from the start; after the end it changes nothing.
        var ended = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        _ = ended.start(totalTimeout: .seconds(5), on: Self.clock())
        #expect(ended.answered(Self.answer(200), policy: .standard, on: Self.clock(1)) == Self.end(1))
        #expect(ended.cancelled(.totalTimeout) == .ignore)
    }

    @Test func aRequestHeldBackIsSentOnceWithTheRenewedCredentialAndNotCountedTwice() {
        var machine = Self.sending(credential: true)
        #expect(machine.answered(Self.failure(.withdrawn), policy: .standard, on: Self.clock()) == .renewCredential(after: 1, heldBack: true))
        let renewed = Authenticator.Credential(token: "t2")
        // Still attempt 1, and its hooks have run: it is not the first again.
        #expect(machine.credentialArrived(renewed, generation: 2, on: Self.clock()) == Self.send(1, credential: renewed, generation: 2, reportsRefusal: false))
        machine.requestMade(signingOffset: 0)
        #expect(machine.answered(Self.answer(200), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func aRequestHeldBackWhoseRefreshFailsCountsNoAttempt() {
        var machine = Self.sending(credential: true)
        _ = machine.answered(Self.failure(.withdrawn), policy: .standard, on: Self.clock())
        let failure = AuthenticationFailure(underlying: CancellationError())
        #expect(machine.credentialFailed(failure) == Self.fail(.authenticationFailed, failure.description, attempts: 0))
    }

    @Test func aWithdrawalWithoutACredentialIsTheAnswer() {
        var machine = Self.sending()
        #expect(machine.answered(Self.failure(.withdrawn), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func aRetryAfterAWaitAsksForTheCredentialAgain() {
        var machine = Self.sending(credential: true)
        let asked = machine.answered(Self.answer(503), policy: .standard, on: Self.clock())
        _ = machine.retryAllowed(Self.retry(asked: asked))
        #expect(machine.waitEnded(cancelled: false, on: Self.clock(1)) == .getCredential)
        let later = Authenticator.Credential(token: "t3")
        #expect(machine.credentialArrived(later, generation: 3, on: Self.clock(1)) == Self.send(2, credential: later, generation: 3))
    }

    // MARK: Clock re-signing

    @Test func aRefusedSigningTimeIsSignedAgainOnceWhenTheClockMoved() {
        var machine = Self.sending(signed: true)
        #expect(machine.answered(Self.answer(401, clockOffset: 120), policy: .standard, on: Self.clock()) == .startAgain(.clockCorrected(offset: 120)))
        #expect(machine.startedAgain(on: Self.clock()) == Self.send(2))
        machine.requestMade(signingOffset: 120)
        // Refused again, with the clock moved again: not a third time.
        #expect(machine.answered(Self.answer(401, clockOffset: 400), policy: .standard, on: Self.clock()) == Self.end(2))
    }

    @Test func aRefusalWithinTheToleranceIsTheAnswer() {
        var machine = Self.sending(signed: true)
        #expect(machine.answered(Self.answer(401, clockOffset: 29), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func theCorrectClockPolicySaysWhyNothingWasSignedAgain() {
        var machine = Self.sending(signed: true)
        let policy = Machine.Judgement(veto: ServiceVeto(code: "bad_time", message: "skew"), errorPolicy: .correctClock)
        #expect(machine.answered(Self.answer(200, judgement: policy), policy: .standard, on: Self.clock())
            == Self.end(1, notRetried: "the server refused the signing time, but its Date header does not differ from the time signed with"))
        var moved = Self.sending(signed: true)
        #expect(moved.answered(Self.answer(200, judgement: policy, clockOffset: -90), policy: .standard, on: Self.clock())
            == .startAgain(.clockCorrected(offset: -90)))
    }

    @Test func anUnsignedRequestIsNotSignedAgain() {
        var machine = Self.sending()
        #expect(machine.answered(Self.answer(401, clockOffset: 120), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    @Test func aSignedLoadWithACredentialTriesTheClockBeforeTheCredential() {
        var machine = Self.sending(credential: true, signed: true)
        let refused = Machine.Judgement(credentialExpired: true)
        #expect(machine.answered(Self.answer(401, judgement: refused, clockOffset: 120), policy: .standard, on: Self.clock())
            == .startAgain(.clockCorrected(offset: 120)))
        #expect(machine.startedAgain(on: Self.clock()) == .getCredential)
        _ = machine.credentialArrived(Authenticator.Credential(token: "t1"), generation: 1, on: Self.clock())
        machine.requestMade(signingOffset: 120)
        #expect(machine.answered(Self.answer(401, judgement: refused, clockOffset: 120), policy: .standard, on: Self.clock())
            == .renewCredential(after: 1, heldBack: false))
    }

    // MARK: Error policies

    @Test func aHandlerPolicyEndsTheLoadNamingTheHandler() {
        var machine = Self.sending()
        let policy = Machine.Judgement(veto: ServiceVeto(code: "maintenance", message: "later"), errorPolicy: .handler("banner"))
        #expect(machine.answered(Self.answer(200, judgement: policy), policy: .standard, on: Self.clock()) == Self.end(1, handler: "banner"))
    }

    @Test func aRetryPolicyRetriesWhatTheStatusesWouldNot() {
        var machine = Self.sending()
        let policy = Machine.Judgement(veto: ServiceVeto(code: "busy", message: "try again"), errorPolicy: .retry)
        #expect(machine.answered(Self.answer(200, judgement: policy), policy: .standard, on: Self.clock(), random: Self.longest)
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .errorPolicy(statusCode: 200, code: "busy"), delay: .milliseconds(500))))
    }

    @Test func aSurfacePolicyIsTheAnswer() {
        var machine = Self.sending()
        let policy = Machine.Judgement(veto: ServiceVeto(code: "gone", message: "gone"), errorPolicy: .surface)
        #expect(machine.answered(Self.answer(200, judgement: policy), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    // MARK: Downloads and streams

    @Test func aDownloadStartsOverOnceThenTakesTheAnswerAsItIs() {
        var machine = Self.sending()
        #expect(machine.answered(Self.answer(416, download: .startOver), policy: .standard, on: Self.clock()) == .startAgain(.downloadStartsOver))
        #expect(machine.startedAgain(on: Self.clock()) == Self.send(2))
        #expect(machine.answered(Self.answer(416, download: .startOver), policy: .standard, on: Self.clock()) == Self.end(2))
    }

    @Test func aFinishedDownloadEndsTheLoadAndAMissingFileIsRetried() {
        var finished = Self.sending()
        #expect(finished.answered(Self.answer(206, download: .finished), policy: .standard, on: Self.clock()) == Self.end(1))
        var missing = Self.sending()
        #expect(missing.answered(Self.answer(503, download: .notTheFile), policy: .standard, on: Self.clock(), random: Self.longest)
            == .askToRetry(RetryPolicy.Attempt(number: 2, maximum: 3, reason: .status(503, retryAfter: nil), delay: .milliseconds(500))))
    }

    @Test func aDownloadWhoseFileCannotBeWrittenFailsCountingTheAttempt() {
        var machine = Self.sending()
        #expect(machine.answerUnusable(.transport, "the disk is full") == Self.fail(.transport, "the disk is full", attempts: 1))
        Self.expectEverythingIgnored(machine)
    }

    @Test func aBodyThatWentToItsReaderIsNeverAskedForAgain() {
        var machine = Self.sending()
        var cut = Self.failure(.connectionDropped)
        cut.bodyWentToReader = true
        #expect(machine.answered(cut, policy: .standard, on: Self.clock()) == Self.end(1))
    }

    // MARK: Cancellation at each point

    @Test func cancellingWhileTheCredentialIsFetchedFailsTheLoad() {
        let message = "the request was cancelled while the credential was refreshed"
        var atStart = Machine(usesCredential: true, isSigned: false, clockTolerance: 30)
        _ = atStart.start(on: Self.clock())
        #expect(atStart.credentialWaitCancelled() == Self.fail(.cancelled, message, attempts: 0))
        Self.expectEverythingIgnored(atStart)

        var renewing = Self.sending(credential: true)
        _ = renewing.answered(Self.answer(401, judgement: Machine.Judgement(credentialExpired: true)), policy: .standard, on: Self.clock())
        #expect(renewing.credentialWaitCancelled() == Self.fail(.cancelled, message, attempts: 1))

        var heldBack = Self.sending(credential: true)
        _ = heldBack.answered(Self.failure(.withdrawn), policy: .standard, on: Self.clock())
        #expect(heldBack.credentialWaitCancelled() == Self.fail(.cancelled, message, attempts: 0))
    }

    @Test func cancellingWhileTheRequestIsInFlightEndsWithTheCancelledAnswer() {
        var machine = Self.sending()
        #expect(machine.answered(Self.failure(.cancelled), policy: .standard, on: Self.clock()) == Self.end(1))
    }

    /// A cancellation is an event of its own: whatever the load is doing, it fails at once,
    /// counting the attempts that could have reached the server, and every later event —
    /// the stopped step's own ending included — is ignored.
    @Test func aCancellationEndsTheLoadAtOnceAtEachPoint() {
        let cancelled = "the request was cancelled"
        let refreshing = "the request was cancelled while the credential was refreshed"

        var notStarted = Machine(usesCredential: false, isSigned: false, clockTolerance: 30)
        #expect(notStarted.cancelled() == Self.fail(.cancelled, cancelled, attempts: 0))
        Self.expectEverythingIgnored(notStarted)

        var gettingCredential = Machine(usesCredential: true, isSigned: false, clockTolerance: 30)
        _ = gettingCredential.start(on: Self.clock())
        #expect(gettingCredential.cancelled() == Self.fail(.cancelled, refreshing, attempts: 0))
        Self.expectEverythingIgnored(gettingCredential)

        var sending = Self.sending()
        #expect(sending.cancelled() == Self.fail(.cancelled, cancelled, attempts: 1))
        // The transfer's own cancelled ending, arriving afterwards, is ignored.
        #expect(sending.answered(Self.failure(.cancelled), policy: .standard, on: Self.clock()) == .ignore)
        Self.expectEverythingIgnored(sending)

        var renewing = Self.sending(credential: true)
        _ = renewing.answered(Self.answer(401, judgement: Machine.Judgement(credentialExpired: true)), policy: .standard, on: Self.clock())
        #expect(renewing.cancelled() == Self.fail(.cancelled, refreshing, attempts: 1))
        Self.expectEverythingIgnored(renewing)

        var heldBack = Self.sending(credential: true)
        _ = heldBack.answered(Self.failure(.withdrawn), policy: .standard, on: Self.clock())
        #expect(heldBack.cancelled() == Self.fail(.cancelled, refreshing, attempts: 0))
        Self.expectEverythingIgnored(heldBack)

        var weighing = Self.sending()
        let asked = weighing.answered(Self.answer(503), policy: .standard, on: Self.clock())
        #expect(weighing.cancelled() == Self.fail(.cancelled, cancelled, attempts: 1))
        #expect(weighing.retryAllowed(Self.retry(asked: asked)) == .ignore)
        Self.expectEverythingIgnored(weighing)

        var waiting = Self.sending()
        _ = waiting.retryAllowed(Self.retry(asked: waiting.answered(Self.answer(503), policy: .standard, on: Self.clock())))
        #expect(waiting.cancelled() == Self.fail(.cancelled, "the request was cancelled while waiting to retry", attempts: 1))
        #expect(waiting.waitEnded(cancelled: true, on: Self.clock()) == .ignore)
        Self.expectEverythingIgnored(waiting)

        var startingAgain = Self.sending(signed: true)
        let corrected = startingAgain.answered(Self.answer(401, clockOffset: 120), policy: .standard, on: Self.clock())
        #expect(corrected == .startAgain(.clockCorrected(offset: 120)))
        #expect(startingAgain.cancelled() == Self.fail(.cancelled, cancelled, attempts: 1))
        Self.expectEverythingIgnored(startingAgain)

        var ended = Self.sending()
        #expect(ended.answered(Self.answer(200), policy: .standard, on: Self.clock()) == Self.end(1))
        #expect(ended.cancelled() == .ignore)
    }

    /// A shutdown's cancellation ends the load the same way, with the shutdown's kind and a
    /// message that says so.
    @Test func aShutdownsCancellationEndsTheLoadWithTheShutdownKind() {
        let because = ": the proxy shut down, and its deadline passed first"
        var sending = Self.sending()
        #expect(sending.cancelled(.shutdown) == Self.fail(.shutDown, "the request was cancelled" + because, attempts: 1))
        Self.expectEverythingIgnored(sending)

        var waiting = Self.sending()
        _ = waiting.retryAllowed(Self.retry(asked: waiting.answered(Self.answer(503), policy: .standard, on: Self.clock())))
        #expect(waiting.cancelled(.shutdown) == Self.fail(.shutDown, "the request was cancelled while waiting to retry" + because, attempts: 1))
        #expect(waiting.cancelled() == .ignore)
    }

    @Test func cancellingDuringTheWaitBeforeARetryFailsTheLoad() {
        var machine = Self.sending()
        let asked = machine.answered(Self.answer(503), policy: .standard, on: Self.clock())
        _ = machine.retryAllowed(Self.retry(asked: asked))
        #expect(machine.waitEnded(cancelled: true, on: Self.clock(0.1)) == Self.fail(.cancelled, "the request was cancelled while waiting to retry", attempts: 1))
        Self.expectEverythingIgnored(machine)
    }

    // MARK: From preparation to delivery: who has the load

    /// What a cancellation kept for later does now: nothing.
    static let kept = Verdict(action: .ignore, stopsStep: false)
    /// What a cancellation does to a step that uses the load's file: stops it, nothing more yet.
    static let stopsStepOnly = Verdict(action: .ignore, stopsStep: true)

    /// A cancellation's effect, comparable.
    struct Verdict: Equatable {
        let action: Action
        let stopsStep: Bool

        init(action: Action, stopsStep: Bool) {
            (self.action, self.stopsStep) = (action, stopsStep)
        }

        init(_ verdict: (action: Action, stopsStep: Bool)) {
            (action, stopsStep) = verdict
        }
    }

    /// A machine that has ended: delivered the first time, not again, and deaf to every event.
    static func expectDeliveredOnce(_ machine: inout Machine) {
        let deliveries = [machine.delivered(), machine.delivered()]
        #expect(deliveries == [true, false])
        expectEverythingIgnored(machine)
    }

    @Test func aCancellationWhileTheLoadIsPreparedIsHeardWhenItEndsWithoutSending() {
        for cause in [Machine.Cancellation.asked, .shutdown, .totalTimeout] {
            var machine = Machine()
            let first = Verdict(machine.cancel(cause))
            // A second cause changes nothing: the first is the one the load ends with.
            let second = Verdict(machine.cancel(.asked))
            let endedFor = machine.endedWithoutSending()
            let afterTheEnd = Verdict(machine.cancel(.asked))
            #expect([first, second, afterTheEnd] == [Self.kept, Self.kept, Self.kept])
            #expect(endedFor == cause)
            Self.expectDeliveredOnce(&machine)
        }
    }

    @Test func aCancellationWhileTheLoadIsPreparedIsItsFirstEventOnceStarted() {
        var machine = Machine()
        _ = machine.cancel(.asked)
        machine.prepared(usesCredential: true, isSigned: false, clockTolerance: 30)
        let heard = machine.hear { (machine: inout Machine) in machine.start(on: Self.clock()) }
        #expect(heard == Self.fail(.cancelled, "the request was cancelled", attempts: 0))
        Self.expectEverythingIgnored(machine)
    }

    @Test func aLoadNobodyCancelledEndsWithoutSendingUncancelledAndIsDeliveredOnce() {
        var machine = Machine()
        let endedFor = machine.endedWithoutSending()
        #expect(endedFor == nil)
        Self.expectDeliveredOnce(&machine)
    }

    @Test func aCancellationWhileAStepIsHandedOffEndsTheLoadAtOnceAndStopsTheStep() {
        var machine = Self.sending()
        let instead = machine.handOff(holdsLoad: false)
        #expect(instead == nil)
        #expect(machine.custody == .awaitingStep)
        let cancelled = Verdict(machine.cancel(.asked))
        #expect(cancelled == Verdict(action: Self.fail(.cancelled, "the request was cancelled", attempts: 1), stopsStep: true))
        // The step's outcome, when it comes, is ignored.
        let returned = machine.stepReturned()
        #expect(!returned)
        Self.expectDeliveredOnce(&machine)
    }

    @Test func aCancellationWhileAStepUsesTheLoadsFileWaitsForTheStepToHandItBack() {
        var machine = Self.sending()
        let instead = machine.handOff(holdsLoad: true)
        #expect(instead == nil)
        let first = Verdict(machine.cancel(.shutdown))
        let second = Verdict(machine.cancel(.asked))
        #expect([first, second] == [Self.stopsStepOnly, Self.kept])
        #expect(!machine.hasEnded)
        let returned = machine.stepReturned()
        #expect(returned)
        #expect(machine.custody == .worked(cancellation: .shutdown))
        // The answer the stopped step brought is not weighed: the cancellation is heard first.
        let heard = machine.hear { (machine: inout Machine) in machine.answered(Self.failure(.cancelled), policy: .standard, on: Self.clock()) }
        #expect(heard == Self.fail(.shutDown, "the request was cancelled: the proxy shut down, and its deadline passed first", attempts: 1))
        Self.expectEverythingIgnored(machine)
    }

    @Test func aCancellationWhileTheLoadIsWorkedOnIsTheNextEventOrEndsTheHandOff() {
        var handingOff = Self.sending()
        let kept = Verdict(handingOff.cancel(.asked))
        #expect(kept == Self.kept)
        let instead = handingOff.handOff(holdsLoad: false)
        #expect(instead == Self.fail(.cancelled, "the request was cancelled", attempts: 1))
        #expect(handingOff.custody == .worked(cancellation: nil))
        Self.expectEverythingIgnored(handingOff)

        var weighing = Self.sending()
        _ = weighing.handOff(holdsLoad: false)
        let returned = weighing.stepReturned()
        #expect(returned)
        _ = weighing.cancel(.totalTimeout)
        let heard = weighing.hear { (machine: inout Machine) in machine.answered(Self.answer(200), policy: .standard, on: Self.clock()) }
        #expect(heard == Self.fail(.timeout, "the load's total timeout of 0.0 seconds ran out", attempts: 1))
    }

    @Test func aStepThatReturnsUncancelledHandsTheLoadBackToBeWorkedOn() {
        var machine = Self.sending()
        let instead = machine.handOff(holdsLoad: true)
        #expect(instead == nil)
        #expect(machine.custody == .lentToStep(cancellation: nil))
        let returned = machine.stepReturned()
        #expect(returned)
        #expect(machine.custody == .worked(cancellation: nil))
        let heard = machine.hear { (machine: inout Machine) in machine.answered(Self.answer(200), policy: .standard, on: Self.clock()) }
        #expect(heard == Self.end(1))
        Self.expectDeliveredOnce(&machine)
    }
}
