package import Foundation

/// When a load that failed is sent again, and how long it waits first.
///
/// A service has one (``Service/retryPolicy``, or the `retry` key of its config file); a
/// manager can override it (`APIManager.retryPolicy`). The defaults:
///
/// | | default |
/// | --- | --- |
/// | retries after the first attempt | 2 |
/// | statuses retried | 408, 429, 502, 503, 504 |
/// | statuses retried only when they carry `Retry-After` | none (GitHub's rate limit is a 403 with `Retry-After`: add 403) |
/// | transport failures retried | connection refused, connection dropped, response lost, connect timeout, total timeout, stalled |
/// | methods retried | GET, HEAD, PUT, DELETE, OPTIONS; a POST or PATCH only when it carries an idempotency key, and no header is named for one by default (``idempotencyKeyHeader``, ``generatesIdempotencyKeys``), or when nothing of it left (a refused connection, a connect timeout) |
/// | a POST after 429 | not retried: ``retriesUnprocessedRequests`` retries a 429, and a 503 that says when to come back, for any method |
/// | wait | exponential with full jitter: a random time up to `baseDelay × 2ⁿ` (0.5 s, 1 s, 2 s …), never more than `maxDelay` (30 s) |
/// | `Retry-After` | honoured, as seconds or as an HTTP date (read against the server's clock); so is a rate limit's reset when none is left (`X-RateLimit-Reset`, GitHub's, a time; `RateLimit-Reset` and `RateLimit`, the IETF draft's, seconds) |
/// | wait budget | 30 s in all per load (``maxTotalWait``): a wait longer than what is left of it, than `maxDelay` or than the load's total timeout is not made — the answer is delivered at once, saying when the server said it could be sent again (`APIError.retryableAt`) |
///
/// A request that is not safe to repeat is never sent twice behind the caller's back: one rule
/// decides for every cause that could send it again — a retry, the transport's resend when a
/// reused connection closed before the answer (a lost answer is a failure like the others:
/// it needs `responseLost` in ``retryableErrors``), a redirect, a renewed credential — and
/// counts each send in the load's attempts.
///
/// ### Retrying a POST after 429
/// A 429 says the server refused the request before processing it, so sending it again cannot
/// apply it twice. To retry such answers for every method, and nothing else for a POST:
///
/// ```swift
/// var policy = RetryPolicy(retryableStatusCodes: [429, 503], retryableErrors: [])
/// policy.retriesUnprocessedRequests = true
/// ```
///
/// A POST is then sent again after a 429, or a 503 with `Retry-After`, after the wait the
/// server named; after a lost answer or a 500 it is not. (Widening ``methods`` to `POST`
/// would retry it after errors too, where the server may have applied it.)
///
/// Every attempt is a new request, signed afresh; the load keeps its ID; the load's total
/// timeout bounds all attempts together; cancelling the load during a wait ends it at once. A
/// proxy's ``RetryPolicy/Budget`` caps retries to a share of its requests, and a plugin can decline
/// any retry (`LoadPlugin.loadShouldRetry(_:of:)`).
public struct RetryPolicy: Sendable, Hashable, CustomStringConvertible {
    /// How many times a load is sent again after its first attempt; 0 never retries.
    public var maxRetries: Int
    /// The response statuses retried.
    public var retryableStatusCodes: Set<Int>
    /// Statuses retried only when the response says when, with `Retry-After`: a rate limit
    /// answered as a 403 (GitHub's) is retried after the wait it names, while any other 403 is
    /// delivered at once. Empty by default.
    public var retryAfterStatusCodes: Set<Int>
    /// The transport failures retried.
    public var retryableErrors: Set<TransportError.Code>
    /// The methods retried (those safe to repeat: RFC 9110's idempotent methods by default).
    public var methods: Set<HTTPMethod>
    /// Whether an answer that says the server refused the request before processing it is
    /// retried for any method, a `POST` included: a 429 Too Many Requests, or a 503 Service
    /// Unavailable — or a status of ``retryAfterStatusCodes`` — that says when to come back
    /// (`Retry-After`, a rate limit's reset). The status must still be one the policy retries;
    /// transport failures are not touched (a lost answer may mean a processed request). An
    /// answer whose application error code the service's ``ErrorPolicies`` retry counts too when
    /// it says when to come back: a rate limit a GraphQL server reports in a `200`'s `errors`.
    /// `false` by default: such answers are retried for ``methods`` only.
    public var retriesUnprocessedRequests: Bool
    /// A request header that makes a request of any method safe to repeat (`Idempotency-Key`):
    /// a POST or PATCH carrying it is retried like a GET. `nil` by default: without it, and
    /// without ``generatesIdempotencyKeys``, a POST is never retried.
    public var idempotencyKeyHeader: String?
    /// Whether each load of a method that is not idempotent (`POST`, `PATCH` …) gets a key of
    /// its own in ``idempotencyKeyHeader`` (`Idempotency-Key` when none is named): a random
    /// UUID made as the load starts and sent with every attempt of that load, so that the
    /// server applies the load once however often it is sent — and the policy may retry it, as
    /// Stripe's own libraries do. A key the call or the endpoint gives wins. `false` by default.
    public var generatesIdempotencyKeys: Bool
    /// A response header in which the server says whether to retry (`Stripe-Should-Retry`):
    /// `true` retries the answer, whatever its status and method (the server knows the request
    /// was not applied), within the policy's retries, waits and budget; `false` delivers it at
    /// once, whatever the policy would do. `nil` by default.
    public var retryAdviceHeader: String?
    /// The longest first wait; each retry doubles it.
    public var baseDelay: Duration
    /// The longest wait, and the longest `Retry-After` waited for.
    public var maxDelay: Duration
    /// The longest a load waits in all before its retries (its wait budget): a wait that would
    /// take it past this is not made, and the load ends with its answer — saying, when the
    /// server named the wait, when the request may be sent again.
    public var maxTotalWait: Duration

