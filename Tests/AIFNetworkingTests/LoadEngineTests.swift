@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

private struct ClockedService: Service {
    var name: ServiceName = "clocked"
    /// Whether requests are signed (AIF's HMAC, its time in the query).
    var signed = false
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(
            baseURL: URL(string: "https://api.clocked.test")!, apiVersion: "v1",
            credentials: signed ? SigningContext.Credentials(publicKey: "pub", privateKey: Secret("s3cr3t")) : nil)]
    }
    var signer: (any RequestSigner)? { signed ? AIFHMACSigner() : nil }
    var retryPolicy: RetryPolicy { RetryPolicy(maxRetries: 2, maxDelay: .seconds(600), maxTotalWait: .seconds(1200)) }
}

/// A service whose veto counts how often it is asked, with error policies (so that the engine
/// asks it about every answer).
private final class CountingVetoService: Service, @unchecked Sendable {
    // Unchecked: `asked` is only reached under its lock.
    let name: ServiceName = "counted"
    let environments: [ServiceEnvironment.Name: ServiceEnvironment] = [.online: ServiceEnvironment(baseURL: URL(string: "https://api.counted.test")!, apiVersion: "v1")]
    let errorPolicies: ErrorPolicies? = ErrorPolicies(codes: ["4001": .surface])
    let asked = Locked(0)

    func veto(_ response: HTTPResponse) -> ServiceVeto? {
        asked.withLock { $0 += 1 }
        return ServiceVeto.Rule().veto(response)
    }
}

