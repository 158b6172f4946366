@testable import TestSupport
@testable import AIFNetworking
import AIFNetworkingInterfaces
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing

/// What the shop takes to place an order, as a client writes it.
struct NewOrder: Encodable, Sendable {
    var goodsId: Int
    var quantity: Int
}

/// A change to an order.
struct OrderChange: Encodable, Sendable {
    var quantity: Int
}

/// The demo shop's endpoints, declared once and called as functions.
@API(service: "shop")
protocol ShopInterface: Sendable {
    @GET("goods/{id}", cache: .lifetime(.seconds(60)))
    func goods(id: Int) async throws(APIError) -> Goods

    @GET("goods")
    func goods(page: Int, pageSize page_size: Int) async throws(APIError) -> GoodsPage

    @HEAD("goods/{id}")
    func goodsHead(id: Int) async throws(APIError) -> APIResponse<NoContent>

    @POST("orders", retry: .never)
    func place(_ order: Body<NewOrder>) async throws(APIError) -> Order

    @PUT("orders/{id}")
    func change(order id: Int, to change: Body<OrderChange>) async throws(APIError) -> APIResponse<Order>

    @DELETE("orders/{id}")
    func cancel(order id: Int) async throws(APIError)

    @GET("exports/{name}")
    func export(_ name: String, to target: FileDownload) async throws(APIError) -> FileDownload.File

    @GET("goods", paging: Paging.Settings(size: 100, endOfList: .totalCount))
    func catalogue() async throws(APIError) -> Paging.Pages<GoodsPage>
}

/// Methods with policies of their own, over the shop service's.
@API(service: "shop")
protocol ShopPolicies: Sendable {
    @GET("flaky/{key}", retry: .never)
    func once(key: String, failures: Int) async throws(APIError) -> FlakyReport

    @GET("flaky/{key}", retry: RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(10)))
    func persistently(key: String, failures: Int) async throws(APIError) -> APIResponse<FlakyReport>

    @GET("slow", retry: .never, timeouts: HTTPRequest.Timeouts(total: .milliseconds(300)))
    func slow(ms: Int) async throws(APIError) -> [String: Int]
}

/// A kind of thing, sent as its raw value.
enum Shelf: String, Encodable, Sendable {
    case top, bottom
}

/// A filter sent as a parameter: any `Encodable` value goes as its JSON's members.
struct Window: Encodable, Sendable {
    var from: Int
    var to: Int
}

/// A note sent as a JSON body.
struct Note: Encodable, Sendable {
    var text: String
    var pinned: Bool
}

/// An interface over the request mirror: every kind of argument, and every kind of result.
@API(service: "mirror", pathPrefix: "things", headers: ["X-Client": "interface", "Accept": "application/json"])
protocol MirrorInterface: Sendable {
    @GET("{kind}/{id}", headers: ["Accept": "application/vnd.things+json"])
    func thing(kind: String, id: Int, limit: Int?, tags: [String], shelf: Shelf, since: Date, window: Window, extra: Parameters)
        async throws(APIError) -> RequestMirror.Mirrored

    @GET("headers")
    func headers(requestID: Header<String>, ifNoneMatch: Header<String?>, xTraceID: Header<Int>) async throws(APIError) -> RequestMirror.Mirrored

    @DELETE("pets/{petId}")
    func deletePet(petId: Int, apiKey `api_key`: Header<String>, requestID `X-Request-ID`: Header<String>) async throws(APIError) -> RequestMirror.Mirrored

    @POST("pets/{petId}")
    func updatePet(petId: Int, name: Query<String>, status: Query<String?>) async throws(APIError) -> RequestMirror.Mirrored

    @POST("forms", encoding: .form)
    func form(name: String, count: Int, search q: Query<String>, flags: Query<[String]>) async throws(APIError) -> RequestMirror.Mirrored

    @POST("notes")
    func post(_ note: Body<Note>, shelf: Shelf) async throws(APIError) -> APIResponse<RequestMirror.Mirrored>

