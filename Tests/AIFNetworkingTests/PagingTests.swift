@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

private struct TestPage: Paging.PageContent, Hashable {
    var pageItemCount: Int
    var pageTotalCount: Int?
    var pageHasMore: Bool?
    var pageNextCursor: String?
}

@Suite("Paging: the state machine without I/O", .timeLimit(.minutes(2)))
struct PagingStateTests {
    @Test func numberedPagesAdvanceAndStopOnAShortPage() {
        var state = Paging.State(style: .pageNumber(), pageSize: 20, pageSizeParameter: "page_size", endOfList: .shortPage)
        #expect(state.startNextPage() == ["page": 1, "page_size": 20])
        #expect(state.startNextPage() == nil, "no second page while one loads")
        state.pageLoaded(TestPage(pageItemCount: 20))
        #expect(state.startNextPage() == ["page": 2, "page_size": 20])
        state.pageLoaded(TestPage(pageItemCount: 7))
        #expect(state.isLastPage)
        #expect(state.loadedItems == 27)
        #expect(state.startNextPage() == nil)
        #expect(state.startFirstPage() == ["page": 1, "page_size": 20])
        #expect(!state.isLastPage)
        #expect(state.loadedItems == 0)
    }

    @Test func aFailedPageIsAskedForAgain() {
        var state = Paging.State(style: .pageNumber(parameter: "p", first: 0), pageSize: 10, pageSizeParameter: nil, endOfList: .shortPage)
        #expect(state.startNextPage() == ["p": 0])
        state.pageLoaded(TestPage(pageItemCount: 10))
        #expect(state.startNextPage() == ["p": 1])
        state.pageFailed()
        #expect(!state.isLoading)
        #expect(state.startNextPage() == ["p": 1])
        #expect(state.loadedPages == 1)
    }

    @Test func offsetsCountItems() {
        var state = Paging.State(style: .offset(), pageSize: 3, pageSizeParameter: "limit", endOfList: .totalCount)
        #expect(state.startNextPage() == ["offset": 0, "limit": 3])
        state.pageLoaded(TestPage(pageItemCount: 3, pageTotalCount: 5))
        #expect(state.startNextPage() == ["offset": 3, "limit": 3])
        state.pageLoaded(TestPage(pageItemCount: 2, pageTotalCount: 5))
        #expect(state.isLastPage)
    }

    @Test func cursorsComeFromThePreviousPage() {
        var state = Paging.State(style: .cursor(parameter: "after"), pageSize: 2, pageSizeParameter: nil, endOfList: .nextCursor)
        #expect(state.startNextPage() == [:])
        state.pageLoaded(TestPage(pageItemCount: 2, pageNextCursor: "c2"))
        #expect(state.startNextPage() == ["after": "c2"])
        state.pageLoaded(TestPage(pageItemCount: 2, pageNextCursor: nil))
        #expect(state.isLastPage)
    }

