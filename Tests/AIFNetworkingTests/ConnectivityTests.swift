@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import Foundation
import Testing

/// The proxy's connectivity, judged from real requests: to a server that answers, and to a port
/// on 127.0.0.1 where nothing listens (every connection refused, as with no network).
@Suite("APIProxy.Connectivity: offline and online from the outcomes of real requests", .timeLimit(.minutes(2)))
struct ConnectivityTests {
    /// Two services, `up` (a server answering `status`) and `down` (a closed port), neither
    /// retrying, on a proxy of their own.
    struct Fixture {
        let server: RawServer
        let registry: ServiceRegistry
        let proxy: APIProxy

        init(status: String = "200 OK", offlineAfterFailures: Int = 2) throws {
            server = try RawServer(.reply("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
            registry = ServiceRegistry(processEnvironment: [:])
            for (name, port) in [("up", server.port), ("down", try RawServer.closedPort())] {
                let json = #"{"name": "\#(name)", "retry": false, "environments": {"online": {"baseURL": "http://127.0.0.1:\#(port)"}}}"#
                registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "\(name).json", environment: [:]))
            }
            proxy = APIProxy(transport: CurlTransport.shared, offlineAfterFailures: offlineAfterFailures)
        }

        func manager(_ service: ServiceName) -> APIManager<NoContent> {
            APIManager(Endpoint(service: service, path: "ping"), proxy: proxy, registry: registry, cache: ResponseCache())
        }

        /// One load of `service`, whatever its outcome.
        func load(_ service: ServiceName) async {
            _ = try? await manager(service).load()
        }

        /// Everything the proxy's stream of changes says, as it says it.
        func watch() -> (states: Collected<APIProxy.Connectivity>, task: Task<Void, Never>) {
            let states = Collected<APIProxy.Connectivity>()
            let stream = proxy.connectivityChanges()
            let task = Task {
                for await state in stream { states.append(state) }
            }
            return (states, task)
        }
    }

    @Test func failuresToConnectGoOfflineAndAResponseComesBackOnline() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let (states, task) = fixture.watch()
        defer { task.cancel() }
        #expect(fixture.proxy.connectivity == .unknown)
        await fixture.load("up")
        #expect(fixture.proxy.connectivity == .online)
        await fixture.load("down")
        #expect(fixture.proxy.connectivity == .online)   // one failure is not enough
        await fixture.load("down")
        #expect(fixture.proxy.connectivity == .offline)
        await fixture.load("down")
        await fixture.load("up")
        #expect(fixture.proxy.connectivity == .online)
        // The current state first, then each change once, in order.
        #expect(await states.wait(count: 4) == [.unknown, .online, .offline, .online])
    }

    @Test func aResponseBetweenFailuresKeepsItOnline() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        for _ in 0..<3 {
            await fixture.load("down")
            await fixture.load("up")
        }
        #expect(fixture.proxy.connectivity == .online)
    }

    @Test func anyStatusIsAResponseFromAServer() async throws {
        let fixture = try Fixture(status: "503 Service Unavailable", offlineAfterFailures: 1)
        defer { fixture.server.stop() }
        await fixture.load("down")
        #expect(fixture.proxy.connectivity == .offline)
        let error = await #expect(throws: APIError.self) { try await fixture.manager("up").load() }
        #expect(error?.statusCode == 503)
        #expect(fixture.proxy.connectivity == .online)
    }

    @Test func theDelegateFaceCountsAndAWatcherJoiningLateHearsTheStateFirst() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let manager = fixture.manager("down")
        for _ in 0..<2 {
            let ended = AsyncStream.makeStream(of: Void.self)
            let delegate = EndingDelegate { ended.continuation.yield() }
            manager.delegate = delegate
            manager.loadData()
            for await _ in ended.stream { break }
        }
        #expect(fixture.proxy.connectivity == .offline)
        let (states, task) = fixture.watch()
        defer { task.cancel() }
        #expect(await states.wait(count: 1) == [.offline])
    }

    @Test func aCancelledWatcherIsForgotten() async throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let (states, task) = fixture.watch()
        // The watcher is registered once it has heard the state now.
        _ = await states.wait(count: 1)
        task.cancel()
        await task.value
        #expect(fixture.proxy.connectivityMonitor.watcherCount == 0)
    }
}

/// Calls `ended` when a load ends, either way.
private final class EndingDelegate: APIManagerDelegate {
    let ended: @Sendable () -> Void

    init(_ ended: @escaping @Sendable () -> Void) {
        self.ended = ended
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { ended() }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { ended() }
}
