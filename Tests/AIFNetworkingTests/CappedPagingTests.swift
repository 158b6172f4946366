@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
@_spi(CrossModule) import AIFTransport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

private typealias Parameters = AIFServices.Parameters

private struct Issue: Decodable, Sendable, Hashable {
    var id: Int
}

/// A page wrapped in an object: `{"items": […]}`.
private struct IssuePage: Decodable, Sendable, Paging.PageContent {
    var items: [Issue]
    var pageItemCount: Int { items.count }
}

/// A server of issues that caps its pages at 100, whatever `per_page` asks. Query: `page`,
/// `per_page`, `count` (102 issues by default), `shape=array` for bare arrays (wrapped
/// otherwise), `link=1` for `Link` headers (whose next page is at an opaque path,
/// `issues/after/t<page>`), `total=1` for `X-Total-Count`, `label` which, when `need_label=1`,
/// must be there. It keeps the requests it answered.
private struct CappedIssueServer: Sendable {
    static let cap = 100
    let server: LocalServer
    let requests: Locked<[String]>

    static func start() async throws -> CappedIssueServer {
        let requests = Locked<[String]>([])
        let router = Router()
        router.get("issues") { request, _ -> Response in
            requests.withLock { $0.append(request.uri.description) }
            let query = query(of: request)
            return answer(page: query["page"].flatMap { Int($0) } ?? 1, query)
        }
        // The links' own shape: nothing a client could work out from the first URL.
        router.get("issues/after/:token") { request, context -> Response in
            requests.withLock { $0.append(request.uri.description) }
            let token = context.parameters.get("token") ?? ""
            guard token.hasPrefix("t"), let page = Int(token.dropFirst()) else { return Response(status: .notFound) }
            return answer(page: page, query(of: request))
        }
        return CappedIssueServer(server: try await LocalServer.start(router: router), requests: requests)
    }

    /// The requests answered, as path and query.
    var answered: [String] { requests.withLock { $0 } }

