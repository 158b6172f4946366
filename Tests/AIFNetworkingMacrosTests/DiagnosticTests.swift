#if Interfaces
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Each misuse of `@API` or an HTTP method attribute is an error where it is written, as the
/// code compiles; nothing is generated then (but for an option a method has no use for, left
/// out of what is generated), so a misuse never reaches run time.
@Suite("@API: a compile-time error for each misuse")
struct DiagnosticTests {
    @Test func onlyAProtocolDeclaresAnInterface() {
        expectExpansion(
            #"""
            @API(service: "shop")
            struct Shop {}
            """#,
            expands: "struct Shop {}",
            diagnostics: [DiagnosticSpec(message: "@API declares a service's endpoints as a protocol; attach it to a protocol", line: 1, column: 1)])
    }

    @Test func everyMemberIsAMethodWithAnHTTPMethod() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                var version: String { get }
                func goods(id: Int) async throws(APIError) -> Goods
            }
            """#,
            expands: #"""
            protocol Shop {
                var version: String { get }
                func goods(id: Int) async throws(APIError) -> Goods
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "Shop declares a property (version: String { get }); an @API protocol declares only methods, each marked @GET, @POST, @PUT, @PATCH, @DELETE or @HEAD",
                    line: 3, column: 5),
                DiagnosticSpec(message: #"goods(id:) has no HTTP method: mark it @GET("path"), @POST, @PUT, @PATCH, @DELETE or @HEAD"#, line: 4, column: 10),
            ])
    }