/// The load engine with a stub transport: it waits on its proxy's clock (a retry's wait passes
/// when the clock says so, not when real time does), and asks the service about an answer once.
@Suite("Load engine: the proxy's clock, the service asked once", .timeLimit(.minutes(1)))
struct LoadEngineTests {
    private static func manager(
        _ stub: any HTTPTransport, clock: ManualLoadClock, observers: [any APIProxy.LoadObserver] = [],
        logger: Logger = Logger(label: "clocked", factory: { _ in SwiftLogNoOpLogHandler() }), executor: SteppingExecutor? = nil
    ) -> APIManager<NoContent> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ClockedService())
        let proxy = APIProxy(
            transport: stub, logger: logger, retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: observers, clock: clock, executor: executor)
        return APIManager(Endpoint<NoContent>(service: "clocked", path: "goods"), proxy: proxy, registry: registry)
    }

    /// A manager over `transport` whose delegate and plugin are `heard`, told at once.
    private static func heardManager(_ transport: HoldingTransport, _ heard: EndingHooks) -> APIManager<NoContent> {
        let manager = manager(transport, clock: ManualLoadClock())
        manager.delegate = heard
        manager.plugins = [heard]
        manager.callbackExecutor = .immediate
        return manager
    }

    @Test func aRetryAfterOfTwoMinutesPassesWhenTheClockSaysSo() async throws {
        let clock = ManualLoadClock()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(503, headers: ["Retry-After": "120"]), times: 1)
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: clock)
        let started = ContinuousClock.now
        let load = Task { try await manager.load() }
        #expect(await clock.waitUntilWaiting() == [.seconds(120)])
        clock.advance(by: .seconds(119))
        #expect(clock.pendingWaits == [.seconds(120)])
        #expect(stub.requests.count == 1)
        clock.advance(by: .seconds(1))
        let response = try await load.linkedValue
        #expect(response.statusCode == 204)
        #expect(response.attempts == 2)
        #expect(stub.requests.count == 2)
        // The two minutes were the clock's: far less real time went by.
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func cancellingDuringTheWaitEndsTheLoadWithoutTheClockMoving() async throws {
        let clock = ManualLoadClock()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(503, headers: ["Retry-After": "30"]))
        let manager = Self.manager(stub, clock: clock)
        let load = Task { try await manager.load() }
        #expect(await clock.waitUntilWaiting() == [.seconds(30)])
        load.cancel()
        let ended = await load.linkedResult
        let error = #expect(throws: APIError.self) { try ended.get() }
        #expect(error?.kind == .cancelled)
        #expect(error?.attempts == 1)
        #expect(stub.requests.count == 1)
    }

    /// The same, when the answer comes — and the load goes on to its wait — before the
    /// transport's `send` has returned: the cancellation reaches the wait, not the ended
    /// transfer. (It reached the transfer, and the load waited for a clock that never moved:
    /// CI's TSan run hung here twice.)
    @Test func cancellingDuringAWaitThatBeganBeforeSendReturnedEndsTheLoad() async throws {
        let clock = ManualLoadClock()
        let transport = AnsweringBeforeReturning(.status(503, headers: ["Retry-After": "30"]), returningAfter: clock.scheduled)
        let load = Task { try await Self.manager(transport, clock: clock).load() }
        #expect(await clock.waitUntilWaiting() == [.seconds(30)])
        await transport.waitUntilReturned()
        load.cancel()
        let ended = await load.linkedResult
        let error = #expect(throws: APIError.self) { try ended.get() }
        #expect(error?.kind == .cancelled)
        #expect(error?.attempts == 1)
    }

    /// A response's lifetime in the cache passes on the proxy's clock, as the load's other
    /// decisions do: it answers from the cache until the clock has moved past its lifetime,
    /// then the network again — no real time. (The cache read the system's time unless it was
    /// given a clock of its own.)
    @Test func aCachedResponseExpiresWhenTheProxysClockSaysSo() async throws {
        struct Item: Decodable, Sendable { let id: Int }
        let clock = ManualLoadClock()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .json(#"{"id": 1}"#))
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ClockedService())
        let proxy = APIProxy(
            transport: stub, logger: Logger(label: "clocked", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [], clock: clock)
        let endpoint = Endpoint<Item>(service: "clocked", path: "goods", cachePolicy: .lifetime(.seconds(60)))
        let manager = APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache())
        #expect(try await manager.load().origin == .network)
        clock.advance(by: .seconds(59))
        #expect(try await manager.load().origin == .cache(age: .seconds(59)))
        clock.advance(by: .seconds(2))
        let refreshed = try await manager.load()
        #expect(refreshed.origin == .network)
        #expect(refreshed.content.id == 1)
        #expect(stub.requests.count == 2)
        // Stored again at the clock's time: fresh for another minute.
        clock.advance(by: .seconds(30))
        #expect(try await manager.load().origin == .cache(age: .seconds(30)))
    }

    /// A load the cache answers is a load in the proxy's table like any other until it is
    /// delivered: cancelled before its delivery — here while the delegate's queue is held — it
    /// ends once, as cancelled, and the delegate hears nothing; the observers hear the
    /// cancellation, and the table is empty. Its object hears the cancellation as an event,
    /// nothing read after the fact.
    @Test func aLoadAnsweredFromTheCacheAndCancelledBeforeItsDeliveryEndsCancelled() async throws {
        struct Item: Decodable, Sendable { let id: Int }
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .json(#"{"id": 1}"#))
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ClockedService())
        let observer = EndCountingObserver()
        let proxy = APIProxy(
            transport: stub, logger: Logger(label: "clocked", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [observer], clock: ManualLoadClock())
        let endpoint = Endpoint<Item>(service: "clocked", path: "goods", cachePolicy: .lifetime(.seconds(60)))
        let manager = APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache())
        #expect(try await manager.load().origin == .network)
        let delivery = DispatchQueue(label: "held delivery")
        delivery.suspend()
        manager.callbackExecutor = .queue(delivery)
        let heard = EndingHooks()
        manager.delegate = heard
        manager.plugins = [heard]
        let id = manager.loadData()
        #expect(proxy.isInFlight(id))
        manager.cancelLoad(id)
        delivery.resume()
        await heard.waitForTheEnd()
        #expect(heard.events == ["plugin.loadWillStart", "plugin.loadDidEnd(cancelled)"])
        #expect(observer.ends == ["success", "cancelled"])
        #expect(!proxy.isInFlight(id))
        #expect(stub.requests.count == 1)
    }

    /// The load's total timeout counts from the load's making, its preparation included: a
    /// preparation that took the whole of it — here a reformer that takes three seconds on the
    /// proxy's clock, of a total of two — ends the load as timed out with nothing sent; one that
    /// took part of it leaves the attempt the rest.
    @Test(.timeLimit(.minutes(1)))
    func theTotalTimeoutCountsTheLoadsPreparationToo() async throws {
        /// Takes `preparation` on the clock to reform the parameters.
        final class SlowToPrepare: APIManager<NoContent>, @unchecked Sendable {
            let clock: ManualLoadClock
            let preparation: Duration
            init(_ endpoint: Endpoint<NoContent>, proxy: APIProxy, registry: ServiceRegistry, clock: ManualLoadClock, preparation: Duration) {
                self.clock = clock
                self.preparation = preparation
                super.init(endpoint, proxy: proxy, registry: registry)
            }
            override func reformParameters(_ parameters: Parameters) -> Parameters {
                clock.advance(by: preparation)
                return parameters
            }
        }
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(204))
        let clock = ManualLoadClock()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ClockedService())
        let proxy = APIProxy(
            transport: stub, logger: Logger(label: "clocked", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [], clock: clock)
        let endpoint = Endpoint<NoContent>(service: "clocked", path: "goods", timeouts: HTTPRequest.Timeouts(total: .seconds(2)))

        let tooSlow = SlowToPrepare(endpoint, proxy: proxy, registry: registry, clock: clock, preparation: .seconds(3))
        let error = await #expect(throws: APIError.self) { try await tooSlow.load() }
        #expect(error?.kind == .timeout)
        #expect(error?.attempts == 0)
        #expect(error?.message.contains("the load's total timeout of 2.0 seconds ran out while it was prepared, before anything was sent") == true, "\(String(describing: error))")
        #expect(stub.requests.isEmpty)

        let inTime = SlowToPrepare(endpoint, proxy: proxy, registry: registry, clock: clock, preparation: .milliseconds(500))
        #expect(try await inTime.load().statusCode == 204)
        #expect(stub.requests.count == 1)
        #expect(stub.requests.first?.timeouts?.total == .milliseconds(1500))
    }

    /// A cancellation is an event of the load's machine: the load ends at once, as cancelled,
    /// even while its transport has not given up the transfer (one slow to stop, or that
    /// never does); what the transport answers afterwards is ignored, and the load ends once.
    /// (The load used to end only when the transport reported the cancelled transfer.)
    @Test(.timeLimit(.minutes(1)))
    func aCancelledLoadEndsAtOnceWhateverItsTransportDoes() async throws {
        let transport = HoldingTransport()
        let observer = EndCountingObserver()
        let manager = Self.manager(transport, clock: ManualLoadClock(), observers: [observer])
        let load = Task { try await manager.load() }
        await transport.waitUntilSent(1)
        load.cancel()
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .cancelled)
        #expect(error?.attempts == 1)
        await transport.waitForCancelsAsked(1)
        #expect(transport.cancelsAsked == 1)
        #expect(transport.held == 1)
        #expect(!manager.isLoading)
        #expect(observer.ends == ["cancelled"])
        // The transfer's late answer changes nothing.
        transport.answerAll(with: 200)
        #expect(observer.ends == ["cancelled"])
        #expect(!manager.isLoading)
    }

    /// The same through the delegate face: `cancelLoad` ends the load at once; the delegate
    /// hears nothing of a cancelled load, nor of the transfer's late answer.
    @Test(.timeLimit(.minutes(1)))
    func cancelLoadEndsTheLoadAtOnceWhateverItsTransportDoes() async throws {
        let transport = HoldingTransport()
        let observer = EndCountingObserver()
        let manager = Self.manager(transport, clock: ManualLoadClock(), observers: [observer])
        let delegate = HeardDelegate()
        manager.delegate = delegate
        let id = manager.loadData()
        await transport.waitUntilSent(1)
        manager.cancelLoad(id)
        await observer.waitForEnds(1)
        #expect(observer.ends == ["cancelled"])
        #expect(!manager.proxy.isInFlight(id))
        #expect(transport.held == 1)
        transport.answerAll(with: 200)
        #expect(observer.ends == ["cancelled"])
        #expect(delegate.heard.withLock { $0 } == 0)
    }

    /// However a load in flight is cancelled — by its ID, in a list, by its group, with all of
    /// its manager's — it ends at once, as cancelled: neither delegate method is called, the
    /// plugin hears the cancellation once, and the proxy's table is empty. No socket and no
    /// sleep: the request waits in a transport that holds it, and the test waits for the end.
    @Test(.timeLimit(.minutes(1)), arguments: ["by ID", "in a list", "by group", "all of the manager's"])
    func aLoadInFlightEndsOnceAsCancelledHoweverItIsCancelled(_ way: String) async throws {
        let transport = HoldingTransport()
        let heard = EndingHooks()
        let manager = Self.heardManager(transport, heard)
        manager.group = "screen-1"
        let id = manager.loadData()
        #expect(manager.isLoading)
        #expect(manager.proxy.isInFlight(id))
        await transport.waitUntilSent(1)
        switch way {
        case "by ID": manager.cancelLoad(id)
        case "in a list": manager.proxy.cancel([id, LoadID(rawValue: .max)])
        case "by group": manager.proxy.cancel(group: "screen-1")
        default: manager.cancelAllLoads()
        }
        await heard.waitForTheEnd()
        #expect(heard.events == ["plugin.loadWillStart", "plugin.loadDidEnd(cancelled)"])
        #expect(!manager.isLoading)
        #expect(manager.proxy.loadsInFlight.isEmpty)
        await transport.waitForCancelsAsked(1)
        #expect(transport.cancelsAsked == 1)
    }

    /// Cancelled between any two of its steps — before it starts, while its request is out,
    /// once the answer has come but before the load has heard it, after it ended — a
    /// delegate-face load ends exactly once: as cancelled, the delegate told nothing, unless it
    /// had ended; an answer that comes after changes nothing. The load's steps run one at a
    /// time, when the test says, so each point is reached exactly.
    @Test(arguments: ["before it starts", "while its request is out", "when its answer has come", "after it ended"])
    func aLoadCancelledBetweenAnyTwoOfItsStepsEndsOnce(at point: String) async throws {
        let steps = SteppingExecutor()
        let transport = HoldingTransport()
        let heard = EndingHooks()
        let manager = Self.manager(transport, clock: ManualLoadClock(), executor: steps)
        manager.delegate = heard
        manager.plugins = [heard]
        manager.callbackExecutor = .immediate
        let id = manager.loadData()
        #expect(steps.pending == 1)  // its start, on its executor
        if point == "before it starts" { manager.cancelLoad(id) }
        steps.runAll()
        if point == "while its request is out" { manager.cancelLoad(id) }
        transport.answerAll(with: 204)  // the answer, if a request was out, waits as a step
        if point == "when its answer has come" {
            #expect(steps.pending == 1)  // the answer, not yet heard
            manager.cancelLoad(id)
        }
        steps.runAll()
        if point == "after it ended" { manager.cancelLoad(id) }
        steps.runAll()
        let delivered = point == "after it ended"
        #expect(heard.events.filter { $0.hasPrefix("plugin.loadDidEnd") }
            == [delivered ? "plugin.loadDidEnd(success)" : "plugin.loadDidEnd(cancelled)"])
        #expect(heard.events.filter { $0.hasPrefix("delegate.") } == (delivered ? ["delegate.success"] : []))
        #expect(!manager.proxy.isInFlight(id))
        #expect(transport.sent == (point == "before it starts" ? 0 : 1))
        if point == "while its request is out" { #expect(transport.cancelsAsked == 1) }
    }

    /// A manager released while its load is in flight cancels it, and the load still ends
    /// once, without it: the proxy's table emptied, the observers told, the plugin the
    /// manager had told through `afterPerformFail(ofDeallocatedManager:)`, the log saying why no
    /// delegate heard; the transfer's late answer changes nothing. No socket, no sleep, no poll.
    @Test(.timeLimit(.minutes(1)))
    func aManagerReleasedDuringItsLoadCancelsItAndTheLoadStillEndsOnce() async throws {
        let transport = HoldingTransport()
        let observer = EndCountingObserver()
        let messages = Locked<[(Logger.Level, String)]>([])
        let logger = Logger(label: "test", factory: { _ in CapturingLogHandler(messages: messages) })
        var manager: APIManager<NoContent>? = Self.manager(transport, clock: ManualLoadClock(), observers: [observer], logger: logger)
        weak let watched = manager
        let heard = EndingHooks()
        manager!.delegate = heard
        manager!.plugins = [heard]
        let proxy = manager!.proxy
        let id = manager!.loadData()
        await transport.waitUntilSent(1)
        manager = nil
        #expect(watched == nil)
        await heard.waitForTheEnd()
        #expect(heard.events == ["plugin.loadWillStart", "plugin.loadDidEnd(cancelled)"])
        #expect(observer.ends == ["cancelled"])
        #expect(!proxy.isInFlight(id))
        await transport.waitForCancelsAsked(1)
        #expect(transport.cancelsAsked == 1)
        let notices = messages.withLock { $0 }.filter { $0.0 == .notice }.map(\.1)
        #expect(notices == [
            "cancelled \(id) clocked goods: its manager was released before the load ended, so no delegate hears of it (keep a reference to the manager while its loads run)"
        ])
        transport.answerAll(with: 200)
        #expect(heard.events.count == 2)
        #expect(observer.ends == ["cancelled"])
    }

    /// The engine never calls into the manager: the plugins hear the load start as it is
    /// prepared — before its request is sent — and their word on a retry reaches the engine
    /// through the load's plan. A plugin that declines ends the
    /// load with its first answer, saying why it was not retried.
    @Test(.timeLimit(.minutes(1)))
    func theHooksAroundSendingRunWithoutTheEngineCallingTheManager() async throws {
        let transport = HoldingTransport()
        let heard = EndingHooks(allowsRetries: false)
        let manager = Self.heardManager(transport, heard)
        _ = manager.loadData()
        #expect(heard.events == ["plugin.loadWillStart"])
        await transport.waitUntilSent(1)
        transport.answerAll(with: 503)
        await heard.waitForTheEnd()
        #expect(heard.events == [
            "plugin.loadWillStart", "plugin.loadShouldRetry(attempt 2 of 3)", "delegate.fail(HTTP status)", "plugin.loadDidEnd(HTTP status)",
        ])
        #expect(heard.lastError?.message.contains("a plugin declined the retry") == true)
        #expect(transport.sent == 1)
        #expect(!manager.isLoading)
    }

    /// Cancelling a group ends its loads and leaves another group's alone: they go on to their
    /// answers.
    @Test func aGroupCancelLeavesOtherGroupsAlone() async throws {
        let transport = HoldingTransport()
        let leaving = Self.manager(transport, clock: ManualLoadClock())
        leaving.group = "leaving"
        let staying = APIManager(leaving.endpoint, proxy: leaving.proxy, registry: leaving.registry)
        staying.group = "staying"
        let first = Task { try await leaving.load() }
        let second = Task { try await staying.load() }
        await transport.waitUntilSent(2)
        leaving.proxy.cancel(group: "leaving")
        let error = await #expect(throws: APIError.self) { try await first.linkedValue }
        #expect(error?.kind == .cancelled)
        #expect(staying.isLoading)
        transport.answerAll(with: 204)
        #expect(try await second.linkedValue.statusCode == 204)
    }

    /// A load of the async face is cancelled by its ID as a delegate-face one is.
    @Test func anAsyncLoadCanBeCancelledByItsID() async throws {
        let transport = HoldingTransport()
        let manager = Self.manager(transport, clock: ManualLoadClock())
        let load = Task { try await manager.load() }
        await transport.waitUntilSent(1)
        manager.cancelLoad(try #require(manager.loadsInFlight.first))
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .cancelled)
    }

    /// Cancelling a load that has ended changes nothing: it has left the table, so there is
    /// nothing to hear the cancellation — its delivery stands, and its outcome stays the last.
    @Test func cancellingAnEndedLoadChangesNothing() async throws {
        let transport = HoldingTransport()
        let heard = EndingHooks()
        let manager = Self.heardManager(transport, heard)
        let id = manager.loadData()
        await transport.waitUntilSent(1)
        transport.answerAll(with: 204)
        await heard.waitForTheEnd()
        #expect(!manager.proxy.isInFlight(id))
        manager.cancelLoad(id)
        #expect(heard.events == ["plugin.loadWillStart", "delegate.success", "plugin.loadDidEnd(success)"])
        #expect((try? manager.lastOutcome?.get())?.loadID == id)
    }

    /// Cancelled before its engine has started (from `onStart`, as a caller holding the ID
    /// can), a load ends once, as cancelled, and sends nothing.
    @Test(.timeLimit(.minutes(1)))
    func aLoadCancelledBeforeItStartsEndsOnceAndSendsNothing() async throws {
        let transport = HoldingTransport()
        let observer = EndCountingObserver()
        let manager = Self.manager(transport, clock: ManualLoadClock(), observers: [observer])
        let id = manager.loadData(with: [:], onStart: { manager.cancelLoad($0) })
        await observer.waitForEnds(1)
        #expect(observer.ends == ["cancelled"])
        #expect(transport.held == 0)
        #expect(transport.sent == 0)
        #expect(!manager.proxy.isInFlight(id))
    }

    /// The service is asked for its veto once per answer: the manager's check of the answer
    /// uses what the engine was told (it used to ask again, parsing the body a second time).
    @Test func theServiceIsAskedForItsVetoOncePerAnswer() async throws {
        let service = CountingVetoService()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        let stub = StubTransport()
        stub.stub(.get, "coupons/{code}", with: .json(#"{"code": 4001, "message": "coupon expired"}"#))
        stub.stub(.get, "goods", with: .json(#"{"code": 0}"#))
        let proxy = APIProxy(transport: stub)
        let refused = await #expect(throws: APIError.self) {
            try await APIManager(Endpoint<NoContent>(service: "counted", path: "coupons/{code}"), proxy: proxy, registry: registry).load(["code": "X"])
        }
        #expect(refused?.kind == .serviceVeto)
        #expect(refused?.serviceVeto?.code == "4001")
        #expect(service.asked.withLock { $0 } == 1)
        _ = try await APIManager(Endpoint<NoContent>(service: "counted", path: "goods"), proxy: proxy, registry: registry).load()
        #expect(service.asked.withLock { $0 } == 2)
    }

    /// A failed status shows the start of the body, cut at a character with an ellipsis, and
    /// never a credential the request carried.
    @Test func aStatusErrorShowsTheBodysStartWithoutSecrets() async throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(KeyedService())
        let stub = StubTransport()
        // No member the common error-body rule reads: the body's start is shown.
        let echo = #"{"fault": "key pub-key-0001 is not allowed", "info": ""# + String(repeating: "é", count: 300) + #""}"#
        stub.stub(.get, "goods", with: .json(echo, status: 403))
        let error = await #expect(throws: APIError.self) {
            try await APIManager(Endpoint<NoContent>(service: "keyed", path: "goods"), proxy: APIProxy(transport: stub), registry: registry).load()
        }
        let message = error?.message ?? ""
        #expect(message.hasPrefix(#"the server answered 403: {"fault": "key *** is not allowed", "info": "éé"#), "\(message)")
        #expect(message.hasSuffix("é…"), "\(message)")
        #expect(!message.contains("pub-key-0001"))
        #expect(!message.contains("\u{FFFD}"))
    }

    /// No load ends on its caller's stack: a delegate never runs inside `loadData` — not when the
    /// transport answers on the caller's stack, not when the load fails before anything is sent
    /// — even a delegate told at once (`.immediate`), which would otherwise run there.
    @Test func noLoadEndsOnItsCallersStack() async throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ClockedService())
        registry.register(UnsignableService())
        let proxy = APIProxy(transport: AnsweringAtOnce())
        for service: ServiceName in ["clocked", "unsignable"] {
            let manager = APIManager(Endpoint<NoContent>(service: service, path: "goods"), proxy: proxy, registry: registry)
            manager.callbackExecutor = .immediate
            let delegate = StackWatcher()
            manager.delegate = delegate
            delegate.caller.withLock { $0 = UInt(bitPattern: Int(bitPattern: pthread_self())) }
            let id = manager.loadData()
            delegate.caller.withLock { $0 = nil }
            let heard = await delegate.waitForHearing()
            #expect(heard.first?.id == id, "\(service)")
            #expect(heard.first?.insideLoadData == false, "\(service): the delegate ran inside loadData")
            #expect(heard.first?.succeeded == (service == "clocked"), "\(service)")
        }
    }

    // MARK: The one clock: credentials and signing

    private static func manager(
        _ stub: StubTransport, clock: ManualLoadClock, authenticator: Authenticator? = nil, signed: Bool = false,
        budget: RetryPolicy.Budget = RetryPolicy.Budget(), timeouts: HTTPRequest.Timeouts? = nil
    ) -> APIManager<NoContent> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ClockedService(signed: signed))
        if let authenticator { registry.setAuthenticator(authenticator, for: ["clocked"]) }
        let proxy = APIProxy(
            transport: stub, logger: Logger(label: "clocked", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: budget,
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [], clock: clock)
        return APIManager(Endpoint<NoContent>(service: "clocked", path: "goods", timeouts: timeouts), proxy: proxy, registry: registry)
    }

    /// The retry budget's window moves on the proxy's clock: spent by one load's retry, it
    /// declines the next load's, and allows one again once the clock has moved past the window.
    @Test func theRetryBudgetsWindowMovesWithTheClock() async throws {
        let clock = ManualLoadClock()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(503, headers: ["Retry-After": "1"]))
        let manager = Self.manager(stub, clock: clock, budget: RetryPolicy.Budget(ratio: 0, minimumRetries: 1, window: .seconds(10)))
        func attempts(waitingFor waits: Int) async throws -> (attempts: Int, message: String) {
            let load = Task { try await manager.load() }
            for _ in 0..<waits {
                #expect(await clock.waitUntilWaiting() == [.seconds(1)])
                clock.advance(by: .seconds(1))
            }
            let ended = await load.linkedResult
            let error = #expect(throws: APIError.self) { try ended.get() }
            return (error?.attempts ?? 0, error?.message ?? "")
        }
        let first = try await attempts(waitingFor: 1)
        #expect(first.attempts == 2)
        let second = try await attempts(waitingFor: 0)
        #expect(second.attempts == 1)
        #expect(second.message.contains("the proxy's retry budget is spent"), "\(second.message)")
        clock.advance(by: .seconds(11))
        let third = try await attempts(waitingFor: 1)
        #expect(third.attempts == 2)
    }

    /// A credential's expiry and refresh window are read on the load's clock: moved into the
    /// window, the next load still uses the credential and starts one refresh ahead; the load
    /// after it carries the new one.
    @Test func aCredentialIsRefreshedAheadWhenTheClockReachesItsWindow() async throws {
        let clock = ManualLoadClock()
        let refreshes = Locked(0)
        let authenticator = Authenticator(
            credential: Authenticator.Credential(token: "old", expiresAt: clock.date + 300, issuedAt: clock.date), refreshTimeout: .seconds(600),
            refreshWindow: .seconds(60)
        ) {
            refreshes.withLock { $0 += 1 }
            return Authenticator.Credential(token: "new", expiresAt: clock.date + 300, issuedAt: clock.date)
        }
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: clock, authenticator: authenticator)
        _ = try await manager.load()
        clock.advance(by: .seconds(230))  // 70 s before the expiry: not yet in the window
        _ = try await manager.load()
        #expect(refreshes.withLock { $0 } == 0)
        clock.advance(by: .seconds(20))  // 50 s before: in it
        _ = try await manager.load()
        // Past the old one's expiry (not the refresh's timeout), the next load carries the new
        // credential — whether the refresh has ended by then or the load waits for it: no need
        // to wait here.
        clock.advance(by: .seconds(60))
        _ = try await manager.load()
        #expect(stub.requests.map { $0.headers["Authorization"] ?? "" } == ["Bearer old", "Bearer old", "Bearer old", "Bearer new"])
        #expect(refreshes.withLock { $0 } == 1)
    }

    /// A token that lives no longer than the refresh window (a minute, the window's default) is
    /// refreshed in the last quarter of its life, not by every load: loads up to 45 s after its
    /// issue use it as it is; the first after that starts one refresh ahead, and the loads
    /// meanwhile go on with it.
    @Test func aTokenThatLivesNoLongerThanTheWindowIsRefreshedInItsLastQuarter() async throws {
        let clock = ManualLoadClock()
        let refreshes = Locked(0)
        let issued = clock.date
        let (started, refreshStarts) = AsyncStream<Void>.makeStream()
        let authenticator = Authenticator(credential: Authenticator.Credential(token: "first", expiresAt: issued + 60, issuedAt: issued)) {
            refreshes.withLock { $0 += 1 }
            refreshStarts.yield()
            try await waitUntilCancelled()  // still running while the loads below go on
        }
        var refreshStarted = started.makeAsyncIterator()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: clock, authenticator: authenticator)
        for step in [0, 15, 15, 10, 4] {  // 0, 15, 30, 40, 44 s after the issue
            clock.advance(by: .seconds(step))
            _ = try await manager.load()
        }
        #expect(refreshes.withLock { $0 } == 0)
        clock.advance(by: .seconds(2))  // 46 s: in the last quarter
        _ = try await manager.load()
        await refreshStarted.next()
        #expect(refreshes.withLock { $0 } == 1)
        clock.advance(by: .seconds(4))
        _ = try await manager.load()
        #expect(refreshes.withLock { $0 } == 1)
        #expect(stub.requests.map { $0.headers["Authorization"] ?? "" } == Array(repeating: "Bearer first", count: 7))
    }

    /// A load waiting for its credential's refresh ends at once when cancelled, nothing sent,
    /// though the refresh goes on (it never ends here: the test ending within its limit is the
    /// "at once").
    @Test func cancellingALoadThatWaitsForItsCredentialEndsItAtOnce() async throws {
        let (started, starts) = AsyncStream<Void>.makeStream()
        let authenticator = Authenticator(refreshTimeout: .seconds(600)) { () async throws -> Authenticator.Credential in
            starts.yield()
            try await waitUntilCancelled()
        }
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: ManualLoadClock(), authenticator: authenticator)
        let load = Task { try await manager.load() }
        var refreshStarted = started.makeAsyncIterator()
        await refreshStarted.next()
        load.cancel()
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .cancelled)
        #expect(stub.requests.isEmpty)
        #expect(manager.proxy.loadsInFlight.isEmpty)
    }

    /// A load whose credential was refused waits for the renewed one no longer than its total
    /// timeout: on the clock, the load ends then, as timed out, though the refresh goes on
    /// (its own timeout is ten minutes). It used to wait for the refresh's end.
    @Test func aLoadWaitingForARenewedCredentialEndsAtItsTotalTimeout() async throws {
        let clock = ManualLoadClock()
        let authenticator = Authenticator(credential: Authenticator.Credential(token: "t1"), refreshTimeout: .seconds(600)) {
            try await waitUntilCancelled()
        }
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(401))
        let manager = Self.manager(stub, clock: clock, authenticator: authenticator, timeouts: HTTPRequest.Timeouts(total: .seconds(5)))
        let load = Task { try await manager.load() }
        // The refresh's timeout is a wait on the clock; the load's deadline, set as it started,
        // runs beside it.
        #expect(await clock.waitUntilWaiting(1) == [.seconds(600)])
        #expect(clock.pendingDeadlines == [.seconds(5)])
        clock.advance(by: .seconds(4))
        #expect(stub.requests.count == 1)
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .timeout)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("total timeout of 5.0 seconds ran out while it waited for its credential to be renewed") == true, "\(error?.message ?? "")")
        #expect(stub.requests.count == 1)
        #expect(clock.pendingDeadlines.isEmpty)
    }

    /// A refresh that outlasts its timeout on the load's clock fails the loads waiting for it,
    /// with no real time spent waiting.
    @Test func aRefreshThatOutlastsItsTimeoutOnTheClockFailsTheLoad() async throws {
        let clock = ManualLoadClock()
        let authenticator = Authenticator(refreshTimeout: .seconds(30)) { () async throws -> Authenticator.Credential in
            try await waitUntilCancelled()
        }
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: clock, authenticator: authenticator)
        let started = ContinuousClock.now
        let load = Task { try await manager.load() }
        #expect(await clock.waitUntilWaiting() == [.seconds(30)])
        clock.advance(by: .seconds(30))
        let ended = await load.linkedResult
        let error = #expect(throws: APIError.self) { try ended.get() }
        #expect(error?.kind == .authenticationFailed)
        #expect(error?.message.contains("longer than its timeout") == true, "\(error?.message ?? "")")
        #expect(stub.requests.isEmpty)
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    /// The signing time (AIF's `timestamp` query item) of each request.
    private static func timestamps(of requests: [HTTPRequest]) -> [String?] {
        requests.map { request in
            URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "timestamp" }?.value
        }
    }

    /// A redirect's hop is signed afresh at the load's clock's time, and a server's `Date` is
    /// read against that clock: a server 120 s ahead of it moves the next signature 120 s on.
    /// (Both read the system's time: the hop was signed in the present, and the server's offset
    /// was measured from the system's clock, so a load on another clock was signed out of step.)
    @Test func aRedirectHopAndTheServersClockAreReadOnTheLoadsClock() async throws {
        let clock = ManualLoadClock()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(302, headers: ["Location": "https://api.clocked.test/v1/moved"]), times: 1)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let ahead = formatter.string(from: clock.date.addingTimeInterval(120))
        stub.stub(.get, "moved", with: .status(204, headers: ["Date": ahead]))
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: clock, signed: true)
        _ = try await manager.load()
        clock.advance(by: .seconds(10))
        _ = try await manager.load()
        let stamps = Self.timestamps(of: stub.requests)
        let start = Int(clock.date.timeIntervalSince1970) - 10
        #expect(stub.requests.map(\.url.lastPathComponent) == ["goods", "moved", "goods"])
        #expect(stamps == [String(start), String(start), String(start + 10 + 120)])
    }

    /// A signature carries the load's clock's time (corrected by the server's offset).
    @Test func theSignatureCarriesTheClocksTime() async throws {
        let clock = ManualLoadClock()
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(204))
        let manager = Self.manager(stub, clock: clock, signed: true)
        _ = try await manager.load()
        clock.advance(by: .seconds(90))
        _ = try await manager.load()
        let stamps = Self.timestamps(of: stub.requests)
        let start = Int(clock.date.timeIntervalSince1970) - 90
        #expect(stamps == [String(start), String(start + 90)])
    }
}