    @PATCH("notes/{id}")
    func patch(id: Int, _ note: Body<Note>) async throws(APIError) -> RequestMirror.Mirrored

    @POST("uploads")
    func upload(title: Part<String>, caption: Part<String?>, bytes: Part<Data>, file: Part<URL>) async throws(APIError) -> RequestMirror.Mirrored

    @PUT("uploads/{id}")
    func upload(id: Int, form: HTTPRequest.MultipartForm) async throws(APIError) -> RequestMirror.Mirrored

    @GET("measure")
    func measure(_ value: Double) async throws(APIError) -> RequestMirror.Mirrored

    @GET("feed")
    func lines(xAnswerStatus: Header<Int>, xAnswerBody: Header<String>) async throws(APIError) -> HTTPResponse.Streaming.Body.Lines

    @GET("feed")
    func events(xAnswerEvents: Header<[String]>) async throws(APIError) -> HTTPResponse.Streaming.Body.ServerSentEvents

    @GET("feed")
    func raw() async throws(APIError) -> HTTPResponse.Streaming

    @DELETE("things/{id}")
    func remove(id: Int) async throws(APIError) -> NoContent

    @GET("listing/{owner}", paging: Paging.Settings(style: .link, size: 2, sizeParameter: "per_page"))
    func listing(owner: String, sort: String, pages `X-Answer-Pages`: Header<Int>) async throws(APIError) -> Paging.Pages<RequestMirror.Mirrored>

    @GET("listing")
    func listing(_ value: Double) async throws(APIError) -> Paging.Pages<RequestMirror.Mirrored>
}

/// A mirrored request is a page of one (the mirror's `Link` says whether more follow).
extension RequestMirror.Mirrored: Paging.PageContent {
    public var pageItemCount: Int { 1 }
}

/// Hears the delegate face's outcomes.
private final class Heard: APIManagerDelegate {
    let outcomes = Collected<Result<String, APIError>>()
    var all: [Result<String, APIError>] { outcomes.values }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        outcomes.append(.success("\(response.content)"))
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        outcomes.append(.failure(error))
    }
}

@Suite("Typed interfaces: the demo shop through an @API protocol", .timeLimit(.minutes(2)))
struct ShopInterfaceTests {
    private func client() async throws -> (ShopInterfaceClient, ShopStack) {
        let stack = try await ShopStack.make()
        return (ShopInterfaceClient(registry: stack.registry, proxy: stack.proxy, cache: stack.cache), stack)
    }

    @Test func aMethodIsAnEndpointCalledThroughTheService() async throws {
        let (shop, stack) = try await client()
        let cup = try await shop.goods(id: 42)
        #expect(cup.id == 42)
        // The method's cache policy: a second call is answered without sending.
        let before = stack.transport.sent
        #expect(try await shop.goods(id: 42) == cup)
        #expect(stack.transport.sent == before)

        let page = try await shop.goods(page: 2, pageSize: 5)
        #expect(page.page == 2)
        #expect(page.pageSize == 5)
        #expect(page.items.map(\.id) == Array(6...10))

        let head = try await shop.goodsHead(id: 42)
        #expect(head.statusCode == 200)
        #expect(head.headers["ETag"] != nil)
    }

    @Test func bodiesAndEveryMethodReachTheShop() async throws {
        let (shop, _) = try await client()
        let order = try await shop.place(NewOrder(goodsId: 7, quantity: 2))
        #expect(order.goodsId == 7)
        #expect(order.quantity == 2)
        let changed = try await shop.change(order: order.id, to: OrderChange(quantity: 5))
        #expect(changed.statusCode == 200)
        #expect(changed.content.quantity == 5)
        try await shop.cancel(order: order.id)
        // Gone: the shop's 404 is the call's error, with its message.
        let missing = await #expect(throws: APIError.self) { try await shop.cancel(order: order.id) }
        #expect(missing?.kind == .httpStatus)
        #expect(missing?.statusCode == 404)
        #expect(missing?.path == "orders/{id}")
    }