    /// Creates a policy; every argument has the default of the table above.
    ///
    /// - Parameters:
    ///   - maxRetries: Retries after the first attempt.
    ///   - retryableStatusCodes: The statuses retried.
    ///   - retryAfterStatusCodes: The statuses retried only when they carry `Retry-After`.
    ///   - retryableErrors: The transport failures retried.
    ///   - methods: The methods retried.
    ///   - retriesUnprocessedRequests: Whether a 429, or a 503 that says when to come back, is
    ///     retried for any method.
    ///   - idempotencyKeyHeader: A header that makes any method retryable.
    ///   - generatesIdempotencyKeys: Whether each load of a method that is not idempotent gets
    ///     a key of its own.
    ///   - retryAdviceHeader: A response header that says whether to retry.
    ///   - baseDelay: The longest first wait.
    ///   - maxDelay: The longest wait.
    ///   - maxTotalWait: The longest a load waits in all.
    public init(
        maxRetries: Int = 2,
        retryableStatusCodes: Set<Int> = [408, 429, 502, 503, 504],
        retryAfterStatusCodes: Set<Int> = [],
        retryableErrors: Set<TransportError.Code> = [.connectionRefused, .connectionDropped, .responseLost, .connectTimeout, .totalTimeout, .stalled],
        methods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options],
        retriesUnprocessedRequests: Bool = false,
        idempotencyKeyHeader: String? = nil,
        generatesIdempotencyKeys: Bool = false,
        retryAdviceHeader: String? = nil,
        baseDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(30),
        maxTotalWait: Duration = .seconds(30)
    ) {
        self.maxRetries = maxRetries
        self.retryableStatusCodes = retryableStatusCodes
        self.retryAfterStatusCodes = retryAfterStatusCodes
        self.retryableErrors = retryableErrors
        self.methods = methods
        self.retriesUnprocessedRequests = retriesUnprocessedRequests
        self.idempotencyKeyHeader = idempotencyKeyHeader
        self.generatesIdempotencyKeys = generatesIdempotencyKeys
        self.retryAdviceHeader = retryAdviceHeader
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxTotalWait = maxTotalWait
    }

    /// The defaults.
    public static let standard = RetryPolicy()

    /// The header that carries an idempotency key: ``idempotencyKeyHeader``, or
    /// `Idempotency-Key` when the policy generates keys without naming one; `nil` for none.
    public var keyHeader: String? {
        idempotencyKeyHeader ?? (generatesIdempotencyKeys ? "Idempotency-Key" : nil)
    }

    /// No retries.
    public static let never = RetryPolicy(maxRetries: 0)

    /// The header and a fresh key for a load of `method` that has none yet (`headers`), when
    /// the policy generates keys and the method is not idempotent; `nil` otherwise.
    ///
    /// - Parameters:
    ///   - method: The load's method.
    ///   - headers: The headers the load has already (the endpoint's and the call's).
    /// - Returns: The header's name and a new key (a random UUID, in lower case).
    public func newIdempotencyKey(for method: HTTPMethod, given headers: HTTPHeaders) -> (header: String, key: String)? {
        guard generatesIdempotencyKeys, !method.isIdempotent, let header = keyHeader, !headers.contains(header) else { return nil }
        return (header, UUID().uuidString.lowercased())
    }

    /// In plain words: `up to 2 retries of DELETE, GET, HEAD, OPTIONS, PUT or a request with
    /// Idempotency-Key, after 408, 429, 502, 503, 504, connection refused, …, waiting up to
    /// 0.5 s × 2ⁿ (at most 30 s)`, or `no retries`.
    public var description: String {
        guard maxRetries > 0 else { return "no retries" }
        var methods = self.methods.map(\.rawValue).sorted().joined(separator: ", ")
        if let keyHeader { methods += " or a request with \(keyHeader)\(generatesIdempotencyKeys ? " (one made for each POST or PATCH load)" : "")" }
        let told = retryAfterStatusCodes.subtracting(retryableStatusCodes).sorted().map { "\($0) with Retry-After or a rate limit's reset" }
        let failures = retryableStatusCodes.sorted().map(String.init) + told + retryableErrors.map { "\($0)" }.sorted()
        let advice = retryAdviceHeader.map { ", or as \($0) says" } ?? ""
        if retriesUnprocessedRequests { methods += " (any method after 429, or 503 saying when)" }
        return "up to \(maxRetries) \(maxRetries == 1 ? "retry" : "retries") of \(methods), after \(failures.joined(separator: ", "))\(advice), "
            + "waiting up to \(Reason.seconds(baseDelay)) s × 2ⁿ (at most \(Reason.seconds(maxDelay)) s, \(Reason.seconds(maxTotalWait)) s in all)"
    }

    /// The longest wait before retry number `retry` (0 for the first): `baseDelay × 2^retry`,
    /// at most ``maxDelay``. The wait itself is a random time up to it ("full jitter").
    func delayCeiling(beforeRetry retry: Int) -> Duration {
        let factor = 1 << min(max(retry, 0), 30)
        let ceiling = baseDelay * factor
        return ceiling > maxDelay || ceiling < .zero ? maxDelay : ceiling
    }
}

