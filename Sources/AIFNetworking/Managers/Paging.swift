public import Foundation

/// The shapes a paged listing is described with: how pages are named (``Style``), how the last
/// one is recognised (``EndOfList``), a manager's settings and state, and the pages as an async
/// sequence. ``PagedAPIManager`` loads them.
public enum Paging {}

extension Paging {
    /// How a listing names its pages.
    public enum Style: Sendable, Hashable {
        /// Numbered pages: `page=1`, `page=2`, … from `first`.
        case pageNumber(parameter: String = "page", first: Int = 1)
        /// An item offset: `offset=0`, `offset=20`, …
        case offset(parameter: String = "offset")
        /// An opaque cursor from the previous page (``Paging/PageContent/pageNextCursor``); none for the first.
        case cursor(parameter: String = "cursor")
        /// The next page starts after the previous page's last item: its ID
        /// (``Paging/PageContent/pageLastItemID``) in `parameter` — Stripe's `starting_after`,
        /// Shopify's `since_id`; none for the first. The page's ``Paging/PageContent/pageHasMore``
        /// says whether more follow, when it says; a page that says so and gives no last ID
        /// fails the next page rather than asking for the first again.
        case afterLastItem(parameter: String = "starting_after")
        /// The next page is where the previous one's `Link: <…>; rel="next"` header points
        /// (RFC 8288), whatever the shape of that URL; the first page is the endpoint's. The
        /// link must stay on the service's origin.
        case link
    }

    /// How the end of a listing is recognised when the response's headers do not say.
    ///
    /// Headers say first, whatever the rule: a `Link` field with a `rel="next"` link means more
    /// pages follow, and one without it means this page is the last; an `X-Total-Count` says
    /// how many items there are. The body's own signals (``hasMoreFlag``, ``nextCursor``, a
    /// ``totalCount`` in the page) come before the headers when the page gives them.
    public enum EndOfList: Sendable, Hashable {
        /// A page with fewer items than a full page is the last. A full page is the size asked
        /// for, until the first page comes back shorter: a server may cap its pages below what
        /// was asked, so that size is taken as the cap and the next page asked for (an empty one
        /// ends the list). After that, a page shorter than the cap is the last.
        case shortPage
        /// The last page is reached when the items loaded reach ``Paging/PageContent/pageTotalCount``.
        case totalCount
        /// A page whose ``Paging/PageContent/pageHasMore`` is `false` is the last.
        case hasMoreFlag
        /// A page without a ``Paging/PageContent/pageNextCursor`` is the last.
        case nextCursor
    }
}

extension Paging {
    /// What a paged manager reads from a decoded page. Only ``pageItemCount`` is required; the rest
    /// default to `nil` and matter only for the ``Paging/EndOfList`` that uses them.
    public protocol PageContent {
        /// How many items this page holds.
        var pageItemCount: Int { get }
        /// How many items the whole listing holds, if the server says.
        var pageTotalCount: Int? { get }
        /// Whether more pages follow, if the server says.
        var pageHasMore: Bool? { get }
        /// The cursor of the next page, if the server gives one.
        var pageNextCursor: String? { get }
        /// The ID of this page's last item, which the next page starts after
        /// (``Paging/Style/afterLastItem(parameter:)``).
        var pageLastItemID: String? { get }
    }
}

extension Paging.PageContent {
    /// Not given.
    public var pageTotalCount: Int? { nil }
    /// Not given.
    public var pageHasMore: Bool? { nil }
    /// Not given.
    public var pageNextCursor: String? { nil }
    /// Not given.
    public var pageLastItemID: String? { nil }
}

