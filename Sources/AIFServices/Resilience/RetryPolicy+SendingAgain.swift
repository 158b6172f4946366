import Foundation

extension RetryPolicy {
    /// What would send a load's request out again.
    ///
    /// Every path that can send a request a second time names its cause here and asks
    /// ``RetryPolicy/verdict(onSending:again:)``: the one place that decides.
    package enum SendingAgain: Sendable, Hashable, CustomStringConvertible {
        /// The transport's own resend: a connection it reused closed before any byte of the
        /// answer, and it would send the request once more on a fresh one. The server may have
        /// processed the first copy; a lost answer is a failure the policy retries or not
        /// (``TransportError/Code-swift.struct/responseLost``).
        case reusedConnectionLost
        /// A retry after the transfer failed with this code.
        case failure(TransportError.Code)
        /// A retry after the server answered this status; `saidWhen` when the answer named a
        /// wait (`Retry-After`, a rate limit's reset).
        case status(Int, saidWhen: Bool)
        /// A retry the service's ``ErrorPolicies`` ask for, after an answer with this status;
        /// `saidWhen` when the answer named a wait (a GraphQL rate limit's `X-RateLimit-Reset`).
        case errorPolicy(statusCode: Int, saidWhen: Bool = false)
        /// A retry the server asked for in the policy's ``RetryPolicy/retryAdviceHeader``: it
        /// says it did not apply the request.
        case advised
        /// A redirect with this status, whose next hop carries the request's body (`307`,
        /// `308`; `301` and `302` for a method other than `POST`): the server did not process
        /// the request, and named where to send it.
        case redirect(Int)
        /// The credential was refused (or said expired) and is renewed: the server did not
        /// process the request.
        case credentialRenewed
        /// The transport withdrew the request before a byte of it went out (its credential
        /// went stale while it waited for a connection).
        case withdrawn
        /// The server refused the request's signing time: it is signed again with the clock
        /// correction its `Date` header gave.
        case clockCorrected
        /// A download's partial file did not match the server's: the whole file is asked for
        /// again. The server answered the request, so it processed it.
        case downloadStartsOver
        /// Another load in flight sends the identical request, and its one answer serves both
        /// (an endpoint's `coalescesIdenticalRequests`): one send stands for two loads.
        case sharedWithIdenticalLoad

        /// In plain words, for the table test's failures and the log.
        package var description: String {
            switch self {
            case .reusedConnectionLost: "the reused connection closed before the answer"
            case .failure(let code): "the transfer failed: \(code)"
            case .status(let status, let saidWhen): "the server answered \(status)\(saidWhen ? " and said when to come back" : "")"
            case .errorPolicy(let status, let saidWhen): "the service's error policy retries \(status)\(saidWhen ? " and the server said when to come back" : "")"
            case .advised: "the server asked for a retry"
            case .redirect(let status): "a \(status) redirect"
            case .credentialRenewed: "the credential was renewed"
            case .withdrawn: "the request was withdrawn before it went out"
            case .clockCorrected: "the signing time was refused"
            case .downloadStartsOver: "the download starts over"
            case .sharedWithIdenticalLoad: "an identical load in flight"
            }
        }
    }

    /// Whether a request may go out again, or be shared, for a cause.
    package enum SendingAgainVerdict: Sendable, Equatable {
        /// It may.
        case allowed
        /// The policy does not retry after this cause (a status or a failure it does not
        /// list, or no retries at all): nothing to explain.
        case notRetried
        /// The cause is one the policy retries, or one that sends again by itself, but this
        /// request must not go out again: why (in plain words as its description, made only
        /// when it is shown: a POST that succeeds asks this of every request).
        case refused(Refusal)
    }

    /// Why a request must not go out again.
    package enum Refusal: Sendable, Equatable, CustomStringConvertible {
        /// Its body is a stream, read as it is sent.
        case streamSentOnce
        /// Its answer was lost, a failure the policy does not retry (`noRetries`: it retries
        /// nothing).
        case lostAnswerNotRetried(noRetries: Bool)
        /// Its method is not one the policy retries, and it carries no key (`keyHeader`, the
        /// policy's header for one).
        case notSafeToRepeat(HTTPMethod, keyHeader: String?)
        /// It must never run twice (a GraphQL mutation whose server ignores idempotency keys),
        /// and the server may have run it.
        case runsOnce
        /// Only a safe method without a body shares an identical load's answer.
        case notShareable

        /// In plain words, for the log and the error's message.
        package var description: String {
            switch self {
            case .streamSentOnce:
                "the request body is a stream, which is sent once and cannot be sent again"
            case .lostAnswerNotRetried(let noRetries):
                "its answer was lost, which the retry policy does not retry (retryableErrors\(noRetries ? ": no retries at all" : " has no responseLost"))"
            case .notSafeToRepeat(let method, let keyHeader):
                "\(method) is not retried without \(keyHeader.map { "an \($0) header" } ?? "an idempotency key")"
            case .runsOnce:
                "it must not run twice (a mutation whose server does not honour idempotency keys), and the server may have run it"
            case .notShareable:
                "only a \(HTTPMethod.get) or \(HTTPMethod.head) without a body shares an identical load's answer"
            }
        }
    }