/// A service whose requests carry a public key.
private struct KeyedService: Service {
    var name: ServiceName = "keyed"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [
        .online: ServiceEnvironment(baseURL: URL(string: "https://api.keyed.test")!, credentials: SigningContext.Credentials(publicKey: "pub-key-0001", privateKey: Secret("priv-key-0002")))
    ]
}

/// A transport that answers `204` on the caller's stack, before `send` returns.
private struct AnsweringAtOnce: HTTPTransport {
    private struct Done: CancellableTransfer {
        func cancel() {}
    }

    func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        completion(.success(HTTPResponse(statusCode: 204, url: request.url)))
        return Done()
    }
}

/// A transport whose answer comes on another thread before `send` returns: `send` returns
/// only once `signal` is signalled (or after 10 s), so that the load has gone on by then.
private final class AnsweringBeforeReturning: HTTPTransport {
    private struct Done: CancellableTransfer {
        func cancel() {}
    }

    private let stub = StubTransport()
    private let signal: DispatchSemaphore
    private let returned = Locked<(count: Int, waiting: (@Sendable (()) -> Void)?)>((0, nil))

    init(_ answer: StubResponse, returningAfter signal: DispatchSemaphore) {
        stub.stub(where: { _ in true }, with: answer)
        self.signal = signal
    }

