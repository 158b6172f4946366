import AIFNetworking
import DemoServer

/// A screen as an app writes one: on the main actor, with plain stored properties, the param
/// source and delegate of its detail manager, typed to `Goods` — no casts, no locks.
@MainActor
final class GoodsScreen: MainActorParamSource, MainActorManagerDelegate {
    let detail = GoodsDetailManager()
    var goodsID: Int
    private(set) var title = "loading…"
    private var shown: CheckedContinuation<Void, Never>?

    init(goodsID: Int) {
        self.goodsID = goodsID
        detail.mainActorParamSource = self
        detail.mainActorDelegate = self
    }

    /// Loads the goods (`loadData()`, the delegate face) and returns once the screen shows it.
    func open() async {
        await withCheckedContinuation { continuation in
            shown = continuation
            detail.loadData()
        }
    }

    func parameters(for manager: APIManager<Goods>) -> Parameters { ["id": .integer(goodsID)] }

    func manager(_ manager: APIManager<Goods>, didSucceedWith response: APIResponse<Goods>) {
        title = "\(response.content.title), \(response.content.priceCents) cents"
        finishShowing()
    }

    func manager(_ manager: APIManager<Goods>, didFailWith error: APIError) {
        title = "could not load goods \(goodsID): \(error.message)"
        finishShowing()
    }

    private func finishShowing() {
        shown?.resume()
        shown = nil
    }
}
