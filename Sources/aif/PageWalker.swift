import AIFNetworking
import Foundation

/// `--all-pages`: loads page after page of a paged endpoint and prints each item as one JSON
/// line, as it comes.
///
/// The page number goes in `pageParameter`, from the one given (1 by default) up. A page's
/// items are the `itemsKey` member of its JSON object, or the body when it is an array, or the
/// object's array member (the first by name, when it has several). Paging stops at a page that says there is no more (`has_more`
/// or `hasMore` false), once `total` items have come, at an empty page, at a page shorter than
/// the `page_size`, `per_page` or `limit` asked for, or after `maxPages` pages.
struct PageWalker {
    var pageParameter: String
    var itemsKey: String?
    var maxPages: Int

    /// Loads and prints every page; `loaded` hears each page's response.
    func walk(_ manager: APIManager<NoContent>, parameters: Parameters, loaded: (APIResponse<NoContent>) -> Void) async throws {
        var page = try firstPage(parameters)
        let pageSize = ["page_size", "per_page", "limit"].lazy.compactMap { parameters[$0]?.textValue.flatMap(Int.init) }.first
        var itemsSoFar = 0
        for _ in 0..<maxPages {
            var request = parameters
            request[pageParameter] = .int(page)
            let response = try await manager.load(request)
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
            itemsSoFar += items.count
            let object = body as? [String: Any]
            let hasMore = (object?["has_more"] ?? object?["hasMore"]) as? Bool
            let total = (object?["total"] as? NSNumber)?.intValue
            if items.isEmpty || hasMore == false || total.map({ itemsSoFar >= $0 }) == true || pageSize.map({ items.count < $0 }) == true { return }
            page += 1
        }
        printError("aif: stopped after \(maxPages) pages (--max-pages); there may be more")
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
