@_spi(Performance) @testable import AIFNetworking
@testable import TestSupport
import Foundation
import Logging
import Testing

private struct CoalescedService: Service {
    var name: ServiceName = "coalesced"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: URL(string: "https://api.coalesced.test")!, apiVersion: "v1")]
    }
}

/// Identical loads in flight share one transfer, and each goes on on its own once it lands —
/// whichever face started the flight, and whether or not the load that started it is still
/// there. No socket and no real time: a transport that holds each request until the test
/// answers it, and the coalescer's word on how many loads are aboard.
@Suite("Coalescing: one transfer, each load goes on on its own", .timeLimit(.minutes(1)))
struct CoalescingTests {
    private static func manager(_ transport: HoldingTransport) -> APIManager<NoContent> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(CoalescedService())
        let proxy = APIProxy(
            transport: transport, logger: Logger(label: "coalesced", factory: { _ in SwiftLogNoOpLogHandler() }), retryBudget: RetryPolicy.Budget(),
            offlineAfterFailures: 2, loadPlacement: .loadExecutor, recorder: nil, observers: [], clock: ManualLoadClock())
        return APIManager(Endpoint<NoContent>(service: "coalesced", path: "goods", coalescesIdenticalRequests: true), proxy: proxy, registry: registry)
    }

    /// Returns once `count` loads are aboard flights, and the flight's request has reached the
    /// transport.
    private static func aboard(_ count: Int, _ manager: APIManager<NoContent>, _ transport: HoldingTransport) async {
        await event { (reached: @escaping @Sendable (()) -> Void) in manager.proxy.coalescer.whenAboard(count) { reached(()) } }
        await transport.waitUntilSent(1)
    }

    @Test func asyncLoadsAboardOneFlightEachGetTheAnswer() async throws {
        let transport = HoldingTransport()
        let manager = Self.manager(transport)
        let loads = (0..<4).map { _ in Task { try await manager.load() } }
        await Self.aboard(4, manager, transport)
        transport.answerAll(with: 204)
        for load in loads {
            #expect(try await load.linkedValue.statusCode == 204)
        }
        #expect(transport.sent == 1)
    }

    @Test func theLoadThatStartedTheFlightMayLeaveBeforeItLands() async throws {
        let transport = HoldingTransport()
        let manager = Self.manager(transport)
        let first = Task { try await manager.load() }
        await Self.aboard(1, manager, transport)
        let others = (0..<2).map { _ in Task { try await manager.load() } }
        await Self.aboard(3, manager, transport)
        first.cancel()
        let left = await first.linkedResult
        #expect((left.failure as? APIError)?.kind == .cancelled)
        // The flight lands where the first load's steps ran; it has gone, the others have not.
        transport.answerAll(with: 204)
        for load in others {
            #expect(try await load.linkedValue.statusCode == 204)
        }
        #expect(transport.sent == 1)
    }

    @Test func delegateAndAsyncLoadsShareAFlight() async throws {
        let transport = HoldingTransport()
        let manager = Self.manager(transport)
        let heard = Delivery()
        manager.delegate = heard
        manager.callbackExecutor = .immediate
        manager.loadData()
        await Self.aboard(1, manager, transport)
        let awaited = Task { try await manager.load() }
        await Self.aboard(2, manager, transport)
        transport.answerAll(with: 204)
        #expect(try await awaited.linkedValue.statusCode == 204)
        #expect(await heard.status() == 204)
        #expect(transport.sent == 1)
    }
}

/// What a delegate heard: the status of the one load it waits for.
private final class Delivery: APIManagerDelegate {
    private let status = Locked<(heard: Int?, waiting: (@Sendable (Int) -> Void)?)>((nil, nil))

    /// The delivered status (a failure's is -1), once the load has ended.
    func status() async -> Int? {
        await event { (heard: @escaping @Sendable (Int) -> Void) in
            let now = status.withLock { state -> Int? in
                if state.heard == nil { state.waiting = heard }
                return state.heard
            }
            if let now { heard(now) }
        }
    }

    private func hear(_ code: Int) {
        let waiting = status.withLock { state in
            state.heard = code
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?(code)
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { hear(response.statusCode) }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { hear(-1) }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