    private static func query(of request: Request) -> [String: String] {
        Dictionary(request.uri.queryParameters.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first })
    }

    private static func answer(page: Int, _ query: [String: String]) -> Response {
        if query["need_label"] == "1", query["label"] == nil {
            return Response(status: .badRequest, body: .init(byteBuffer: ByteBuffer(string: "no label")))
        }
        let count = query["count"].flatMap { Int($0) } ?? 102
        let size = min(cap, max(1, query["per_page"].flatMap { Int($0) } ?? 30))
        let ids = Array(stride(from: (page - 1) * size + 1, through: min(count, page * size), by: 1))
        let items = ids.map { #"{"id": \#($0)}"# }.joined(separator: ", ")
        var headers: HTTPFields = [.contentType: "application/json"]
        if query["link"] == "1" {
            // What a server passes on in its links: everything but the page.
            let kept = ["per_page", "count", "shape", "link", "total", "need_label", "label"].compactMap { name in query[name].map { "\(name)=\($0)" } }
                .joined(separator: "&")
            var links = [#"</issues/after/t1?\#(kept)>; rel="first""#]
            if page * size < count { links.append(#"</issues/after/t\#(page + 1)?\#(kept)>; rel="next""#) }
            if page > 1 { links.append(#"</issues/after/t\#(page - 1)?\#(kept)>; rel="prev""#) }
            headers[HTTPField.Name("Link")!] = links.joined(separator: ", ")
        }
        if query["total"] == "1" { headers[HTTPField.Name("X-Total-Count")!] = "\(count)" }
        let body = query["shape"] == "array" ? "[\(items)]" : #"{"items": [\#(items)]}"#
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

private struct IssueService: Service {
    var name: ServiceName = "issues"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
}

/// A screen on the main actor whose filters are the pages' parameters.
@MainActor
private final class IssueScreen: MainActorParamSource {
    func parameters(for manager: APIManager<IssuePage>) -> Parameters {
        ["label": "bug", "need_label": 1, "per_page": 100, "count": 250]
    }
}

/// Paging against a server that gives fewer items than asked: every item once, in as few
/// requests as the server's signals allow, never an early end.
@Suite("Paging: a server that caps its pages, with and without links", .timeLimit(.minutes(2)))
struct CappedPagingTests {
    private struct Stack {
        let issues: CappedIssueServer
        let proxy: APIProxy
        let registry: ServiceRegistry
        let transport: CurlTransport

        func manager<Page: Decodable & Sendable & Paging.PageContent>(
            _: Page.Type, style: Paging.Style = .pageNumber(), endOfList: Paging.EndOfList = .shortPage, cachePolicy: ResponseCache.Policy? = nil
        ) -> PagedAPIManager<Page> {
            PagedAPIManager(
                Endpoint<Page>(service: "issues", path: "issues", cachePolicy: cachePolicy, retryPolicy: .never),
                paging: Paging.Settings(style: style, size: 200, sizeParameter: "per_page", endOfList: endOfList), proxy: proxy, registry: registry,
                cache: ResponseCache())
        }
    }

    private static func stack() async throws -> Stack {
        let issues = try await CappedIssueServer.start()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(IssueService(environments: [.online: ServiceEnvironment(baseURL: issues.server.baseURL())]))
        let transport = makeTransport()
        return Stack(issues: issues, proxy: APIProxy(transport: transport), registry: registry, transport: transport)
    }

    /// Every page of `manager` with the async face: the ids, in order.
    private static func allIDs<Page>(_ manager: PagedAPIManager<Page>, _ parameters: Parameters, items: (Page) -> [Issue]) async throws -> [Int] {
        var ids: [Int] = []
        for try await page in manager.pages(parameters) { ids += items(page.content).map(\.id) }
        return ids
    }

    @Test(arguments: [false, true])
    func wrappedPagesWithoutASignalLearnTheCap(total: Bool) async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let ids = try await Self.allIDs(stack.manager(IssuePage.self), total ? ["total": 1] : [:]) { $0.items }
        #expect(ids == Array(1...102))
        // 100 (asked 200: the cap, or the end?), then 2: shorter than the cap, the last.
        #expect(stack.issues.answered.count == 2, "\(stack.issues.answered)")
    }

    @Test func bareArrayPagesNeedNoWrapper() async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let ids = try await Self.allIDs(stack.manager([Issue].self), ["shape": "array"]) { $0 }
        #expect(ids == Array(1...102))
        #expect(stack.issues.answered.count == 2)
    }

    @Test(arguments: [false, true])
    func linkedPagesAreFollowedWhateverTheirURL(bareArrays: Bool) async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let parameters: Parameters = bareArrays ? ["link": 1, "count": 250, "shape": "array"] : ["link": 1, "count": 250]
        let ids =
            if bareArrays {
                try await Self.allIDs(stack.manager([Issue].self, style: .link), parameters) { $0 }
            } else {
                try await Self.allIDs(stack.manager(IssuePage.self, style: .link), parameters) { $0.items }
            }
        #expect(ids == Array(1...250))
        let answered = stack.issues.answered
        #expect(answered.count == 3, "\(answered)")
        #expect(answered.first?.hasPrefix("/issues?") == true)
        #expect(answered.dropFirst().allSatisfy { $0.hasPrefix("/issues/after/t") }, "\(answered)")
    }

    /// A cached list's linked pages are cached under their own URLs: a page's link is never
    /// answered with another page from the cache (the key was the endpoint's path and the
    /// parameters, which a linked page does not have).
    @Test func linkedPagesOfACachedListAreTheirOwn() async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let list = stack.manager([Issue].self, style: .link, cachePolicy: .lifetime(.seconds(60)))
        let parameters: Parameters = ["link": 1, "count": 250, "shape": "array"]
        #expect(try await Self.allIDs(list, parameters) { $0 } == Array(1...250))
        #expect(stack.issues.answered.count == 3)
        // Again: every page from the cache, each the right one.
        #expect(try await Self.allIDs(list, parameters) { $0 } == Array(1...250))
        #expect(stack.issues.answered.count == 3, "\(stack.issues.answered)")
    }

    /// A linked page that fails names its URL with the credentials it carries hidden.
    @Test func aFailedLinkedPageHidesTheCredentialsOfItsURL() async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        AIFTransport.HTTPRequest.registerSecretParameter("access_token")
        let list = stack.manager([Issue].self, style: .link)
        let linked = stack.issues.server.baseURL().appending(path: "issues/after/gone").appending(queryItems: [URLQueryItem(name: "access_token", value: "s3cret-token")])
        let error = await #expect(throws: APIError.self) { try await list.load(linked: linked) }
        #expect(error?.statusCode == 404)
        #expect(error?.path.hasSuffix("/issues/after/gone?access_token=***") == true, "\(error?.path ?? "")")
        #expect(error.map { "\($0)" }?.contains("s3cret-token") == false)
    }

    /// With `Link` headers, a short page is not the end while a next link is given, and the page
    /// without one ends the list: no request beyond the last page, even on an exact multiple.
    @Test func aLinkWithoutNextEndsTheListAtOnce() async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let ids = try await Self.allIDs(stack.manager(IssuePage.self), ["link": 1, "count": 200]) { $0.items }
        #expect(ids == Array(1...200))
        #expect(stack.issues.answered.count == 2, "\(stack.issues.answered)")
    }

    @Test func aNextLinkToAnotherOriginIsNotFollowed() async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let list = stack.manager(IssuePage.self, style: .link)
        var iterator = list.pages(["link": 1]).makeAsyncIterator()
        _ = try await iterator.next()
        // A page whose next link leaves the origin fails, naming where the link pointed.
        var elsewhere = Paging.State(style: .link, pageSize: 100, pageSizeParameter: nil, endOfList: .shortPage)
        _ = elsewhere.startNextPage()
        elsewhere.pageLoaded(IssuePage(items: []), headers: ["Link": #"<http://127.0.0.2:1/issues?page=2>; rel="next""#], url: stack.issues.server.baseURL())
        #expect(elsewhere.linkedPage?.host == "127.0.0.2")
        let error = await #expect(throws: APIError.self) { try await list.load(linked: elsewhere.linkedPage!) }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.message.contains("outside the service's origin") == true, "\(error?.message ?? "")")
        #expect(stack.issues.answered.count == 1, "nothing was sent elsewhere or again")
    }

    /// `aif call --all-pages` follows the links too, and stopping at `--max-pages` with more to
    /// load is said and fails.
    @Test func aifFollowsLinksAndSaysWhenItStopsWithMoreToLoad() async throws {
        let issues = try await CappedIssueServer.start()
        let folder = try makeTestFolder("cli-links")
        defer { try? FileManager.default.removeItem(at: folder) }
        try #"{"name": "issues", "environments": {"online": {"baseURL": "\#(issues.server.baseURL().absoluteString)"}}}"#
            .write(to: folder.appending(path: "issues.json"), atomically: true, encoding: .utf8)
        let call = ["call", "issues", "issues", "--param", "per_page=200", "--param", "link=1", "--param", "count=250", "--param", "shape=array", "--all-pages"]
        let all = try await Shell.run(AifCommandTests.aifPath, call + ["--config", folder.path])
        #expect(all.status == 0, "\(all.standardError)")
        let ids = all.standardOutput.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int])?["id"]
        }
        #expect(ids == Array(1...250))
        #expect(issues.answered.count == 3)
        #expect(issues.answered.dropFirst().allSatisfy { $0.hasPrefix("/issues/after/t") }, "\(issues.answered)")

        let stopped = try await Shell.run(AifCommandTests.aifPath, call + ["--max-pages", "2", "--config", folder.path])
        #expect(stopped.status == 9)
        #expect(stopped.standardOutput.split(separator: "\n").count == 200)
        #expect(stopped.standardError.contains("stopped after 2 pages (--max-pages) with more to load"), "\(stopped.standardError)")
    }

    /// The delegate face asks a main-actor param source for every page: the filter reaches each.
    @Test func aMainActorScreensFiltersReachEveryPage() async throws {
        let stack = try await Self.stack()
        defer { stack.transport.shutdown() }
        let list = stack.manager(IssuePage.self)
        let screen = IssueScreen()
        list.mainActorParamSource = screen
        let delegate = PageCollector()
        list.delegate = delegate
        await MainActor.run { _ = list.loadFirstPage() }
        for count in 1...10 {
            // The paging state moves on before the delegate hears the page.
            _ = await delegate.pages.wait(count: count)
            #expect(!list.pagingState.isLoading)
            guard await MainActor.run(body: { list.loadNextPage() }) != nil else { break }
        }
        #expect(delegate.pages.values.count == 3)
        #expect(delegate.failures.values.isEmpty, "\(delegate.failures.values)")
        #expect(delegate.ids.withLock { $0 } == Array(1...250))
        #expect(stack.issues.answered.allSatisfy { $0.contains("label=bug") }, "\(stack.issues.answered)")

        // Started off the main actor, a page cannot ask the screen: it fails, saying why.
        list.loadFirstPage()
        _ = await delegate.failures.wait(count: 1)
        #expect(delegate.failures.values.first?.message.contains("MainActorParamSource") == true)
        #expect(stack.issues.answered.count == 3, "nothing went out without the filters")
    }
}

/// Collects the pages a delegate hears.
private final class PageCollector: APIManagerDelegate {
    let ids = Locked<[Int]>([])
    /// One entry a page heard, loaded or failed.
    let pages = Collected<Void>()
    let failures = Collected<APIError>()

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        if let page = response.content as? IssuePage { ids.withLock { $0 += page.items.map(\.id) } }
        pages.append(())
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        failures.append(error)
        pages.append(())
    }
}