extension RetryPolicy {
    /// Why an attempt failed in a way the policy retries.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The server answered with this status (and, if it said how long to wait — `Retry-After`,
        /// a rate limit's reset —, that long).
        case status(Int, retryAfter: Duration?)
        /// The transfer failed with this code.
        case transportError(TransportError.Code)
        /// The service's ``ErrorPolicies`` say this status or application code is retried.
        case errorPolicy(statusCode: Int, code: String?)
        /// The server said to retry this status, in the policy's ``RetryPolicy/retryAdviceHeader``.
        case advised(statusCode: Int, header: String)

        /// In plain words, for the log.
        public var description: String {
            switch self {
            case .status(let code, nil): "the server answered \(code)"
            case .status(let code, let retryAfter?): "the server answered \(code) and asked to wait \(Reason.seconds(retryAfter)) s"
            case .transportError(let code): "the transfer failed: \(code)"
            case .errorPolicy(let status, let code?): "the server answered \(status) with code \(code), which the service retries"
            case .errorPolicy(let status, nil): "the server answered \(status), which the service retries"
            case .advised(let status, let header): "the server answered \(status) and asked for a retry (\(header): true)"
            }
        }

        package static func seconds(_ duration: Duration) -> String {
            String(format: "%.3g", duration.timeInterval)
        }
    }

    /// A retry about to be made, as a plugin asked about it hears it.
    public struct Attempt: Sendable, Hashable, CustomStringConvertible {
        /// The attempt about to be made: 2 for the first retry.
        public var number: Int
        /// The most attempts the policy allows (retries + 1).
        public var maximum: Int
        /// Why the previous attempt is retried.
        public var reason: Reason
        /// How long the load waits before the attempt.
        public var delay: Duration
        /// The response header that named the wait — `Retry-After`, `X-RateLimit-Reset`,
        /// `RateLimit-Reset`, `RateLimit` — when the server said how long; `nil` for the
        /// policy's own backoff.
        public var waitHeader: String?

        package init(number: Int, maximum: Int, reason: Reason, delay: Duration, waitHeader: String? = nil) {
            self.number = number
            self.maximum = maximum
            self.reason = reason
            self.delay = delay
            self.waitHeader = waitHeader
        }

        /// `attempt 2 of 3 in 0.42 s: the server answered 503`, or `attempt 2 of 3 in 30 s
        /// (Retry-After): …` when the server named the wait.
        public var description: String {
            "attempt \(number) of \(maximum) in \(Reason.seconds(delay)) s\(waitHeader.map { " (\($0))" } ?? ""): \(reason)"
        }
    }
}

