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
/// is watched through it. It says when it goes.
private final class WatchedPlugin: LoadPlugin {
    let gone = Collected<Void>()
    deinit { gone.append(()) }
}

/// A manager that says when it goes.
private final class WatchedManager: APIManager<Item>, @unchecked Sendable {
    let gone = Collected<Void>()
    deinit { gone.append(()) }
}

/// Records how each load it hears of ended.
private final class EndingRecorder: LoadPlugin {
    let endings = Collected<ObservedLoad.Outcome>()
    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) { endings.append(outcome) }
}

/// Counts the outcomes told to the delegate.
private final class CountingDelegate: APIManagerDelegate {
    let told = Collected<Void>()
    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { told.append(()) }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { told.append(()) }
}

/// Once a load has ended and its outcome was delivered, nothing of it stays alive: a load
/// kept by a reference cycle would keep its request, its answer and what its manager gave it
/// for as long as the process runs (2.5 KiB a load in the benchmark's delegate client).
@Suite("A load keeps nothing alive past its end", .timeLimit(.minutes(1)))
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
        let gone: Collected<Void>
        let delegate = CountingDelegate()
        let manager: APIManager<Item>
        do {
            let plugin = WatchedPlugin()
            gone = plugin.gone
            manager = Self.manager(stub, plugin: plugin)
        }
        manager.delegate = delegate
        manager.callbackExecutor = .immediate
        let loads = 20
        for index in 0..<loads { manager.loadData(with: ["id": index % 2 + 1]) }
        _ = await delegate.told.wait(count: loads)
        manager.plugins = []
        // The last delivery returns to the engine after telling the delegate: the load lets
        // go of its closures as that call unwinds, and the plugin goes (else the suite's time
        // limit: an ended load still holds what its manager gave it).
        _ = await gone.wait(count: 1)
        withExtendedLifetime(manager) {}
    }

    @Test func asyncFaceLoadsLetGoOfWhatTheyHeld() async throws {
        let stub = StubTransport()
        stub.stub(.get, "items/1", with: .json(#"{"id": 1}"#))
        stub.stub(.get, "items/2", with: .status(500))
        let gone: Collected<Void>
        let manager: APIManager<Item>
        do {
            let plugin = WatchedPlugin()
            gone = plugin.gone
            manager = Self.manager(stub, plugin: plugin)
        }
        #expect(try await manager.load(["id": 1]).content == Item(id: 1))
        await #expect(throws: APIError.self) { try await manager.load(["id": 2]) }
        manager.plugins = []
        // The plugin goes (else the suite's time limit: an ended load still holds it).
        _ = await gone.wait(count: 1)
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
        let gone: Collected<Void>
        let id: LoadID
        do {
            let manager = WatchedManager(Endpoint<Item>(service: "lifetime", path: "items/{id}"), proxy: proxy, registry: registry, cache: ResponseCache())
            manager.plugins = [recorder]
            manager.delegate = delegate
            manager.callbackExecutor = .immediate
            gone = manager.gone
            id = manager.loadData(with: ["id": 1])
            await transport.waitUntilSent(1)
        }
        // The manager goes though its load waits (else the suite's time limit), and the load
        // ends: its plugins hear it once it has left the proxy's table.
        _ = await gone.wait(count: 1)
        _ = await recorder.endings.wait(count: 1)
        #expect(!proxy.isInFlight(id), "the released manager's load did not end")
        await transport.waitForCancelsAsked(1)
        let endings = recorder.endings.values
        #expect(endings.count == 1)
        #expect(endings.first?.error?.kind == .cancelled)
        #expect(endings.first?.error?.message.contains("the manager was deallocated") == true)
        transport.answerAll(with: 200)
        #expect(recorder.endings.values.count == 1)
        #expect(delegate.told.values.isEmpty)
    }
}