    /// Returns once a `send` has returned.
    func waitUntilReturned() async {
        await event { (continuation: @escaping @Sendable (()) -> Void) in
            let now = returned.withLock { returned -> Bool in
                if returned.count > 0 { return true }
                returned.waiting = continuation
                return false
            }
            if now { continuation(()) }
        }
    }

    func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        _ = stub.send(request, progress: nil, completion: completion)
        _ = signal.wait(timeout: .now() + 10)
        let waiting = returned.withLock { returned in
            returned.count += 1
            defer { returned.waiting = nil }
            return returned.waiting
        }
        waiting?(())
        return Done()
    }
}

/// A service whose requests cannot be signed: its loads fail before anything is sent.
private struct UnsignableService: Service {
    struct Refusing: RequestSigner {
        func sign(_ request: HTTPRequest, credentials: SigningContext.Credentials, context: SigningContext) throws(SigningError) -> HTTPRequest {
            throw SigningError("this signer refuses every request", url: request.url.absoluteString)
        }
    }

    var name: ServiceName = "unsignable"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [
        .online: ServiceEnvironment(baseURL: URL(string: "https://api.unsignable.test")!, credentials: SigningContext.Credentials(publicKey: "p", privateKey: Secret("k")))
    ]
    var signer: (any RequestSigner)? { Refusing() }
}