    @Test func aDownloadGoesToItsFile() async throws {
        let (shop, _) = try await client()
        let folder = FileManager.default.temporaryDirectory.appending(path: "interface-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try await shop.export("catalogue.csv", to: FileDownload(to: folder.appending(path: "catalogue.csv")))
        let text = try String(contentsOf: file.url, encoding: .utf8)
        #expect(file.byteCount == Int64(text.utf8.count))
        #expect(text.hasPrefix("id,"))
        let refused = await #expect(throws: APIError.self) {
            try await shop.export("nothing.csv", to: FileDownload(to: folder.appending(path: "nothing.csv")))
        }
        #expect(refused?.statusCode == 404)
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "nothing.csv").path))
    }

    /// The delegate face: a method as a manager that loads that call each time.
    @Test func aMethodAsAManagerTellsItsDelegate() async throws {
        let (shop, _) = try await client()
        let heard = Heard()
        let detail = shop.managers.goods(id: 42)
        detail.callbackExecutor = .immediate
        detail.delegate = heard
        let first = detail.loadData()
        let second = detail.loadData()
        #expect(first != second)
        _ = await heard.outcomes.wait(count: 2)
        for outcome in heard.all {
            guard case .success(let text) = outcome else { Issue.record("\(outcome)"); continue }
            #expect(text.contains("id: 42"))
        }
        let missing = shop.managers.goods(id: 999_999)
        missing.callbackExecutor = .immediate
        missing.delegate = heard
        missing.loadData()
        _ = await heard.outcomes.wait(count: 3)
        guard case .failure(let error) = heard.all.last else { Issue.record("no failure"); return }
        #expect(error.statusCode == 404)
    }

    /// A method that returns pages: each loaded as it is iterated, until the last.
    @Test func aPagedMethodGivesEveryPageOnce() async throws {
        let (shop, stack) = try await client()
        let pages = try await shop.catalogue()
        #expect(stack.transport.sent == 0)
        var ids: [Int] = []
        var numbers: [Int] = []
        for try await page in pages {
            ids += page.content.items.map(\.id)
            numbers.append(page.content.page)
        }
        #expect(ids == Array(1...1003))
        #expect(numbers == Array(1...11))
        #expect(stack.transport.sent == 11)
    }

    /// Its delegate face: a paged manager whose pages carry the call's arguments.
    @Test func aPagedMethodAsAManagerLoadsPageAfterPage() async throws {
        let (shop, _) = try await client()
        let heard = Heard()
        let catalogue = shop.managers.catalogue()
        catalogue.callbackExecutor = .immediate
        catalogue.delegate = heard
        catalogue.loadFirstPage()
        _ = await heard.outcomes.wait(count: 1)
        #expect(catalogue.loadNextPage() != nil)
        _ = await heard.outcomes.wait(count: 2)
        #expect(catalogue.pagingState.loadedItems == 200)
        guard case .success(let second) = heard.all.last else { Issue.record("\(heard.all)"); return }
        #expect(second.contains("page: 2"))
    }
}

