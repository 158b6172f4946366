@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import DemoServer
import Foundation
import Testing

/// Retries against the demo shop's `flaky/{key}` route, which fails as asked and then reports
/// how many requests it received and the nonce each was signed with: what only a server shows
/// about retries — each attempt signed afresh and verified, a refused connection retried by
/// libcurl, the budget under loads in flight together. The decisions — statuses, waits,
/// `Retry-After`, keys, cancellation, the interceptor — are tested end to end on the load's
/// clock with no socket in ``RetryDecisionTests``.
@Suite("Retries: against the demo shop")
struct RetryTests {
    /// The standard policy with short waits, so that the tests are quick.
    static let quick = RetryPolicy(baseDelay: .milliseconds(20), maxDelay: .seconds(30))

    /// A manager of `flaky/{a key of its own}` retrying with ``quick``, changed by `change`.
    func flaky(
        _ stack: ShopStack, method: HTTPMethod = .get, _ change: (inout ShopManager<FlakyReport>.Settings) -> Void = { _ in }
    ) -> ShopManager<FlakyReport> {
        stack.manager("flaky/\(UUID().uuidString)", FlakyReport.self, method: method) { settings in
            var settings = settings
            settings.retryPolicy = Self.quick
            change(&settings)
            return settings
        }
    }

    @Test func aFlakyEndpointSucceedsOnTheThirdAttemptSignedAfreshEachTime() async throws {
        let stack = try await ShopStack.make()
        let manager = flaky(stack)
        let response = try await manager.load(["failures": 2])
        #expect(response.attempts == 3)
        #expect(response.content.attempts == 3)
        // The shop verifies every signature (a bad one is a 401, never retried), so three
        // requests arrived validly signed, each with its own nonce.
        #expect(Set(response.content.nonces).count == 3)
        #expect(stack.transport.sent == 3)
    }

    @Test func aTransportFailureIsRetriedAndCounted() async throws {
        let port = try RawServer.closedPort()
        let stack = try await ShopStack.make(onlineURL: URL(string: "http://127.0.0.1:\(port)")!)
        let manager = stack.manager("goods", GoodsPage.self) { settings in
            var settings = settings
            settings.retryPolicy = Self.quick
            return settings
        }
        let error = await #expect(throws: APIError.self) { try await manager.load() }
        #expect(error?.kind == .noNetwork)
        #expect(error?.attempts == 3)
        #expect(stack.transport.sent == 3)
    }

    @Test func theBudgetStopsRetriesWhenEverythingFails() async throws {
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, retryBudget: RetryPolicy.Budget(ratio: 0.2, minimumRetries: 2)) })
        let loads = 50
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<loads {
                group.addTask {
                    let manager = flaky(stack)
                    _ = try? await manager.load(["failures": 1000])
                }
            }
            try await group.waitForAll()
        }
        // Without the budget: 150 requests. With it: at most 20% more than the loads, plus 2.
        #expect(stack.transport.sent > loads)
        #expect(stack.transport.sent <= loads + loads / 5 + 2)
    }

    @Test func aServiceConfigSetsThePolicy() async throws {
        let stack = try await ShopStack.make()
        let resolved = try stack.registry.resolve("shop")
        #expect(resolved.service.retryPolicy.maxRetries == 2)
        #expect(resolved.service.retryPolicy.idempotencyKeyHeader == "Idempotency-Key")
    }
}

/// The policy's decisions, without I/O.
@Suite("Retries: the policy as a function")
struct RetryPolicyTests {
    let url = URL(string: "https://api.example/v1/goods")!

    func response(_ status: Int, _ headers: HTTPHeaders = HTTPHeaders()) -> Result<HTTPResponse, TransportError> {
        .success(HTTPResponse(statusCode: status, headers: headers, url: url))
    }

    func decide(
        _ outcome: Result<HTTPResponse, TransportError>, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(), attempt: Int = 1,
        remaining: Duration? = nil, policy: RetryPolicy = .standard
    ) -> RetryDecision {
        policy.decision(
            after: outcome, of: HTTPRequest(method: method, url: url, headers: headers), attempt: attempt, remaining: remaining,
            now: Date(timeIntervalSince1970: 1_700_000_000), random: { $0 })
    }

