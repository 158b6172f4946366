@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

/// Records what a batch or chain delegate heard, and where.
private final class CompositeRecorder: APIBatch.Delegate, APIChainDelegate {
    let batches = Collected<APIBatch.Outcome>()
    let chains = Collected<String>()

    func batch(_ batch: APIBatch, didFinishWith outcome: APIBatch.Outcome) {
        MainActor.assertIsolated("the batch delegate runs on the main actor by default")
        batches.append(outcome)
    }

    func chain<Last>(didFinishWith outcome: APIChain<Last>.Outcome) {
        let text = switch outcome {
        case .finished(let response): "finished \(type(of: response.content))"
        case .stopped(let step): "stopped at \(step)"
        case .failed(let step, let error): "failed at \(step): \(error.kind == .httpStatus ? "httpStatus" : "other")"
        }
        chains.append(text)
    }
}

@Suite("Batches and chains of loads", .timeLimit(.minutes(2)))
struct BatchAndChainTests {
    // MARK: Batches

    @Test func aBatchGivesEachMembersResultInOrder() async throws {
        let stack = try await ShopStack.make()
        let batch = APIBatch(proxy: stack.proxy)
        let detail = batch.add(stack.manager("goods/{id}", Goods.self), parameters: ["id": 7])
        let missing = batch.add(stack.manager("goods/{id}", Goods.self), parameters: ["id": -5])
        let page = batch.add(stack.manager("goods", GoodsPage.self), parameters: ["page": 2, "page_size": 5])
        #expect(batch.count == 3)
        let outcome = await batch.load()
        #expect(outcome.count == 3)
        #expect(try outcome.result(of: detail).get().content.id == 7)
        #expect(try outcome.result(of: page).get().content.items.map(\.id) == [6, 7, 8, 9, 10])
        guard case .failure(let error) = outcome.result(of: missing) else { Issue.record("goods -5 loaded"); return }
        #expect(error.kind == .httpStatus || error.kind == .serviceVeto, "\(error)")
        #expect(outcome.errors.map { $0 == nil } == [true, false, true])
        #expect(!outcome.succeeded)
        #expect(stack.proxy.loadsInFlight.isEmpty)
    }

    @Test func aMemberOfAnotherBatchIsAnErrorNotACrash() async throws {
        let stack = try await ShopStack.make()
        let one = APIBatch(proxy: stack.proxy)
        let other = APIBatch(proxy: stack.proxy)
        let foreign = other.add(stack.manager("goods/{id}", Goods.self), parameters: ["id": 1])
        let outcome = await one.load()
        #expect(outcome.succeeded && outcome.count == 0)
        guard case .failure(let error) = outcome.result(of: foreign) else { Issue.record("read another batch's member"); return }
        #expect(error.kind == .configuration)
    }

    @Test func failFastCancelsTheRestAtTheFirstFailure() async throws {
        let stack = try await ShopStack.make()
        let batch = APIBatch(failFast: true, proxy: stack.proxy)
        let slow = batch.add(stack.manager("slow", Slept.self), parameters: ["ms": 30_000])
        batch.add(stack.manager("goods/{id}", Goods.self), parameters: ["id": -5])
        let start = ContinuousClock.now
        let outcome = await batch.load()
        #expect(ContinuousClock.now - start < .seconds(15))
        guard case .failure(let error) = outcome.result(of: slow) else { Issue.record("the slow member was not cancelled"); return }
        #expect(error.kind == .cancelled)
        #expect(outcome.failures.count == 2)
    }

    @Test func withoutFailFastEveryMemberRunsToItsEnd() async throws {
        let stack = try await ShopStack.make()
        let batch = APIBatch(proxy: stack.proxy)
        let slow = batch.add(stack.manager("slow", Slept.self), parameters: ["ms": 300])
        batch.add(stack.manager("goods/{id}", Goods.self), parameters: ["id": -5])
        let outcome = await batch.load()
        #expect(try outcome.result(of: slow).get().content.sleptMs == 300)
    }

