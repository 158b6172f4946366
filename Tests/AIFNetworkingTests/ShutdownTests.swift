@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import AIFNetworkingLifecycle
import Foundation
import Logging
import ServiceLifecycle
import Testing
@_spi(CrossModule) import AIFTransport

private struct BackendService: AIFServices.Service {
    var name: ServiceName = "backend"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: URL(string: "https://backend.test")!, apiVersion: "v1")]
    }
}

/// A delegate that keeps every outcome it hears, and tells a test when it has heard a number.
private final class Outcomes: APIManagerDelegate {
    private let state = Locked<(outcomes: [Result<Int, APIError>], waiting: [(count: Int, arrived: @Sendable (()) -> Void)])>(([], []))

    var all: [Result<Int, APIError>] { state.withLock { $0.outcomes } }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        record(.success(response.statusCode))
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        record(.failure(error))
    }

    private func record(_ outcome: Result<Int, APIError>) {
        let ready = state.withLock { state -> [@Sendable (()) -> Void] in
            state.outcomes.append(outcome)
            let count = state.outcomes.count
            defer { state.waiting.removeAll { $0.count <= count } }
            return state.waiting.filter { $0.count <= count }.map(\.arrived)
        }
        for arrived in ready { arrived(()) }
    }

    /// Returns once `count` outcomes have been heard.
    func waitFor(_ count: Int) async {
        await event { (arrived: @escaping @Sendable (()) -> Void) in
            let now = state.withLock { state -> Bool in
                if state.outcomes.count >= count { return true }
                state.waiting.append((count, arrived))
                return false
            }
            if now { arrived(()) }
        }
    }
}

/// A transport that counts the times it was shut down, over another.
private final class ShutdownCounting: HTTPTransport {
    let base: HoldingTransport
    private let count = Locked(0)
    var shutdowns: Int { count.withLock { $0 } }

    init(_ base: HoldingTransport) {
        self.base = base
    }

    func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        base.send(request, progress: progress, completion: completion)
    }

    func shutdown() {
        count.withLock { $0 += 1 }
    }
}

/// A persistent store that counts its flushes and keeps nothing.
private final class FlushCounting: ResponseCache.PersistentStore {
    private let count = Locked(0)
    var flushes: Int { count.withLock { $0 } }
    func response(for key: ResponseCache.Key) -> ResponseCache.StoredResponse? { nil }
    func save(_ response: ResponseCache.StoredResponse) {}
    func remove(_ scope: ResponseCache.Scope) {}
    var usage: ResponseCache.Usage { ResponseCache.Usage(entries: 0, bytes: 0) }
    func flush() { count.withLock { $0 += 1 } }
}

/// A proxy's graceful shutdown, on its clock (a test's) and a transport that holds every
/// request until told: new loads refused, loads in flight let finish until the deadline, the
/// rest ended once with the shutdown's error, then the transport stopped and the caches flushed.
@Suite("Graceful shutdown", .timeLimit(.minutes(1)))
struct ShutdownTests {
    private struct Setup {
        let clock = ManualLoadClock()
        let holding = HoldingTransport()
        let transport: ShutdownCounting
        let proxy: APIProxy
        let registry = ServiceRegistry(processEnvironment: [:])
        /// What the proxy logged.
        let logged = Locked<[(Logger.Level, String)]>([])

        init() {
            transport = ShutdownCounting(holding)
            registry.register(BackendService())
            proxy = APIProxy(
                transport: transport, logger: Logger(label: "shutdown", factory: { [logged] _ in CapturingLogHandler(messages: logged) }),
                retryBudget: RetryPolicy.Budget(),
                offlineAfterFailures: 2, loadExecutor: .automatic, recorder: nil, observers: [], clock: clock)
        }

        func manager(_ delegate: Outcomes? = nil) -> APIManager<NoContent> {
            let manager = APIManager(Endpoint<NoContent>(service: "backend", path: "orders"), proxy: proxy, registry: registry)
            manager.delegate = delegate
            manager.callbackExecutor = .immediate
            return manager
        }