@Suite("Typed interfaces: a method's own policies, and the four ways side by side", .timeLimit(.minutes(2)))
struct InterfacePolicyTests {
    /// What `@GET(…)`'s options become: the endpoint under the interface's prefix and headers.
    @Test func aMethodsEndpointCarriesItsOptions() {
        let context = InterfaceContext(
            interface: "Shop", service: "shop", pathPrefix: "v2/", headers: ["Accept": "application/json", "X-Client": "shop"],
            registry: ServiceRegistry(processEnvironment: [:]), proxy: APIProxy(transport: StubTransport()), cache: ResponseCache())
        let method = context.method(
            "goods(id:)", .get, "/goods/{id}", as: Goods.self, headers: ["Accept": "text/csv"], cache: .lifetime(.seconds(5)), retry: .never,
            timeouts: HTTPRequest.Timeouts(total: .seconds(1)), authenticated: false, coalesces: true)
        #expect(method.name == "Shop.goods(id:)")
        #expect(method.endpoint.service == "shop")
        #expect(method.endpoint.method == .get)
        #expect(method.endpoint.path == "v2/goods/{id}")
        #expect(method.endpoint.headers["Accept"] == "text/csv")
        #expect(method.endpoint.headers["X-Client"] == "shop")
        #expect(method.endpoint.cachePolicy == .lifetime(.seconds(5)))
        #expect(method.endpoint.retryPolicy == .never)
        #expect(method.endpoint.timeouts?.total == .seconds(1))
        #expect(!method.endpoint.usesAuthenticator)
        #expect(method.endpoint.coalescesIdenticalRequests)
        let form = context.method("send(_:)", .post, "forms", as: NoContent.self, encoding: .form)
        #expect(form.endpoint.bodyEncoding == .form)
        #expect(form.endpoint.usesAuthenticator)
        #expect(context.method("cdn()", .get, "https://cdn.example/a.json", as: NoContent.self).endpoint.path == "https://cdn.example/a.json")
    }

    @Test func aMethodsRetryAndTimeoutsAreItsOwn() async throws {
        let stack = try await ShopStack.make()
        let shop = ShopPoliciesClient(registry: stack.registry, proxy: stack.proxy, cache: stack.cache)
        // The shop's service retries twice; this method never does.
        let refused = await #expect(throws: APIError.self) { try await shop.once(key: UUID().uuidString, failures: 1) }
        #expect(refused?.statusCode == 503)
        #expect(refused?.attempts == 1)
        // This one retries three times: the fourth attempt succeeds.
        let answered = try await shop.persistently(key: UUID().uuidString, failures: 3)
        #expect(answered.content.attempts == 4)
        // 300 ms for the whole call, against a shop that takes 5 s.
        let started = ContinuousClock.now
        let late = await #expect(throws: APIError.self) { try await shop.slow(ms: 5_000) }
        #expect(late?.kind == .timeout)
        #expect(ContinuousClock.now - started < .seconds(4))
    }

    /// The same endpoint as a subclass, a value, an interface and a define: the same answer.
    @Test func theFourWaysLoadTheSameGoods() async throws {
        let stack = try await ShopStack.make()
        try stack.registry.register([APIDefine(name: "goods.detail", service: "shop", path: "goods/{id}")])
        let bySubclass = try await stack.manager("goods/{id}", Goods.self).load(["id": 42]).content
        let byValue = try await APIManager(Endpoint<Goods>(service: "shop", path: "goods/{id}"), proxy: stack.proxy, registry: stack.registry, cache: stack.cache)
            .load(["id": 42]).content
        let byInterface = try await ShopInterfaceClient(registry: stack.registry, proxy: stack.proxy, cache: stack.cache).goods(id: 42)
        let byName = try await DefinedAPI("goods.detail", registry: stack.registry, proxy: stack.proxy, cache: stack.cache).load(["id": 42], as: Goods.self).content
        #expect(byInterface.id == 42)
        #expect([bySubclass, byValue, byName].allSatisfy { $0 == byInterface })
    }
}

@Suite("Typed interfaces: arguments and results, as a server receives them", .timeLimit(.minutes(2)))
struct MirrorInterfaceTests {
    private struct MirrorService: Service {
        var name: ServiceName = "mirror"
        var environments: [ServiceEnvironment.Name: ServiceEnvironment]
        var arrayEncoding: Parameters.ArrayEncoding = .repeatedKeys
        func commonHeaders() -> HTTPHeaders { ["X-Service": "mirror"] }
    }