    @Test func theHasMoreFlagDecides() {
        var state = Paging.State(style: .pageNumber(), pageSize: 2, pageSizeParameter: nil, endOfList: .hasMoreFlag)
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 1, pageHasMore: true))
        #expect(!state.isLastPage, "the flag wins over a short page")
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 2, pageHasMore: false))
        #expect(state.isLastPage)
    }

    /// A server that caps its pages below the size asked: the first short page is taken as
    /// the cap, and a page shorter than that ends the list.
    @Test func aShortFirstPageIsTakenAsTheServersCap() {
        var state = Paging.State(style: .pageNumber(), pageSize: 200, pageSizeParameter: "per_page", endOfList: .shortPage)
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 100))
        #expect(!state.isLastPage, "100 of 200 asked: the server's cap, or the whole list")
        #expect(state.fullPageSize == 100)
        #expect(state.startNextPage() == ["page": 2, "per_page": 200])
        state.pageLoaded(TestPage(pageItemCount: 100))
        #expect(!state.isLastPage)
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 3))
        #expect(state.isLastPage)
        #expect(state.loadedItems == 203)

        // A list shorter than one page: one more request, empty, tells it was the whole list.
        _ = state.startFirstPage()
        #expect(state.fullPageSize == 200)
        state.pageLoaded(TestPage(pageItemCount: 5))
        #expect(!state.isLastPage)
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 0))
        #expect(state.isLastPage)

        // After a full page, a short one is the last: the server gave the size asked.
        _ = state.startFirstPage()
        state.pageLoaded(TestPage(pageItemCount: 200))
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 150))
        #expect(state.isLastPage)
    }

    /// Headers say before the short-page rule: a next link means more, a `Link` field without
    /// one means the end, and `X-Total-Count` counts.
    @Test func headersSayWhetherMoreFollow() {
        let base = URL(string: "https://api.example.com/v1/issues?page=1")!
        var state = Paging.State(style: .pageNumber(), pageSize: 20, pageSizeParameter: nil, endOfList: .shortPage)
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 7), headers: ["Link": #"<?page=2>; rel="next", <?page=9>; rel="last""#], url: base)
        #expect(!state.isLastPage, "a short page with a next link is not the last")
        #expect(state.nextPageURL?.absoluteString == "https://api.example.com/v1/issues?page=2")
        #expect(state.linkedPage == nil, "numbered pages are asked for by number")
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 20), headers: ["Link": #"<?page=1>; rel="first", <?page=1>; rel="prev""#], url: base)
        #expect(state.isLastPage, "a full page whose links have no next is the last")

        _ = state.startFirstPage()
        state.pageLoaded(TestPage(pageItemCount: 20), headers: ["X-Total-Count": "25"])
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 5), headers: ["X-Total-Count": "25"])
        #expect(state.isLastPage)
        _ = state.startFirstPage()
        state.pageLoaded(TestPage(pageItemCount: 10), headers: ["X-Total-Count": "25"])
        #expect(!state.isLastPage, "10 of 25: more, though shorter than asked")

        // The body's own signal comes first.
        var flagged = Paging.State(style: .pageNumber(), pageSize: 20, pageSizeParameter: nil, endOfList: .hasMoreFlag)
        _ = flagged.startNextPage()
        flagged.pageLoaded(TestPage(pageItemCount: 20, pageHasMore: false), headers: ["Link": #"<?page=2>; rel="next""#], url: base)
        #expect(flagged.isLastPage)
    }

    @Test func linkedPagesAreAskedForAtTheirLink() {
        let base = URL(string: "https://api.example.com/v1/issues?per_page=50")!
        var state = Paging.State(style: .link, pageSize: 50, pageSizeParameter: "per_page", endOfList: .shortPage)
        #expect(state.startNextPage() == ["per_page": 50])
        #expect(state.linkedPage == nil)
        state.pageLoaded(TestPage(pageItemCount: 50), headers: ["Link": #"</v1/issues/after/abc?per_page=50>; rel="next""#], url: base)
        #expect(state.startNextPage() == [:], "the link carries the parameters")
        #expect(state.linkedPage?.absoluteString == "https://api.example.com/v1/issues/after/abc?per_page=50")
        state.pageLoaded(TestPage(pageItemCount: 50), headers: [:], url: base)
        #expect(state.isLastPage, "no next link: the end, whatever the count")
    }

    @Test func aTotalCountOfZeroOrAnEmptyPageEnds() {
        var state = Paging.State(style: .pageNumber(), pageSize: 2, pageSizeParameter: nil, endOfList: .totalCount)
        _ = state.startNextPage()
        state.pageLoaded(TestPage(pageItemCount: 0, pageTotalCount: nil))
        #expect(state.isLastPage)
    }
}

/// A paged manager over the demo shop's listing, 20 to a page, ending on the total count. The
/// tests fail pages on purpose to see the caller ask again: no automatic retries.
final class ShopListManager: PagedAPIManager<GoodsPage>, @unchecked Sendable {
    // Restated as Swift requires of subclasses; it adds no stored state.
    init(stack: ShopStack) {
        super.init(
            Endpoint(service: "shop", path: "goods", retryPolicy: .never), paging: Paging.Settings(endOfList: .totalCount), proxy: stack.proxy,
            registry: stack.registry, cache: stack.cache)
    }
}

/// Pages to the end through the delegate face: asks for the next page after each success,
/// and again after a failure.
private final class PageWalker: APIManagerDelegate {
    let ids = Locked<[Int]>([])
    let failures = Locked<[APIError]>([])
    /// One entry once the list has no next page to load.
    let finished = Collected<Void>()
    let pagesAsked = Locked(0)

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        let list = manager as! ShopListManager
        ids.withLock { $0 += (response.content as! GoodsPage).items.map(\.id) }
        next(list)
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        failures.withLock { $0.append(error) }
        next(manager as! ShopListManager)
    }

    private func next(_ list: ShopListManager) {
        if list.loadNextPage() == nil {
            finished.append(())
        } else {
            pagesAsked.withLock { $0 += 1 }
        }
    }
}

@Suite("Paging: through the demo shop's 1,003 goods", .timeLimit(.minutes(3)))
struct PagingIntegrationTests {
    @Test func theDelegateFacePagesToTheEndThroughAFailure() async throws {
        let faults = ShopFaults()
        faults.failOnce(page: 17)
        let stack = try await ShopStack.make(faults: faults)
        defer { Task { await stack.servers.online.stop() } }
        let list = ShopListManager(stack: stack)
        let walker = PageWalker()
        list.delegate = walker
        list.callbackExecutor = .queue(DispatchQueue(label: "walker"))
        list.loadFirstPage()
        _ = await walker.finished.wait(count: 1)
        #expect(walker.ids.withLock { $0 } == Array(1...1003))
        #expect(walker.failures.withLock { $0.map(\.kind) } == [.httpStatus])
        #expect(walker.failures.withLock { $0.map(\.statusCode) } == [503])
        #expect(list.isLastPage)
        #expect(list.pagingState.loadedPages == 51)
        #expect(list.pagingState.loadedItems == 1003)
        #expect(list.loadNextPage() == nil)
        #expect(stack.transport.sent == 52)
    }

    @Test func theAsyncSequencePagesToTheEndAndRetriesAFailedPage() async throws {
        let faults = ShopFaults()
        faults.failOnce(page: 33)
        let stack = try await ShopStack.make(faults: faults)
        defer { Task { await stack.servers.online.stop() } }
        let list = ShopListManager(stack: stack)
        var iterator = list.pages().makeAsyncIterator()
        var ids: [Int] = []
        var failures: [APIError] = []
        var steps = 0
        while steps < 100 {
            steps += 1
            do {
                guard let page = try await iterator.next() else { break }
                ids += page.content.items.map(\.id)
            } catch {
                failures.append(error)
            }
        }
        #expect(ids == Array(1...1003))
        #expect(failures.count == 1)
        #expect(failures.first?.kind == .httpStatus)
        #expect(failures.first?.statusCode == 503)
        #expect(steps == 53)  // 51 pages, one failure, one final nil
    }

    @Test func forAwaitReadsEveryPage() async throws {
        let stack = try await ShopStack.make()
        stack.registry.setEnvironment("offline", for: "shop")
        let list = ShopListManager(stack: stack)
        var titles: [String] = []
        for try await page in list.pages() { titles += page.content.items.map(\.title) }
        #expect(titles.count == 25)
        #expect(titles.last == "Test article 25")
    }

    @Test func loadNextPageDoesNothingWhileAPageLoads() async throws {
        let stack = try await ShopStack.make()
        let list = ShopListManager(stack: stack)
        let recorder = Recorder()
        list.delegate = recorder
        list.callbackExecutor = .immediate
        let first = list.loadFirstPage()
        #expect(list.loadNextPage() == nil)
        await recorder.wait(for: "delegate.", count: 1)
        #expect(recorder.deliveries == 1)
        let second = try #require(list.loadNextPage())
        #expect(second > first)
        await recorder.wait(for: "delegate.", count: 2)
        #expect(recorder.deliveries == 2)
        #expect((try? list.lastOutcome?.get())?.content.page == 2)
    }

    @Test(.timeLimit(.minutes(2)))
    func loadFirstPageCancelsThePageInFlightAndStartsOver() async throws {
        let stack = try await ShopStack.make()
        let list = ShopListManager(stack: stack)
        let recorder = Recorder()
        list.delegate = recorder
        list.plugins = [recorder]
        list.callbackExecutor = .immediate
        list.loadFirstPage()
        await recorder.wait(for: "plugin.loadDidEnd")
        #expect(recorder.deliveries == 1)
        let abandoned = try #require(list.loadNextPage())
        let restarted = list.loadFirstPage()
        // Each load's plugins hear its end after its delegate would have, cancelled or not.
        await recorder.wait(for: "plugin.loadDidEnd", count: 3)
        #expect(!list.isLoading)
        #expect(recorder.outcome(abandoned).count <= 1)  // cancelled, unless it had already ended
        #expect(recorder.outcome(restarted).count == 1)
        #expect((try? list.lastOutcome?.get())?.content.page == 1)
        #expect(list.pagingState.loadedPages == 1)
    }
}
