import Foundation

/// A successful load: the decoded content with everything about how it was obtained.
public struct APIResponse<Content: Sendable>: Sendable {
    /// The load's ID.
    public var requestID: RequestID { storage.requestID }
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
    /// Whether it was served from the cache (no request was sent for this load).
    public var isFromCache: Bool { storage.isFromCache }
    /// How the transfer went; for a cached response, the transfer that filled the cache.
    public var metrics: TransferMetrics { storage.metrics }
    /// How many times the request was sent: 1, or more when the load was retried (see
    /// ``RetryPolicy``).
    public var attempts: Int { storage.attempts }

    /// Everything, immutable and shared. A response is handed along the pipeline (result,
    /// cache, hooks, delegate) by copy: one reference is cheaper to copy than a dozen fields,
    /// and it keeps the struct's layout the same whatever `Content` is, so that code generic
    /// over the content type copies responses (and results holding them) without looking up
    /// their type metadata first.
    private let storage: ResponseStorage<Content>

    /// Creates a response; managers do this, and tests of reformers.
    ///
    /// - Parameters:
    ///   - requestID: The load's ID.
    ///   - response: The HTTP response.
    ///   - content: The decoded content.
    ///   - request: The request sent.
    ///   - parameters: The parameters used.
    ///   - isFromCache: Whether it came from the cache.
    ///   - attempts: How many times the request was sent; 1 by default.
    @inline(__always)
    public init(
        requestID: RequestID, response: HTTPResponse, content: Content, request: HTTPRequest, parameters: Parameters, isFromCache: Bool,
        attempts: Int = 1
    ) {
        storage = ResponseStorage(
            requestID: requestID, statusCode: response.statusCode, headers: response.headers, data: response.body, request: request,
            parameters: parameters, isFromCache: isFromCache, metrics: response.metrics, attempts: attempts, content: content)
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
    let requestID: RequestID
    let statusCode: Int
    let headers: HTTPHeaders
    let data: Data
    let request: HTTPRequest
    let parameters: Parameters
    let isFromCache: Bool
    let metrics: TransferMetrics
    let attempts: Int
    let content: Content

    init(
        requestID: RequestID, statusCode: Int, headers: HTTPHeaders, data: Data, request: HTTPRequest, parameters: Parameters,
        isFromCache: Bool, metrics: TransferMetrics, attempts: Int, content: Content
    ) {
        self.requestID = requestID
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.request = request
        self.parameters = parameters
        self.isFromCache = isFromCache
        self.metrics = metrics
        self.attempts = attempts
        self.content = content
    }

    /// The same fields with other content.
    func replacing<Other: Sendable>(content: Other) -> ResponseStorage<Other> {
        ResponseStorage<Other>(
            requestID: requestID, statusCode: statusCode, headers: headers, data: data, request: request, parameters: parameters,
            isFromCache: isFromCache, metrics: metrics, attempts: attempts, content: content)
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
