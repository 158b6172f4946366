@testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Hummingbird
import Logging
import Testing

private struct FlakyBackend: AIFServices.Service {
    let baseURL: URL
    var name: ServiceName { "flaky" }
    var retryPolicy: RetryPolicy { .never }
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: baseURL, apiVersion: "v1")]
    }
    var circuitBreaker: CircuitBreaker.Policy? { CircuitBreaker.Policy(failuresToOpen: 5, coolDown: .seconds(1), probes: 1) }
}

/// When each circuit change happened.
private final class ChangeClock: LoadObserver {
    private let heard = Locked<[(to: CircuitBreaker.State, at: ContinuousClock.Instant)]>([])
    var changes: [(to: CircuitBreaker.State, at: ContinuousClock.Instant)] { heard.withLock { $0 } }

    func observation(of load: ObservedLoad) -> (any LoadObservation)? { nil }

    func circuitDidChange(_ change: CircuitBreaker.Change, service: ServiceName, environment: ServiceEnvironment.Name) {
        heard.withLock { $0.append((change.to, .now)) }
    }
}

/// A real backend that goes down for five seconds under 256 loads in flight, through the real
/// transport: once its circuit is open only the probes reach it, one a cool-down, and once it
/// is back the circuit closes within a cool-down.
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
        let changes = ChangeClock()
        let proxy = APIProxy(transport: transport, recorder: nil, observers: [changes])
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(FlakyBackend(baseURL: backend.baseURL()))
        let stop = Locked(false)

        // 256 loads in flight at all times: each ended load starts the next; a refused one waits
        // until its circuit's next probe (or a tenth of a second), as a caller would.
        let loaders = (0..<256).map { _ in
            Task {
                let manager = APIManager(Endpoint<NoContent>(service: "flaky", path: "items"), proxy: proxy, registry: registry)
                while !stop.withLock({ $0 }) {
                    do {
                        _ = try await manager.load()
                    } catch let error as APIError where error.kind == .circuitOpen {
                        let wait = min(max(error.retryableAt?.timeIntervalSinceNow ?? 0.1, 0.01), 0.1)
                        try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
                    } catch {}
                }
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(changes.changes.isEmpty)
        down.withLock { $0 = true }
        let wentDown = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(500))
        // By now the circuit opened, and what was in flight as it did has arrived.
        let opened = try #require(changes.changes.first, "the circuit did not open")
        #expect(opened.to == .open)
        let settled = received.withLock { $0 }
        try await Task.sleep(for: .milliseconds(4500))
        let whileOpen = received.withLock { $0 } - settled
        down.withLock { $0 = false }
        let cameBack = ContinuousClock.now
        // Four and a half seconds open: a probe each cool-down (each found it still down).
        #expect(whileOpen <= 5, "\(whileOpen) requests reached the backend while its circuit was open")
        #expect(whileOpen >= 3, "\(whileOpen) probes in 4.5 s of 1 s cool-downs")

        try await Task.sleep(for: .milliseconds(1500))
        stop.withLock { $0 = true }
        for loader in loaders { await loader.value }
        let closed = try #require(changes.changes.last { $0.to == .closed }, "the circuit did not close")
        #expect(closed.at > cameBack)
        // Within a cool-down, and the half second a probe takes to be made and answered.
        #expect(closed.at - cameBack <= .milliseconds(1500), "closed \(closed.at - cameBack) after the backend came back")
        #expect(registry.circuitBreaker(of: "flaky", in: .online)?.state == .closed)
        #expect(wentDown < opened.at)
        await backend.stop()
    }
}
