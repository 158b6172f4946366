@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import AIFNetworkingMetrics
import AIFNetworkingTesting
import Foundation
import Logging
import MetricsTestKit
import Testing
@_spi(CrossModule) import AIFTransport

private struct GuardedService: AIFServices.Service {
    var name: ServiceName = "guarded"
    var retryPolicy: RetryPolicy
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: URL(string: "https://backend.test")!, apiVersion: "v1")]
    }
    var circuitBreaker: CircuitBreaker.Policy? { CircuitBreaker.Policy(failuresToOpen: 3, coolDown: .seconds(30), probes: 1) }
}

/// What the proxy's observers hear of circuits.
private final class CircuitWatcher: APIProxy.LoadObserver {
    private let heard = Locked<[String]>([])
    var changes: [String] { heard.withLock { $0 } }

    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? { nil }

    func circuitDidChange(_ change: CircuitBreaker.Change, service: ServiceName, environment: ServiceEnvironment.Name) {
        heard.withLock { $0.append("\(service)/\(environment): \(change.from) → \(change.to)") }
    }
}

/// Circuit breaking through the engine, on the proxy's clock over a stub transport: a backend
/// failing in a row is no longer called, its loads failing at once saying when the next probe
/// goes out; a probe closes or reopens the circuit; retries respect it.
@Suite("Circuit breaking: loads, probes, retries", .timeLimit(.minutes(1)))
struct CircuitBreakingTests {
    private struct Setup {
        let clock = ManualLoadClock()
        let watcher = CircuitWatcher()
        let metrics = TestMetrics()
        let registry = ServiceRegistry(processEnvironment: [:])
        let proxy: APIProxy

        init(_ transport: any HTTPTransport, retries: RetryPolicy = .never) {
            registry.register(GuardedService(retryPolicy: retries))
            proxy = APIProxy(
                transport: transport, logger: Logger(label: "circuit", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
                offlineAfterFailures: 100, loadExecutor: .automatic, recorder: nil, observers: [watcher, MetricsObserver(factory: metrics)], clock: clock)
        }

        func load() async throws -> APIResponse<NoContent> {
            try await APIManager(Endpoint<NoContent>(service: "guarded", path: "goods"), proxy: proxy, registry: registry).load()
        }

        /// Three loads in a row, each held by `holding` until answered 503: the circuit opens.
        func openThrough(_ holding: HoldingTransport) async {
            for count in 1...3 {
                let load = Task { await failure() }
                await holding.waitUntilSent(count)
                holding.answerAll(with: 503)
                #expect(await load.value?.kind == .httpStatus)
            }
        }

        func failure() async -> APIError? {
            do {
                _ = try await load()
                return nil
            } catch {
                return error as? APIError
            }
        }
    }

    @Test func aRunOfFailuresOpensTheCircuitAndLoadsThenFailAtOnceSayingWhen() async throws {
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(503))
        let setup = Setup(stub)
        for _ in 1...3 { #expect(await setup.failure()?.kind == .httpStatus) }
        #expect(setup.watcher.changes == ["guarded/online: closed → open"])
        #expect(setup.registry.circuitBreaker(of: "guarded", in: .online)?.state == .open)

        let refused = await setup.failure()
        #expect(refused?.kind == .circuitOpen)
        #expect(refused?.attempts == 0)
        #expect(refused?.message.contains("the circuit of \"guarded\" (online) is open") == true)
        #expect(refused?.message.contains("the next probe goes out in 30 s") == true)
        #expect(refused?.retryableAt == setup.clock.date + 30)
        // Nothing more reached the backend.
        #expect(stub.requests.count == 3)

        setup.clock.advance(by: .seconds(29))
        #expect(await setup.failure()?.kind == .circuitOpen)
        #expect(stub.requests.count == 3)
    }

    @Test func aProbeThatSucceedsClosesTheCircuit() async throws {
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(503), times: 3)
        stub.stub(.get, "goods", with: .status(204))
        let setup = Setup(stub)
        for _ in 1...3 { _ = await setup.failure() }
        let gauge = try setup.metrics.expectGauge("aif_circuit_state", [("service", "guarded"), ("environment", "online")])
        #expect(gauge.lastValue == 2)
        setup.clock.advance(by: .seconds(30))
        #expect(try await setup.load().statusCode == 204)
        #expect(setup.watcher.changes == ["guarded/online: closed → open", "guarded/online: open → half-open", "guarded/online: half-open → closed"])
        #expect(gauge.lastValue == 0)
        let opened = try setup.metrics.expectCounter("aif_circuit_changes_total", [("service", "guarded"), ("environment", "online"), ("state", "open")])
        #expect(opened.totalValue == 1)
        #expect(try await setup.load().statusCode == 204)
        #expect(stub.requests.count == 5)
    }