    private func client() async throws -> (MirrorInterfaceClient, RequestMirror) {
        let mirror = try await RequestMirror.start()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(MirrorService(environments: [.online: ServiceEnvironment(baseURL: mirror.server.baseURL(), apiVersion: "v1")]))
        return (MirrorInterfaceClient(registry: registry, proxy: APIProxy(transport: CurlTransport.shared), cache: ResponseCache()), mirror)
    }

    @Test func plainArgumentsFillThePathAndTheQuery() async throws {
        let (things, mirror) = try await client()
        let since = Date(timeIntervalSince1970: 1_795_341_600)
        let sent = try await things.thing(
            kind: "cups", id: 7, limit: nil, tags: ["blue", "tall"], shelf: .top, since: since, window: Window(from: 1, to: 9), extra: ["lang": "en"])
        #expect(sent.method == "GET")
        #expect(sent.path == "/v1/things/cups/7")
        // The path's placeholders taken out; nil left out; a list as the service writes arrays; an
        // enumeration as its raw value; a date in ISO 8601; an Encodable value as its members.
        #expect(sent.query == "lang=en&shelf=top&since=2026-11-22T10%3A00%3A00Z&tags=blue&tags=tall&window%5Bfrom%5D=1&window%5Bto%5D=9")
        // The method's Accept over the interface's; the interface's and the service's headers.
        #expect(sent.headers["accept"] == "application/vnd.things+json")
        #expect(sent.headers["x-client"] == "interface")
        #expect(sent.headers["x-service"] == "mirror")
        await mirror.stop()
    }

    @Test func headerArgumentsAreNamedInTheHeadersCase() async throws {
        let (things, mirror) = try await client()
        let sent = try await things.headers(requestID: "r-1", ifNoneMatch: nil, xTraceID: 42)
        #expect(sent.headers["request-id"] == "r-1")
        #expect(sent.headers["x-trace-id"] == "42")
        #expect(sent.headers["if-none-match"] == nil)
        let tagged = try await things.headers(requestID: "r-2", ifNoneMatch: "\"v1\"", xTraceID: 1)
        #expect(tagged.headers["if-none-match"] == "\"v1\"")
        await mirror.stop()
    }

    /// A name in backticks is the header's own, whatever its form: what a document names.
    @Test func aHeaderArgumentInBackticksGoesUnderThatName() async throws {
        let (things, mirror) = try await client()
        let sent = try await things.deletePet(petId: 7, apiKey: "k-1", requestID: "r-9")
        #expect(sent.method == "DELETE" && sent.path == "/v1/things/pets/7" && sent.query.isEmpty)
        #expect(sent.headers["api_key"] == "k-1")
        #expect(sent.headers["x-request-id"] == "r-9")
        await mirror.stop()
    }

    @Test func aPOSTWhoseArgumentsAreAllInThePathAndTheQuerySendsNoBody() async throws {
        let (things, mirror) = try await client()
        let sent = try await things.updatePet(petId: 7, name: "Rex", status: nil)
        #expect(sent.method == "POST" && sent.path == "/v1/things/pets/7")
        #expect(sent.query == "name=Rex")
        #expect(sent.body.isEmpty)
        #expect(sent.headers["content-type"] == nil)
        await mirror.stop()
    }

    @Test func aPostsPlainArgumentsAreItsBodyAndQueryArgumentsStayInTheQuery() async throws {
        let (things, mirror) = try await client()
        let sent = try await things.form(name: "a&b", count: 3, search: "blue cups", flags: ["x", "y"])
        #expect(sent.method == "POST")
        #expect(sent.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(sent.body == "count=3&name=a%26b")
        #expect(sent.query == "flags=x&flags=y&q=blue%20cups")
        await mirror.stop()
    }

