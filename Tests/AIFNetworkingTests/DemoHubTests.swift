@testable import TestSupport
import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

// The behaviours the hub sample shows, each checked against the demo hub it runs against:
// a GitHub-like API with a bearer token, bare arrays paged by `Link` under a page-size cap,
// ETags, 422 bodies and a rate limit answered as a 403 with `Retry-After`.

private struct HubRepository: Decodable, Sendable {
    var fullName: String
    var description: String
    var openIssuesCount: Int
    var pushedAt: Date
}

private struct HubIssue: Decodable, Sendable {
    struct Label: Decodable, Sendable { var name: String }
    var number: Int
    var title: String
    var labels: [Label]
}

private struct HubDraft: Encodable, Sendable {
    var title: String
    var labels: [String] = []
}

private struct HubError: Decodable, Sendable {
    struct FieldError: Decodable, Sendable {
        var field: String
        var code: String
    }
    var message: String
    var errors: [FieldError]?
}

private struct HubSearch: Decodable, Sendable {
    var totalCount: Int
}

private struct HubService: Service {
    let name: ServiceName = "hub"
    let environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var defaultEnvironment: ServiceEnvironment.Name { "production" }
    var decoder: (any ContentDecoder)? { FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase, dateDecodingStrategy: .iso8601) }
    var arrayEncoding: Parameters.ArrayEncoding { .commaSeparated }
    var errorBody: ErrorBodyRule { ErrorBodyRule(type: HubError.self) }
    var retryPolicy: RetryPolicy { RetryPolicy(retryAfterStatusCodes: [403]) }
}

/// Both hubs, a registry that knows them with the token, a transport and a cache.
private struct HubStack {
    let production: LocalServer
    let staging: LocalServer
    let registry = ServiceRegistry(processEnvironment: [:])
    let transport = makeTransport()
    /// What the proxy sends through: `transport`, its sends awaited by the tests.
    let sending: CountingTransport
    let cache = ResponseCache()
    let proxy: APIProxy

    static func start(token: String = HubRoutes.token) async throws -> HubStack {
        let stack = HubStack(
            production: try await DemoHubServer.start(environment: .production), staging: try await DemoHubServer.start(environment: .staging))
        stack.registry.register(HubService(environments: [
            "production": ServiceEnvironment(baseURL: stack.production.baseURL()), "staging": ServiceEnvironment(baseURL: stack.staging.baseURL()),
        ]))
        stack.registry.setAuthenticator(.bearer(token), for: ["hub"])
        return stack
    }

    private init(production: LocalServer, staging: LocalServer) {
        self.production = production
        self.staging = staging
        sending = CountingTransport(transport)
        proxy = APIProxy(transport: sending)
    }

    func manager<Content>(_ endpoint: Endpoint<Content>) -> APIManager<Content> {
        APIManager(endpoint, proxy: proxy, registry: registry, cache: cache)
    }

    func list(pageSize: Int) -> PagedAPIManager<[HubIssue]> {
        PagedAPIManager(
            Endpoint(service: "hub", path: "repos/acme/cups/issues"), paging: Paging.Settings(style: .link, size: pageSize, sizeParameter: "per_page"),
            proxy: proxy, registry: registry, cache: cache)
    }

    func stop() async {
        transport.shutdown()
        await production.stop()
        await staging.stop()
    }
}

@Suite("The demo hub, as the hub sample calls it", .timeLimit(.minutes(2)))
struct DemoHubTests {
    private static let repository = Endpoint<HubRepository>(service: "hub", path: "repos/{owner}/{repo}", cachePolicy: .lifetime(.zero))
    private static let cups: Parameters = ["owner": "acme", "repo": "cups"]