    @Test func aProbeThatFailsOpensTheCircuitAgainAndWhileItIsOutOthersAreRefused() async throws {
        let holding = HoldingTransport()
        let setup = Setup(holding)
        await setup.openThrough(holding)
        setup.clock.advance(by: .seconds(30))
        let probe = Task { await setup.failure() }
        await holding.waitUntilSent(4)
        // The one probe allowed is out: the next load is refused, no probe time to tell.
        let refused = await setup.failure()
        #expect(refused?.kind == .circuitOpen)
        #expect(refused?.message.contains("its probes are out") == true)
        #expect(refused?.retryableAt == nil)
        holding.answerAll(with: 500)
        #expect(await probe.value?.kind == .httpStatus)
        #expect(setup.watcher.changes.suffix(2) == ["guarded/online: open → half-open", "guarded/online: half-open → open"])
        #expect(await setup.failure()?.kind == .circuitOpen)
        #expect(holding.sent == 4)
    }

    @Test func aCancelledProbeLetsTheNextLoadProbe() async throws {
        let holding = HoldingTransport()
        let setup = Setup(holding)
        await setup.openThrough(holding)
        setup.clock.advance(by: .seconds(30))
        let probe = Task { try await setup.load() }
        await holding.waitUntilSent(4)
        probe.cancel()
        _ = await probe.result
        // The holding transport ends the cancelled transfer only when told: until then the
        // probe is out.
        #expect(await setup.failure()?.kind == .circuitOpen)
        holding.failAll(with: .cancelled)
        #expect(setup.registry.circuitBreaker(of: "guarded", in: .online)?.state == .halfOpen)
        let next = Task { await setup.failure() }
        await holding.waitUntilSent(5)
        #expect(setup.watcher.changes.count == 2)
        holding.answerAll(with: 204)
        #expect(await next.value == nil)
        #expect(setup.registry.circuitBreaker(of: "guarded", in: .online)?.state == .closed)
    }

    @Test func aProbeWhoseRequestCannotBeMadeLetsTheNextLoadProbe() async throws {
        let stub = StubTransport()
        stub.stub(.get, "goods/{id}", with: .status(503), times: 3)
        stub.stub(.get, "goods/{id}", with: .status(204))
        let setup = Setup(stub)
        let detail = APIManager(Endpoint<NoContent>(service: "guarded", path: "goods/{id}"), proxy: setup.proxy, registry: setup.registry)
        for _ in 1...3 { _ = try? await detail.load(["id": 7]) }
        setup.clock.advance(by: .seconds(30))
        // Admitted as the probe, then stopped before sending: no value for its placeholder.
        let unmade = await #expect(throws: APIError.self) { try await detail.load() }
        #expect(unmade?.kind == .configuration)
        #expect(try await detail.load(["id": 7]).statusCode == 204)
        #expect(setup.registry.circuitBreaker(of: "guarded", in: .online)?.state == .closed)
    }

    @Test func failuresThatSayNothingOfTheBackendDoNotOpenIt() async throws {
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(404))
        let setup = Setup(stub)
        for _ in 1...10 { #expect(await setup.failure()?.kind == .httpStatus) }
        #expect(setup.watcher.changes.isEmpty)
        #expect(stub.requests.count == 10)
    }

    @Test func aRetryIsNotMadeIntoAnOpenCircuit() async throws {
        let stub = StubTransport()
        stub.stub(.get, "goods", with: .status(503))
        let setup = Setup(stub, retries: RetryPolicy(maxRetries: 5, baseDelay: .seconds(1), maxDelay: .seconds(1)))
        let load = Task { await setup.failure() }
        // Two waits, each followed by an attempt; the third failure opens the circuit, and the
        // retry it would have made is declined at once, without a wait.
        for _ in 1...2 {
            _ = await setup.clock.waitUntilWaiting()
            setup.clock.advance(by: .seconds(1))
        }
        let error = await load.value
        #expect(error?.kind == .httpStatus)
        #expect(error?.attempts == 3)
        #expect(error?.message.contains("the circuit of \"guarded\" (online) is open for 30 s more") == true, "\(error?.message ?? "")")
        #expect(stub.requests.count == 3)
        #expect(setup.clock.pendingWaits.isEmpty)
    }
}
