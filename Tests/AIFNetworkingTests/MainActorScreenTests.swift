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
    var titles: [String] = []
    var failures: [String] = []

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

    /// Polls `condition` on the main actor (letting the main queue run between polls), for at
    /// most ten seconds.
    func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}

@Suite("APIManager: a main-actor screen as param source and delegate")
struct MainActorScreenTests {
    @Test @MainActor func aScreenLoadsAndHearsTyped() async throws {
        let stack = try await ShopStack.make()
        let screen = DetailScreen(detail: stack.manager("goods/{id}", Goods.self))
        screen.detail.loadData()
        screen.goodsID = -5
        screen.detail.loadData()
        #expect(await screen.eventually { screen.titles.count + screen.failures.count == 2 })
        #expect(screen.titles.count == 1)
        #expect(screen.failures == ["HTTP status"])
    }

    /// With another callback executor the screen still hears on the main actor.
    @Test @MainActor func aScreenHearsOnTheMainActorWhateverTheExecutor() async throws {
        let stack = try await ShopStack.make()
        let screen = DetailScreen(detail: stack.manager("goods/{id}", Goods.self))
        screen.detail.callbackExecutor = .immediate
        screen.detail.loadData()
        #expect(await screen.eventually { screen.titles.count == 1 })
    }

    /// A load started off the main actor cannot ask a main-actor source: it fails at once,
    /// saying why, and the screen hears the failure.
    @Test @MainActor func aLoadStartedElsewhereFailsClearly() async throws {
        let stack = try await ShopStack.make()
        let screen = DetailScreen(detail: stack.manager("goods/{id}", Goods.self))
        let detail = screen.detail
        _ = await Task.detached { detail.loadData() }.value
        #expect(await screen.eventually { screen.failures.count == 1 })
        #expect(screen.failures == ["configuration"])
        #expect(detail.lastError?.message.contains("main actor") == true)
    }
}