extension Paging {
    /// A page shaped as Stripe's lists, and many others: the items in `data`, and `has_more` (or
    /// `hasMore`) saying whether more follow. Items are `Identifiable`, so that the next page can
    /// start after the last one (``Paging/Style/afterLastItem(parameter:)``).
    ///
    /// ```swift
    /// struct Customer: Decodable, Sendable, Identifiable { var id: String; var email: String? }
    /// let customers = PagedAPIManager(
    ///     Endpoint<Paging.ItemList<Customer>>(service: "pay", path: "customers"),
    ///     paging: Paging.Settings(style: .afterLastItem(parameter: "starting_after"), size: 100, sizeParameter: "limit"))
    /// for try await page in customers.pages() { print(page.content.data.map(\.id)) }
    /// ```
    public struct ItemList<Item: Decodable & Sendable & Identifiable>: Decodable, Sendable, Paging.PageContent where Item.ID: CustomStringConvertible {
        /// The page's items.
        public var data: [Item]
        /// Whether more items follow, if the page says.
        public var hasMore: Bool?

        /// Creates a page.
        public init(data: [Item], hasMore: Bool?) {
            self.data = data
            self.hasMore = hasMore
        }

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        /// Reads `data`, and `has_more` as written or as a decoder that converts snake case gives
        /// it (`hasMore`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            data = try container.decode([Item].self, forKey: Key(stringValue: "data"))
            hasMore = try container.decodeIfPresent(Bool.self, forKey: Key(stringValue: "hasMore"))
                ?? container.decodeIfPresent(Bool.self, forKey: Key(stringValue: "has_more"))
        }

        /// The number of items.
        public var pageItemCount: Int { data.count }
        /// `has_more`.
        public var pageHasMore: Bool? { hasMore }
        /// The last item's ID.
        public var pageLastItemID: String? { data.last.map { String(describing: $0.id) } }
    }
}

/// A page that is a bare JSON array (`[{…}, {…}]`) needs no wrapper: its items are the page.
/// The end of the list then comes from the response's headers (`Link`, `X-Total-Count`) or
/// from a short page.
extension Array: Paging.PageContent {
    /// The array's count.
    public var pageItemCount: Int { count }
}

extension Paging {
    /// Where paging through a listing stands: a value, changed only by its `mutating` methods, so
    /// the rules are tested without a server.
    ///
    /// A page is asked for with ``startFirstPage()`` or ``startNextPage()``, which return its
    /// parameters; its outcome is reported with ``pageLoaded(_:headers:url:)`` or ``pageFailed()``. A failed
    /// page leaves the position where it was, so asking again retries it.
    public struct State: Sendable, Hashable {
        /// How pages are named.
        public let style: Style
        /// Items per page.
        public let pageSize: Int
        /// The page-size parameter's name, or `nil` to send none.
        public let pageSizeParameter: String?
        /// How the end is recognised.
        public let endOfList: EndOfList

        /// How many pages have loaded since the first.
        public private(set) var loadedPages = 0
        /// How many items have loaded since the first page.
        public private(set) var loadedItems = 0
        /// Whether the last page has loaded.
        public private(set) var isLastPage = false
        /// Whether a page is being loaded.
        public private(set) var isLoading = false
        /// How many items a full page holds: the size asked for, or the server's cap when the
        /// first page came back shorter (see ``EndOfList/shortPage``).
        public private(set) var fullPageSize: Int
        /// Where the next page is, when the last page linked it (`Link: <…>; rel="next"`).
        public private(set) var nextPageURL: URL?
        /// Why the next page cannot be asked for though the last has not loaded: the listing
        /// said more follow and gave no cursor or last item's ID to ask for them with. The
        /// next page is then not started (``startNextPage()`` returns `nil`); a manager fails
        /// it with this. `nil` otherwise.
        public private(set) var cannotContinue: String?
        private var cursor: String?

        /// Creates the state before the first page.
        public init(style: Style, pageSize: Int, pageSizeParameter: String?, endOfList: EndOfList) {
            self.style = style
            self.pageSize = max(1, pageSize)
            self.pageSizeParameter = pageSizeParameter
            self.endOfList = endOfList
            fullPageSize = self.pageSize
        }

        /// Starts over: forgets what loaded and asks for the first page (even while one loads).
        ///
        /// - Returns: The first page's parameters.
        public mutating func startFirstPage() -> Parameters {
            loadedPages = 0
            loadedItems = 0
            isLastPage = false
            fullPageSize = pageSize
            nextPageURL = nil
            cursor = nil
            cannotContinue = nil
            isLoading = true
            return parameters()
        }

