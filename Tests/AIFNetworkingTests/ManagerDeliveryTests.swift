@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import DemoServer
import Foundation
import Logging
import Testing

/// Records where each delegate call ran.
private final class PlaceRecorder: APIManagerDelegate {
    let places = Collected<String>()
    let check: @Sendable () -> String

    init(check: @escaping @Sendable () -> String) {
        self.check = check
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        let place = check()
        places.append(place)
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        let place = check()
        places.append("failed: " + place)
    }
}

private actor DeliveryActor {
    func isolationCheck() {}
}

@Suite("APIManager: where callbacks run, and what is logged", .timeLimit(.minutes(2)))
struct ManagerDeliveryTests {
    /// Where a success and a failure were told, sorted; `proxy` replaces the stack's own.
    private func deliver(
        on executor: CallbackExecutor, proxy: (@Sendable () -> APIProxy)? = nil, check: @escaping @Sendable () -> String
    ) async throws -> [String] {
        let stack = try await ShopStack.make(proxy: proxy.map { make in { _ in make() } })
        let manager = stack.manager("goods/{id}", Goods.self)
        let recorder = PlaceRecorder(check: check)
        manager.delegate = recorder
        manager.callbackExecutor = executor
        manager.loadData(with: ["id": 1])
        manager.loadData(with: ["id": -5])
        // The manager must outlive both loads: one let go of cancels them without telling anyone.
        _ = await recorder.places.wait(count: 2)
        withExtendedLifetime(manager) {}
        return recorder.places.values.sorted()
    }

    @Test func theMainActorIsTheDefault() async throws {
        let stack = try await ShopStack.make()
        #expect({ if case .mainActor = stack.manager("goods", GoodsPage.self).callbackExecutor { true } else { false } }())
        // Under `dispatch_main` the main queue (the main actor's executor) may be drained by a
        // worker thread, so the check is the actor's isolation, not `Thread.isMainThread`.
        let places = try await deliver(on: .mainActor) {
            MainActor.assertIsolated("the delegate must run on the main actor")
            return "main actor"
        }
        #expect(places == ["failed: main actor", "main actor"])
    }

    @Test func aSerialQueue() async throws {
        let queue = DispatchQueue(label: "delivery")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "delivery")
        let places = try await deliver(on: .queue(queue)) { DispatchQueue.getSpecific(key: key) ?? "elsewhere" }
        #expect(places == ["delivery", "failed: delivery"])
    }

    @Test func anActor() async throws {
        let actor = DeliveryActor()
        let places = try await deliver(on: .actor(actor)) {
            actor.assertIsolated("the delegate must run isolated to the actor")
            return "actor"
        }
        #expect(places == ["actor", "failed: actor"])
    }

    @Test func immediatelyOnTheThreadThatEndedTheLoad() async throws {
        // By default, the library's load executor.
        let places = try await deliver(on: .immediate) {
            Thread.isMainThread ? "main" : LoadExecutor.shared.isCurrent ? "the load executor" : "elsewhere"
        }
        #expect(places == ["failed: the load executor", "the load executor"])
    }

    @Test func immediatelyOnTheLoadExecutorOverLibcurlItself() async throws {
        // Without the stack's counting wrapper, the transport hands the completions over in its
        // batches; the loads still end on the load executor.
        let places = try await deliver(on: .immediate, proxy: { APIProxy(transport: CurlTransport.shared, loadExecutor: .loadExecutor) }) {
            LoadExecutor.shared.isCurrent ? "the load executor" : "elsewhere"
        }
        #expect(places == ["failed: the load executor", "the load executor"])
    }

    @Test func immediatelyOnTheTransportThreadWhenLoadsRunThere() async throws {
        // The proxy over the CurlTransport itself (the stack's counting wrapper has no thread).
        let places = try await deliver(on: .immediate, proxy: { APIProxy(transport: CurlTransport.shared, loadExecutor: .transportThread) }) {
            ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(places == ["aif-curl-shared", "failed: aif-curl-shared"])
    }

    @Test func theProxyLogsALinePerRequestAndResponseWithoutSecrets() async throws {
        let messages = Locked<[(Logger.Level, String)]>([])
        var logger = Logger(label: "test", factory: { _ in CapturingLogHandler(messages: messages) })
        logger.logLevel = .debug
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, logger: logger) })
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        let first = try await manager.load(["id": 4])
        _ = try await manager.load(["id": 4])
        _ = try? await manager.load(["id": 4000])
        let lines = messages.withLock { $0 }
        let info = lines.filter { $0.0 == .info }.map(\.1)
        #expect(info.count == 5)
        #expect(info[0].hasPrefix("request \(first.loadID) GET http://127.0.0.1:"))
        #expect(info[0].contains("/v1/goods/4?"))
        #expect(info[1].hasPrefix("response \(first.loadID) 200 GET "))
        #expect(info[1].contains(" ms, \(first.data.count) bytes"))
        #expect(info[2].contains("from cache"))
        #expect(info[4].hasPrefix("response") && info[4].contains(" 404 "))
        #expect(lines.contains { $0.0 == .debug && $0.1.contains("headers") })
        let everything = lines.map(\.1).joined(separator: "\n")
        #expect(!everything.contains(ShopRoutes.privateKey))
        let signature = try #require(PercentEncoding.queryItems(of: first.request.url).first { $0.name == "sign" }?.value)
        #expect(!everything.contains(signature))
    }

    @Test func theDefaultProxyLogsNothing() {
        #expect(APIProxy().logger.handler is SwiftLogNoOpLogHandler)
    }

    @Test func loadIDsIncreaseAcrossProxiesAndThreads() async throws {
        let proxies = [APIProxy(), APIProxy()]
        let ids = await withTaskGroup(of: [LoadID].self) { group in
            for index in 0..<8 {
                group.addTask {
                    (0..<500).map { _ in
                        let load = proxies[index % 2].begin(group: nil, owner: LoadOwner())
                        proxies[index % 2].end(load)
                        return load.id
                    }
                }
            }
            var all: [LoadID] = []
            for await chunk in group {
                #expect(chunk == chunk.sorted())
                all += chunk
            }
            return all
        }
        #expect(Set(ids).count == 4000)
    }
}
