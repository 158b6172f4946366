@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Hummingbird
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

private struct FlakyBackend: AIFServices.Service {
    let baseURL: URL
    var name: ServiceName { "flaky" }
    var retryPolicy: RetryPolicy { .never }
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: baseURL, apiVersion: "v1")]
    }
    var circuitBreaker: CircuitBreaker.Policy? { CircuitBreaker.Policy(failuresToOpen: 5, coolDown: .seconds(1), probes: 1) }
}

/// Each circuit change, and when it happened on the proxy's clock.
private final class ChangeClock: APIProxy.LoadObserver {
    let clock: ManualLoadClock
    private let heard = Locked<[(to: CircuitBreaker.State, at: Duration)]>([])
    var changes: [(to: CircuitBreaker.State, at: Duration)] { heard.withLock { $0 } }

    init(clock: ManualLoadClock) {
        self.clock = clock
    }

    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? { nil }

    func circuitDidChange(_ change: CircuitBreaker.Change, service: ServiceName, environment: ServiceEnvironment.Name) {
        heard.withLock { $0.append((change.to, clock.now)) }
    }
}

/// A real backend that goes down under bursts of 256 loads in flight at once, through the real
/// transport, on a proxy whose clock the test moves: once the circuit is open only the probes
/// reach the backend, one a cool-down, and once it is back the circuit closes at the next one.
@Suite("Circuit breaking against a backend that goes down", .timeLimit(.minutes(1)))
struct CircuitFaultServerTests {
    @Test func whileTheBackendIsDownOnlyTheProbesReachItAndItRecoversWithinACoolDown() async throws {
        let down = Locked(false)
        let received = Locked(0)
        let router = Router()
        router.get("v1/items") { _, _ -> Response in
            received.withLock { $0 += 1 }
            return Response(status: down.withLock { $0 } ? .serviceUnavailable : .noContent)
        }
        let backend = try await LocalServer.start(router: router)
        let transport = CurlTransport(configuration: CurlTransport.Configuration(connectionPool: .init(maxConnectionsPerHost: 64)))
        defer { transport.shutdown() }
        let clock = ManualLoadClock()
        let changes = ChangeClock(clock: clock)
        let proxy = APIProxy(
            transport: transport, logger: Logger(label: "circuit", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [changes], clock: clock)
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(FlakyBackend(baseURL: backend.baseURL()))
        let manager = APIManager(Endpoint<NoContent>(service: "flaky", path: "items"), proxy: proxy, registry: registry)

        /// 256 loads at once, each to its end: how many the circuit refused, and how many
        /// requests reached the backend meanwhile.
        func burst() async -> (refused: Int, reached: Int) {
            let before = received.withLock { $0 }
            let refused = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<256 {
                    group.addTask {
                        do {
                            _ = try await manager.load()
                            return false
                        } catch {
                            return (error as? APIError)?.kind == .circuitOpen
                        }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            return (refused, received.withLock { $0 } - before)
        }

        let up = await burst()
        #expect(up.refused == 0 && up.reached == 256)
        #expect(changes.changes.isEmpty)
        down.withLock { $0 = true }
        let wentDown = clock.now
        // Five failures in a row open the circuit; what was admitted before it opened arrives,
        // the rest is refused.
        let opening = await burst()
        let opened = try #require(changes.changes.first, "the circuit did not open")
        #expect(opened.to == .open && opened.at == wentDown)
        #expect(opening.reached >= 5 && opening.reached + opening.refused == 256)
        // Open, no time passed: nothing reaches the backend.
        let whileOpen = await burst()
        #expect(whileOpen.refused == 256 && whileOpen.reached == 0)
        // Each cool-down lets one probe through, which finds the backend still down.
        for _ in 0..<4 {
            clock.advance(by: .seconds(1))
            let probing = await burst()
            #expect(probing.refused == 255 && probing.reached == 1)
        }
        down.withLock { $0 = false }
        let cameBack = clock.now
        clock.advance(by: .seconds(1))
        // The next probe finds it back: the circuit closes, and the loads go through again.
        let probed = await burst()
        #expect(probed.reached >= 1)
        let closed = try #require(changes.changes.last { $0.to == .closed }, "the circuit did not close")
        #expect(closed.at - cameBack == .seconds(1))
        let after = await burst()
        #expect(after.refused == 0 && after.reached == 256)
        #expect(registry.circuitBreaker(of: "flaky", in: .online)?.state == .closed)
        let probes: [CircuitBreaker.State] = [.halfOpen, .open, .halfOpen, .open, .halfOpen, .open, .halfOpen, .open]
        let expected: [CircuitBreaker.State] = [.open] + probes + [.halfOpen, .closed]
        #expect(changes.changes.map(\.to) == expected)
        await backend.stop()
    }
}
