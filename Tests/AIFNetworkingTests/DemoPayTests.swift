@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import AIFNetworkingTesting
import DemoServer
import Foundation
import Logging
import Testing

// A client for a Stripe-shaped API, as a new user would write it: form bodies, idempotency keys
// made for each load, the server's word on retries, lists paged after their last item, a test
// key and a live key on one URL — against the demo pay, which behaves as Stripe documents.

private struct Customer: Decodable, Sendable, Identifiable {
    var id: String
    var email: String?
    var livemode: Bool
}

private struct PaymentIntent: Decodable, Sendable {
    var id: String
    var amount: Int
    var livemode: Bool
}

private struct CheckoutSession: Decodable, Sendable {
    struct LineItem: Decodable, Sendable {
        struct Price: Decodable, Sendable {
            var id: String
            var unitAmount: Int
        }
        var quantity: Int
        var amountTotal: Int
        var price: Price
    }
    struct LineItems: Decodable, Sendable {
        var data: [LineItem]
    }
    var id: String
    var amountTotal: Int
    var lineItems: LineItems
}

/// The demo pay, a registry holding the `pay` service read from a config file's text (test and
/// live environments on one URL, each with its key from the environment), and a proxy.
private struct PayStack {
    let server: LocalServer
    let ledger: PayLedger
    let registry = ServiceRegistry(processEnvironment: [:])
    let transport = makeTransport()
    let proxy: APIProxy

    /// The `pay` service's config, `retry` as given.
    static func config(port: Int, retry: String) -> String {
        """
        {"name": "pay", "defaultEnvironment": "test", "bodyEncoding": "form", "arrayEncoding": "indexed", "signing": {"scheme": "none"},
         "decoding": {"keys": "snakeCase"}, "errorBody": {"messageField": "error.message", "codeField": "error.code"},
         "retry": \(retry), "errorPolicies": {"codes": {"idempotency_key_in_use": "retry"}},
         "environments": {
           "test": {"baseURL": "http://127.0.0.1:\(port)", "apiVersion": "v1", "authorization": {"bearer": "${PAY_TEST_KEY}"}},
           "live": {"baseURL": "http://127.0.0.1:\(port)", "apiVersion": "v1", "authorization": {"basic": {"user": "${PAY_LIVE_KEY}"}}}}}
        """
    }

    static let stripeLike = #"{"generateIdempotencyKeys": true, "retryAdviceHeader": "Stripe-Should-Retry", "baseDelaySeconds": 0.01, "maxDelaySeconds": 1}"#

    static func start(
        retry: String = stripeLike, variables: [String: String] = ["PAY_TEST_KEY": PayRoutes.testKey, "PAY_LIVE_KEY": PayRoutes.liveKey],
        clock: any LoadClock = SystemLoadClock()
    ) async throws -> PayStack {
        let ledger = PayLedger()
        let server = try await DemoPayServer.start(ledger: ledger)
        let stack = PayStack(server: server, ledger: ledger, clock: clock)
        stack.registry.register(try ServiceRegistry.ConfiguredService.parse(Data(config(port: server.port, retry: retry).utf8), file: "/tmp/aif-tests/pay.json", environment: variables))
        return stack
    }

    private init(server: LocalServer, ledger: PayLedger, clock: any LoadClock) {
        self.server = server
        self.ledger = ledger
        proxy = APIProxy(
            transport: transport, logger: Logger(label: "pay", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [], clock: clock)
    }

    func manager<Content>(_ endpoint: Endpoint<Content>) -> APIManager<Content> {
        APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache())
    }

    var paymentIntents: APIManager<PaymentIntent> { manager(Endpoint(service: "pay", path: "payment_intents", method: .post)) }

    func stop() async {
        transport.shutdown()
        await server.stop()
    }
}

@Suite("The demo pay, as a client of a Stripe-like API calls it")
struct DemoPayTests {
    // MARK: Idempotency keys

