@testable import AIFServices
import Foundation
import Testing

/// The one rule for sending a load's request out again (`RetryPolicy.verdict(onSending:again:)`):
/// every method × key or none × body × policy × cause, against a reference written from the
/// rule's table in the docs (*Retries and credentials*), and literal rows for the cases that
/// were defects or are easy to get wrong.
@Suite("Sending again: one rule, every method × key × policy × cause")
struct SendingAgainTests {
    /// The policies of the table, each with the `Idempotency-Key` header but `standardNoKey`.
    static let policies: [(name: String, policy: RetryPolicy)] = [
        ("standard", RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")),
        ("standardNoKey", RetryPolicy()),
        // The Slack trial's: statuses for POST, no errors.
        ("statusesForPost", RetryPolicy(retryableStatusCodes: [429], retryableErrors: [], methods: [.post], idempotencyKeyHeader: "Idempotency-Key")),
        ("never", RetryPolicy(maxRetries: 0, idempotencyKeyHeader: "Idempotency-Key")),
        (
            "unprocessed",
            RetryPolicy(
                retryableStatusCodes: [429, 500, 503], retryAfterStatusCodes: [403], retryableErrors: [.connectionRefused], retriesUnprocessedRequests: true,
                idempotencyKeyHeader: "Idempotency-Key")
        ),
        ("getsOnly", RetryPolicy(methods: [.get], idempotencyKeyHeader: "Idempotency-Key")),
    ]

    static let causes: [RetryPolicy.SendingAgain] = [
        .reusedConnectionLost, .failure(.connectionRefused), .failure(.connectTimeout), .failure(.tlsFailure), .failure(.responseLost),
        .failure(.connectionDropped), .failure(.totalTimeout), .failure(.invalidResponse), .status(429, saidWhen: false), .status(429, saidWhen: true),
        .status(503, saidWhen: false), .status(503, saidWhen: true), .status(500, saidWhen: false), .status(403, saidWhen: true),
        .status(403, saidWhen: false), .errorPolicy(statusCode: 409), .advised, .redirect(307), .redirect(308), .credentialRenewed, .withdrawn,
        .clockCorrected, .downloadStartsOver, .sharedWithIdenticalLoad,
    ]

    enum BodyKind: CaseIterable { case none, bytes, stream }

    static func request(_ method: HTTPMethod, keyed: Bool, body: BodyKind) -> HTTPRequest {
        let content: HTTPRequest.Body =
            switch body {
            case .none: .empty
            case .bytes: .bytes(Data("{}".utf8))
            case .stream: .stream(HTTPRequest.BodyStream(AsyncStream<Data> { $0.finish() }))
            }
        return HTTPRequest(
            method: method, url: URL(string: "https://api.example/charges")!, headers: keyed ? ["Idempotency-Key": "k-1"] : [:], body: content)
    }

    /// The rule, written again from the docs' table rather than from the code.
    static func expected(_ method: HTTPMethod, keyed: Bool, body: BodyKind, _ policy: RetryPolicy, _ cause: RetryPolicy.SendingAgain) -> Bool {
        let safeToRepeat = policy.methods.contains(method) || keyed && policy.idempotencyKeyHeader != nil
        let stream = body == .stream
        switch cause {
        case .withdrawn:
            return true
        case .sharedWithIdenticalLoad:
            return (method == .get || method == .head || method == .options) && body == .none
        case .reusedConnectionLost:
            if stream { return false }
            if ["GET", "HEAD", "OPTIONS", "TRACE"].contains(method.rawValue) { return true }
            return policy.maxRetries > 0 && policy.retryableErrors.contains(.responseLost) && safeToRepeat
        case .failure(let code):
            guard policy.maxRetries > 0, policy.retryableErrors.contains(code), !stream else { return false }
            let nothingLeft = [TransportError.Code.connectionRefused, .connectTimeout, .tlsFailure].contains(code)
            return nothingLeft || safeToRepeat
        case .status(let status, let saidWhen):
            let retried = policy.retryableStatusCodes.contains(status) || saidWhen && policy.retryAfterStatusCodes.contains(status)
            guard policy.maxRetries > 0, retried, !stream else { return false }
            let refusedUnprocessed = status == 429 || saidWhen && (status == 503 || policy.retryAfterStatusCodes.contains(status))
            return policy.retriesUnprocessedRequests && refusedUnprocessed || safeToRepeat
        case .errorPolicy:
            return policy.maxRetries > 0 && !stream && safeToRepeat
        case .advised:
            return policy.maxRetries > 0 && !stream
        case .redirect, .credentialRenewed, .clockCorrected:
            return !stream
        case .downloadStartsOver:
            return !stream && safeToRepeat
        }
    }

    @Test func everyCombinationFollowsTheTable() {
        var checked = 0
        for (name, policy) in Self.policies {
            for method in [HTTPMethod.get, .head, .put, .delete, .post, .patch] {
                for keyed in [false, true] {
                    for body in BodyKind.allCases {
                        let request = Self.request(method, keyed: keyed, body: body)
                        for cause in Self.causes {
                            let verdict = policy.verdict(onSending: request, again: cause)
                            let want = Self.expected(method, keyed: keyed, body: body, policy, cause)
                            #expect(
                                (verdict == .allowed) == want,
                                "\(name) policy, \(method)\(keyed ? " with a key" : ""), body \(body), \(cause): \(verdict)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == Self.policies.count * 6 * 2 * 3 * Self.causes.count)
    }

    /// The Slack trial: statuses retried for POST, no errors. A lost answer on a reused
    /// connection is a failure the policy does not retry — the transport must not send the POST
    /// again, whatever `methods` says.
    @Test func aPolicyWithoutErrorsDoesNotLetTheTransportResendAPost() {
        let policy = RetryPolicy(retryableStatusCodes: [429], retryableErrors: [], methods: [.post])
        let post = Self.request(.post, keyed: false, body: .bytes)
        guard case .refused(let why) = policy.verdict(onSending: post, again: .reusedConnectionLost) else {
            Issue.record("the POST would be sent again")
            return
        }
        #expect(why.description.contains("responseLost"), "\(why)")
        #expect(policy.verdict(onSending: post, again: .status(429, saidWhen: true)) == .allowed)
        #expect(policy.verdict(onSending: post, again: .failure(.responseLost)) == .notRetried)
    }

    @Test func aPostAfter429IsRetriedOnlyWithTheOptIn() {
        let post = Self.request(.post, keyed: false, body: .bytes)
        var policy = RetryPolicy()
        #expect(policy.verdict(onSending: post, again: .status(429, saidWhen: false)) == .refused(.notSafeToRepeat(.post, keyHeader: nil)))
        policy.retriesUnprocessedRequests = true
        #expect(policy.verdict(onSending: post, again: .status(429, saidWhen: false)) == .allowed)
        #expect(policy.verdict(onSending: post, again: .status(503, saidWhen: true)) == .allowed)
        // A 503 that does not say when, a 502, a lost answer: the server may have processed it.
        #expect(policy.verdict(onSending: post, again: .status(503, saidWhen: false)) != .allowed)
        #expect(policy.verdict(onSending: post, again: .status(502, saidWhen: true)) != .allowed)
        #expect(policy.verdict(onSending: post, again: .reusedConnectionLost) != .allowed)
        #expect(policy.verdict(onSending: post, again: .failure(.responseLost)) != .allowed)
    }

    @Test func aPostWhoseConnectionWasRefusedGoesAgainForNothingOfItLeft() {
        let post = Self.request(.post, keyed: false, body: .bytes)
        #expect(RetryPolicy().verdict(onSending: post, again: .failure(.connectionRefused)) == .allowed)
        #expect(RetryPolicy().verdict(onSending: post, again: .failure(.connectionDropped)) == .refused(.notSafeToRepeat(.post, keyHeader: nil)))
    }

    @Test func aStreamNeverGoesTwiceButAWithdrawnOneWasNeverRead() {
        let stream = Self.request(.put, keyed: true, body: .stream)
        let policy = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")
        for cause: RetryPolicy.SendingAgain in [.reusedConnectionLost, .status(503, saidWhen: false), .redirect(307), .credentialRenewed, .clockCorrected] {
            #expect(
                policy.verdict(onSending: stream, again: cause) == .refused(.streamSentOnce),
                "\(cause)")
        }
        #expect(policy.verdict(onSending: stream, again: .withdrawn) == .allowed)
    }

    @Test func noRetriesMeansNothingButTheServersRefusalsGoesAgain() {
        let put = Self.request(.put, keyed: false, body: .bytes)
        let never = RetryPolicy.never
        #expect(never.verdict(onSending: put, again: .reusedConnectionLost) != .allowed)
        #expect(never.verdict(onSending: put, again: .status(503, saidWhen: true)) == .notRetried)
        #expect(never.verdict(onSending: put, again: .advised) == .notRetried)
        #expect(never.verdict(onSending: put, again: .credentialRenewed) == .allowed)
        #expect(never.verdict(onSending: Self.request(.get, keyed: false, body: .none), again: .reusedConnectionLost) == .allowed)
    }

    /// The transport's redirect loop refuses a stream by the stream itself (it opens once);
    /// the rule says the same for every redirect that keeps the body.
    @Test func aRedirectThatKeepsTheBodyFollowsTheRule() throws {
        let policy = RetryPolicy()
        for status in [301, 302, 303, 307, 308] {
            for method in [HTTPMethod.get, .post, .put] {
                for body in [BodyKind.bytes, .stream] {
                    let answer = HTTPResponse(statusCode: status, headers: ["Location": "/elsewhere"], url: URL(string: "https://api.example/charges")!)
                    guard let hop = try Self.request(method, keyed: false, body: body).redirected(by: answer) else {
                        Issue.record("\(status) was not followed")
                        continue
                    }
                    let keepsBody = hop.body.isStream || hop.body.byteCount ?? 0 > 0
                    let verdict = policy.verdict(onSending: hop, again: .redirect(status))
                    #expect((verdict == .allowed) == !(keepsBody && body == .stream), "\(method) \(status) \(body): \(verdict)")
                }
            }
        }
    }

    @Test func aConfigFileOptsIn() throws {
        let json = #"{"name": "chat", "environments": {"online": {"baseURL": "https://chat.test"}}, "retry": {"retryUnprocessedRequests": true, "errors": []}}"#
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/chat.json", environment: [:])
        #expect(service.retryPolicy.retriesUnprocessedRequests)
        #expect(service.retryPolicy.retryableErrors.isEmpty)
        #expect(!RetryPolicy.standard.retriesUnprocessedRequests)
    }

    @Test func thePolicySaysItInPlainWords() {
        var policy = RetryPolicy()
        policy.retriesUnprocessedRequests = true
        #expect(policy.description.contains("any method after 429, or 503 saying when"), "\(policy.description)")
    }
}