/// Records which load the delegate heard of, and whether it ran on the thread that was inside
/// `loadData` at the time.
private final class StackWatcher: APIManagerDelegate {
    typealias Heard = (id: LoadID, insideLoadData: Bool, succeeded: Bool)
    /// The thread inside `loadData`, while it is.
    let caller = Locked<UInt?>(nil)
    private let heard = Locked<(all: [Heard], waiting: (@Sendable ([Heard]) -> Void)?)>(([], nil))

    /// Returns what the delegate heard once it has heard of a load (nothing when the test was
    /// cancelled first).
    func waitForHearing() async -> [Heard] {
        let seen = await event { (continuation: @escaping @Sendable ([Heard]) -> Void) in
            let now = heard.withLock { heard -> [Heard]? in
                if !heard.all.isEmpty { return heard.all }
                heard.waiting = continuation
                return nil
            }
            if let now { continuation(now) }
        }
        return seen ?? []
    }

    private func hear(_ id: LoadID, succeeded: Bool) {
        let this = UInt(bitPattern: Int(bitPattern: pthread_self()))
        let inside = caller.withLock { $0 == this }
        let (waiting, all) = heard.withLock { heard in
            heard.all.append((id, inside, succeeded))
            defer { heard.waiting = nil }
            return (heard.waiting, heard.all)
        }
        waiting?(all)
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        hear(response.loadID, succeeded: true)
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        hear(error.loadID, succeeded: false)
    }
}