    @Test func theDefaultsRetryTheTransientStatusesOnIdempotentMethods() {
        for status in [408, 429, 502, 503, 504] {
            #expect(decide(response(status)) == .retry(after: .milliseconds(500), reason: .status(status, retryAfter: nil)))
        }
        for status in [200, 304, 400, 401, 404, 500, 501] {
            #expect(decide(response(status)) == .deliver(note: nil))
        }
        for method: HTTPMethod in [.get, .head, .put, .delete, .options] {
            #expect(decide(response(503), method: method) != .deliver(note: nil))
        }
        guard case .deliver(let note?, _) = decide(response(503), method: .post) else {
            Issue.record("POST was retried")
            return
        }
        #expect(note.contains("POST is not retried"))
        var keyed = RetryPolicy.standard
        keyed.idempotencyKeyHeader = "Idempotency-Key"
        #expect(decide(response(503), method: .patch, headers: ["Idempotency-Key": "k1"], policy: keyed) != .deliver(note: nil))
    }

    @Test func aStreamedBodyIsNotSentAgain() {
        let stream = HTTPRequest.BodyStream(AsyncStream<Data> { $0.finish() })
        let request = HTTPRequest(method: .put, url: url, body: .stream(stream))
        let decision = RetryPolicy.standard.decision(after: response(503), of: request, attempt: 1, remaining: nil, now: Date(timeIntervalSince1970: 1_700_000_000))
        guard case .deliver(let note?, _) = decision else {
            Issue.record("a streamed body was retried: \(decision)")
            return
        }
        #expect(note.contains("the request body is a stream, which is sent once"))
    }

    @Test func transportFailuresInThePolicyAreRetried() {
        let refused = TransportError(.connectionRefused, url: url.absoluteString, detail: "refused")
        #expect(decide(.failure(refused)) == .retry(after: .milliseconds(500), reason: .transportError(.connectionRefused)))
        let tls = TransportError(.tlsFailure, url: url.absoluteString, detail: "bad certificate")
        #expect(decide(.failure(tls)) == .deliver(note: nil))
    }

    @Test func theWaitDoublesUpToTheCapWithFullJitter() {
        let policy = RetryPolicy(maxRetries: 20, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        #expect((0..<6).map { policy.delayCeiling(beforeRetry: $0) } == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        #expect(policy.delayCeiling(beforeRetry: 100) == .seconds(1))
        let draws = (0..<200).map { _ in RetryPolicy.randomDuration(upTo: .milliseconds(400)) }
        #expect(draws.allSatisfy { $0 >= .zero && $0 <= .milliseconds(400) })
        #expect(Set(draws).count > 100)
        #expect(decide(response(503), attempt: 3, policy: policy) == .retry(after: .milliseconds(400), reason: .status(503, retryAfter: nil)))
    }

    @Test func theAttemptsLimitIsKept() {
        #expect(decide(response(503), attempt: 2) != .deliver(note: nil))
        guard case .deliver(let note?, _) = decide(response(503), attempt: 3) else {
            Issue.record("a fourth attempt was allowed")
            return
        }
        #expect(note.contains("no retries left after 3 attempts"))
        #expect(decide(response(503), policy: .never) == .deliver(note: nil))
    }

    @Test func retryAfterInBothForms() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        func retryAfter(_ value: String, date: String? = nil, offset: TimeInterval = 0) -> Duration? {
            var headers: HTTPHeaders = ["Retry-After": value]
            if let date { headers.set(name: "Date", value: date) }
            return RetryPolicy.serverWait(in: HTTPResponse(statusCode: 503, headers: headers, url: url), clockOffset: offset, now: now)?.wait
        }
        #expect(retryAfter("3") == .seconds(3))
        #expect(retryAfter(" 0 ") == .zero)
        #expect(retryAfter("99999999999999999999999") == .seconds(Int64(1) << 40))
        // 2023-11-14 22:13:20 GMT is `now`; the server's Date header is the reference.
        #expect(retryAfter("Tue, 14 Nov 2023 22:13:25 GMT", date: "Tue, 14 Nov 2023 22:13:20 GMT") == .seconds(5))
        // A server clock an hour ahead: its own Date says so.
        #expect(retryAfter("Tue, 14 Nov 2023 23:13:25 GMT", date: "Tue, 14 Nov 2023 23:13:20 GMT") == .seconds(5))
        // Without a Date header, the learned clock offset stands in.
        #expect(retryAfter("Tue, 14 Nov 2023 23:13:25 GMT", offset: 3600) == .seconds(5))
        #expect(retryAfter("Tue, 14 Nov 2023 22:13:00 GMT") == .zero)
        #expect(retryAfter("soon") == nil)
        #expect(retryAfter("-3") == nil)
    }

