import Foundation
@_spi(CrossModule) import AIFTransport

/// A manager for a paged listing: it keeps the position, asks for the next page, and knows
/// when the last has loaded.
///
/// ```swift
/// final class GoodsListManager: PagedAPIManager<GoodsPage>, @unchecked Sendable {
///     // Restated as Swift requires of subclasses; safe: it adds no stored state.
///     override var serviceName: ServiceName { "shop" }
///     override var path: String { "goods" }
///     override var endOfList: Paging.EndOfList { .totalCount }
/// }
///
/// list.loadFirstPage()          // delegate hears page 1
/// list.loadNextPage()           // … page 2; nil once the last page has loaded
///
/// for try await page in list.pages() { show(page.content.items) }
/// ```
///
/// The paging parameters join the source's (or the call's) before ``APIManager/reformParameters(_:)``, which
/// can rename them. A page that fails does not move the position: the next ``loadNextPage(with:)``
/// asks for it again.
open class PagedAPIManager<Page: Decodable & Sendable & Paging.PageContent>: APIManager<Page>, @unchecked Sendable {
    // Unchecked for the reason given on APIManager; the paging state is behind a lock.

    private struct Position {
        var state: Paging.State?
        var current: LoadID?
    }

    private let paging = Locked(Position())

    /// How pages are asked for and the last one recognised, as given to `init`: the
    /// overridable settings below read their defaults from here.
    public let pageSettings: Paging.Settings

    /// Creates a manager for a paged endpoint described as values — no subclass needed.
    ///
    /// - Parameters:
    ///   - endpoint: What to call and how.
    ///   - paging: How pages are asked for; numbered pages of 20 ending on a short page by
    ///     default.
    ///   - proxy: The proxy; ``APIProxy/shared`` by default.
    ///   - registry: Where services are resolved; ``/AIFServices/ServiceRegistry/shared`` by default.
    ///   - cache: The response cache; ``ResponseCache/shared`` by default.
    public init(
        _ endpoint: Endpoint<Page>, paging: Paging.Settings = Paging.Settings(), proxy: APIProxy = .shared, registry: ServiceRegistry = .shared,
        cache: ResponseCache = .shared
    ) {
        pageSettings = paging
        super.init(endpoint, proxy: proxy, registry: registry, cache: cache)
    }

    /// Creates a manager that pages through one call's arguments (a typed interface's method):
    /// each page loads them with its paging parameters.
    ///
    /// - Parameters:
    ///   - endpoint: What to call and how.
    ///   - paging: How pages are asked for.
    ///   - arguments: The call's parameters, headers and query items.
    ///   - proxy: The proxy.
    ///   - registry: Where services are resolved.
    ///   - cache: The response cache.
    package init(
        _ endpoint: Endpoint<Page>, paging: Paging.Settings, calling arguments: CallArguments, proxy: APIProxy, registry: ServiceRegistry,
        cache: ResponseCache
    ) {
        pageSettings = paging
        super.init(endpoint, calling: arguments, proxy: proxy, registry: registry, cache: cache)
    }

    /// Creates a manager; a subclass overrides what differs.
    ///
    /// - Parameters:
    ///   - service: The service to call, unless a subclass overrides ``APIManager/serviceName``.
    ///   - path: The method to call, unless a subclass overrides ``APIManager/path``.
    ///   - proxy: The proxy; ``APIProxy/shared`` by default.
    ///   - registry: Where services are resolved; ``/AIFServices/ServiceRegistry/shared`` by default.
    ///   - cache: The response cache; ``ResponseCache/shared`` by default.
    public override init(
        service: ServiceName? = nil, path: String? = nil, proxy: APIProxy = .shared, registry: ServiceRegistry = .shared,
        cache: ResponseCache = .shared
    ) {
        pageSettings = Paging.Settings()
        super.init(service: service, path: path, proxy: proxy, registry: registry, cache: cache)
    }

    /// How pages are named: the settings' (numbered from 1 in `page` by default).
    open var pagingStyle: Paging.Style { pageSettings.style }
    /// Items per page: the settings' (20 by default).
    open var pageSize: Int { pageSettings.size }
    /// The page-size parameter's name (`nil` sends none): the settings' (`page_size` by default).
    open var pageSizeParameter: String? { pageSettings.sizeParameter }
    /// How the last page is recognised: the settings' (a short page by default).
    open var endOfList: Paging.EndOfList { pageSettings.endOfList }

    /// Where paging stands (before the first page: nothing loaded).
    public var pagingState: Paging.State {
        paging.withLock { $0.state } ?? freshState()
    }

    /// Whether the last page has loaded.
    public var isLastPage: Bool { pagingState.isLastPage }

    /// Starts over from the first page, cancelling a page in flight.
    ///
    /// - Parameter parameters: Parameters besides the paging ones; the source's when `nil`.
    /// - Returns: The first page's load ID.
    @discardableResult
    public func loadFirstPage(with parameters: Parameters? = nil) -> LoadID {
        let fresh = freshState()
        let (pageParameters, previous) = paging.withLock { paging -> (Parameters, LoadID?) in
            var state = fresh
            let pageParameters = state.startFirstPage()
            let previous = paging.current
            paging.state = state
            paging.current = nil
            return (pageParameters, previous)
        }
        if let previous { cancelLoad(previous) }
        return startPage(pageParameters, at: nil, with: parameters)
    }