    @Test func cancellingTheBatchByItsIDCancelsEveryMemberAndTellsNoOne() async throws {
        let stack = try await ShopStack.make()
        let batch = APIBatch(proxy: stack.proxy)
        for _ in 0..<3 { batch.add(stack.manager("slow", Slept.self), parameters: ["ms": 10_000]) }
        let recorder = CompositeRecorder()
        let id = batch.start(delegate: recorder)
        _ = await stack.transport.sends.wait(count: 3)
        #expect(stack.proxy.loadsInFlight.count == 4)   // the batch and its three members
        stack.proxy.cancel(id)
        // Every load has left the table, each composite's delivery decided before it left; a
        // delivery made would have run on the main actor by the end of this hop.
        await stack.proxy.noLoadsInFlight()
        await MainActor.run {}
        #expect(recorder.batches.values.isEmpty)
    }

    @Test func theDelegateHearsTheOutcomeOnceOnItsExecutor() async throws {
        let stack = try await ShopStack.make()
        let batch = APIBatch(proxy: stack.proxy)
        let detail = batch.add(stack.manager("goods/{id}", Goods.self), parameters: ["id": 3])
        let recorder = CompositeRecorder()
        let id = batch.start(delegate: recorder)
        _ = await recorder.batches.wait(count: 1)
        await stack.proxy.noLoadsInFlight()
        await MainActor.run {}
        let heard = recorder.batches.values
        #expect(heard.count == 1)
        #expect(heard.first?.id == id)
        #expect(try heard.first?.result(of: detail).get().content.id == 3)
    }

    @Test func aMemberGoesThroughItsManagersWholePipeline() async throws {
        // The cache answers the second run; the manager's hooks see both loads.
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var settings = $0; settings.cache = true; return settings }
        let batch = APIBatch(proxy: stack.proxy)
        let member = batch.add(manager, parameters: ["id": 11])
        let first = await batch.load()
        let second = await batch.load()
        #expect(try !first.result(of: member).get().isFromCache)
        #expect(try second.result(of: member).get().isFromCache)
        #expect(first.id != second.id)
        #expect(stack.transport.sent == 1)
    }

    // MARK: Chains

    @Test func eachStepIsBuiltFromTheOneBefore() async throws {
        let stack = try await ShopStack.make()
        let chain = APIChain(stack.manager("goods", GoodsPage.self), parameters: ["page": 3, "page_size": 4])
            .then(stack.manager("goods/{id}", Goods.self)) { page in page.content.items.last.map { ["id": .integer($0.id)] } }
            .then(stack.manager("slow", Slept.self)) { goods in ["ms": .integer(goods.content.id)] }
        #expect(chain.steps == 3)
        let outcome = await chain.load()
        // Page 3 of 4 ends with goods 12, which makes the last step sleep 12 ms.
        #expect(outcome.response?.content.sleptMs == 12)
        #expect(stack.transport.sent == 3)
        #expect(stack.proxy.loadsInFlight.isEmpty)
    }

    @Test func aStepThatDeclinesStopsTheChain() async throws {
        let stack = try await ShopStack.make()
        let chain = APIChain(stack.manager("goods", GoodsPage.self), parameters: ["page": 999])
            .then(stack.manager("goods/{id}", Goods.self)) { page in page.content.items.first.map { ["id": .integer($0.id)] } }
            .then(stack.manager("goods/{id}", Goods.self)) { _ in ["id": 1] }
        let outcome = await chain.load()
        guard case .stopped(let step) = outcome else { Issue.record("not stopped: \(outcome)"); return }
        #expect(step == 2)
        #expect(stack.transport.sent == 1)
    }

    @Test func aFailedStepEndsTheChainThere() async throws {
        let stack = try await ShopStack.make()
        let ran = Locked(false)
        let chain = APIChain(stack.manager("goods/{id}", Goods.self), parameters: ["id": 1])
            .then(stack.manager("goods/{id}", Goods.self)) { _ in ["id": -5] }
            .then(stack.manager("goods/{id}", Goods.self)) { _ in
                ran.withLock { $0 = true }
                return ["id": 2]
            }
        guard case .failed(let step, let error) = await chain.load() else { Issue.record("did not fail"); return }
        #expect(step == 2)
        #expect(error.kind != .cancelled)
        #expect(!ran.withLock { $0 })
        #expect(stack.transport.sent == 2)
    }

    @Test func cancellingTheChainStopsTheStepUnderWayAndStartsNoOther() async throws {
        let stack = try await ShopStack.make()
        let ran = Locked(false)
        let chain = APIChain(stack.manager("goods/{id}", Goods.self), parameters: ["id": 1])
            .then(stack.manager("slow", Slept.self)) { _ in ["ms": 10_000] }
            .then(stack.manager("goods/{id}", Goods.self)) { _ in
                ran.withLock { $0 = true }
                return ["id": 2]
            }
        let recorder = CompositeRecorder()
        let id = chain.start(delegate: recorder, on: .immediate)
        _ = await stack.transport.sends.wait(count: 2)
        stack.proxy.cancel(id)
        // Told on `.immediate`: a delivery would have been made before the chain left the table.
        await stack.proxy.noLoadsInFlight()
        #expect(!ran.withLock { $0 })
        #expect(recorder.chains.values.isEmpty)
        #expect(stack.transport.sent == 2)

        // The async face: the outcome names the cancelled step.
        let task = Task { await chain.load() }
        _ = await stack.transport.sends.wait(count: 4)
        task.cancel()
        guard case .failed(let step, let error) = await task.value else { Issue.record("not cancelled"); return }
        #expect(step == 2 && error.kind == .cancelled)
        #expect(!ran.withLock { $0 })
    }

    @Test func theChainDelegateHearsHowItEnded() async throws {
        let stack = try await ShopStack.make()
        let recorder = CompositeRecorder()
        APIChain(stack.manager("goods/{id}", Goods.self), parameters: ["id": 1])
            .then(stack.manager("goods", GoodsPage.self)) { _ in ["page": 1] }
            .start(delegate: recorder, on: .immediate)
        APIChain(stack.manager("goods/{id}", Goods.self), parameters: ["id": -5]).start(delegate: recorder, on: .immediate)
        #expect(Set(await recorder.chains.wait(count: 2)) == ["finished GoodsPage", "failed at 1: httpStatus"])
    }
}

