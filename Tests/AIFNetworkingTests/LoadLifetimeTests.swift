@testable import AIFNetworking
import AIFTransport
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Testing

/// A service on the stub transport, unsigned.
private struct LifetimeService: Service {
    var name: ServiceName = "lifetime"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: URL(string: "https://api.lifetime.test")!, apiVersion: "v1")]
    }
}

private struct Item: Decodable, Sendable, Equatable {
    let id: Int
}

/// A plugin that does nothing: what a load holds of its manager (the plugins, among the rest)
/// is watched through it.
private final class WatchedPlugin: LoadPlugin {}

/// Records how each load it hears of ended.
private final class EndingRecorder: LoadPlugin {
    let endings = Locked<[ObservedLoad.Outcome]>([])
    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) { endings.withLock { $0.append(outcome) } }
}

/// Counts the outcomes told to the delegate.
private final class CountingDelegate: APIManagerDelegate {
    let told = Locked(0)
    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { told.withLock { $0 += 1 } }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { told.withLock { $0 += 1 } }
}

/// Once a load has ended and its outcome was delivered, nothing of it stays alive: a load
/// kept by a reference cycle would keep its request, its answer and what its manager gave it
/// for as long as the process runs (2.5 KiB a load in the benchmark's delegate client).
@Suite("A load keeps nothing alive past its end")
struct LoadLifetimeTests {
    private static func manager(_ stub: StubTransport, plugin: WatchedPlugin) -> APIManager<Item> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(LifetimeService())
        let manager = APIManager(Endpoint<Item>(service: "lifetime", path: "items/{id}"), proxy: APIProxy(transport: stub), registry: registry, cache: ResponseCache())
        manager.plugins = [plugin]
        return manager
    }

    /// Runs `loads` delegate-face loads (a success and a failure in turn) with a plugin, then
    /// drops the plugin from the manager: the plugin must go once every load has let go of it.
    @Test func delegateFaceLoadsLetGoOfWhatTheyHeld() async throws {
        let stub = StubTransport()
        stub.stub(.get, "items/1", with: .json(#"{"id": 1}"#))
        stub.stub(.get, "items/2", with: .status(500))
        weak var watched: WatchedPlugin?
        let delegate = CountingDelegate()
        let manager: APIManager<Item>
        do {
            let plugin = WatchedPlugin()
            watched = plugin
            manager = Self.manager(stub, plugin: plugin)
        }
        manager.delegate = delegate
        manager.callbackExecutor = .immediate
        let loads = 20
        for index in 0..<loads { manager.loadData(with: ["id": index % 2 + 1]) }
        #expect(await eventually(timeout: .seconds(10)) { delegate.told.withLock { $0 } == loads })
        manager.plugins = []
        // The last delivery returns to the engine after telling the delegate: the load lets
        // go of its closures as that call unwinds.
        #expect(await eventually(timeout: .seconds(10)) { watched == nil }, "an ended load still holds what its manager gave it")
        withExtendedLifetime(manager) {}
    }

    @Test func asyncFaceLoadsLetGoOfWhatTheyHeld() async throws {
        let stub = StubTransport()
        stub.stub(.get, "items/1", with: .json(#"{"id": 1}"#))
        stub.stub(.get, "items/2", with: .status(500))
        weak var watched: WatchedPlugin?
        let manager: APIManager<Item>
        do {
            let plugin = WatchedPlugin()
            watched = plugin
            manager = Self.manager(stub, plugin: plugin)
        }
        #expect(try await manager.load(["id": 1]).content == Item(id: 1))
        await #expect(throws: APIError.self) { try await manager.load(["id": 2]) }
        manager.plugins = []
        #expect(await eventually(timeout: .seconds(10)) { watched == nil }, "an ended load still holds what its manager gave it")
        withExtendedLifetime(manager) {}
    }

    /// A load holds its manager weakly: a manager released while its load waits for the answer
    /// goes at once, cancelling its loads as it goes; the load ends as cancelled without waiting
    /// for the answer, told to no delegate, its plugins hearing it end once, the proxy's table
    /// empty, and the answer that comes later is nobody's.
    @Test func aLoadInFlightLetsItsManagerGo() async throws {
        let transport = HoldingTransport()
        let proxy = APIProxy(transport: transport)
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(LifetimeService())
        let delegate = CountingDelegate()
        let recorder = EndingRecorder()
        weak var watched: APIManager<Item>?
        let id: LoadID
        do {
            let manager = APIManager(Endpoint<Item>(service: "lifetime", path: "items/{id}"), proxy: proxy, registry: registry, cache: ResponseCache())
            manager.plugins = [recorder]
            manager.delegate = delegate
            manager.callbackExecutor = .immediate
            watched = manager
            id = manager.loadData(with: ["id": 1])
            await transport.waitUntilSent(1)
        }
        #expect(await eventually(timeout: .seconds(10)) { watched == nil }, "a load in flight kept its manager alive")
        #expect(await eventually(timeout: .seconds(10)) { !proxy.isInFlight(id) }, "the released manager's load did not end")
        await transport.waitForCancelsAsked(1)
        let endings = recorder.endings.withLock { $0 }
        #expect(endings.count == 1)
        #expect(endings.first?.error?.kind == .cancelled)
        #expect(endings.first?.error?.message.contains("the manager was deallocated") == true)
        transport.answerAll(with: 200)
        #expect(recorder.endings.withLock { $0.count } == 1)
        #expect(delegate.told.withLock { $0 } == 0)
    }
}
