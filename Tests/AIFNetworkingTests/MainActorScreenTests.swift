@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing

/// A screen as the original AIFNetworking user writes it: a main-actor class with plain stored
/// properties, param source and delegate of its one manager, typed — no casts, no
/// `@preconcurrency`, no locks.
@MainActor
private final class DetailScreen: MainActorManagerDelegate, MainActorParamSource {
    let detail: APIManager<Goods>
    var goodsID = 1
    var titles: [String] = [] { didSet { tellWaiting() } }
    var failures: [String] = [] { didSet { tellWaiting() } }
    /// Tests waiting until the screen has heard so many outcomes.
    private var waiting: [(outcomes: Int, tell: @Sendable (()) -> Void)] = []

    init(detail: APIManager<Goods>) {
        self.detail = detail
        detail.mainActorParamSource = self
        detail.mainActorDelegate = self
    }

    func parameters(for manager: APIManager<Goods>) -> Parameters { ["id": .integer(goodsID)] }

    func manager(_ manager: APIManager<Goods>, didSucceedWith response: APIResponse<Goods>) {
        MainActor.assertIsolated()
        titles.append(response.content.title)
    }

    func manager(_ manager: APIManager<Goods>, didFailWith error: APIError) {
        MainActor.assertIsolated()
        failures.append("\(error.kind)")
    }

    /// Returns once the screen has heard `count` outcomes, successes and failures together (or
    /// the test is cancelled, past its time limit).
    func waitForOutcomes(_ count: Int) async {
        await event { @Sendable [weak self] (tell: @escaping @Sendable (()) -> Void) in
            Task { @MainActor in self?.tell(tell, at: count) }
        }
    }

    /// Tells `tell` now when the screen has heard `count` outcomes, else once it has.
    private func tell(_ tell: @escaping @Sendable (()) -> Void, at count: Int) {
        if titles.count + failures.count >= count { tell(()) } else { waiting.append((count, tell)) }
    }

    private func tellWaiting() {
        let heard = titles.count + failures.count
        for wait in waiting where wait.outcomes <= heard { wait.tell(()) }
        waiting.removeAll { $0.outcomes <= heard }
    }
}

@Suite("APIManager: a main-actor screen as param source and delegate", .timeLimit(.minutes(2)))
struct MainActorScreenTests {
    @Test @MainActor func aScreenLoadsAndHearsTyped() async throws {
        let stack = try await ShopStack.make()
        let screen = DetailScreen(detail: stack.manager("goods/{id}", Goods.self))
        screen.detail.loadData()
        screen.goodsID = -5
        screen.detail.loadData()
        await screen.waitForOutcomes(2)
        #expect(screen.titles.count == 1)
        #expect(screen.failures == ["HTTP status"])
    }

    /// With another callback executor the screen still hears on the main actor.
    @Test @MainActor func aScreenHearsOnTheMainActorWhateverTheExecutor() async throws {
        let stack = try await ShopStack.make()
        let screen = DetailScreen(detail: stack.manager("goods/{id}", Goods.self))
        screen.detail.callbackExecutor = .immediate
        screen.detail.loadData()
        await screen.waitForOutcomes(1)
        #expect(screen.titles.count == 1)
    }

    /// A load started off the main actor cannot ask a main-actor source: it fails at once,
    /// saying why, and the screen hears the failure.
    @Test @MainActor func aLoadStartedElsewhereFailsClearly() async throws {
        let stack = try await ShopStack.make()
        let screen = DetailScreen(detail: stack.manager("goods/{id}", Goods.self))
        let detail = screen.detail
        _ = await Task.detached { detail.loadData() }.value
        await screen.waitForOutcomes(1)
        #expect(screen.failures == ["configuration"])
        #expect(detail.lastOutcome?.failure?.message.contains("main actor") == true)
    }
}