        /// Asks for the page after the last loaded one (the first, if none has). With
        /// ``Style/link`` after the first page, the page is at ``nextPageURL`` and the
        /// parameters are empty: the link carries them.
        ///
        /// - Returns: Its parameters, or `nil` when a page is loading or the last has loaded.
        public mutating func startNextPage() -> Parameters? {
            guard !isLoading, !isLastPage, cannotContinue == nil else { return nil }
            isLoading = true
            return parameters()
        }

        /// Records a loaded page and moves on.
        ///
        /// - Parameters:
        ///   - page: The page's content.
        ///   - headers: The response's headers, for `Link` and `X-Total-Count`.
        ///   - url: The URL the page came from, which a relative link is resolved against.
        public mutating func pageLoaded(_ page: some Paging.PageContent, headers: HTTPHeaders = HTTPHeaders(), url: URL? = nil) {
            let count = page.pageItemCount
            let isFirst = loadedPages == 0
            isLoading = false
            loadedPages += 1
            loadedItems += count
            let links = headers.links
            nextPageURL = links.first { $0.relations.contains("next") }?.url(relativeTo: url)
            switch style {
            case .cursor: cursor = page.pageNextCursor
            case .afterLastItem: cursor = page.pageLastItemID
            case .pageNumber, .offset, .link: cursor = nil
            }
            isLastPage = isLast(page, count: count, isFirst: isFirst, linked: !links.isEmpty, headerTotal: headers["X-Total-Count"].flatMap { Int($0) })
            if !isLastPage, (cursor ?? "").isEmpty {
                switch style {
                case .cursor:
                    cannotContinue = "page \(loadedPages) says more items follow, and gives no cursor to ask for them with (Paging.PageContent.pageNextCursor)"
                case .afterLastItem:
                    cannotContinue = "page \(loadedPages) says more items follow, and gives no last item's ID to ask for them with (Paging.PageContent.pageLastItemID)"
                case .pageNumber, .offset, .link:
                    break
                }
            }
        }

        /// Whether the page just loaded is the last: the body's signal when the rule reads one
        /// and the page gives it, then the headers', then a short page.
        private mutating func isLast(_ page: some Paging.PageContent, count: Int, isFirst: Bool, linked: Bool, headerTotal: Int?) -> Bool {
            // Paged after its last item, a listing's `has_more` is its word on the end.
            if case .afterLastItem = style, let more = page.pageHasMore { return !more }
            switch endOfList {
            case .nextCursor:
                return (page.pageNextCursor ?? "").isEmpty
            case .hasMoreFlag:
                if let more = page.pageHasMore { return !more }
            case .totalCount:
                if let total = page.pageTotalCount { return count == 0 || loadedItems >= total }
            case .shortPage:
                break
            }
            if linked || style == .link { return nextPageURL == nil }
            if let headerTotal { return count == 0 || loadedItems >= headerTotal }
            if count == 0 { return true }
            if count >= fullPageSize { return false }
            // Shorter than asked on the first page: the server's cap, or the whole list. Asking
            // once more tells them apart; later, a page shorter than the cap is the last.
            guard isFirst else { return true }
            fullPageSize = count
            return false
        }

        /// The URL the next page is loaded from: the linked one with ``Style/link`` after the
        /// first page, else `nil` (the endpoint's path with the page's parameters).
        var linkedPage: URL? {
            guard case .link = style, loadedPages > 0 else { return nil }
            return nextPageURL
        }

        /// Records a failed or cancelled page: nothing moves, the same page is asked for next.
        public mutating func pageFailed() {
            isLoading = false
        }

        private func parameters() -> Parameters {
            var parameters: Parameters = [:]
            if let pageSizeParameter { parameters[pageSizeParameter] = .integer(pageSize) }
            switch style {
            case .pageNumber(let name, let first): parameters[name] = .integer(first + loadedPages)
            case .offset(let name): parameters[name] = .integer(loadedItems)
            case .cursor(let name), .afterLastItem(let name): if let cursor { parameters[name] = .string(cursor) }
            case .link: if loadedPages > 0 { return [:] }
            }
            return parameters
        }
    }
}
