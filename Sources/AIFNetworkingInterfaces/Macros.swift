#if Interfaces
/// Declares a service's endpoints as a protocol, and generates a client that calls them and a
/// mock that answers them in tests.
///
/// ```swift
/// @API(service: "shop")
/// protocol ShopAPI {
///     @GET("goods/{id}") func goods(id: Int) async throws(APIError) -> Goods
///     @GET("goods") func goods(page: Int, pageSize: Int) async throws(APIError) -> GoodsPage
///     @POST("orders") func place(_ order: Body<NewOrder>) async throws(APIError) -> Order
/// }
///
/// let shop = ShopAPIClient()
/// let cup = try await shop.goods(id: 42)
/// ```
///
/// Beside the protocol it generates `ShopAPIClient`, a `Sendable` struct whose methods run
/// through the same pipeline as a manager's (each method is an ``Endpoint`` underneath), and
/// `ShopAPIMock`, which answers each method from a closure and records the calls. The article
/// *Typed interfaces*, in AIFNetworking's documentation, lists each kind of argument and result.
///
/// - Parameters:
///   - service: The service every method calls.
///   - pathPrefix: Put before every method's path (`v2` makes `goods` `v2/goods`); none by default.
///   - headers: Headers every method sends, under the method's own.
@attached(peer, names: suffixed(Client), suffixed(Mock))
public macro API(service: ServiceName, pathPrefix: String = "", headers: HTTPHeaders = [:]) =
    #externalMacro(module: "AIFNetworkingMacros", type: "APIMacro")

/// A method of an ``API(service:pathPrefix:headers:)`` protocol that sends a GET request.
///
/// - Parameters:
///   - path: The path under the service's base URL, with `{name}` placeholders that arguments
///     of the same name fill; a string literal.
///   - headers: Headers of this method, over the interface's.
///   - cache: How its responses are cached; not at all by default.
///   - retry: When a failed call is sent again; the service's policy by default.
///   - timeouts: Its timeouts; the service's or the transport's by default.
///   - authenticated: Whether calls carry the service's credential; yes by default.
///   - coalesces: Whether identical calls in flight at once share one transfer; no by default.
///   - paging: How pages are asked for, for a method that returns `Paging.Pages<Page>`;
///     numbered pages of 20 ending on a short page by default.
@attached(peer)
public macro GET(
    _ path: String, headers: HTTPHeaders = [:], cache: ResponseCache.Policy? = nil, retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil,
    authenticated: Bool = true, coalesces: Bool = false, paging: Paging.Settings? = nil
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// A method of an ``API(service:pathPrefix:headers:)`` protocol that sends a HEAD request
/// (see ``GET(_:headers:cache:retry:timeouts:authenticated:coalesces:paging:)`` for the parameters).
@attached(peer)
public macro HEAD(
    _ path: String, headers: HTTPHeaders = [:], retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// A method of an ``API(service:pathPrefix:headers:)`` protocol that sends a POST request.
///
/// - Parameters:
///   - path: The path under the service's base URL, with `{name}` placeholders that arguments
///     of the same name fill; a string literal.
///   - headers: Headers of this method, over the interface's.
///   - encoding: How its body — a ``Body`` argument, or else its parameters — is encoded; the
///     service's choice by default.
///   - retry: When a failed call is sent again; the service's policy by default.
///   - timeouts: Its timeouts; the service's or the transport's by default.
///   - authenticated: Whether calls carry the service's credential; yes by default.
///   - paging: How pages are asked for, for a method that returns `Paging.Pages<Page>` (a
///     search whose query is a body, its paging parameters beside it); numbered pages of 20 by
///     default.
@attached(peer)
public macro POST(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil,
    authenticated: Bool = true, paging: Paging.Settings? = nil
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// A method of an ``API(service:pathPrefix:headers:)`` protocol that sends a PUT request (see
/// ``POST(_:headers:encoding:retry:timeouts:authenticated:paging:)`` for the parameters).
@attached(peer)
public macro PUT(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil,
    authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// A method of an ``API(service:pathPrefix:headers:)`` protocol that sends a PATCH request (see
/// ``POST(_:headers:encoding:retry:timeouts:authenticated:paging:)`` for the parameters).
@attached(peer)
public macro PATCH(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil,
    authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// A method of an ``API(service:pathPrefix:headers:)`` protocol that sends a DELETE request (see
/// ``POST(_:headers:encoding:retry:timeouts:authenticated:paging:)`` for the parameters).
@attached(peer)
public macro DELETE(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil,
    authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// An argument of an interface method that is the request's body, encoded as JSON (or as the
/// method's `encoding` says): `func place(_ order: Body<NewOrder>)`. Callers pass the value itself.
public typealias Body<Value: Encodable & Sendable> = Value

/// An argument of an interface method that goes in the query string whatever the method — a
/// POST's parameters otherwise go in its body: `func search(_ term: Query<String>)`.
public typealias Query<Value> = Value

/// An argument of an interface method sent as a header, named after the argument in the headers'
/// case: `requestID` is sent as `Request-ID`, `xTraceID` as `X-Trace-ID`, `ifNoneMatch` as
/// `If-None-Match`.
public typealias Header<Value> = Value

/// An argument of an interface method sent as a part of a multipart form, named after the
/// argument: text (`String`), bytes (`Data`), a file (a file `URL`), or a whole
/// `HTTPRequest.MultipartForm.Part`.
public typealias Part<Value> = Value
#endif