    @Test func aMethodHasOneHTTPMethod() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods") @POST("goods")
                func goods() async throws(APIError) -> [Goods]
            }
            """#,
            expands: #"""
            protocol Shop {

                func goods() async throws(APIError) -> [Goods]
            }
            """#,
            diagnostics: [DiagnosticSpec(message: "goods() has two HTTP methods (@GET and @POST); a call sends one: keep one", line: 3, column: 19)])
    }

    @Test func aPathIsAStringLiteral() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods/\(kind)")
                func goods() async throws(APIError) -> [Goods]
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods() async throws(APIError) -> [Goods]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "the path of goods() must be a string literal without interpolation, so that its placeholders are checked as it compiles", line: 3,
                    column: 10)
            ])
    }

    @Test func aPlaceholderIsClosed() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods/{id")
                func goods(id: Int) async throws(APIError) -> Goods
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods(id: Int) async throws(APIError) -> Goods
            }
            """#,
            diagnostics: [DiagnosticSpec(message: "the path goods/{id of goods(id:) has a { without its }", line: 3, column: 10)])
    }

    @Test func aPlaceholderIsFilledByAnArgumentOfItsName() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods/{id}")
                func goods(identifier: Int) async throws(APIError) -> Goods
                @GET("orders/{id}")
                func order(id: Query<Int>) async throws(APIError) -> Order
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods(identifier: Int) async throws(APIError) -> Goods
                func order(id: Query<Int>) async throws(APIError) -> Order
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "the path goods/{id} of goods(identifier:) has {id}, and it has no argument of that name (its arguments: identifier)", line: 3, column: 10),
                DiagnosticSpec(message: "the path orders/{id} of order(id:) has {id}, and its argument id is a Query<Int>, not a plain argument", line: 5, column: 10),
            ])
    }

    @Test func aRequestSendsOneBody() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @POST("orders")
                func place(_ order: Body<NewOrder>, _ note: Body<Note>) async throws(APIError) -> Order
                @POST("uploads")
                func upload(_ order: Body<NewOrder>, photo: Part<URL>) async throws(APIError) -> Order
            }
            """#,
            expands: #"""
            protocol Shop {
                func place(_ order: Body<NewOrder>, _ note: Body<Note>) async throws(APIError) -> Order
                func upload(_ order: Body<NewOrder>, photo: Part<URL>) async throws(APIError) -> Order
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "place(_:_:) has two bodies (order, note); a request sends one: make one of them a Part, a Query, or a plain argument", line: 4,
                    column: 15),
                DiagnosticSpec(
                    message: "upload(_:photo:) has two bodies (order, photo); a request sends one: make one of them a Part, a Query, or a plain argument", line: 6,
                    column: 16),
            ])
    }

    @Test func aGETSendsNoBody() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods")
                func search(_ filter: Body<Filter>) async throws(APIError) -> [Goods]
            }
            """#,
            expands: #"""
            protocol Shop {
                func search(_ filter: Body<Filter>) async throws(APIError) -> [Goods]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "search(_:) sends a body (filter) with GET, which carries none: send it with @POST or @PUT, or as plain arguments (the query)", line: 4,
                    column: 16)
            ])
    }

    @Test func aMethodIsAsyncAndThrowsWithAFixIt() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods")
                func goods() -> [Goods]
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods() -> [Goods]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "goods() must be async throws(APIError): a call waits for the network, and can fail", line: 4, column: 15,
                    fixIts: [FixItSpec(message: "make it async throws(APIError)")])
            ],
            applyingFixIts: ["make it async throws(APIError)"],
            fixedSource: #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods")
                func goods() async throws(APIError) -> [Goods]
            }
            """#)
    }

    /// An option the method has no use for is reported on itself, with a fix-it that removes it;
    /// the client is still generated without it, so that no unrelated error follows.
    @Test func anOptionTheMethodHasNoUseForIsReportedOnItself() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @POST("logout", cache: .lifetime(.seconds(5)))
                func logout() async throws(APIError)
            }
            """#,
            expands: #"""
            protocol Shop {
                func logout() async throws(APIError)
            }

            /// Calls ``Shop``'s endpoints through the same pipeline as a manager's: generated by `@API`.
            struct ShopClient: Shop, Sendable {
                private let method0: AIFNetworkingInterfaces.InterfaceMethod<AIFNetworking.NoContent>
                /// A client whose calls go through `proxy` to the services of `registry`, their responses cached in `cache`.
                init(registry: AIFNetworking.ServiceRegistry = .shared, proxy: AIFNetworking.APIProxy = .shared, cache: AIFNetworking.ResponseCache = .shared) {
                    let context = AIFNetworkingInterfaces.InterfaceContext(interface: "Shop", service: "shop", registry: registry, proxy: proxy, cache: cache)
                    method0 = context.method("logout()", .post, "logout", as: AIFNetworking.NoContent.self)
                }
                func logout() async throws(APIError) {
                    try await method0.perform(Self.arguments0())
                }
                private static func arguments0() -> AIFNetworkingInterfaces.InterfaceArguments {
                    AIFNetworkingInterfaces.InterfaceArguments()
                }
                /// Each method as a manager that loads one call, for screens that hear outcomes through delegates.
                var managers: Managers {
                    Managers(client: self)
                }
                /// ``Shop``'s methods as managers: each returns a manager that loads that call whenever `loadData()` is called.
                struct Managers: Sendable {
                    let client: ShopClient
                    /// A manager that loads `logout()` with these arguments.
                    func logout() -> AIFNetworking.APIManager<AIFNetworking.NoContent> {
                        client.method0.manager(ShopClient.arguments0())
                    }
                }
            }

            /// Answers ``Shop``'s calls from closures and records them, for tests: generated by `@API`.
            final class ShopMock: Shop, Sendable {
                /// The calls made so far, and the answers set.
                let recorder = AIFNetworkingInterfaces.InterfaceMock(interface: "Shop")
                /// A mock without answers: set one for each method a test calls.
                init() {
                }
                /// Every call so far, in order.
                var calls: [AIFNetworkingInterfaces.InterfaceMock.Call] {
                    recorder.calls
                }
                /// Answers `logout()`; a call without an answer fails.
                var onLogout: (@Sendable () async throws(APIError) -> Void)? {
                    get {
                        recorder.answer(for: "logout()")
                    }
                    set {
                        recorder.setAnswer(newValue, for: "logout()")
                    }
                }
                func logout() async throws(APIError) {
                    recorder.record("logout()", [])
                    guard let answer = onLogout else {
                        throw recorder.unanswered("logout()", property: "onLogout")
                    }
                    return try await answer()
                }
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "cache: keeps the answers of a GET; a POST's answer is never served from the cache: remove it, or make the method @GET if it only reads",
                    line: 3, column: 21, fixIts: [FixItSpec(message: "remove cache:")])
            ],
            applyingFixIts: ["remove cache:"],
            fixedSource: #"""
            @API(service: "shop")
            protocol Shop {
                @POST("logout")
                func logout() async throws(APIError)
            }
            """#)
    }

    @Test func pagesAreReadWithGETOrPOST() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @PUT("goods")
                func goods() async throws(APIError) -> Paging.Pages<GoodsPage>
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods() async throws(APIError) -> Paging.Pages<GoodsPage>
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "goods() returns pages with @PUT; a listing is read with @GET (or a search sent with @POST): change the method, or return one response",
                    line: 3, column: 5)
            ])
    }

    @Test func pagingOnAMethodThatReturnsOneAnswerIsReportedOnItself() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods", paging: Paging.Settings(size: 5))
                func goods() async throws(APIError) -> GoodsPage
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods() async throws(APIError) -> GoodsPage
            }

            /// Calls ``Shop``'s endpoints through the same pipeline as a manager's: generated by `@API`.
            struct ShopClient: Shop, Sendable {
                private let method0: AIFNetworkingInterfaces.InterfaceMethod<GoodsPage>
                /// A client whose calls go through `proxy` to the services of `registry`, their responses cached in `cache`.
                init(registry: AIFNetworking.ServiceRegistry = .shared, proxy: AIFNetworking.APIProxy = .shared, cache: AIFNetworking.ResponseCache = .shared) {
                    let context = AIFNetworkingInterfaces.InterfaceContext(interface: "Shop", service: "shop", registry: registry, proxy: proxy, cache: cache)
                    method0 = context.method("goods()", .get, "goods", as: GoodsPage.self)
                }
                func goods() async throws(APIError) -> GoodsPage {
                    try await method0.content(Self.arguments0())
                }
                private static func arguments0() -> AIFNetworkingInterfaces.InterfaceArguments {
                    AIFNetworkingInterfaces.InterfaceArguments()
                }
                /// Each method as a manager that loads one call, for screens that hear outcomes through delegates.
                var managers: Managers {
                    Managers(client: self)
                }
                /// ``Shop``'s methods as managers: each returns a manager that loads that call whenever `loadData()` is called.
                struct Managers: Sendable {
                    let client: ShopClient
                    /// A manager that loads `goods()` with these arguments.
                    func goods() -> AIFNetworking.APIManager<GoodsPage> {
                        client.method0.manager(ShopClient.arguments0())
                    }
                }
            }

            /// Answers ``Shop``'s calls from closures and records them, for tests: generated by `@API`.
            final class ShopMock: Shop, Sendable {
                /// The calls made so far, and the answers set.
                let recorder = AIFNetworkingInterfaces.InterfaceMock(interface: "Shop")
                /// A mock without answers: set one for each method a test calls.
                init() {
                }
                /// Every call so far, in order.
                var calls: [AIFNetworkingInterfaces.InterfaceMock.Call] {
                    recorder.calls
                }
                /// Answers `goods()`; a call without an answer fails.
                var onGoods: (@Sendable () async throws(APIError) -> GoodsPage)? {
                    get {
                        recorder.answer(for: "goods()")
                    }
                    set {
                        recorder.setAnswer(newValue, for: "goods()")
                    }
                }
                func goods() async throws(APIError) -> GoodsPage {
                    recorder.record("goods()", [])
                    guard let answer = onGoods else {
                        throw recorder.unanswered("goods()", property: "onGoods")
                    }
                    return try await answer()
                }
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "paging: says how the pages of a listing are asked for, and this method returns one answer: return Paging.Pages<Page> to page through it, or remove paging:",
                    line: 3, column: 19, fixIts: [FixItSpec(message: "remove paging:")])
            ],
            applyingFixIts: ["remove paging:"],
            fixedSource: #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods")
                func goods() async throws(APIError) -> GoodsPage
            }
            """#)
    }

    @Test func aDownloadNamesItsFileAndOnlyADownloadDoes() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("exports/{name}")
                func export(name: String) async throws(APIError) -> FileDownload.File
                @GET("exports/{name}")
                func export(name: String, to target: FileDownload) async throws(APIError) -> Goods
            }
            """#,
            expands: #"""
            protocol Shop {
                func export(name: String) async throws(APIError) -> FileDownload.File
                func export(name: String, to target: FileDownload) async throws(APIError) -> Goods
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "export(name:) returns a FileDownload.File and needs exactly one FileDownload argument, saying where the file goes (it has 0)", line: 4,
                    column: 16),
                DiagnosticSpec(
                    message: "export(name:to:) has a FileDownload argument (target) but does not return a FileDownload.File; only a download writes to a file", line: 6,
                    column: 16),
            ])
    }

    @Test func aStreamSendsNoMultipartForm() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @POST("imports")
                func importing(file: Part<URL>) async throws(APIError) -> HTTPResponse.Streaming.Body.ServerSentEvents
            }
            """#,
            expands: #"""
            protocol Shop {
                func importing(file: Part<URL>) async throws(APIError) -> HTTPResponse.Streaming.Body.ServerSentEvents
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "importing(file:) sends a multipart form (file) and streams its answer; a call does one or the other", line: 4, column: 19)
            ])
    }

    @Test func argumentsAreFixedValues() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods")
                func goods<T>(page: Int) async throws(APIError) -> T
                @GET("goods")
                func goods(ids: Int...) async throws(APIError) -> [Goods]
                @GET("goods")
                func goods(count: inout Int) async throws(APIError) -> [Goods]
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods<T>(page: Int) async throws(APIError) -> T
                func goods(ids: Int...) async throws(APIError) -> [Goods]
                func goods(count: inout Int) async throws(APIError) -> [Goods]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "goods(page:) is generic; the types of an @API method are fixed, as its endpoint decodes one type", line: 4, column: 10),
                DiagnosticSpec(message: "the argument ids of goods(ids:) is variadic; pass an array instead", line: 6, column: 16),
                DiagnosticSpec(message: "the argument count of goods(count:) is inout; an @API method takes its arguments by value", line: 8, column: 16),
            ])
    }

    @Test func theMockTellsMethodsApartByName() {
        expectExpansion(
            #"""
            @API(service: "shop")
            protocol Shop {
                @GET("goods/{id}")
                func goods(id: Int) async throws(APIError) -> Goods
                @GET("goods/{id}")
                func goods(id: String) async throws(APIError) -> Goods
                @GET("goods")
                func goodsId() async throws(APIError) -> Goods
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods(id: Int) async throws(APIError) -> Goods
                func goods(id: String) async throws(APIError) -> Goods
                func goodsId() async throws(APIError) -> Goods
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "Shop has two methods goods(id:); give them different argument labels, as its mock answers each method by name", line: 6, column: 10),
                DiagnosticSpec(message: "goodsId() and goods(id:) would both be answered by the mock's onGoodsId; rename one of them", line: 8, column: 10),
            ])
    }

    @Test func anHTTPMethodOutsideAnInterfaceIsAnError() {
        expectExpansion(
            #"""
            protocol Shop {
                @GET("goods")
                func goods() async throws(APIError) -> [Goods]
            }
            """#,
            expands: #"""
            protocol Shop {
                func goods() async throws(APIError) -> [Goods]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@GET marks a method of a protocol declared with @API; this method is not in one", line: 2, column: 5)
            ])
    }
}
#endif
