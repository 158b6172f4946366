@_spi(Performance) @testable import AIFNetworking
@testable import TestSupport
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

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
            offlineAfterFailures: 2, loadExecutor: .loadExecutor, recorder: nil, observers: [], clock: ManualLoadClock())
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

    @Test func cancellingOneLoadAboardLeavesTheOthers() async throws {
        let transport = HoldingTransport()
        let manager = Self.manager(transport)
        let heard = Delivery()
        manager.delegate = heard
        manager.callbackExecutor = .immediate
        let ids = (0..<3).map { _ in manager.loadData() }
        await Self.aboard(3, manager, transport)
        manager.cancelLoad(ids[1])
        transport.answerAll(with: 204)
        #expect(await heard.statuses(count: 2) == [ids[0]: 204, ids[2]: 204])
        #expect(manager.loadsInFlight.isEmpty)
        // The cancelled load ended without a delegate call, and its transfer went on for the others.
        #expect(heard.heard.count == 2)
        #expect(transport.cancelsAsked == 0)
        #expect(transport.sent == 1)
    }

    @Test func cancellingEveryLoadAboardStopsTheTransfer() async throws {
        let transport = HoldingTransport()
        let manager = Self.manager(transport)
        let loads = (0..<3).map { _ in Task { try await manager.load() } }
        await Self.aboard(3, manager, transport)
        manager.cancelAllLoads()
        for load in loads {
            #expect((await load.linkedResult.failure as? APIError)?.kind == .cancelled)
        }
        await transport.waitForCancelsAsked(1)
        #expect(manager.proxy.coalescer.flightCount == 0)
        #expect(manager.proxy.loadsInFlight.isEmpty)
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

/// What a delegate heard: the status of each load (a failure's is -1).
private final class Delivery: APIManagerDelegate {
    private let state = Locked<(heard: [LoadID: Int], waiting: (count: Int, told: @Sendable ([LoadID: Int]) -> Void)?)>(([:], nil))

    /// The statuses heard so far.
    var heard: [LoadID: Int] { state.withLock { $0.heard } }

    /// The statuses, once `count` loads have been delivered (one waiter at a time).
    func statuses(count: Int) async -> [LoadID: Int]? {
        await event { (told: @escaping @Sendable ([LoadID: Int]) -> Void) in
            let now = state.withLock { state -> [LoadID: Int]? in
                guard state.heard.count < count else { return state.heard }
                state.waiting = (count, told)
                return nil
            }
            if let now { told(now) }
        }
    }

    /// The status of the one load delivered first.
    func status() async -> Int? {
        await statuses(count: 1)?.values.first
    }

    private func hear(_ id: LoadID, _ code: Int) {
        let (waiting, heard) = state.withLock { state -> ((@Sendable ([LoadID: Int]) -> Void)?, [LoadID: Int]) in
            state.heard[id] = code
            guard let waiting = state.waiting, state.heard.count >= waiting.count else { return (nil, state.heard) }
            state.waiting = nil
            return (waiting.told, state.heard)
        }
        waiting?(heard)
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { hear(response.loadID, response.statusCode) }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { hear(error.loadID, -1) }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