/// Records how each load ended, in order.
private final class EndCountingObserver: APIProxy.LoadObserver {
    private final class Observation: APIProxy.LoadObservation {
        let observer: EndCountingObserver
        init(_ observer: EndCountingObserver) { self.observer = observer }
        func loadDidEnd(_ outcome: ObservedLoad.Outcome) { observer.ended(outcome.outcomeClass) }
    }

    private struct State {
        var ends: [String] = []
        var waiting: [(count: Int, continuation: @Sendable (()) -> Void)] = []
    }

    private let state = Locked(State())
    /// How each load ended (`success`, or the error's kind), in order.
    var ends: [String] { state.withLock { $0.ends } }

    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? { Observation(self) }

    /// Returns once `count` loads have ended: with no polling, and no time of its own.
    func waitForEnds(_ count: Int) async {
        await event { (continuation: @escaping @Sendable (()) -> Void) in
            let now = state.withLock { state -> Bool in
                if state.ends.count >= count { return true }
                state.waiting.append((count, continuation))
                return false
            }
            if now { continuation(()) }
        }
    }

    private func ended(_ outcome: String) {
        let ready = state.withLock { state -> [@Sendable (()) -> Void] in
            state.ends.append(outcome)
            let count = state.ends.count
            defer { state.waiting.removeAll { $0.count <= count } }
            return state.waiting.filter { $0.count <= count }.map(\.continuation)
        }
        for continuation in ready { continuation(()) }
    }
}

