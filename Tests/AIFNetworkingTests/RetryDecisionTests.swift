@_spi(Performance) @testable import AIFNetworking
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

/// Retries decided end to end — manager, engine, policy, budget, plugins — over a stub
/// transport on a clock the test moves: no socket, no real time, no polling. Each wait before a
/// retry is read off the clock and passed by advancing it. (These ran against the demo shop,
/// waiting the real seconds a `Retry-After` asked for; what only a server shows — each attempt
/// signed afresh, a refused connection retried — stays in ``RetryTests``.)
@Suite("Retries: decided on the load's clock, no socket", .timeLimit(.minutes(1)))
struct RetryDecisionTests {
    /// A service whose policy retries twice, waiting 20 ms, then 40 ms (no jitter on the
    /// manual clock), at most 30 s at a time.
    private struct FlakyService: Service {
        var name: ServiceName = "flaky"
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
            [.online: ServiceEnvironment(baseURL: URL(string: "https://api.flaky.test")!, apiVersion: "v1")]
        }
        var retryPolicy: RetryPolicy { RetryPolicy(baseDelay: .milliseconds(20), maxDelay: .seconds(30)) }
    }

    private let clock = ManualLoadClock()
    private let stub = StubTransport()

    private func manager(
        _ method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(), timeouts: HTTPRequest.Timeouts? = nil, retryPolicy: RetryPolicy? = nil
    ) -> APIManager<NoContent> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(FlakyService())
        let proxy = APIProxy(
            transport: stub, logger: Logger(label: "flaky", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 100, loadExecutor: .automatic, recorder: nil, observers: [], clock: clock)
        return APIManager(
            Endpoint<NoContent>(service: "flaky", path: "report", method: method, headers: headers, timeouts: timeouts, retryPolicy: retryPolicy),
            proxy: proxy, registry: registry)
    }

    /// Passes each wait the load asks for, `count` times, checking its length.
    private func passWaits(_ expected: [Duration]) async {
        for length in expected {
            #expect(await clock.waitUntilWaiting() == [length])
            clock.advance(by: length)
        }
    }

    @Test func theDelegateFaceRetriesAndKeepsTheLoadID() async throws {
        stub.stub(.get, "report", with: .status(502), times: 1)
        stub.stub(.get, "report", with: .status(204))
        let manager = manager()
        let heard = HeardOutcome()
        manager.delegate = heard
        manager.callbackExecutor = .immediate
        let id = manager.loadData()
        await passWaits([.milliseconds(20)])
        let outcome = try #require(await heard.waitForOutcome())
        let response = try #require(try? outcome.get())
        #expect(response.loadID == id)
        #expect(response.attempts == 2)
        #expect(stub.requests.count == 2)
    }

    @Test func exhaustedRetriesDeliverTheLastAnswerAndSayOnceWhy() async throws {
        stub.stub(.get, "report", with: .status(504))
        let manager = manager()
        let load = Task { try await manager.load() }
        await passWaits([.milliseconds(20), .milliseconds(40)])
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .httpStatus)
        #expect(error?.statusCode == 504)
        #expect(error?.attempts == 3)
        #expect(error?.description.contains("after 3 attempts") == true)
        #expect(error?.message.hasSuffix("(gave up: the server answered 504; no retries left after 3 attempts)") == true, "\(error?.message ?? "")")
        #expect(stub.requests.count == 3)
    }

    @Test func aStatusOutsideThePolicyIsNotRetried() async throws {
        stub.stub(.get, "report", with: .status(500))
        let error = await #expect(throws: APIError.self) { try await manager().load() }
        #expect(error?.statusCode == 500)
        #expect(error?.attempts == 1)
        #expect(clock.pendingWaits.isEmpty)
        #expect(stub.requests.count == 1)
    }

    /// `Retry-After` in seconds and as an HTTP date (read against the clock: the stub's
    /// response carries no `Date`) is the wait, to the second.
    @Test(arguments: ["1", "Tue, 14 Nov 2023 22:30:02 GMT"])
    func retryAfterIsTheWait(_ retryAfter: String) async throws {
        // The clock's date is 2023-11-14 22:30:00 UTC (1,700,001,000 s).
        #expect(clock.date == Date(timeIntervalSince1970: 1_700_001_000))
        stub.stub(.get, "report", with: .status(503, headers: ["Retry-After": retryAfter]), times: 1)
        stub.stub(.get, "report", with: .status(204))
        let load = Task { try await manager().load() }
        let expected: Duration = retryAfter == "1" ? .seconds(1) : .seconds(2)
        #expect(await clock.waitUntilWaiting() == [expected])
        clock.advance(by: expected - .milliseconds(1))
        #expect(stub.requests.count == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await load.linkedValue.attempts == 2)
    }

    /// A `Retry-After` of 25 s past a 20 s total timeout, or past a 2 s longest wait: the answer
    /// is delivered at once, without a second request, saying when the server would take it.
    @Test func aRetryAfterPastTheDeadlineOrTheLongestWaitIsNotWaited() async throws {
        stub.stub(.get, "report", with: .status(503, headers: ["Retry-After": "25"]))
        let bounded = manager(timeouts: HTTPRequest.Timeouts(connect: .seconds(10), total: .seconds(20)))
        let impatient = manager(retryPolicy: RetryPolicy(baseDelay: .milliseconds(20), maxDelay: .seconds(2)))
        for manager in [bounded, impatient] {
            let error = await #expect(throws: APIError.self) { try await manager.load() }
            #expect(error?.statusCode == 503)
            #expect(error?.attempts == 1)
            #expect(error?.retryableAt == clock.date + 25)
        }
        #expect(clock.pendingWaits.isEmpty)
        #expect(stub.requests.count == 2)
    }

    /// A POST is retried only when its policy names an idempotency key and the request
    /// carries one — the same key on every attempt.
    @Test func aPostIsRetriedOnlyWithItsIdempotencyKey() async throws {
        stub.stub(.post, "report", with: .status(503), times: 1)
        let plain = manager(.post)
        let error = await #expect(throws: APIError.self) { try await plain.load(body: ["quantity": 1]) }
        #expect(error?.statusCode == 503)
        #expect(error?.attempts == 1)
        #expect(stub.requests.count == 1)

        stub.stub(.post, "report", with: .status(503), times: 2)
        stub.stub(.post, "report", with: .status(204))
        var keyed = RetryPolicy(baseDelay: .milliseconds(20), maxDelay: .seconds(30))
        keyed.idempotencyKeyHeader = "Idempotency-Key"
        let withKey = manager(.post, headers: ["Idempotency-Key": "order-7"], retryPolicy: keyed)
        let load = Task { try await withKey.load(body: ["quantity": 1]) }
        await passWaits([.milliseconds(20), .milliseconds(40)])
        #expect(try await load.linkedValue.attempts == 3)
        #expect(stub.requests.dropFirst().map { $0.headers["Idempotency-Key"] } == ["order-7", "order-7", "order-7"])
    }

    /// A POST answered 429 (the server refused it before processing it) is retried only with
    /// `retriesUnprocessedRequests`, which leaves every other failure of a POST alone: a 503
    /// that does not say when, a 502. Each retry is counted, and the plugins hear it.
    @Test func aPostAfter429IsRetriedWithTheOptInAndNothingElseIs() async throws {
        stub.stub(.post, "report", with: .status(429, headers: ["Retry-After": "1"]), times: 1)
        let plain = manager(.post)
        let refused = await #expect(throws: APIError.self) { try await plain.load(body: ["text": "hi"]) }
        #expect(refused?.statusCode == 429)
        #expect(refused?.attempts == 1)
        #expect(refused?.message.contains("POST is not retried without an idempotency key") == true, "\(refused?.message ?? "")")

        var policy = RetryPolicy(retryableStatusCodes: [429, 502, 503], retryableErrors: [], baseDelay: .milliseconds(20))
        policy.retriesUnprocessedRequests = true
        stub.stub(.post, "report", with: .status(429, headers: ["Retry-After": "1"]), times: 1)
        stub.stub(.post, "report", with: .status(503, headers: ["Retry-After": "2"]), times: 1)
        stub.stub(.post, "report", with: .status(204), times: 1)
        let optedIn = manager(.post, retryPolicy: policy)
        let asked = RetryListener()
        optedIn.plugins = [asked]
        let load = Task { try await optedIn.load(body: ["text": "hi"]) }
        await passWaits([.seconds(1), .seconds(2)])
        let response = try await load.linkedValue
        #expect(response.attempts == 3)
        #expect(asked.asked.withLock { $0.map(\.reason) } == [.status(429, retryAfter: .seconds(1)), .status(503, retryAfter: .seconds(2))])
        #expect(stub.requests.count == 4)

        for status in [503, 502] {
            stub.stub(.post, "report", with: .status(status), times: 1)
            let error = await #expect(throws: APIError.self) { try await optedIn.load(body: ["text": "hi"]) }
            #expect(error?.statusCode == status)
            #expect(error?.attempts == 1)
            #expect(error?.message.contains("POST is not retried") == true, "\(error?.message ?? "")")
        }
        #expect(stub.requests.count == 6)
        #expect(clock.pendingWaits.isEmpty)
    }

    /// A POST whose connection was refused left nothing at the server: it is retried, any method.
    @Test func aPostWhoseConnectionWasRefusedIsRetried() async throws {
        stub.stub(.post, "report", with: .failure(.connectionRefused), times: 1)
        stub.stub(.post, "report", with: .status(201))
        let load = Task { try await manager(.post).load(body: ["quantity": 1]) }
        await passWaits([.milliseconds(20)])
        #expect(try await load.linkedValue.attempts == 2)
    }

    /// Cancelled by its ID during a 20 s `Retry-After`, a delegate-face load ends at once, the
    /// clock not moved: the plugin hears the cancellation once, the delegate nothing.
    @Test func cancellingByIDDuringTheWaitEndsTheLoadAtOnce() async throws {
        stub.stub(.get, "report", with: .status(503, headers: ["Retry-After": "20"]))
        let manager = manager()
        let heard = HeardOutcome()
        manager.delegate = heard
        manager.plugins = [heard]
        manager.callbackExecutor = .immediate
        let id = manager.loadData()
        #expect(await clock.waitUntilWaiting() == [.seconds(20)])
        manager.cancelLoad(id)
        let error = await heard.waitForPluginsEnd()
        #expect(error?.kind == .cancelled)
        #expect(error?.attempts == 1)
        #expect(heard.delegateHeard == 0)
        #expect(!manager.proxy.isInFlight(id))
        #expect(stub.requests.count == 1)
    }

    /// A plugin asked about a retry sees its number and reason, and can decline it.
    @Test func aPluginCanDeclineARetry() async throws {
        stub.stub(.get, "report", with: .status(503))
        let manager = manager()
        let veto = RetryVeto()
        manager.plugins = [veto]
        let error = await #expect(throws: APIError.self) { try await manager.load() }
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("a plugin declined the retry") == true, "\(error?.message ?? "")")
        #expect(veto.asked.withLock { $0.map(\.number) } == [2])
        #expect(veto.asked.withLock { $0.first?.reason } == .status(503, retryAfter: nil))
        #expect(stub.requests.count == 1)
    }
}

