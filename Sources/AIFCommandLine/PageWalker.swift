// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import Foundation

/// `--all-pages`: loads page after page of a paged endpoint and prints each item as one JSON
/// line, as it comes.
///
/// Pages are asked for as the rule says (``PagingRule``: a command's `--paging` and its
/// companions, else the define's or the service's `paging`, else numbered pages in `page`):
/// by number from the one given (1 by default), by item offset, after the previous page's last
/// item (its ID), or as a response links its next page (`Link: <…>; rel="next"`) — a link is
/// followed whatever the style. A page's items are the rule's `itemsField` member of its JSON
/// object, or the body when it is an array, or the object's array member (the first by name,
/// when it has several). The end comes as ``Paging/State`` finds it: the body's `has_more`
/// (`hasMore`, or the rule's member) or `total`, the `Link` and `X-Total-Count` headers, an
/// empty page, or a page shorter than a full one — the rule's size parameter, `page_size`,
/// `per_page` or `limit` asked for, or the server's cap when the first page came back shorter.
///
/// It stops with an error rather than print a listing wrong: a page that repeats the one before
/// it (a server that ignores the page's parameter), more pages said to follow with no way to ask
/// for them (no last item's ID), and after `maxPages` pages with more to load
/// (``FailureClass/incomplete``). A page that fails is printed as a single call's answer is.
struct PageWalker {
    var rule: PagingRule
    var maxPages: Int
    var printer: ResponsePrinter

    /// What the end-of-list rules read of a page.
    private struct Page: Paging.PageContent {
        var pageItemCount: Int
        var pageHasMore: Bool?
        var pageTotalCount: Int?
        var pageLastItemID: String?
    }

    /// Loads and prints every page; `loaded` hears each page's response.
    func walk(_ manager: APIManager<NoContent>, parameters: Parameters, loaded: (APIResponse<NoContent>) -> Void) async throws {
        let parameter = rule.parameter ?? PagingRule.usualParameter(of: rule.style) ?? "page"
        let style: Paging.Style
        switch rule.style {
        case .page: style = .pageNumber(parameter: parameter, first: try firstPage(parameters, parameter))
        case .offset: style = .offset(parameter: parameter)
        case .afterLastItem: style = .afterLastItem(parameter: parameter)
        case .link: style = .link
        }
        let sizeParameters = rule.sizeParameter.map { [$0] } ?? ["page_size", "per_page", "limit"]
        let pageSize = sizeParameters.lazy.compactMap { parameters[$0]?.textValue.flatMap(Int.init) }.first
        var state = Paging.State(style: style, pageSize: pageSize ?? Int.max, pageSizeParameter: nil, endOfList: .hasMoreFlag)
        var previousLines: Data?
        while true {
            if let reason = state.cannotContinue {
                throw CommandFailure(.refused, "\(reason): stopped after \(state.loadedItems) items (--id-key names the ID's member)")
            }
            guard let pageParameters = state.startNextPage() else { return }
            guard state.loadedPages < maxPages else {
                throw CommandFailure(.incomplete, "stopped after \(maxPages) pages (--max-pages) with more to load: \(state.loadedItems) items printed")
            }
            let number = state.loadedPages + 1
            let response: APIResponse<NoContent>
            do {
                if state.loadedPages > 0, let next = state.nextPageURL {
                    response = try await manager.load(linked: next)
                } else {
                    response = try await manager.load(parameters.merging(pageParameters) { _, page in page })
                }
            } catch {
                // As a single call: the failed page's answer, then the error.
                if let answer = error.response {
                    printer.print(version: answer.httpVersion, status: answer.statusCode, headers: answer.headers, body: answer.body)
                }
                throw error
            }
            loaded(response)
            guard let body = try? JSONSerialization.jsonObject(with: response.data, options: .fragmentsAllowed) else {
                throw CommandFailure(.refused, "page \(number) is not JSON, so its items cannot be found")
            }
            let items = try self.items(of: body, page: number)
            var lines = Data()
            for item in items {
                lines.append(try JSONSerialization.data(withJSONObject: item, options: [.fragmentsAllowed, .withoutEscapingSlashes, .sortedKeys]))
                lines.append(UInt8(ascii: "\n"))
            }
            if let previousLines, !items.isEmpty, lines == previousLines {
                let asked = rule.style == .link ? "its link" : parameter
                throw CommandFailure(
                    .refused,
                    "page \(number) repeats page \(number - 1) (the same \(items.count) items): the server seems to ignore \(asked); stopped after \(state.loadedItems) items")
            }
            FileHandle.standardOutput.write(lines)
            previousLines = lines
            let object = body as? [String: Any]
            let hasMore = (rule.hasMoreField.flatMap { object?[$0] } ?? object?["has_more"] ?? object?["hasMore"]) as? Bool
            let total = (object?["total"] as? NSNumber)?.intValue
            state.pageLoaded(
                Page(
                    pageItemCount: items.count, pageHasMore: hasMore ?? total.map { state.loadedItems + items.count < $0 }, pageTotalCount: total,
                    pageLastItemID: lastItemID(items)),
                headers: response.headers, url: response.request.url)
        }
    }

    /// The page given in the parameters, or the rule's first.
    private func firstPage(_ parameters: Parameters, _ parameter: String) throws -> Int {
        guard let given = parameters[parameter] else { return rule.firstPage }
        guard let text = given.textValue, let page = Int(text) else { throw CommandFailure(.configuration, "--param \(parameter) must be a page number") }
        return page
    }

    /// The ID of a page's last item (text or a number), for the next page to start after.
    private func lastItemID(_ items: [Any]) -> String? {
        guard let last = items.last as? [String: Any], let id = last[rule.idField] else { return nil }
        switch id {
        case let text as String: return text
        case let number as NSNumber: return number.stringValue
        default: return nil
        }
    }

    /// A page's items.
    private func items(of body: Any, page: Int) throws -> [Any] {
        if let items = body as? [Any] { return items }
        guard let object = body as? [String: Any] else { throw CommandFailure(.refused, "page \(page) is neither an array nor an object holding one") }
        if let itemsKey = rule.itemsField {
            guard let items = object[itemsKey] as? [Any] else { throw CommandFailure(.refused, "page \(page) has no array \"\(itemsKey)\"") }
            return items
        }
        guard let key = object.keys.sorted().first(where: { object[$0] is [Any] }), let items = object[key] as? [Any] else {
            throw CommandFailure(.refused, "page \(page) holds no array of items; name its member with --items-key")
        }
        return items
    }
}
#endif