    @Test func aRateLimitsResetIsAWaitTooWhenNothingIsLeft() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        func wait(_ headers: HTTPHeaders) -> RetryPolicy.ServerWait? {
            RetryPolicy.serverWait(in: HTTPResponse(statusCode: 429, headers: headers, url: url), clockOffset: 0, now: now)
        }
        // GitHub: a time, read against the response's Date (an hour ahead here: it says so).
        #expect(wait(["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700003630", "Date": "Tue, 14 Nov 2023 23:13:20 GMT"])
            == RetryPolicy.ServerWait(wait: .seconds(30), header: "X-RateLimit-Reset"))
        #expect(wait(["X-RateLimit-Remaining": "12", "X-RateLimit-Reset": "1700000030"]) == nil, "requests are left")
        #expect(wait(["X-RateLimit-Reset": "1699999000"]) == RetryPolicy.ServerWait(wait: .zero, header: "X-RateLimit-Reset"), "past: no wait")
        // The IETF draft: seconds, in RateLimit-Reset or the RateLimit field.
        #expect(wait(["RateLimit-Remaining": "0", "RateLimit-Reset": "17"]) == RetryPolicy.ServerWait(wait: .seconds(17), header: "RateLimit-Reset"))
        #expect(wait(["RateLimit": #""default";r=0;t=9"#]) == RetryPolicy.ServerWait(wait: .seconds(9), header: "RateLimit"))
        #expect(wait(["RateLimit": #""default";r=3;t=9"#]) == nil)
        #expect(wait(["RateLimit": #""burst";r=5;t=1, "day";r=0;t=3600"#]) == RetryPolicy.ServerWait(wait: .seconds(3600), header: "RateLimit"))
        // Retry-After first, when both say.
        #expect(wait(["Retry-After": "5", "RateLimit-Reset": "17", "RateLimit-Remaining": "0"])?.header == "Retry-After")
        #expect(wait(["RateLimit-Reset": "soon"]) == nil)
    }

    @Test func aRetryAfterBeyondTheCapOrTheDeadlineIsNotWaitedFor() {
        #expect(decide(response(429, ["Retry-After": "2"])) == .retry(after: .seconds(2), reason: .status(429, retryAfter: .seconds(2)), header: "Retry-After"))
        guard case .deliver(let capped?, _) = decide(response(429, ["Retry-After": "31"])) else {
            Issue.record("waited past the cap")
            return
        }
        #expect(capped.contains("longer than the longest wait"))
        guard case .deliver(let late?, _) = decide(response(429, ["Retry-After": "2"]), remaining: .seconds(1)) else {
            Issue.record("waited past the deadline")
            return
        }
        #expect(late.contains("total timeout ends first"))
    }

    @Test func aStatusRetriedOnlyWhenToldWhenWaitsForRetryAfterAndOtherwiseIsDelivered() {
        let policy = RetryPolicy(retryAfterStatusCodes: [403])
        #expect(decide(response(403, ["Retry-After": "1"]), policy: policy) == .retry(after: .seconds(1), reason: .status(403, retryAfter: .seconds(1)), header: "Retry-After"))
        // A 403 that does not say when is a refusal, not a rate limit.
        #expect(decide(response(403), policy: policy) == .deliver(note: nil))
        #expect(decide(response(403, ["Retry-After": "soon"]), policy: policy) == .deliver(note: nil))
        // Not in the policy: not retried, even with a Retry-After.
        #expect(decide(response(403, ["Retry-After": "1"])) == .deliver(note: nil))
        // The attempts, the methods and the longest wait still hold.
        guard case .deliver(let note?, _) = decide(response(403, ["Retry-After": "1"]), attempt: 3, policy: policy) else {
            Issue.record("a fourth attempt was allowed")
            return
        }
        #expect(note.contains("no retries left after 3 attempts"))
        #expect(decide(response(403, ["Retry-After": "1"]), method: .post, policy: policy) != .retry(after: .seconds(1), reason: .status(403, retryAfter: .seconds(1)), header: "Retry-After"))
        #expect(policy.description.contains("504, 403 with Retry-After or a rate limit's reset, "))
    }

    @Test func theBudgetAllowsAShareOfTheLoadsOverItsWindow() {
        let budget = RetryPolicy.Budget(ratio: 0.2, minimumRetries: 1, window: .seconds(10))
        let start = Duration.seconds(1_000)
        for _ in 0..<10 { budget.recordLoad(at: start) }
        // 0.2 × 10 + 1 = 3 retries.
        #expect((0..<5).map { _ in budget.spendRetry(at: start) } == [true, true, true, false, false])
        // Eleven seconds later the window has moved past them all: only the floor is left.
        #expect((0..<2).map { _ in budget.spendRetry(at: start + .seconds(11)) } == [true, false])
        #expect(RetryPolicy.Budget.unlimited.spendRetry(at: start))
    }
}