    /// Loads the page after the last loaded one (the first if none has).
    ///
    /// - Parameter parameters: Parameters besides the paging ones; the source's when `nil`.
    /// - Returns: The page's load ID, or `nil` — nothing started — when a page is loading or
    ///   the last page has loaded.
    ///
    /// A listing that said more items follow without saying how to ask for them (a cursor style
    /// whose page gave no cursor) fails the page it cannot ask for, with an
    /// ``APIError/Kind-swift.struct/invalidResponse`` saying so, rather than load the first
    /// page again.
    @discardableResult
    public func loadNextPage(with parameters: Parameters? = nil) -> LoadID? {
        let fresh = freshState()
        let next = paging.withLock { paging -> NextPage? in
            var state = paging.state ?? fresh
            if let reason = state.cannotContinue { return .stuck(reason) }
            let next = state.startNextPage()
            paging.state = state
            return next.map { .page($0, state.linkedPage) }
        }
        switch next {
        case nil: return nil
        case .stuck(let reason)?: return failWithoutSending(.invalidResponse, SourceUnreachable(reason), onStart: nil)
        case .page(let pageParameters, let url)?: return startPage(pageParameters, at: url, with: parameters)
        }
    }

    /// The pages of the listing, one load each, for `for try await`: from the first to the
    /// last. Independent of ``loadFirstPage(with:)``'s position; a failed page ends the loop
    /// with its error.
    ///
    /// - Parameter parameters: Parameters besides the paging ones; when `nil`, none — or, for a
    ///   manager a typed interface made for one call, that call's arguments.
    /// - Returns: The sequence.
    public func pages(_ parameters: Parameters? = nil) -> Paging.Pages<Page> {
        if parameters == nil, let boundArguments {
            return Paging.Pages(manager: self, parameters: boundArguments.parameters, call: boundArguments.additions, failure: boundArguments.failure, state: freshState())
        }
        return Paging.Pages(manager: self, parameters: parameters ?? [:], call: .none, failure: nil, state: freshState())
    }

    /// A page's parameters: its paging ones over the call's — or, for a page the previous one
    /// linked (whose URL carries the query), its paging ones and those the endpoint places in
    /// headers, which every page sends.
    func parameters(ofPage paging: Parameters, over call: Parameters, linked: Bool) -> Parameters {
        guard linked else { return call.merging(paging) { _, page in page } }
        let placements = endpoint.parameterPlacements
        let kept = call.filter { placements[$0.key]?.location == .header }
        return kept.merging(paging) { _, page in page }
    }

    private func freshState() -> Paging.State {
        Paging.State(style: pagingStyle, pageSize: pageSize, pageSizeParameter: pageSizeParameter, endOfList: endOfList)
    }

    /// Starts a page: at `url` when the previous page linked it (its parameters are in the
    /// link), or else with the call's parameters — the source's (``APIManager/paramSource`` or,
    /// on the main actor, ``APIManager/mainActorParamSource``) when the call gave none
    /// — or, for a manager a typed interface made for one call, that call's arguments. A page
    /// the previous one linked keeps only those the endpoint places in headers.
    private func startPage(_ pageParameters: Parameters, at url: URL?, with parameters: Parameters?) -> LoadID {
        let onStart = { [paging] (id: LoadID) in paging.withLock { $0.current = id } }
        var call = CallAdditions.none
        let base: Parameters
        if let parameters {
            base = parameters
        } else if let boundArguments {
            if let failure = boundArguments.failure { return failWithoutSending(.invalidParameters, SourceUnreachable(failure), onStart: onStart) }
            base = boundArguments.parameters
            call = boundArguments.additions
        } else if url != nil && !endpoint.parameterPlacements.values.contains(where: { $0.location == .header }) {
            base = [:]
        } else {
            switch sourceParameters() {
            case .success(let source): base = source ?? [:]
            case .failure(let message): return failWithoutSending(.configuration, message, onStart: onStart)
            }
        }
        return loadData(with: self.parameters(ofPage: pageParameters, over: base, linked: url != nil), onStart: onStart, at: url, call: call)
    }

    override func loadDidEnd(_ id: LoadID, result: Result<APIResponse<Page>, APIError>) {
        paging.withLock { paging in
            guard paging.current == id else { return }
            paging.current = nil
            switch result {
            case .success(let response): paging.state?.pageLoaded(response.content, headers: response.headers, url: response.request.url)
            case .failure: paging.state?.pageFailed()
            }
        }
    }
}

/// The next page a paged manager starts, or why it cannot be asked for.
private enum NextPage {
    case page(Parameters, URL?)
    case stuck(String)
}