extension RetryDecisionTests {
    /// A header a plugin adds before signing goes out on every attempt, each with its number,
    /// on the async face too; the plugin hears the load start once and end once.
    @Test func aPluginsHeaderGoesOutOnEveryAttempt() async throws {
        stub.stub(.get, "report", with: .status(503), times: 1)
        stub.stub(.get, "report", with: .status(204))
        let manager = manager()
        let tagger = AttemptTagger()
        manager.plugins = [tagger]
        async let loaded = manager.load()
        await passWaits([.milliseconds(20)])
        let response = try await loaded
        #expect(response.attempts == 2)
        #expect(stub.requests.map { $0.headers["X-Attempt"] } == ["\(response.loadID.rawValue)-1", "\(response.loadID.rawValue)-2"])
        #expect(tagger.heard.withLock { $0 } == ["start", "end success"])
    }
}

/// Notes each retry it is asked about, and allows it.
private final class RetryListener: LoadPlugin {
    let asked = Locked<[RetryPolicy.Attempt]>([])

    func loadShouldRetry(_ attempt: RetryPolicy.Attempt, of load: ObservedLoad) -> Bool {
        asked.withLock { $0.append(attempt) }
        return true
    }
}

/// Tags each attempt with the load's ID and the attempt's number, and notes the load's start
/// and end.
private final class AttemptTagger: LoadPlugin {
    let heard = Locked<[String]>([])

