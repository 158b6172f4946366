#if Interfaces
// An option a method has no use for, written where an HTTP method attribute takes its options:
// one error at the attribute saying why (beside the @API macro's, with a fix-it that removes
// it), instead of "extra argument" and errors about the option's value. Never usable.

/// `cache:` on a POST: an error where it is written.
@available(*, unavailable, message: "cache: keeps the answers of a GET; a POST's answer is never served from the cache")
@attached(peer)
public macro POST(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, cache: ResponseCache.Policy?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, paging: Paging.Settings? = nil
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `cache:` on a PUT: an error where it is written.
@available(*, unavailable, message: "cache: keeps the answers of a GET; a PUT's answer is never served from the cache")
@attached(peer)
public macro PUT(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, cache: ResponseCache.Policy?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `cache:` on a PATCH: an error where it is written.
@available(*, unavailable, message: "cache: keeps the answers of a GET; a PATCH's answer is never served from the cache")
@attached(peer)
public macro PATCH(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, cache: ResponseCache.Policy?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `cache:` on a DELETE: an error where it is written.
@available(*, unavailable, message: "cache: keeps the answers of a GET; a DELETE's answer is never served from the cache")
@attached(peer)
public macro DELETE(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, cache: ResponseCache.Policy?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `cache:` on a HEAD: an error where it is written.
@available(*, unavailable, message: "cache: keeps the answers of a GET; a HEAD's answer is never served from the cache")
@attached(peer)
public macro HEAD(
    _ path: String, headers: HTTPHeaders = [:], cache: ResponseCache.Policy?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `encoding:` on a GET: an error where it is written.
@available(*, unavailable, message: "encoding: says how a body is encoded, and a GET sends none")
@attached(peer)
public macro GET(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, paging: Paging.Settings? = nil
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `encoding:` on a HEAD: an error where it is written.
@available(*, unavailable, message: "encoding: says how a body is encoded, and a HEAD sends none")
@attached(peer)
public macro HEAD(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding?, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")
/// `paging:` on a PUT: an error where it is written.
@available(*, unavailable, message: "paging: pages a listing read with GET (or a search sent with POST); a PUT is not paged")
@attached(peer)
public macro PUT(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, paging: Paging.Settings?
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `paging:` on a PATCH: an error where it is written.
@available(*, unavailable, message: "paging: pages a listing read with GET (or a search sent with POST); a PATCH is not paged")
@attached(peer)
public macro PATCH(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, paging: Paging.Settings?
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `paging:` on a DELETE: an error where it is written.
@available(*, unavailable, message: "paging: pages a listing read with GET (or a search sent with POST); a DELETE is not paged")
@attached(peer)
public macro DELETE(
    _ path: String, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil, retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, paging: Paging.Settings?
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")

/// `paging:` on a HEAD: an error where it is written.
@available(*, unavailable, message: "paging: pages a listing read with GET (or a search sent with POST); a HEAD's answer has no body to page")
@attached(peer)
public macro HEAD(
    _ path: String, headers: HTTPHeaders = [:], retry: RetryPolicy? = nil,
    timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, paging: Paging.Settings?
) = #externalMacro(module: "AIFNetworkingMacros", type: "HTTPMethodMacro")
#endif