    @Test func anUnchangedRepositoryIsRevalidatedAndAChangedOneLoadedAgain() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        let repository = hub.manager(Self.repository)
        let first = try await repository.load(Self.cups)
        #expect(first.origin == .network)
        #expect(first.content.fullName == "acme/cups")
        #expect(first.content.openIssuesCount == 45)
        #expect(first.content.pushedAt == Date(timeIntervalSince1970: 1_767_225_600 + 45 * 86_400))
        let second = try await repository.load(Self.cups)
        #expect(second.origin == .revalidated)
        #expect(second.content.openIssuesCount == 45)

        let opened = try await hub.manager(Endpoint<HubIssue>(service: "hub", path: "repos/acme/cups/issues", method: .post))
            .load([:], body: HubDraft(title: "Saucer does not fit", labels: ["bug"]))
        #expect(opened.statusCode == 201)
        #expect(opened.content.number == 46)
        #expect(opened.content.labels.map(\.name) == ["bug"])
        let third = try await repository.load(Self.cups)
        #expect(third.origin == .network)
        #expect(third.content.openIssuesCount == 46)
    }

    @Test func everyIssueComesOnceThoughTheHubGivesFewerThanAsked() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        var numbers: [Int] = []
        var pages = 0
        for try await page in hub.list(pageSize: 50).pages() {
            numbers += page.content.map(\.number)
            pages += 1
        }
        #expect(numbers == Array((1...45).reversed()))
        #expect(pages == 2)
    }

    @Test func aCommaSeparatedFilterRidesOnEveryLinkedPage() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        var issues: [HubIssue] = []
        var pages = 0
        for try await page in hub.list(pageSize: 5).pages(["labels": ["bug", "question"]]) {
            issues += page.content
            pages += 1
        }
        // Issues 3, 8, …, 43 carry both labels: nine, in pages of five.
        #expect(issues.map(\.number) == Array(stride(from: 43, through: 3, by: -5)))
        #expect(issues.allSatisfy { Set($0.labels.map(\.name)) == ["bug", "question"] })
        #expect(pages == 2)
    }

    @Test func aValidationFailureCarriesTheHubsMessageAndBody() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        let open = hub.manager(Endpoint<HubIssue>(service: "hub", path: "repos/acme/cups/issues", method: .post))
        await #expect {
            _ = try await open.load([:], body: HubDraft(title: ""))
        } throws: { error in
            guard let error = error as? APIError else { return false }
            let body = error.errorBody(as: HubError.self)
            return error.statusCode == 422 && error.message.contains("the server answered 422: Validation Failed")
                && error.serverMessage == "Validation Failed" && body?.errors?.first?.field == "title" && body?.errors?.first?.code == "missing_field"
        }
    }

    @Test func aRateLimitSaidWithRetryAfterIsWaitedOutInOneLoad() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        let search = hub.manager(Endpoint<HubSearch>(service: "hub", path: "search/issues"))
        let first = try await search.load(["q": "cup"])
        #expect(first.attempts == 1)
        let started = ContinuousClock.now
        let second = try await search.load(["q": "glaze"])
        // The hub refused the second search within its second and said to wait 1 s.
        #expect(second.attempts == 2)
        #expect(ContinuousClock.now - started >= .milliseconds(900))
        #expect(second.content.totalCount == 9)
    }

    /// Hears the retries of every load.
    private final class RetryListener: APIProxy.LoadObserver, APIProxy.LoadObservation {
        let retries = Locked<[RetryPolicy.Attempt]>([])
        func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? { self }
        func loadWillRetry(_ retry: RetryPolicy.Attempt) { retries.withLock { $0.append(retry) } }
    }

    @Test func aPrimaryRateLimitIsWaitedOutUntilItsReset() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        let listener = RetryListener()
        let log = Locked<[(Logger.Level, String)]>([])
        let proxy = APIProxy(transport: hub.transport, logger: Logger(label: "hub") { _ in CapturingLogHandler(messages: log) }, recorder: nil, observers: [listener])
        let search = APIManager(Endpoint<HubSearch>(service: "hub", path: "search/code"), proxy: proxy, registry: hub.registry, cache: hub.cache)
        #expect(try await search.load(["q": "glaze", "window": 1]).attempts == 1)
        // The only search of the window is spent: a 403 with X-RateLimit-Remaining: 0 and the
        // window's end, no Retry-After — waited for, then answered.
        let second = try await search.load(["q": "handle", "window": 1])
        #expect(second.attempts == 2)
        let retry = try #require(listener.retries.withLock { $0 }.first)
        #expect(retry.waitHeader == "X-RateLimit-Reset")
        #expect(retry.delay >= .seconds(1) && retry.delay <= .seconds(3), "\(retry.delay)")
        let notice = log.withLock { $0 }.first { $0.0 == .notice && $0.1.contains("(X-RateLimit-Reset)") }
        #expect(notice?.1.contains("waiting \(RetryPolicy.Reason.seconds(retry.delay)) s (X-RateLimit-Reset)") == true, "\(log.withLock { $0 })")
    }

    @Test func aRateLimitResettingPastTheWaitBudgetFailsAtOnceSayingWhen() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        let search = hub.manager(Endpoint<HubSearch>(service: "hub", path: "search/code"))
        _ = try await search.load(["q": "glaze", "window": 90])
        let started = ContinuousClock.now
        let asked = Date()
        let error = await #expect(throws: APIError.self) { try await search.load(["q": "handle"]) }
        #expect(ContinuousClock.now - started < .seconds(10), "no wait of a minute and a half")
        #expect(error?.statusCode == 403)
        #expect(error?.attempts == 1)
        let retryable = try #require(error?.retryableAt)
        #expect(retryable.timeIntervalSince(asked) > 80 && retryable.timeIntervalSince(asked) < 95, "\(retryable) from \(asked)")
        #expect(error?.message.contains("(X-RateLimit-Reset), longer than the longest wait (30 s); it may be sent again from ") == true, "\(String(describing: error))")
    }

    @Test func aForbiddenAnswerWithoutRetryAfterIsDeliveredAtOnce() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        await #expect {
            _ = try await hub.manager(Self.repository).load(["owner": "acme", "repo": "secret"])
        } throws: { error in
            guard let error = error as? APIError else { return false }
            return error.statusCode == 403 && error.attempts == 1
                && error.message.contains("the server answered 403: Resource not accessible by personal access token")
        }
    }

    @Test func aWrongTokenIsRefusedWithTheHubsMessageAndTheTokenHidden() async throws {
        let hub = try await HubStack.start(token: "not-the-token")
        defer { Task { await hub.stop() } }
        await #expect {
            _ = try await hub.manager(Self.repository).load(Self.cups)
        } throws: { error in
            guard let error = error as? APIError else { return false }
            return error.statusCode == 401 && error.serverMessage == "Bad credentials" && !"\(error)".contains("not-the-token")
        }
    }

    @Test func stagingIsOneSettingAway() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        hub.registry.setEnvironment("staging", for: "hub")
        let staged = try await hub.manager(Self.repository).load(Self.cups)
        #expect(staged.content.description.hasSuffix("(staging copy)"))
        #expect(staged.content.openIssuesCount == 5)
        hub.registry.setEnvironment(nil, for: "hub")
        #expect(try await hub.manager(Self.repository).load(Self.cups).content.openIssuesCount == 45)
    }

    @Test func aSlowCallCancelledEndsAtTheCancellation() async throws {
        let hub = try await HubStack.start()
        defer { Task { await hub.stop() } }
        let stats = hub.manager(Endpoint<[Int]>(service: "hub", path: "repos/acme/cups/stats/contributors"))
        let started = ContinuousClock.now
        let task = Task { try await stats.load(["ms": 10_000]) }
        // Cancelled once its request is in the transport's hands.
        _ = await hub.sending.sends.wait(count: 1)
        task.cancel()
        let ended = try #require(await outcome(of: task))
        #expect((try? ended.get()) == nil)
        #expect((ended.failure as? APIError)?.kind == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
