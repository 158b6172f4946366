public import Foundation

/// A successful load: the decoded content with everything about how it was obtained.
public struct APIResponse<Content: Sendable>: Sendable {
    /// The load's ID.
    public var loadID: LoadID { storage.loadID }
    /// The HTTP status.
    public var statusCode: Int { storage.statusCode }
    /// The response headers.
    public var headers: HTTPHeaders { storage.headers }
    /// The body as received.
    public var data: Data { storage.data }
    /// The body decoded into the manager's content type.
    public var content: Content { storage.content }
    /// The request that was sent, signature included (see ``requestDescription`` for a form
    /// safe to show).
    public var request: HTTPRequest { storage.request }
    /// The parameters the load was made with, after reforming (before the service's common
    /// parameters and signing).
    public var parameters: Parameters { storage.parameters }
    /// Where it came from: the network, or the cache and how.
    public var origin: HTTPResponse.Origin { storage.origin }
    /// Whether it was served from the cache: no request was sent for this load, or the server
    /// answered `304 Not Modified` to a conditional one.
    public var isFromCache: Bool { storage.origin != .network }
    /// Whether it is older than its cache lifetime: served while a refresh runs, or because
    /// the network was gone (see ``origin``).
    public var isStale: Bool { storage.origin.isStale }
    /// The load whose stale answer this response refreshes, when it is the refresh load that
    /// ``ResponseCache/Policy/staleWhileRevalidate`` started; `nil` otherwise.
    public var refreshes: LoadID? { storage.refreshes }
    /// How the transfer went; for a cached response, the transfer that filled the cache.
    public var metrics: HTTPResponse.Metrics { storage.metrics }
    /// How many times the request was sent: 1, or more when the load was retried (see
    /// ``/AIFServices/RetryPolicy``) or when the transport sent it again on a fresh connection
    /// (a reused one had closed before answering; only a request safe to repeat).
    public var attempts: Int { storage.attempts }
    /// The HTTP version the response arrived over (of the stored response, for one from the
    /// cache).
    public var httpVersion: HTTPResponse.Version { storage.httpVersion }
    /// The warnings the server gave beside its success, where the service's
    /// ``/AIFServices/ServiceVeto/Rule/warningsField`` says (Slack's
    /// `response_metadata.warnings`: `["missing_charset"]`); empty when it gave none, or for an
    /// answer from the cache.
    public var warnings: [String] { storage.warnings }

    /// Everything, immutable and shared. A response is handed along the pipeline (result,
    /// cache, hooks, delegate) by copy: one reference is cheaper to copy than a dozen fields,
    /// and it keeps the struct's layout the same whatever `Content` is, so that code generic
    /// over the content type copies responses (and results holding them) without looking up
    /// their type metadata first.
    private let storage: ResponseStorage<Content>

    /// Creates a response; managers do this, and tests of reformers.
    ///
    /// - Parameters:
    ///   - loadID: The load's ID.
    ///   - response: The HTTP response.
    ///   - content: The decoded content.
    ///   - request: The request sent.
    ///   - parameters: The parameters used.
    ///   - origin: Where it came from; the network by default.
    ///   - attempts: How many times the request was sent; 1 by default.
    ///   - refreshes: The load whose stale answer it refreshes, if any.
    ///   - warnings: The warnings the server gave beside its success; none by default.
    @inline(__always)
    public init(
        loadID: LoadID, response: HTTPResponse, content: Content, request: HTTPRequest, parameters: Parameters,
        origin: HTTPResponse.Origin = .network, attempts: Int = 1, refreshes: LoadID? = nil, warnings: [String] = []
    ) {
        storage = ResponseStorage(
            loadID: loadID, statusCode: response.statusCode, headers: response.headers, data: response.body, request: request,
            parameters: parameters, origin: origin, metrics: response.metrics, attempts: attempts, refreshes: refreshes,
            httpVersion: response.httpVersion, warnings: warnings, content: content)
    }

    /// The request as a `curl` command with credentials and signatures shown as `***`.
    public var requestDescription: String { request.curlCommand(revealingSecrets: false) }

    /// The same response with other content (what a reformer or a paging helper hands on).
    ///
    /// - Parameter transform: Makes the new content from the old.
    /// - Returns: The response carrying the new content.
    public func map<Other: Sendable>(_ transform: (Content) throws -> Other) rethrows -> APIResponse<Other> {
        APIResponse<Other>(storage: storage.replacing(content: try transform(content)))
    }

    private init(storage: ResponseStorage<Content>) {
        self.storage = storage
    }
}

/// What an ``APIResponse`` holds. The content comes last, so that the other fields sit at the
/// same offsets whatever its type.
private final class ResponseStorage<Content: Sendable>: Sendable {
    let loadID: LoadID
    let statusCode: Int
    let headers: HTTPHeaders
    let data: Data
    let request: HTTPRequest
    let parameters: Parameters
    let origin: HTTPResponse.Origin
    let metrics: HTTPResponse.Metrics
    let attempts: Int
    let refreshes: LoadID?
    let httpVersion: HTTPResponse.Version
    let warnings: [String]
    let content: Content

    init(
        loadID: LoadID, statusCode: Int, headers: HTTPHeaders, data: Data, request: HTTPRequest, parameters: Parameters,
        origin: HTTPResponse.Origin, metrics: HTTPResponse.Metrics, attempts: Int, refreshes: LoadID?, httpVersion: HTTPResponse.Version,
        warnings: [String], content: Content
    ) {
        self.loadID = loadID
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.request = request
        self.parameters = parameters
        self.origin = origin
        self.metrics = metrics
        self.attempts = attempts
        self.refreshes = refreshes
        self.httpVersion = httpVersion
        self.warnings = warnings
        self.content = content
    }

    /// The same fields with other content.
    func replacing<Other: Sendable>(content: Other) -> ResponseStorage<Other> {
        ResponseStorage<Other>(
            loadID: loadID, statusCode: statusCode, headers: headers, data: data, request: request, parameters: parameters,
            origin: origin, metrics: metrics, attempts: attempts, refreshes: refreshes, httpVersion: httpVersion, warnings: warnings, content: content)
    }
}

/// The content type of endpoints that answer with no body (`204 No Content`, a `HEAD`): any
/// body is ignored, and an empty one is not a ``APIError/Kind/noContent`` failure.
public struct NoContent: Decodable, Sendable, Hashable {
    /// Creates the value.
    public init() {}

    /// Decodes nothing.
    public init(from decoder: any Decoder) throws {}
}