        /// A load through each face, both sent and held: the delegate face's manager (which
        /// the test keeps: a manager released cancels its loads) and what its delegate hears,
        /// and the awaiting task.
        func twoLoadsInFlight() async -> (delegateFace: APIManager<NoContent>, heard: Outcomes, asyncFace: Task<APIResponse<NoContent>, any Error>) {
            let heard = Outcomes()
            let delegateFace = manager(heard)
            delegateFace.loadData()
            let asyncFace = Task { try await manager().load() }
            await holding.waitUntilSent(2)
            return (delegateFace, heard, asyncFace)
        }
    }

    @Test func aLoadAfterTheShutdownIsRefusedWithoutSendingThroughEitherFace() async throws {
        let setup = Setup()
        await setup.proxy.shutdown()
        #expect(setup.proxy.isShutDown)
        #expect(setup.transport.shutdowns == 1)

        let error = await #expect(throws: APIError.self) { try await setup.manager().load() }
        #expect(error?.kind == .shutDown)
        #expect(error?.attempts == 0)
        #expect(error?.message.contains("shut down") == true)

        let heard = Outcomes()
        let manager = setup.manager(heard)
        manager.loadData()
        await heard.waitFor(1)
        guard case .failure(let delegated) = heard.all.first else { Issue.record("the delegate heard \(heard.all)"); return }
        #expect(delegated.kind == .shutDown)
        #expect(setup.holding.sent == 0)
        #expect(setup.proxy.loadsInFlight.isEmpty)
        // A second shutdown is the same one: done already.
        await setup.proxy.shutdown()
        #expect(setup.transport.shutdowns == 1)
    }

    @Test func loadsInFlightFinishWithinTheDeadlineAndNewOnesAreRefused() async throws {
        let setup = Setup()
        let (delegateFace, heard, asyncFace) = await setup.twoLoadsInFlight()

        let shutdown = Task { await setup.proxy.shutdown(deadline: .seconds(30)) }
        // The shutdown waits for the deadline on the proxy's clock.
        #expect(await setup.clock.waitUntilWaiting() == [.seconds(30)])
        let refused = await #expect(throws: APIError.self) { try await setup.manager().load() }
        #expect(refused?.kind == .shutDown)
        #expect(setup.transport.shutdowns == 0)

        setup.holding.answerAll(with: 204)
        await shutdown.value
        #expect(try await asyncFace.linkedValue.statusCode == 204)
        await heard.waitFor(1)
        #expect(heard.all.map { try? $0.get() } == [204])
        #expect(setup.holding.sent == 2)
        #expect(setup.transport.shutdowns == 1)
        withExtendedLifetime(delegateFace) {}
    }

    @Test func loadsStillInFlightAtTheDeadlineEndOnceWithTheShutdownsError() async throws {
        let setup = Setup()
        let (delegateFace, heard, asyncFace) = await setup.twoLoadsInFlight()

        let shutdown = Task { await setup.proxy.shutdown(deadline: .seconds(5)) }
        #expect(await setup.clock.waitUntilWaiting() == [.seconds(5)])
        setup.clock.advance(by: .seconds(5))
        await shutdown.value

        let error = await #expect(throws: APIError.self) { try await asyncFace.linkedValue }
        #expect(error?.kind == .shutDown)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("the proxy shut down, and its deadline passed first") == true)
        await heard.waitFor(1)
        guard case .failure(let delegated) = heard.all.first else { Issue.record("the delegate heard \(heard.all)"); return }
        #expect(delegated.kind == .shutDown)
        await setup.holding.waitForCancelsAsked(2)
        #expect(setup.transport.shutdowns == 1)
        #expect(setup.proxy.loadsInFlight.isEmpty)

        // The answers that come after change nothing: each load ended once.
        setup.holding.answerAll(with: 204)
        #expect(heard.all.count == 1)
        withExtendedLifetime(delegateFace) {}
    }

