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
        /// An opaque cursor from the previous page (``PageContent/pageNextCursor``); none for the first.
        case cursor(parameter: String = "cursor")
    }

    /// How the end of a listing is recognised.
    public enum EndOfList: Sendable, Hashable {
        /// A page with fewer items than the page size is the last.
        case shortPage
        /// The last page is reached when the items loaded reach ``PageContent/pageTotalCount``.
        case totalCount
        /// A page whose ``PageContent/pageHasMore`` is `false` is the last.
        case hasMoreFlag
        /// A page without a ``PageContent/pageNextCursor`` is the last.
        case nextCursor
    }
}

/// What a paged manager reads from a decoded page. Only ``pageItemCount`` is required; the rest
/// default to `nil` and matter only for the ``Paging/EndOfList`` that uses them.
public protocol PageContent: Sendable {
    /// How many items this page holds.
    var pageItemCount: Int { get }
    /// How many items the whole listing holds, if the server says.
    var pageTotalCount: Int? { get }
    /// Whether more pages follow, if the server says.
    var pageHasMore: Bool? { get }
    /// The cursor of the next page, if the server gives one.
    var pageNextCursor: String? { get }
}

extension PageContent {
    /// Not given.
    public var pageTotalCount: Int? { nil }
    /// Not given.
    public var pageHasMore: Bool? { nil }
    /// Not given.
    public var pageNextCursor: String? { nil }
}

extension Paging {
    /// Where paging through a listing stands: a value, changed only by its `mutating` methods, so
    /// the rules are tested without a server.
    ///
    /// A page is asked for with ``startFirstPage()`` or ``startNextPage()``, which return its
    /// parameters; its outcome is reported with ``pageLoaded(_:)`` or ``pageFailed()``. A failed
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
        private var cursor: String?

        /// Creates the state before the first page.
        public init(style: Style, pageSize: Int, pageSizeParameter: String?, endOfList: EndOfList) {
            self.style = style
            self.pageSize = max(1, pageSize)
            self.pageSizeParameter = pageSizeParameter
            self.endOfList = endOfList
        }

        /// Starts over: forgets what loaded and asks for the first page (even while one loads).
        ///
        /// - Returns: The first page's parameters.
        public mutating func startFirstPage() -> Parameters {
            loadedPages = 0
            loadedItems = 0
            isLastPage = false
            cursor = nil
            isLoading = true
            return parameters()
        }

        /// Asks for the page after the last loaded one (the first, if none has).
        ///
        /// - Returns: Its parameters, or `nil` when a page is loading or the last has loaded.
        public mutating func startNextPage() -> Parameters? {
            guard !isLoading, !isLastPage else { return nil }
            isLoading = true
            return parameters()
        }

        /// Records a loaded page and moves on.
        ///
        /// - Parameter page: The page's content.
        public mutating func pageLoaded(_ page: some PageContent) {
            isLoading = false
            loadedPages += 1
            loadedItems += page.pageItemCount
            cursor = page.pageNextCursor
            switch endOfList {
            case .shortPage: isLastPage = page.pageItemCount < pageSize
            case .totalCount: isLastPage = page.pageItemCount == 0 || loadedItems >= (page.pageTotalCount ?? Int.max)
            case .hasMoreFlag: isLastPage = !(page.pageHasMore ?? (page.pageItemCount >= pageSize))
            case .nextCursor: isLastPage = (page.pageNextCursor ?? "").isEmpty
            }
        }

        /// Records a failed or cancelled page: nothing moves, the same page is asked for next.
        public mutating func pageFailed() {
            isLoading = false
        }

        private func parameters() -> Parameters {
            var parameters: Parameters = [:]
            if let pageSizeParameter { parameters[pageSizeParameter] = .int(pageSize) }
            switch style {
            case .pageNumber(let name, let first): parameters[name] = .int(first + loadedPages)
            case .offset(let name): parameters[name] = .int(loadedItems)
            case .cursor(let name): if let cursor { parameters[name] = .string(cursor) }
            }
            return parameters
        }
    }
}