extension Paging {
    /// The pages of a listing as an `AsyncSequence`: each step loads the next page with
    /// ``APIManager/load(_:headers:query:)``, until the last.
    ///
    /// A paged manager makes them (``PagedAPIManager/pages(_:)``), as does a typed interface's
    /// method that returns them. A mock or a preview makes them from pages it has
    /// (``init(_:thenFailingWith:)``).
    public struct Pages<Page: Decodable & Sendable & Paging.PageContent>: AsyncSequence, Sendable {
        /// One page's response.
        public typealias Element = APIResponse<Page>
        /// Why a page failed.
        public typealias Failure = APIError

        private let source: Source

        /// Where the pages come from.
        private enum Source: Sendable {
            /// Loaded one at a time by a manager.
            case loaded(Loader)
            /// Given, then perhaps a failure.
            case given([Page], APIError?)
        }

        init(manager: PagedAPIManager<Page>, parameters: Parameters, call: CallAdditions, failure: String?, state: State) {
            source = .loaded(Loader(manager: manager, parameters: parameters, call: call, failure: failure, state: state))
        }

        /// Pages that are given rather than loaded — a mock's or a preview's answer: each is a
        /// response of status 200 to a `GET mock:page/N` that was never sent, and after the last
        /// comes `error` if there is one.
        ///
        /// ```swift
        /// shop.onGoodsCategory = { _ in Paging.Pages([GoodsPage(items: cups, total: 3), GoodsPage(items: [saucer], total: 3)]) }
        /// ```
        ///
        /// - Parameters:
        ///   - pages: The pages, in order.
        ///   - error: What the step after the last page throws; the listing just ends when `nil`.
        public init(_ pages: [Page], thenFailingWith error: APIError? = nil) {
            source = .given(pages, error)
        }

        /// Makes an iterator starting at the first page.
        public func makeAsyncIterator() -> Iterator {
            switch source {
            case .loaded(let loader): Iterator(step: .loading(loader))
            case .given(let pages, let error): Iterator(step: .giving(pages[...], error, number: 1))
            }
        }

        /// Loads the pages one at a time.
        public struct Iterator: AsyncIteratorProtocol, Sendable {
            fileprivate var step: Step

            /// Where the iterator stands.
            fileprivate enum Step: Sendable {
                case loading(Loader)
                case giving(ArraySlice<Page>, APIError?, number: Int)
                case ended
            }

            /// Loads the next page, or returns `nil` after the last.
            ///
            /// - Throws: The page's ``APIError``; asking again retries the same page.
            public mutating func next() async throws(APIError) -> APIResponse<Page>? {
                switch step {
                case .ended:
                    return nil
                case .giving(var pages, let error, let number):
                    guard let page = pages.popFirst() else {
                        step = .ended
                        if let error { throw error }
                        return nil
                    }
                    step = .giving(pages, error, number: number + 1)
                    return Pages.given(page, number: number)
                case .loading(var loader):
                    defer { step = .loading(loader) }
                    return try await loader.next()
                }
            }

            /// Loads the next page, or returns `nil` after the last.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(APIError) -> APIResponse<Page>? {
                try await next()
            }
        }

        /// A given page as the response to a request never sent.
        private static func given(_ page: Page, number: Int) -> APIResponse<Page> {
            let url = URL(string: "mock:page/\(number)")!
            return APIResponse(
                loadID: LoadID(rawValue: 0), response: HTTPResponse(statusCode: 200, url: url), content: page, request: HTTPRequest(url: url),
                parameters: [:])
        }

        /// Loads a listing's pages through its manager, keeping the position.
        fileprivate struct Loader: Sendable {
            let manager: PagedAPIManager<Page>
            let parameters: Parameters
            let call: CallAdditions
            /// Why the call's arguments cannot be sent, which fails the first step.
            let failure: String?
            var state: State

            mutating func next() async throws(APIError) -> APIResponse<Page>? {
                if let failure { throw manager.failedLoad(.invalidParameters, failure) }
                if let reason = state.cannotContinue { throw manager.failedLoad(.invalidResponse, reason) }
                guard let pageParameters = state.startNextPage() else { return nil }
                do {
                    let url = state.linkedPage
                    let response = try await manager.load(
                        manager.parameters(ofPage: pageParameters, over: parameters, linked: url != nil), transfer: nil, at: url, call: call)
                    state.pageLoaded(response.content, headers: response.headers, url: response.request.url)
                    return response
                } catch {
                    state.pageFailed()
                    throw error
                }
            }
        }
    }

    /// How a paged endpoint is paged: the values a ``PagedAPIManager`` starts from.
    public struct Settings: Sendable, Hashable {
        /// How pages are named.
        public var style: Style
        /// Items per page.
        public var size: Int
        /// The page-size parameter's name; `nil` sends none.
        public var sizeParameter: String?
        /// How the last page is recognised.
        public var endOfList: EndOfList

        /// Creates settings.
        ///
        /// - Parameters:
        ///   - style: Numbered from 1 in `page` by default.
        ///   - size: 20 by default.
        ///   - sizeParameter: `page_size` by default.
        ///   - endOfList: A short page by default.
        public init(style: Style = .pageNumber(), size: Int = 20, sizeParameter: String? = "page_size", endOfList: EndOfList = .shortPage) {
            self.style = style
            self.size = size
            self.sizeParameter = sizeParameter
            self.endOfList = endOfList
        }
    }
}