/// What the policy says about an attempt's outcome.
package enum RetryDecision: Equatable {
    /// The outcome is the load's: deliver it. `note` says why a retryable failure is not
    /// retried, for the log; `retryableIn`, how long the server said to wait when that wait is
    /// what was not made.
    case deliver(note: String?, retryableIn: Duration? = nil)
    /// Send again after `delay` — as long as the server said, in `header`, or the policy's
    /// own backoff (`nil`).
    case retry(after: Duration, reason: RetryPolicy.Reason, header: String? = nil)
}

extension RetryPolicy {
    /// How long a response says to wait, and in which header.
    package struct ServerWait: Sendable, Equatable {
        package var wait: Duration
        package var header: String
    }
}

extension RetryPolicy {
    /// Decides about the outcome of attempt `attempt` (1 for the first) of `request`.
    ///
    /// - Parameters:
    ///   - outcome: The attempt's response, or its transport failure.
    ///   - request: The request of the attempt.
    ///   - attempt: Which attempt it was.
    ///   - remaining: What is left of the load's total timeout, if it has one.
    ///   - clockOffset: How far the server's clock is ahead of ours, for a `Retry-After` date
    ///     when the response has no `Date` header.
    ///   - now: The local time.
    ///   - random: Draws the jittered wait.
    ///   - policyReason: Set when the service's ``ErrorPolicies`` ask for a retry: the outcome
    ///     is then retried whatever the statuses the policy lists.
    ///   - waited: How long the load has waited for its retries so far (against
    ///     ``maxTotalWait``).
    package func decision(
        after outcome: Result<HTTPResponse, TransportError>, of request: HTTPRequest, attempt: Int, remaining: Duration?,
        clockOffset: TimeInterval = 0, now: Date, random: (Duration) -> Duration = RetryPolicy.randomDuration(upTo:),
        policyReason: Reason? = nil, waited: Duration = .zero
    ) -> RetryDecision {
        let reason: Reason
        var told: ServerWait?
        // The server's own word, when the policy names the header it says it in, wins over the
        // statuses, the error policies and the methods: `true` or `false`; anything else is
        // not a word.
        var advised = false
        if case .success(let response) = outcome, let header = retryAdviceHeader,
            let advice = response.headers[header]?.trimmingCharacters(in: .whitespaces).lowercased()
        {
            let status = response.statusCode
            if advice == "false" {
                let wouldRetry = policyReason != nil || retryableStatusCodes.contains(status) || retryAfterStatusCodes.contains(status)
                return .deliver(note: wouldRetry ? "the server answered \(status) and asked not to retry (\(header): false)" : nil)
            }
            advised = advice == "true"
        }
        let cause: SendingAgain
        switch outcome {
        case .success(let response) where advised:
            told = Self.serverWait(in: response, clockOffset: clockOffset, now: now)
            reason = .advised(statusCode: response.statusCode, header: retryAdviceHeader ?? "")
            cause = .advised
        case .success(let response) where policyReason != nil:
            told = Self.serverWait(in: response, clockOffset: clockOffset, now: now)
            reason = policyReason!
            cause = .errorPolicy(statusCode: response.statusCode, saidWhen: told != nil)
        case .success(let response):
            let status = response.statusCode
            guard retryableStatusCodes.contains(status) || retryAfterStatusCodes.contains(status) else { return .deliver(note: nil) }
            told = Self.serverWait(in: response, clockOffset: clockOffset, now: now)
            reason = .status(response.statusCode, retryAfter: told?.wait)
            cause = .status(status, saidWhen: told != nil)
        case .failure(let error):
            reason = .transportError(error.code)
            cause = .failure(error.code)
        }
        let verdict = verdict(onSending: request, again: cause)
        if verdict == .notRetried { return .deliver(note: nil) }
        guard attempt <= maxRetries else {
            return .deliver(note: maxRetries == 0 ? nil : "\(reason); no retries left after \(attempt) attempts")
        }
        if case .refused(let why) = verdict { return .deliver(note: "\(reason); \(why)") }
        let delay: Duration
        let named = told.map { " (\($0.header))" } ?? ""
        if let told {
            guard told.wait <= maxDelay else {
                return .deliver(note: "\(reason)\(named), longer than the longest wait (\(Reason.seconds(maxDelay)) s)", retryableIn: told.wait)
            }
            delay = told.wait
        } else {
            delay = random(delayCeiling(beforeRetry: attempt - 1))
        }
        guard delay <= maxTotalWait - waited else {
            let budget = "\(Reason.seconds(maxTotalWait)) s in all, \(Reason.seconds(waited)) s of it waited"
            let wait = told == nil ? "; the next wait, \(Reason.seconds(delay)) s," : "\(named),"
            return .deliver(note: "\(reason)\(wait) would pass the load's wait budget (\(budget))", retryableIn: told?.wait)
        }
        if let remaining, delay >= remaining {
            return .deliver(note: "\(reason)\(named), but the load's total timeout ends first", retryableIn: told?.wait)
        }
        return .retry(after: delay, reason: reason, header: told?.header)
    }