    /// The one rule for sending a load's request out again, for every cause that can: the
    /// transport's resend after a dropped reused connection, a retry after a status or a
    /// failure, a redirect, a renewed credential, a clock-corrected signature, a withdrawn
    /// request, a download started over, an identical load's answer shared.
    ///
    /// It reads, in this order:
    /// 1. whether the policy sends again after the cause at all — a status in
    ///    ``retryableStatusCodes`` (or in ``retryAfterStatusCodes`` with a wait named), an error
    ///    in ``retryableErrors``, at least one retry (``maxRetries``). A lost answer on a reused
    ///    connection is a failure like the others: ``TransportError/Code-swift.struct/responseLost``
    ///    must be retried for the transport to send a request that is not safe again;
    /// 2. the body: a stream is read as it is sent, and never goes out twice;
    /// 3. whether the server can have processed the request. It cannot when nothing left
    ///    (refused, unreachable, unresolved, a connect or TLS failure),
    ///    when it refused the request (a credential, a signing time), redirected it, advised
    ///    the retry — or, with ``retriesUnprocessedRequests``, answered 429, or 503 or a
    ///    ``retryAfterStatusCodes`` status saying when to come back. Then any method goes again;
    /// 4. otherwise, whether the request is safe to repeat: its method is one the policy
    ///    retries (``methods``), or it carries the idempotency key (``keyHeader``). A safe
    ///    method (`GET`, `HEAD` …) is always safe for the transport's own resend: a second copy
    ///    of it changes nothing.
    ///
    /// A withdrawn request goes again whatever it is: not a byte of it, its body included, was
    /// read. An identical load's answer is shared only by a safe method without a body.
    ///
    /// - Parameters:
    ///   - request: The request that would go out again (for a redirect: its next hop).
    ///   - cause: What would send it.
    /// - Returns: The verdict.
    package func verdict(onSending request: HTTPRequest, again cause: SendingAgain) -> SendingAgainVerdict {
        let processed: Bool
        switch cause {
        case .reusedConnectionLost:
            if request.body.isStream { return .refused(.streamSentOnce) }
            if request.method.isSafe || request.declaredSafeToRepeat == true { return .allowed }
            if request.declaredSafeToRepeat == false { return .refused(.runsOnce) }
            // Both must hold; the method first, which most requests that are not safe fail
            // (the transport asks this of each of them).
            guard methods.contains(request.method) || isKeyed(request) else { return .refused(.notSafeToRepeat(request.method, keyHeader: keyHeader)) }
            guard maxRetries > 0, retryableErrors.contains(.responseLost) else { return .refused(.lostAnswerNotRetried(noRetries: maxRetries == 0)) }
            return .allowed
        case .failure(let code):
            guard maxRetries > 0, retryableErrors.contains(code) else { return .notRetried }
            processed = !Self.neverLeaves(code)
        case .status(let status, let saidWhen):
            let retried = retryableStatusCodes.contains(status) || saidWhen && retryAfterStatusCodes.contains(status)
            guard maxRetries > 0, retried else { return .notRetried }
            processed = !(retriesUnprocessedRequests && Self.saysUnprocessed(status, saidWhen: saidWhen, retryAfterStatusCodes))
        case .errorPolicy(_, let saidWhen):
            guard maxRetries > 0 else { return .notRetried }
            // A code the service retries, with a wait named — a rate limit reported in the body,
            // as GraphQL servers do — is a refusal like a 429's.
            processed = !(retriesUnprocessedRequests && saidWhen)
        case .advised:
            guard maxRetries > 0 else { return .notRetried }
            processed = false
        case .withdrawn:
            // Nothing of it was read: not even a streamed body, which opens as the request
            // goes out.
            return .allowed
        case .redirect, .credentialRenewed, .clockCorrected:
            processed = false
        case .downloadStartsOver:
            processed = true
        case .sharedWithIdenticalLoad:
            guard request.method.isSafe, request.body.byteCount == 0 else { return .refused(.notShareable) }
            return .allowed
        }
        if request.body.isStream { return .refused(.streamSentOnce) }
        guard processed else { return .allowed }
        switch request.declaredSafeToRepeat {
        case true?: if methods.contains(.get) { return .allowed }
        case false?: return .refused(.runsOnce)
        case nil: if methods.contains(request.method) || isKeyed(request) { return .allowed }
        }
        return .refused(.notSafeToRepeat(request.method, keyHeader: keyHeader))
    }

    /// Whether `request` carries the policy's idempotency key.
    private func isKeyed(_ request: HTTPRequest) -> Bool {
        guard let keyHeader else { return false }
        return request.headers[keyHeader] != nil
    }

    /// Whether a failure with `code` happens before any byte of the request leaves.
    package static func neverLeaves(_ code: TransportError.Code) -> Bool {
        switch code {
        case .connectionRefused, .hostUnreachable, .nameResolutionFailed, .connectTimeout, .tlsFailure, .withdrawn, .transportShutDown, .invalidURL: true
        default: false
        }
    }

    /// Whether an answer says the server refused the request before processing it: 429, or
    /// 503 or a status retried only with a wait, when it names the wait.
    private static func saysUnprocessed(_ status: Int, saidWhen: Bool, _ retryAfterStatusCodes: Set<Int>) -> Bool {
        status == 429 || saidWhen && (status == 503 || retryAfterStatusCodes.contains(status))
    }
}
