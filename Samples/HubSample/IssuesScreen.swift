import AIFNetworking

/// A screen as an app writes one: on the main actor, the param source and delegate of a paged
/// manager (the delegate face). Its filter — the labels it shows — reaches every page, and it
/// loads the next page as each one arrives, until the last. It shows 5 issues a page.
@MainActor
final class IssuesScreen: MainActorParamSource, MainActorManagerDelegate {
    let list = PagedAPIManager(.issues, paging: Paging.Settings(style: .link, size: 5, sizeParameter: "per_page"))
    let labels: [String]
    private(set) var rows: [String] = []
    private(set) var failure: String?
    private var shown: CheckedContinuation<Void, Never>?

    init(labels: [String]) {
        self.labels = labels
        list.mainActorParamSource = self
        list.mainActorDelegate = self
    }

    /// Loads the first page, then the rest, and returns once the screen shows them all.
    func open() async {
        await withCheckedContinuation { continuation in
            shown = continuation
            list.loadFirstPage()
        }
    }

    func parameters(for manager: APIManager<[Issue]>) -> Parameters {
        cups.merging(["labels": .array(labels.map(JSONValue.string))]) { _, new in new }
    }

    func manager(_ manager: APIManager<[Issue]>, didSucceedWith response: APIResponse<[Issue]>) {
        rows += response.content.map { "#\($0.number) \($0.title)" }
        if list.loadNextPage() == nil { finishShowing() }
    }

    func manager(_ manager: APIManager<[Issue]>, didFailWith error: APIError) {
        failure = error.message
        finishShowing()
    }

    private func finishShowing() {
        shown?.resume()
        shown = nil
    }
}