/// A batch's cancellation decided with no socket and no sleep: its members' requests wait in a
/// transport that holds them, and the test waits for them to arrive.
@Suite("Batches: cancellation, no socket", .timeLimit(.minutes(1)))
struct BatchCancellationTests {
    private struct HeldService: Service {
        var name: ServiceName = "held"
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
            [.online: ServiceEnvironment(baseURL: URL(string: "https://api.held.test")!)]
        }
    }

    private let transport = HoldingTransport()
    private let proxy: APIProxy
    private let registry = ServiceRegistry(processEnvironment: [:])

    init() {
        proxy = APIProxy(transport: transport)
        registry.register(HeldService())
    }

    private func member() -> APIManager<NoContent> {
        APIManager(Endpoint<NoContent>(service: "held", path: "goods"), proxy: proxy, registry: registry)
    }

    /// Cancelling a group reaches a batch started in it: its member ends cancelled.
    @Test func cancellingTheGroupReachesTheBatch() async throws {
        let batch = APIBatch(group: "screen", proxy: proxy)
        batch.add(member())
        let task = Task { await batch.load() }
        await transport.waitUntilSent(1)
        proxy.cancel(group: "screen")
        let outcome = await task.linkedValue
        #expect(outcome.failures.map(\.kind) == [.cancelled])
        #expect(proxy.loadsInFlight.isEmpty)
    }

    /// Cancelling the task that awaits a batch cancels every member under way.
    @Test func cancellingTheAwaitingTaskCancelsTheMembers() async throws {
        let batch = APIBatch(proxy: proxy)
        batch.add(member())
        batch.add(member())
        let task = Task { await batch.load() }
        await transport.waitUntilSent(2)
        #expect(proxy.loadsInFlight.count == 3)  // the batch and its two members
        task.cancel()
        let outcome = await task.linkedValue
        #expect(outcome.failures.map(\.kind) == [.cancelled, .cancelled])
        #expect(proxy.loadsInFlight.isEmpty)
    }
}

extension APIProxy {
    /// Returns once no load is in flight (or the waiting test is cancelled past its time limit).
    fileprivate func noLoadsInFlight() async {
        await event { (tell: @escaping @Sendable (()) -> Void) in whenNoLoadsInFlight { tell(()) } }
    }
}