    @Test func theLogSaysHowManyLoadsTheShutdownWaitsForAndCancels() async throws {
        let setup = Setup()
        let load = Task { try await setup.manager().load() }
        await setup.holding.waitUntilSent(1)
        let shutdown = Task { await setup.proxy.shutdown(deadline: .seconds(2)) }
        #expect(await setup.clock.waitUntilWaiting() == [.seconds(2)])
        setup.clock.advance(by: .seconds(2))
        await shutdown.value
        _ = await load.linkedResult
        let notices = setup.logged.withLock { $0 }.filter { $0.0 == .notice }.map(\.1)
        #expect(notices == [
            "shutting down: new loads are refused; 1 load in flight has 2 s to end",
            "shutdown deadline passed: cancelling 1 load still in flight",
            "shut down",
        ])
    }

    @Test func cancellingTheShutdownsCallerEndsTheLoadsAtOnce() async throws {
        let setup = Setup()
        let load = Task { try await setup.manager().load() }
        await setup.holding.waitUntilSent(1)
        let shutdown = Task { await setup.proxy.shutdown(deadline: .seconds(60)) }
        #expect(await setup.clock.waitUntilWaiting() == [.seconds(60)])
        shutdown.cancel()
        await shutdown.value
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .shutDown)
        #expect(setup.transport.shutdowns == 1)
    }

    @Test func theShutdownFlushesTheCachesPersistentStoresOnceTheLoadsHaveEnded() async throws {
        let setup = Setup()
        let store = FlushCounting()
        let cache = ResponseCache(persistentStore: store)
        let load = Task { try await setup.manager().load() }
        await setup.holding.waitUntilSent(1)
        let shutdown = Task { await setup.proxy.shutdown(deadline: .seconds(30)) }
        _ = await setup.clock.waitUntilWaiting()
        #expect(store.flushes == 0)
        setup.holding.answerAll(with: 204)
        await shutdown.value
        #expect(try await load.linkedValue.statusCode == 204)
        #expect(store.flushes == 1)
        withExtendedLifetime(cache) {}
    }

    @Test func theTransportsOwnShutdownEndsALoadWithTheShutdownKind() {
        let error = APIError.sending(TransportError(.transportShutDown, url: "https://backend.test", detail: "stopped"), id: LoadID(rawValue: 7), service: "backend", path: "orders")
        #expect(error.kind == .shutDown)
        #expect(!error.isCancellation)
    }

    /// A load sent and held, and a running `ServiceGroup` of the proxy's lifecycle service.
    private static func groupWithALoadInFlight(
        _ setup: Setup
    ) async -> (load: Task<APIResponse<NoContent>, any Error>, group: ServiceGroup, running: Task<Void, any Error>) {
        let load = Task { try await setup.manager().load() }
        await setup.holding.waitUntilSent(1)
        let group = ServiceGroup(
            services: [APIProxyService(proxy: setup.proxy, shutdownDeadline: .seconds(30))],
            logger: Logger(label: "group", factory: { _ in SwiftLogNoOpLogHandler() }))
        return (load, group, Task { try await group.run() })
    }

    /// The lifecycle product: a `ServiceGroup`'s graceful shutdown shuts the proxy down — the
    /// load in flight finishes, a new one is refused — and the group's `run` returns after.
    @Test func aServiceGroupsGracefulShutdownShutsTheProxyDown() async throws {
        let setup = Setup()
        let (load, group, running) = await Self.groupWithALoadInFlight(setup)
        #expect(!setup.proxy.isShutDown)
        await group.triggerGracefulShutdown()
        #expect(await setup.clock.waitUntilWaiting() == [.seconds(30)])
        #expect(setup.proxy.isShutDown)
        let refused = await #expect(throws: APIError.self) { try await setup.manager().load() }
        #expect(refused?.kind == .shutDown)
        setup.holding.answerAll(with: 204)
        try await running.linkedValue
        #expect(try await load.linkedValue.statusCode == 204)
        #expect(setup.transport.shutdowns == 1)
    }

    /// A group that cancels its services instead ends the loads in flight at once.
    @Test func aServiceGroupsCancellationEndsTheLoadsAtOnce() async throws {
        let setup = Setup()
        let (load, _, running) = await Self.groupWithALoadInFlight(setup)
        running.cancel()
        _ = await running.linkedResult
        let error = await #expect(throws: APIError.self) { try await load.linkedValue }
        #expect(error?.kind == .shutDown)
        #expect(setup.transport.shutdowns == 1)
    }
}
