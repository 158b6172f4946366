@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

@Suite("APIManager: cancellation and exactly-once endings")
struct ManagerCancellationTests {
    /// A slow load, cancelled by `cancel` once the server holds its request, calls neither
    /// delegate method, shows the plugins a cancellation, and frees the proxy's table.
    private func expectCancelled(_ cancel: @Sendable (ShopStack, ShopManager<NoContent>, LoadID) -> Void) async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("slow", NoContent.self)
        let recorder = Recorder(events: manager.events)
        manager.delegate = recorder
        manager.plugins.append(recorder)
        manager.callbackExecutor = .immediate
        manager.group = "screen-1"
        let started = ContinuousClock.now
        let tag = Arrivals.tag()
        let id = manager.loadData(with: ["ms": 20000, "tag": .string(tag)])
        #expect(manager.isLoading)
        #expect(stack.proxy.isInFlight(id))
        #expect(manager.loadsInFlight == [id])
        #expect(await Arrivals.shared.wait(for: tag))
        cancel(stack, manager, id)
        // The plugins hear the end after the delegates would have (and the load is delivered once).
        await recorder.wait(for: "plugin.loadDidEnd")
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(recorder.deliveries == 0)
        #expect(!manager.isLoading)
        #expect(stack.proxy.loadsInFlight.isEmpty)
        #expect(manager.events.withLock { $0.filter { $0.hasPrefix("plugin.loadDidEnd") } } == ["plugin.loadDidEnd(cancelled)"])
    }

    /// A transfer under way in libcurl, cancelled by its load's ID. (By a list, a group and
    /// all of a manager's, an async load by its ID, a load that has ended: `LoadEngineTests`,
    /// with no socket and no sleep.)
    @Test(.timeLimit(.minutes(2)))
    func cancelByID() async throws {
        try await expectCancelled { _, manager, id in manager.cancelLoad(id) }
    }

    @Test(.timeLimit(.minutes(2)))
    func cancellingTheTaskCancelsTheLoad() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("slow", NoContent.self)
        let started = ContinuousClock.now
        let tag = Arrivals.tag()
        let task = Task { try await manager.load(["ms": 20000, "tag": .string(tag)]) }
        #expect(await Arrivals.shared.wait(for: tag))
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - started < .seconds(8))
        guard case .failure(let error as APIError) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.isCancellation)
        #expect(stack.proxy.loadsInFlight.isEmpty)
        #expect(manager.events.withLock { $0.last } == "manager.loadDidEnd(cancelled)")
    }

    @Test func aTaskCancelledBeforeLoadingSendsNothing() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await manager.load(["id": 1])
        }
        let result = await task.result
        #expect((try? result.get()) == nil)
        #expect(stack.proxy.loadsInFlight.isEmpty)
    }

    /// Over the counting wrapper, completions come one by one on the transport's thread and
    /// hop to the load executor; over the `CurlTransport` itself, they come in its batches.
    @Test(.timeLimit(.minutes(3)), arguments: [false, true])
    func aThousandConcurrentLoadsAcrossManagersEachEndExactlyOnce(overLibcurlDirectly: Bool) async throws {
        // A server and a transport of its own, at most 32 connections, so that a thousand loads
        // queue in the transport instead of flooding the shared demo server's accept queue
        // (under TSan, other tests then waited out their connect timeouts).
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 32 }
        defer { transport.shutdown() }
        let stack = try await ShopStack.make(
            faults: ShopFaults(), transport: transport, proxy: overLibcurlDirectly ? { _ in APIProxy(transport: transport) } : nil)
        defer { Task { await stack.servers.online.stop() } }
        let recorder = Recorder()
        let managers: [any LoadStarter] = [
            stack.manager("goods/{id}", Goods.self), stack.manager("goods", GoodsPage.self),
            stack.manager("coupons/{code}", NoContent.self), stack.manager("goods/{id}", Goods.self),
        ]
        for manager in managers { manager.attach(recorder) }
        var ids: [LoadID] = []
        var cancelledIDs: Set<LoadID> = []
        for index in 0..<1000 {
            let manager = managers[index % managers.count]
            let id = manager.start(index)
            ids.append(id)
            if index % 10 == 7 {
                manager.cancel(id)
                cancelledIDs.insert(id)
            }
        }
        #expect(Set(ids).count == 1000)
        #expect(ids == ids.sorted())
        // Each load's plugins hear its end after its delegate heard it, cancelled or not.
        await recorder.wait(for: "plugin.loadDidEnd", count: 1000)
        #expect(stack.proxy.loadsInFlight.isEmpty)
        var failed = 0
        for id in ids {
            let outcomes = recorder.outcome(id)
            if cancelledIDs.contains(id) {
                // A cancellation may lose the race against a load that had already ended.
                #expect(outcomes.count <= 1)
            } else {
                #expect(outcomes.count == 1, "request \(id) ended \(outcomes.count) times")
                if case .failure? = outcomes.first { failed += 1 }
            }
        }
        // Coupons other than WELCOME10 are vetoed; the rest succeed.
        #expect(failed == (0..<1000).filter { $0 % 4 == 2 && $0 % 10 != 7 }.count)
    }
}

/// Starts loads on managers of different content types.
protocol LoadStarter: Sendable {
    func attach(_ recorder: Recorder)
    func start(_ index: Int) -> LoadID
    func cancel(_ id: LoadID)
}

extension ShopManager: LoadStarter {
    func attach(_ recorder: Recorder) {
        delegate = recorder
        plugins = [recorder]
        callbackExecutor = .immediate
    }

    func start(_ index: Int) -> LoadID {
        switch path {
        case "goods/{id}": loadData(with: ["id": .integer(index % 1003 + 1)])
        case "goods": loadData(with: ["page": .integer(index % 50 + 1)])
        default: loadData(with: ["code": .string("EXPIRED\(index)")])
        }
    }

    func cancel(_ id: LoadID) {
        cancelLoad(id)
    }
}