    func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws { heard.withLock { $0.append("start") } }
    func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad) {
        headers.set(name: "X-Attempt", value: "\(load.loadID.rawValue)-\(attempt)")
    }
    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {
        heard.withLock { $0.append("end \(outcome.outcomeClass)") }
    }
}

/// A delegate and plugin a test waits on: for the delegate's outcome, or for the plugin's last
/// word on a failed load.
private final class HeardOutcome: APIManagerDelegate, LoadPlugin {
    private struct State {
        var outcome: Result<APIResponse<NoContent>, APIError>?
        var delegateHeard = 0
        var pluginsEnd: APIError?
        var waitingForOutcome: (@Sendable (Result<APIResponse<NoContent>, APIError>) -> Void)?
        var waitingForEnd: (@Sendable (APIError) -> Void)?
    }

    private let state = Locked(State())
    var delegateHeard: Int { state.withLock { $0.delegateHeard } }

    func waitForOutcome() async -> Result<APIResponse<NoContent>, APIError>? {
        await event { (continuation: @escaping @Sendable (Result<APIResponse<NoContent>, APIError>) -> Void) in
            let now = state.withLock { state in
                if state.outcome == nil { state.waitingForOutcome = continuation }
                return state.outcome
            }
            if let now { continuation(now) }
        }
    }

    func waitForPluginsEnd() async -> APIError? {
        await event { (continuation: @escaping @Sendable (APIError) -> Void) in
            let now = state.withLock { state in
                if state.pluginsEnd == nil { state.waitingForEnd = continuation }
                return state.pluginsEnd
            }
            if let now { continuation(now) }
        }
    }

    private func heard(_ outcome: Result<APIResponse<NoContent>, APIError>) {
        let waiting = state.withLock { state in
            state.delegateHeard += 1
            state.outcome = outcome
            defer { state.waitingForOutcome = nil }
            return state.waitingForOutcome
        }
        waiting?(outcome)
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        heard(.success(response as! APIResponse<NoContent>))
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        heard(.failure(error))
    }

    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {
        guard let error = outcome.error else { return }
        let waiting = state.withLock { state in
            state.pluginsEnd = error
            defer { state.waitingForEnd = nil }
            return state.waitingForEnd
        }
        waiting?(error)
    }
}

/// A plugin that refuses every retry and remembers what it was asked.
private final class RetryVeto: LoadPlugin {
    let asked = Locked<[RetryPolicy.Attempt]>([])

    func loadShouldRetry(_ attempt: RetryPolicy.Attempt, of load: ObservedLoad) -> Bool {
        asked.withLock { $0.append(attempt) }
        return false
    }
}
