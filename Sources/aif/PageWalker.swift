import AIFNetworking
import Foundation

/// `--all-pages`: loads page after page of a paged endpoint and prints each item as one JSON
/// line, as it comes.
///
/// The page number goes in `pageParameter`, from the one given (1 by default) up — unless a
/// response links its next page (`Link: <…>; rel="next"`), which is then loaded as linked. A
/// page's items are the `itemsKey` member of its JSON object, or the body when it is an array,
/// or the object's array member (the first by name, when it has several). The end comes as
/// ``Paging/State`` finds it: the body's `has_more`/`hasMore` or `total`, the `Link` and
/// `X-Total-Count` headers, an empty page, or a page shorter than a full one — the
/// `page_size`, `per_page` or `limit` asked for, or the server's cap when the first page came
/// back shorter. After `maxPages` pages with more to load it says so and fails
/// (``FailureClass/incomplete``).
struct PageWalker {
    var pageParameter: String
    var itemsKey: String?
    var maxPages: Int

    /// What the end-of-list rules read of a page.
    private struct Page: PageContent {
        var pageItemCount: Int
        var pageHasMore: Bool?
        var pageTotalCount: Int?
    }

    /// Loads and prints every page; `loaded` hears each page's response.
    func walk(_ manager: APIManager<NoContent>, parameters: Parameters, loaded: (APIResponse<NoContent>) -> Void) async throws {
        let first = try firstPage(parameters)
        let pageSize = ["page_size", "per_page", "limit"].lazy.compactMap { parameters[$0]?.textValue.flatMap(Int.init) }.first
        var state = Paging.State(
            style: .pageNumber(parameter: pageParameter, first: first), pageSize: pageSize ?? Int.max, pageSizeParameter: nil,
            endOfList: .hasMoreFlag)
        var page = first
        while let pageParameters = state.startNextPage() {
            guard state.loadedPages < maxPages else {
                throw CommandFailure(.incomplete, "stopped after \(maxPages) pages (--max-pages) with more to load: \(state.loadedItems) items printed")
            }
            let response: APIResponse<NoContent>
            if state.loadedPages > 0, let next = state.nextPageURL {
                response = try await manager.load(linked: next)
            } else {
                response = try await manager.load(parameters.merging(pageParameters) { _, page in page })
            }
            loaded(response)
            guard let body = try? JSONSerialization.jsonObject(with: response.data, options: .fragmentsAllowed) else {
                throw CommandFailure(.refused, "page \(page) is not JSON, so its items cannot be found")
            }
            let items = try self.items(of: body, page: page)
            var lines = Data()
            for item in items {
                lines.append(try JSONSerialization.data(withJSONObject: item, options: [.fragmentsAllowed, .withoutEscapingSlashes]))
                lines.append(UInt8(ascii: "\n"))
            }
            FileHandle.standardOutput.write(lines)
            let object = body as? [String: Any]
            let hasMore = (object?["has_more"] ?? object?["hasMore"]) as? Bool
            let total = (object?["total"] as? NSNumber)?.intValue
            state.pageLoaded(
                Page(pageItemCount: items.count, pageHasMore: hasMore ?? total.map { state.loadedItems + items.count < $0 }, pageTotalCount: total),
                headers: response.headers, url: response.request.url)
            page += 1
        }
    }

    /// The page given in the parameters, or 1.
    private func firstPage(_ parameters: Parameters) throws -> Int {
        guard let given = parameters[pageParameter] else { return 1 }
        guard let text = given.textValue, let page = Int(text) else { throw CommandFailure(.configuration, "--param \(pageParameter) must be a page number") }
        return page
    }

    /// A page's items.
    private func items(of body: Any, page: Int) throws -> [Any] {
        if let items = body as? [Any] { return items }
        guard let object = body as? [String: Any] else { throw CommandFailure(.refused, "page \(page) is neither an array nor an object holding one") }
        if let itemsKey {
            guard let items = object[itemsKey] as? [Any] else { throw CommandFailure(.refused, "page \(page) has no array \"\(itemsKey)\"") }
            return items
        }
        guard let key = object.keys.sorted().first(where: { object[$0] is [Any] }), let items = object[key] as? [Any] else {
            throw CommandFailure(.refused, "page \(page) holds no array of items; name its member with --items-key")
        }
        return items
    }
}