    @Test func aBodyArgumentIsTheJSONBody() async throws {
        let (things, mirror) = try await client()
        let response = try await things.post(Note(text: "hello", pinned: true), shelf: .bottom)
        #expect(response.statusCode == 200)
        #expect(response.content.body == #"{"pinned":true,"text":"hello"}"#)
        #expect(response.content.query == "shelf=bottom")
        #expect(response.content.headers["content-type"] == "application/json")
        let patched = try await things.patch(id: 3, Note(text: "x", pinned: false))
        #expect(patched.method == "PATCH")
        #expect(patched.path == "/v1/things/notes/3")
        await mirror.stop()
    }

    @Test func partArgumentsAreAMultipartForm() async throws {
        let (things, mirror) = try await client()
        let file = FileManager.default.temporaryDirectory.appending(path: "interface-part-\(UUID().uuidString).txt")
        try Data("file contents".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let sent = try await things.upload(title: "A cup", caption: nil, bytes: Data([0x41, 0x42]), file: file)
        #expect(sent.headers["content-type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(sent.body.contains("name=\"title\"\r\n\r\nA cup\r\n"))
        #expect(sent.body.contains("name=\"bytes\"; filename=\"bytes\""))
        #expect(sent.body.contains("\r\n\r\nAB\r\n"))
        #expect(sent.body.contains("filename=\"\(file.lastPathComponent)\""))
        #expect(sent.body.contains("file contents"))
        #expect(!sent.body.contains("caption"))

        var form = HTTPRequest.MultipartForm()
        form.append("note", "whole form")
        let whole = try await things.upload(id: 9, form: form)
        #expect(whole.method == "PUT")
        #expect(whole.body.contains("whole form"))
        await mirror.stop()
    }

    /// An argument that cannot be sent fails the call before anything is sent, naming it.
    @Test func anArgumentThatCannotBeSentFailsBeforeSending() async throws {
        let (things, mirror) = try await client()
        let refused = await #expect(throws: APIError.self) { try await things.measure(.nan) }
        #expect(refused?.kind == .invalidParameters)
        #expect(refused?.message.contains("MirrorInterface.measure(_:): the argument value (Double) cannot be sent") == true, "\(refused?.message ?? "")")
        #expect(mirror.requests.isEmpty)
        await mirror.stop()
    }

    /// Linked pages: the next page is where the previous one's `Link` points, and a header
    /// argument goes with every page, though the link carries the query.
    @Test func aPagedMethodFollowsLinksAndSendsItsHeadersOnEveryPage() async throws {
        let (things, mirror) = try await client()
        var pages = 0
        for try await page in try await things.listing(owner: "acme", sort: "new", pages: 3) {
            pages += 1
            #expect(page.content.headers["x-answer-pages"] == "3")
        }
        #expect(pages == 3)
        let sent = mirror.requests
        #expect(sent.map(\.path) == Array(repeating: "/v1/things/listing/acme", count: 3))
        #expect(sent.map(\.query) == ["per_page=2&sort=new", "page=2&per_page=2&sort=new", "page=3&per_page=2&sort=new"])
        await mirror.stop()
    }

    /// A paged method whose argument cannot be sent fails the call itself, nothing sent.
    @Test func aPagedMethodWithAnArgumentThatCannotBeSentFailsAtTheCall() async throws {
        let (things, mirror) = try await client()
        let refused = await #expect(throws: APIError.self) { _ = try await things.listing(.nan) }
        #expect(refused?.kind == .invalidParameters)
        #expect(refused?.message.hasPrefix("MirrorInterface.listing(_:): the argument value (Double) cannot be sent") == true, "\(refused?.message ?? "")")
        // Its manager fails its first page the same way.
        let heard = Heard()
        let manager = things.managers.listing(.nan)
        manager.callbackExecutor = .immediate
        manager.delegate = heard
        manager.loadFirstPage()
        _ = await heard.outcomes.wait(count: 1)
        guard case .failure(let error) = heard.all.first else { Issue.record("\(heard.all)"); return }
        #expect(error.kind == .invalidParameters)
        #expect(mirror.requests.isEmpty)
        await mirror.stop()
    }

    @Test func streamsHandOverTheBodyAsItComes() async throws {
        let (things, mirror) = try await client()
        var lines: [String] = []
        for try await line in try await things.lines(xAnswerStatus: 200, xAnswerBody: "one") { lines.append(line) }
        #expect(lines == ["one"])
        var events: [String] = []
        for try await event in try await things.events(xAnswerEvents: ["a", "b"]) { events.append(event.data) }
        #expect(events == ["a", "b"])
        let raw = try await things.raw()
        #expect(raw.statusCode == 200)
        var bytes = 0
        for try await chunk in raw.body { bytes += chunk.count }
        #expect(bytes > 0)
        let nothing: NoContent = try await things.remove(id: 1)
        _ = nothing
        #expect(mirror.requests.last?.method == "DELETE")
        await mirror.stop()
    }
}

@Suite("Typed interfaces: the generated mock", .timeLimit(.minutes(2)))
struct InterfaceMockTests {
    @Test func aMockAnswersFromItsClosuresAndRecordsEveryCall() async throws {
        let shop = ShopInterfaceMock()
        shop.onGoodsId = { id in Goods(id: id, title: "Cup \(id)", priceCents: 100) }
        shop.onPlace = { order in Order(id: 1, goodsId: order.goodsId, quantity: order.quantity, status: "placed") }
        #expect(try await shop.goods(id: 7).title == "Cup 7")
        #expect(try await shop.place(NewOrder(goodsId: 7, quantity: 2)).quantity == 2)
        #expect(shop.calls.map(\.method) == ["goods(id:)", "place(_:)"])
        #expect(shop.calls[0]["id"] as? Int == 7)
        #expect((shop.calls[1]["order"] as? NewOrder)?.quantity == 2)
        #expect(shop.calls[0].description == "goods(id: 7)")
        #expect(shop.recorder.calls(to: "place(_:)").count == 1)
    }