    @Test func eachPostLoadHasAKeyOfItsOwnTheSameOnEachAttempt() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        // A 429 without Retry-After first: the POST is retried, with its key, after a short wait.
        let first = try await stack.paymentIntents.load(["amount": 500, "currency": "usd", "metadata": ["simulate": "rate_limit"]])
        #expect(first.attempts == 2)
        let second = try await stack.paymentIntents.load(["amount": 700, "currency": "usd"])
        let posts = stack.ledger.requests
        #expect(posts.map(\.outcome) == [.failed(429), .created, .created])
        let keys = posts.map(\.idempotencyKey)
        #expect(keys.allSatisfy { $0?.count == 36 }, "a UUID each: \(keys)")
        #expect(keys[0] == keys[1], "the retry carries the load's key")
        #expect(keys[1] != keys[2], "another load, another key")
        #expect(first.request.headers["Idempotency-Key"] == keys[1])
        #expect(first.content.id != second.content.id)
    }

    @Test func aKeyGivenWithTheCallWinsAndTheServerAppliesItOnce() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        let order: Parameters = ["amount": 1200, "currency": "usd"]
        let first = try await stack.paymentIntents.load(order, headers: ["Idempotency-Key": "order-7"])
        let again = try await stack.paymentIntents.load(order, headers: ["Idempotency-Key": "order-7"])
        #expect(again.content.id == first.content.id)
        #expect(again.headers["Idempotent-Replayed"] == "true")
        #expect(stack.ledger.requests.map(\.outcome) == [.created, .replayed])
        #expect(stack.ledger.requests.map(\.idempotencyKey) == ["order-7", "order-7"])
    }

    @Test func withoutKeysAPostIsNotRetried() async throws {
        let stack = try await PayStack.start(retry: #"{"baseDelaySeconds": 0.01}"#)
        defer { Task { await stack.stop() } }
        let error = await #expect(throws: APIError.self) {
            try await stack.paymentIntents.load(["amount": 500, "currency": "usd", "metadata": ["simulate": "rate_limit"]])
        }
        #expect(error?.statusCode == 429)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("POST is not retried without an idempotency key") == true, "\(String(describing: error))")
        #expect(stack.ledger.requests.map(\.idempotencyKey) == [nil])
    }

    // MARK: The server's word

    @Test func aLockTimeoutTheServerSaysToRetryIsRetried() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        // 409 is no status the policy retries: Stripe-Should-Retry: true is what does.
        let intent = try await stack.paymentIntents.load(["amount": 900, "currency": "usd", "metadata": ["simulate": "lock_timeout"]])
        #expect(intent.attempts == 2)
        #expect(stack.ledger.requests.map(\.outcome) == [.failed(409), .created])
    }

    @Test func aFailureTheServerSaysNotToRetryIsDeliveredAtOnce() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        // 503 is retried by default; Stripe-Should-Retry: false says a retry would change nothing.
        let error = await #expect(throws: APIError.self) {
            try await stack.paymentIntents.load(["amount": 900, "currency": "usd", "metadata": ["simulate": "unavailable"]])
        }
        #expect(error?.statusCode == 503)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("asked not to retry (Stripe-Should-Retry: false)") == true, "\(String(describing: error))")
        #expect(error?.message.contains("The service is unavailable for this request.") == true)
    }

    /// The system's clocks, its retries waiting their longest (so that a retry's wait is known).
    private struct LongestWaits: LoadClock {
        let system = SystemLoadClock()
        var now: Duration { system.now }
        var date: Date { system.date }
        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) { system.schedule(after: delay, work) }
        func jitter(upTo ceiling: Duration) -> Duration { ceiling }
    }

    @Test func aKeyStillInUseIsRetriedAfterAShortWaitAndAnsweredOnce() async throws {
        let stack = try await PayStack.start(
            retry: #"{"generateIdempotencyKeys": true, "retryAdviceHeader": "Stripe-Should-Retry", "baseDelaySeconds": 0.2}"#, clock: LongestWaits())
        defer { Task { await stack.stop() } }
        // Two loads with one key at once: the first is held until the second has met it in
        // progress — 409 idempotency_key_in_use, the error body's code, which the error policies
        // retry — and the second, 200 ms later, gets the first's answer.
        let order: Parameters = ["amount": 4200, "currency": "usd", "metadata": ["simulate": "hold"]]
        async let one = stack.paymentIntents.load(order, headers: ["Idempotency-Key": "checkout-42"])
        async let other = stack.paymentIntents.load(order, headers: ["Idempotency-Key": "checkout-42"])
        let (first, second) = try await (one, other)
        #expect(first.content.id == second.content.id)
        let outcomes = stack.ledger.requests.map(\.outcome)
        #expect(outcomes.filter { $0 == .created }.count == 1, "\(outcomes)")
        #expect(outcomes.contains(.keyInUse))
        #expect(outcomes.contains(.replayed))
    }

    // MARK: Forms

    private static let lineItems: JSONValue = [
        ["price": "price_cup", "quantity": 2],
        ["price_data": ["currency": "usd", "unit_amount": 450, "product_data": ["name": "Gift wrap"]], "quantity": 1],
    ]

    @Test func arraysOfObjectsGoWithIndexesAsStripeReadsThem() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        let sessions = stack.manager(Endpoint<CheckoutSession>(service: "pay", path: "checkout/sessions", method: .post))
        let session = try await sessions.load(["mode": "payment", "line_items": Self.lineItems]).content
        #expect(session.lineItems.data.map(\.quantity) == [2, 1])
        #expect(session.lineItems.data.map(\.price.unitAmount) == [1200, 450])
        #expect(session.amountTotal == 2 * 1200 + 450)
        let body = try #require(stack.ledger.requests.first?.body)
        #expect(body.contains("line_items%5B0%5D%5Bprice%5D=price_cup"), "\(body)")
        #expect(body.contains("line_items%5B1%5D%5Bprice_data%5D%5Bunit_amount%5D=450"), "\(body)")
    }

    @Test func withoutIndexesARackParserMergesTheObjects() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        // `line_items[][…]`: the second item's price_data lands in the first item.
        let sessions = stack.manager(Endpoint<CheckoutSession>(service: "pay", path: "checkout/sessions", method: .post, arrayEncoding: .brackets))
        let error = await #expect(throws: APIError.self) { try await sessions.load(["mode": "payment", "line_items": Self.lineItems]) }
        #expect(error?.statusCode == 400)
        #expect(error?.message.contains("You may only specify one of these parameters: price, price_data.") == true, "\(String(describing: error))")
    }

    // MARK: Lists

    private func customers(_ stack: PayStack, size: Int = 10) -> PagedAPIManager<Paging.ItemList<Customer>> {
        PagedAPIManager(
            Endpoint(service: "pay", path: "customers"), paging: Paging.Settings(style: .afterLastItem(parameter: "starting_after"), size: size, sizeParameter: "limit"),
            proxy: stack.proxy, registry: stack.registry, cache: ResponseCache())
    }

    @Test func aListIsPagedAfterItsLastItemToTheEnd() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        var pages: [[String]] = []
        var queries: [String] = []
        for try await page in customers(stack).pages() {
            pages.append(page.content.data.map(\.id))
            queries.append(page.request.url.query ?? "")
        }
        #expect(pages.map(\.count) == [10, 10, 5])
        let ids = pages.flatMap { $0 }
        #expect(Set(ids).count == 25 && ids.first == "cus_T025" && ids.last == "cus_T001")
        #expect(queries == ["limit=10", "limit=10&starting_after=cus_T016", "limit=10&starting_after=cus_T006"])
    }

    @Test func theDelegateFacePagesAfterTheLastItemToo() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        let list = customers(stack, size: 12)
        let (deliveries, delivered) = AsyncStream<Void>.makeStream()
        let recorder = Recorder(onDelivery: { delivered.yield() })
        list.delegate = recorder
        list.callbackExecutor = .immediate
        var waiting = deliveries.makeAsyncIterator()
        var ids = [list.loadFirstPage()]
        await waiting.next()
        while let next = list.loadNextPage() {
            ids.append(next)
            await waiting.next()
        }
        #expect(ids.count == 3)
        #expect(list.isLastPage)
        #expect(list.pagingState.loadedItems == 25)
        #expect(ids.allSatisfy { if case .success = recorder.outcome($0).first { true } else { false } })
    }

    // MARK: Keys per environment

    @Test func aTestKeyAndALiveKeyOnOneURLFollowTheEnvironment() async throws {
        let stack = try await PayStack.start()
        defer { Task { await stack.stop() } }
        let list = stack.manager(Endpoint<Paging.ItemList<Customer>>(service: "pay", path: "customers"))
        let test = try await list.load(["limit": 100]).content.data
        #expect(test.count == 25 && test.allSatisfy { !$0.livemode })
        stack.registry.setEnvironment("live", for: "pay")
        let live = try await list.load(["limit": 100]).content.data
        #expect(live.count == 3 && live.allSatisfy(\.livemode))
        let created = try await stack.paymentIntents.load(["amount": 100, "currency": "usd"])
        #expect(created.content.livemode)
        // The key goes as Basic's user for live, as a bearer token for test; never in a log line.
        #expect(created.request.headers["Authorization"]?.hasPrefix("Basic ") == true)
        #expect(!created.requestDescription.contains(PayRoutes.liveKey))
    }

    @Test func anEnvironmentWhoseKeyIsNotSetFailsSayingSoAndLeavesTheOthersUsable() async throws {
        let stack = try await PayStack.start(variables: ["PAY_TEST_KEY": PayRoutes.testKey])
        defer { Task { await stack.stop() } }
        let list = stack.manager(Endpoint<Paging.ItemList<Customer>>(service: "pay", path: "customers"))
        #expect(try await list.load().content.data.count == 10)
        stack.registry.setEnvironment("live", for: "pay")
        let error = await #expect(throws: APIError.self) { try await list.load() }
        #expect(error?.kind == .authenticationFailed)
        #expect(error?.message.contains("environments.live.authorization.basic.user refers to the environment variable PAY_LIVE_KEY, which is not set") == true, "\(String(describing: error))")
        #expect(error?.attempts == 0)
    }
}
