@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

@Suite("APIManager: the load pipeline against the demo shop", .timeLimit(.minutes(2)))
struct ManagerPipelineTests {
    @Test func everyStepRunsInOrderOnSuccess() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self)
        let recorder = Recorder(events: manager.events, parameters: ["id": 3])
        manager.paramSource = recorder
        manager.delegate = recorder
        manager.plugins.append(recorder)
        manager.callbackExecutor = .immediate
        let id = manager.loadData()
        await recorder.wait(for: "plugin.loadDidEnd")
        #expect(recorder.deliveries == 1 && manager.events.withLock { $0.last == "plugin.loadDidEnd(success)" })
        #expect(manager.events.withLock { $0 } == [
            "source.parameters",
            "manager.reformParameters",
            "manager.loadWillStart", "plugin.loadWillStart",
            "manager.attemptWillBeSigned(1)", "plugin.attemptWillBeSigned(1)",
            "manager.loadDidReceive", "plugin.loadDidReceive",
            "manager.loadWillDeliver", "plugin.loadWillDeliver",
            "delegate.success",
            "manager.loadDidEnd(success)", "plugin.loadDidEnd(success)",
        ])
        #expect(recorder.outcome(id).count == 1)
        let response = try #require(manager.lastOutcome).get()
        #expect(response.loadID == id)
        #expect(response.content.id == 3)
        #expect(response.statusCode == 200)
        #expect(response.parameters == ["id": 3])
        #expect(!response.isFromCache)
        #expect(response.request.url.path == "/v1/goods/3")
        #expect(response.requestDescription.contains("sign=***"))
        #expect(response.metrics.total > .zero)
        #expect(!manager.isLoading)
    }

    @Test func failuresReachThePluginsInOrder() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self)
        let recorder = Recorder(events: manager.events)
        manager.delegate = recorder
        manager.plugins.append(recorder)
        manager.callbackExecutor = .immediate
        manager.loadData(with: ["id": 99_999])
        await recorder.wait(for: "plugin.loadDidEnd")
        #expect(manager.events.withLock { $0.last?.hasPrefix("plugin.loadDidEnd") == true })
        #expect(manager.events.withLock { $0 } == [
            "manager.reformParameters",
            "manager.loadWillStart", "plugin.loadWillStart",
            "manager.attemptWillBeSigned(1)", "plugin.attemptWillBeSigned(1)",
            "manager.loadWillDeliver", "plugin.loadWillDeliver",
            "delegate.fail(HTTP status 404)",
            "manager.loadDidEnd(HTTP status 404)", "plugin.loadDidEnd(HTTP status 404)",
        ])
    }

    /// A plugin that holds a delivery back keeps the delegate from hearing it; the plugins
    /// still hear the end, and an awaiting caller still gets its result.
    @Test func aPluginCanHoldADeliveryBack() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.suppressDelegate = true; return s }
        let recorder = Recorder(events: manager.events)
        manager.delegate = recorder
        manager.plugins.append(recorder)
        manager.callbackExecutor = .immediate
        manager.loadData(with: ["id": 3])
        await recorder.wait(for: "plugin.loadDidEnd")
        #expect(manager.events.withLock { $0.last == "plugin.loadDidEnd(success)" })
        #expect(recorder.deliveries == 0)
        #expect(manager.events.withLock { $0.suffix(4) } == [
            "manager.loadWillDeliver", "plugin.loadWillDeliver", "manager.loadDidEnd(success)", "plugin.loadDidEnd(success)",
        ])
        #expect(try await manager.load(["id": 3]).content.id == 3)
    }

    @Test func reformedParametersAreWhatIsSent() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { settings in
            var settings = settings
            settings.reform = { parameters in
                var reformed = parameters
                reformed["id"] = reformed.removeValue(forKey: "goodsNumber")
                return reformed
            }
            return settings
        }
        let response = try await manager.load(["goodsNumber": 12])
        #expect(response.content.id == 12)
        #expect(response.parameters == ["id": 12])
    }

    @Test func aPluginThatRefusesALoadSendsNothing() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.vetoCall = true; return s }
        let recorder = Recorder(events: manager.events)
        manager.plugins.append(recorder)
        let error = await #expect(throws: APIError.self) { try await manager.load(["id": 1]) }
        #expect(error?.kind == .invalidParameters)
        #expect((error?.underlyingError as? TestFailure)?.description == "vetoed")
        #expect(stack.transport.sent == 0)
        // The plugins after the one that refused are not asked; every plugin hears the end.
        #expect(manager.events.withLock { $0 } == [
            "manager.reformParameters", "manager.loadWillStart", "manager.loadWillDeliver", "plugin.loadWillDeliver",
            "manager.loadDidEnd(invalid parameters)", "plugin.loadDidEnd(invalid parameters)",
        ])
    }

    @Test func invalidParametersSendNothing() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.rejectParameters = "id must be positive"; return s }
        let recorder = Recorder()
        manager.delegate = recorder
        manager.callbackExecutor = .immediate
        let id = manager.loadData(with: ["id": -1])
        await recorder.wait(for: "delegate.", count: 1)
        #expect(recorder.deliveries == 1)
        guard case .failure(let error)? = recorder.outcome(id).first else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.kind == .invalidParameters)
        #expect(error.message.contains("id must be positive"))
        #expect(error.loadID == id)
        #expect(error.description.contains("service \"shop\", path \"goods/{id}\""))
        #expect(stack.transport.sent == 0)
    }

    @Test func aRejectedResponseIsInvalidAndNotCached() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.rejectResponse = "price too high"; s.cache = true; return s }
        let error = await #expect(throws: APIError.self) { try await manager.load(["id": 2]) }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.message.contains("price too high") == true)
        #expect(error?.response?.statusCode == 200)
        #expect(stack.cache.count == 0)
    }

    @Test func anApplicationErrorInA200IsAServiceVeto() async throws {
        let stack = try await ShopStack.make()
        struct Coupon: Decodable, Sendable { var coupon: String }
        let error = await #expect(throws: APIError.self) { try await stack.manager("coupons/{code}", Coupon.self).load(["code": "OLD"]) }
        #expect(error?.kind == .serviceVeto)
        #expect(error?.serviceVeto == ServiceVeto(code: "4001", message: "coupon expired"))
        #expect(error?.statusCode == 200)
        let valid = try await stack.manager("coupons/{code}", Coupon.self).load(["code": "WELCOME10"])
        #expect(valid.content.coupon == "WELCOME10")
    }

    @Test func anHTTPErrorStatusCarriesCodeAndBody() async throws {
        let stack = try await ShopStack.make()
        let error = await #expect(throws: APIError.self) { try await stack.manager("goods/{id}", Goods.self).load(["id": 5000]) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.statusCode == 404)
        #expect(error?.message.contains("no such goods") == true)
        #expect(error.flatMap { String(data: $0.response!.body, encoding: .utf8) }?.contains("4040") == true)
    }

    @Test func theSlowEndpointTimesOut() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("slow", NoContent.self) { var s = $0; s.timeouts = HTTPRequest.Timeouts(connect: .seconds(5), total: .milliseconds(200)); return s }
        let started = ContinuousClock.now
        let error = await #expect(throws: APIError.self) { try await manager.load(["ms": 20000]) }
        #expect(error?.kind == .timeout)
        // The attempt carried what was left of the load's deadline as its own total.
        #expect(error?.underlyingError is TransportError)
        #expect(error?.attempts == 1)
        // At the 200 ms timeout, not the answer's 20 s.
        #expect(ContinuousClock.now - started < .milliseconds(1200))
    }

    @Test func aClosedPortIsNoNetwork() async throws {
        let port = try RawServer.closedPort()
        let stack = try await ShopStack.make(onlineURL: URL(string: "http://127.0.0.1:\(port)")!)
        let error = await #expect(throws: APIError.self) { try await stack.manager("goods", GoodsPage.self).load() }
        #expect(error?.kind == .noNetwork)
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
    }

    @Test func aBodyOfTheWrongShapeIsADecodingFailure() async throws {
        let stack = try await ShopStack.make()
        let error = await #expect(throws: APIError.self) { try await stack.manager("goods", Goods.self).load() }
        #expect(error?.kind == .decodingFailed)
        #expect(error?.message.contains("missing key \"id\"") == true)
        #expect(error?.underlyingError is DecodingError)
    }

    @Test func aBodyThatIsNotJSONIsADecodingFailure() async throws {
        let servers = try await TestServers.shared()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(PlainService(baseURL: servers.plain.baseURL()))
        let manager = APIManager<Goods>(service: "plain", path: "bytes/40", proxy: APIProxy(), registry: registry)
        let error = await #expect(throws: APIError.self) { try await manager.load() }
        #expect(error?.kind == .decodingFailed)
        #expect(error?.message.contains("not valid JSON") == true)
    }

    @Test func anEmptyBodyIsNoContentUnlessNoneWasExpected() async throws {
        let stack = try await ShopStack.make()
        let order = try await stack.manager("orders", Order.self, method: .post).load(["goods_id": 1, "quantity": 1])
        let error = await #expect(throws: APIError.self) {
            try await stack.manager("orders/{id}", Order.self, method: .delete).load(["id": .integer(order.content.id)])
        }
        #expect(error?.kind == .noContent)
        #expect(error?.statusCode == 204)
        let second = try await stack.manager("orders", Order.self, method: .post).load(["goods_id": 1, "quantity": 1])
        let deleted = try await stack.manager("orders/{id}", NoContent.self, method: .delete).load(["id": .integer(second.content.id)])
        #expect(deleted.statusCode == 204)
    }

    @Test func ordersGoThroughTheirWholeLifeWithJSONBodies() async throws {
        let stack = try await ShopStack.make()
        let created = try await stack.manager("orders", Order.self, method: .post).load(["goods_id": 7, "quantity": 2])
        #expect(created.statusCode == 201)
        #expect(created.content.goodsId == 7)
        let changed = try await stack.manager("orders/{id}", Order.self, method: .put).load(["id": .integer(created.content.id), "quantity": 4])
        #expect(changed.content.quantity == 4)
        #expect(changed.content.status == "updated")
        let read = try await stack.manager("orders/{id}", Order.self).load(["id": .integer(created.content.id)])
        #expect(read.content == changed.content)
        let bad = await #expect(throws: APIError.self) {
            try await stack.manager("orders", Order.self, method: .post).load(["goods_id": 7, "quantity": 0])
        }
        #expect(bad?.kind == .httpStatus)
        #expect(bad?.statusCode == 400)
    }

    @Test func configurationMistakesAreNamed() async throws {
        let stack = try await ShopStack.make()
        let unknown = await #expect(throws: APIError.self) {
            try await stack.manager("goods", GoodsPage.self) { var s = $0; s.service = "nowhere"; return s }.load()
        }
        #expect(unknown?.kind == .configuration)
        #expect(unknown?.message.contains("no service is registered as \"nowhere\"") == true)
        let missing = await #expect(throws: APIError.self) { try await stack.manager("goods/{id}", Goods.self).load() }
        #expect(missing?.kind == .configuration)
        #expect(missing?.message.contains("{id}") == true)
        let unnamed = await #expect(throws: APIError.self) { try await APIManager<Goods>(registry: stack.registry).load() }
        #expect(unnamed?.message.contains("names no service") == true)
        #expect(stack.transport.sent == 0)
    }

    @Test func theOfflineEnvironmentServesOtherData() async throws {
        let stack = try await ShopStack.make()
        stack.registry.setEnvironment("offline", for: "shop")
        let page = try await stack.manager("goods", GoodsPage.self).load()
        #expect(page.content.total == 25)
        #expect(page.content.items.first?.title == "Test article 1")
        stack.registry.setEnvironment(nil, for: "shop")
        #expect(try await stack.manager("goods", GoodsPage.self).load().content.total == 1003)
    }

    @Test func reformersShapeResponsesAndFailures() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self)
        let reformer = TitleReformer()
        #expect(manager.lastOutcome(reformedBy: reformer) == nil)
        _ = try await manager.load(["id": 1])
        #expect(manager.lastOutcome(reformedBy: reformer) == "Espresso beans no. 1 (200)")
        #expect((try? manager.lastOutcome?.get())?.content.title == "Espresso beans no. 1")
        #expect((try? manager.lastOutcome?.get())?.content.id == 1)
        _ = try? await manager.load(["id": 0])
        #expect(manager.lastOutcome(reformedBy: reformer) == "failed: HTTP status 404")
        #expect((try? manager.lastOutcome?.get())?.content.title == nil)
        #expect(manager.lastOutcome?.failure.map { "\($0.statusCode ?? 0)" } == "404")
        #expect(manager.lastOutcome?.failure != nil)
        #expect(manager.lastOutcome?.failure?.kind == .httpStatus)
        #expect(manager.lastOutcome?.failure?.statusCode == 404)
    }

    @Test func aBadSignatureIsRefusedByTheDemoShop() async throws {
        let servers = try await ShopServers.shared()
        let registry = ServiceRegistry(processEnvironment: [:])
        try registry.registerServices(inDirectory: ShopServers.configs, environment: [
            "SHOP_ONLINE_URL": servers.online.baseURL().absoluteString, "SHOP_OFFLINE_URL": servers.offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": "not-the-key",
        ])
        let error = await #expect(throws: APIError.self) { try await APIManager<GoodsPage>(service: "shop", path: "goods", registry: registry).load() }
        #expect(error?.kind == .httpStatus)
        #expect(error?.statusCode == 401)
        #expect(error?.message.contains("the signature does not match the request") == true)
        #expect(error?.description.contains("not-the-key") == false)
    }
}

/// An unsigned service on the plain test server.
struct PlainService: Service {
    let baseURL: URL
    var name: ServiceName { "plain" }
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] { [.online: ServiceEnvironment(baseURL: baseURL)] }
}

/// A reformer as a screen writes one: a type of its own.
private struct TitleReformer: DataReformer {
    func reform(_ response: APIResponse<Goods>) -> String { "\(response.content.title) (\(response.statusCode))" }
    func reform(failure: APIError) -> String? { "failed: \(failure.kind) \(failure.statusCode ?? 0)" }
}