    /// A uniformly random duration from zero to `ceiling`.
    package static func randomDuration(upTo ceiling: Duration) -> Duration {
        let nanoseconds = max(Int64(ceiling / .nanoseconds(1)), 0)
        return .nanoseconds(Int64.random(in: 0...nanoseconds))
    }

    /// How long the response says to wait before asking again, and where it says so:
    ///
    /// - `Retry-After` (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date;
    /// - a rate limit's reset, when no request is left in its window (the remaining count is 0,
    ///   or not given): `RateLimit` (the IETF draft's structured field, `"default";r=0;t=30`),
    ///   `RateLimit-Reset` (the draft's earlier field, delay-seconds) and `X-RateLimit-Reset`
    ///   (GitHub's, seconds since 1970, with `X-RateLimit-Remaining`).
    ///
    /// Dates are read against the server's clock: the response's own `Date` when it has one,
    /// else our clock corrected by `clockOffset`. A time in the past is no wait; a value that
    /// is none of these forms is ignored.
    package static func serverWait(in response: HTTPResponse, clockOffset: TimeInterval, now: Date) -> ServerWait? {
        let headers = response.headers
        let serverNow = { headers["Date"].flatMap(ServiceRegistry.ClockSkew.parseHTTPDate) ?? now.addingTimeInterval(clockOffset) }
        if let value = headers["Retry-After"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
            if let seconds = wholeSeconds(value) { return ServerWait(wait: seconds, header: "Retry-After") }
            if let date = ServiceRegistry.ClockSkew.parseHTTPDate(value) {
                return ServerWait(wait: until(date, from: serverNow()), header: "Retry-After")
            }
        }
        if let field = headers["RateLimit"], let reset = exhaustedLimitReset(in: field) {
            return ServerWait(wait: reset, header: "RateLimit")
        }
        if isExhausted(headers["RateLimit-Remaining"]), let value = headers["RateLimit-Reset"], let seconds = wholeSeconds(value) {
            return ServerWait(wait: seconds, header: "RateLimit-Reset")
        }
        if isExhausted(headers["X-RateLimit-Remaining"]), let value = headers["X-RateLimit-Reset"], let epoch = wholeSeconds(value) {
            let date = Date(timeIntervalSince1970: TimeInterval(epoch.components.seconds))
            return ServerWait(wait: until(date, from: serverNow()), header: "X-RateLimit-Reset")
        }
        return nil
    }

    /// Digits as seconds; a number too long for Int is longer than any wait (the longest
    /// Duration a wait can be says so).
    private static func wholeSeconds(_ text: String) -> Duration? {
        let value = text.trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        guard let seconds = Int64(value), seconds <= 1 << 40 else { return .seconds(Int64(1) << 40) }
        return .seconds(seconds)
    }

    /// The time from `now` to `date`: none when it has passed.
    private static func until(_ date: Date, from now: Date) -> Duration {
        let seconds = date.timeIntervalSince(now)
        guard seconds > 0 else { return .zero }
        return .milliseconds(Int64(min(seconds, TimeInterval(Int64(1) << 40)) * 1000))
    }

    /// Whether a remaining count says the window is spent: 0, or not given.
    private static func isExhausted(_ remaining: String?) -> Bool {
        guard let remaining else { return true }
        return Int(remaining.trimmingCharacters(in: .whitespaces)) == 0
    }

    /// The reset of the first limit in a `RateLimit` field with nothing remaining (`r=0`).
    private static func exhaustedLimitReset(in field: String) -> Duration? {
        for item in field.split(separator: ",") {
            var remaining: String?
            var reset: String?
            for parameter in item.split(separator: ";").dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                if pair[0] == "r" { remaining = pair[1] }
                if pair[0] == "t" { reset = pair[1] }
            }
            if remaining == "0", let reset, let seconds = wholeSeconds(reset) { return seconds }
        }
        return nil
    }
}