@Suite("Retries: the config file's retry key")
struct RetryConfigurationTests {
    func parse(_ retry: String) throws(ServiceRegistry.ConfigurationError) -> RetryPolicy {
        let json = #"{"name": "s", "environments": {"online": {"baseURL": "https://api.example"}}, "retry": \#(retry)}"#
        return try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "s.json", environment: [:]).retryPolicy
    }

    @Test func everyKeyIsRead() throws {
        let policy = try parse(#"""
            {"maxRetries": 4, "statusCodes": [503], "retryAfterStatusCodes": [403], "errors": ["connectionRefused"], "methods": ["get", "POST"],
             "idempotencyKeyHeader": "Idempotency-Key", "baseDelaySeconds": 0.25, "maxDelaySeconds": 5}
            """#)
        #expect(policy == RetryPolicy(
            maxRetries: 4, retryableStatusCodes: [503], retryAfterStatusCodes: [403], retryableErrors: [.connectionRefused], methods: [.get, .post],
            idempotencyKeyHeader: "Idempotency-Key", baseDelay: .milliseconds(250), maxDelay: .seconds(5)))
        #expect(try parse("false") == .never)
        #expect(try parse("true") == .standard)
        #expect(try parse("{}") == .standard)
    }

    @Test(arguments: [
        (#"{"maxRetries": 11}"#, "retry.maxRetries"),
        (#"{"maxRetries": "2"}"#, "retry.maxRetries"),
        (#"{"statusCodes": [503, 42]}"#, "retry.statusCodes[1]"),
        (#"{"statusCodes": 503}"#, "retry.statusCodes"),
        (#"{"retryAfterStatusCodes": [1403]}"#, "retry.retryAfterStatusCodes[0]"),
        (#"{"errors": ["timeout"]}"#, "retry.errors[0]"),
        (#"{"methods": ["G T"]}"#, "retry.methods[0]"),
        (#"{"idempotencyKeyHeader": "Key:"}"#, "retry.idempotencyKeyHeader"),
        (#"{"baseDelaySeconds": -1}"#, "retry.baseDelaySeconds"),
        (#"{"maxDelaySeconds": 7200}"#, "retry.maxDelaySeconds"),
        (#"{"baseDelaySeconds": 10, "maxDelaySeconds": 1}"#, "retry.baseDelaySeconds"),
        (#"{"retries": 2}"#, "retry.retries"),
        (#""often""#, "retry"),
    ])
    func badValuesAreNamed(retry: String, key: String) {
        #expect {
            _ = try parse(retry)
        } throws: { error in
            (error as? ServiceRegistry.ConfigurationError)?.key == key
        }
    }
}