/// Counts what the delegate heard.
private final class HeardDelegate: APIManagerDelegate {
    let heard = Locked(0)
    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { heard.withLock { $0 += 1 } }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { heard.withLock { $0 += 1 } }
}

/// A delegate and plugin that records how a load ended, and lets a test wait for the plugin's
/// last word on it (no polling).
private final class EndingHooks: APIManagerDelegate, LoadPlugin {
    private let state = Locked<(events: [String], waiting: (@Sendable (()) -> Void)?, lastError: APIError?)>(([], nil, nil))
    private let allowsRetries: Bool

    var events: [String] { state.withLock { $0.events } }
    /// The last error the delegate heard.
    var lastError: APIError? { state.withLock { $0.lastError } }

    init(allowsRetries: Bool = true) {
        self.allowsRetries = allowsRetries
    }

    /// Returns once the plugin has heard the load's end (one waiter at a time).
    func waitForTheEnd() async {
        await event { (continuation: @escaping @Sendable (()) -> Void) in
            let ended = state.withLock { state -> Bool in
                if state.events.contains(where: { $0.hasPrefix("plugin.loadDidEnd") }) { return true }
                state.waiting = continuation
                return false
            }
            if ended { continuation(()) }
        }
    }

    private func record(_ event: String) {
        let waiting = state.withLock { state -> (@Sendable (()) -> Void)? in
            state.events.append(event)
            guard event.hasPrefix("plugin.loadDidEnd") else { return nil }
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?(())
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { record("delegate.success") }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        state.withLock { $0.lastError = error }
        record("delegate.fail(\(error.kind))")
    }
    func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws { record("plugin.loadWillStart") }
    func loadShouldRetry(_ retry: RetryPolicy.Attempt, of load: ObservedLoad) -> Bool {
        record("plugin.loadShouldRetry(attempt \(retry.number) of \(retry.maximum))")
        return allowsRetries
    }
    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) { record("plugin.loadDidEnd(\(outcome.error.map { "\($0.kind)" } ?? "success"))") }
}