    /// A paged method's mock answers with pages it is given, and an error after them if set.
    @Test func aPagedMethodsMockGivesThePagesItIsGiven() async throws {
        let shop = ShopInterfaceMock()
        let cups = [Goods(id: 1, title: "Cup", priceCents: 100), Goods(id: 2, title: "Saucer", priceCents: 50)]
        let pages = [GoodsPage(items: [cups[0]], page: 1, pageSize: 1, total: 2, hasMore: true), GoodsPage(items: [cups[1]], page: 2, pageSize: 1, total: 2, hasMore: false)]
        shop.onCatalogue = { Paging.Pages(pages) }
        var given: [GoodsPage] = []
        for try await page in try await shop.catalogue() {
            #expect(page.statusCode == 200)
            given.append(page.content)
        }
        #expect(given == pages)
        let offline = APIError(.noNetwork, loadID: LoadID(rawValue: 0), service: "shop", path: "goods", message: "offline")
        shop.onCatalogue = { Paging.Pages([pages[0]], thenFailingWith: offline) }
        var iterator = try await shop.catalogue().makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.content == pages[0])
        var failure: APIError?
        do { _ = try await iterator.next() } catch { failure = error }
        #expect(failure?.kind == .noNetwork)
        let after = try await iterator.next()
        #expect(after == nil)
        #expect(shop.calls.map(\.method) == ["catalogue()", "catalogue()"])
    }

    @Test func aCallWithoutAnAnswerFailsNamingWhatToSet() async throws {
        let shop = ShopInterfaceMock()
        let error = await #expect(throws: APIError.self) { try await shop.goods(page: 1, pageSize: 5) }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "ShopInterfaceMock has no answer for goods(page:pageSize:): set its onGoodsPagePageSize")
        #expect(shop.calls.map(\.description) == ["goods(page: 1, page_size: 5)"])
        // Code written against the protocol takes the mock as it takes the client.
        let api: any ShopInterface = shop
        shop.onCancelOrder = { _ in }
        try await api.cancel(order: 3)
        #expect(shop.calls.last?["id"] as? Int == 3)
    }
}
