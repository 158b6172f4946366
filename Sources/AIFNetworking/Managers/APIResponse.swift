import Foundation

/// A successful load: the decoded content with everything about how it was obtained.
public struct APIResponse<Content: Sendable>: Sendable {
    /// The load's ID.
    public var requestID: RequestID { details.requestID }
    /// The HTTP status.
    public var statusCode: Int { details.statusCode }
    /// The response headers.
    public var headers: HTTPHeaders { details.headers }
    /// The body as received.
    public var data: Data { details.data }
    /// The body decoded into the manager's content type.
    public let content: Content
    /// The request that was sent, signature included (see ``requestDescription`` for a form
    /// safe to show).
    public var request: HTTPRequest { details.request }
    /// The parameters the load was made with, after reforming (before the service's common
    /// parameters and signing).
    public var parameters: Parameters { details.parameters }
    /// Whether it was served from the cache (no request was sent for this load).
    public var isFromCache: Bool { details.isFromCache }
    /// How the transfer went; for a cached response, the transfer that filled the cache.
    public var metrics: TransferMetrics { details.metrics }

    /// Everything but the content, immutable and shared: a response is handed along the
    /// pipeline (result, cache, hooks, delegate) by copy, and one reference is cheaper to copy
    /// than a dozen fields.
    private let details: ResponseDetails

    /// Creates a response; managers do this, and tests of reformers.
    ///
    /// - Parameters:
    ///   - requestID: The load's ID.
    ///   - response: The HTTP response.
    ///   - content: The decoded content.
    ///   - request: The request sent.
    ///   - parameters: The parameters used.
    ///   - isFromCache: Whether it came from the cache.
    @inline(__always)
    public init(requestID: RequestID, response: HTTPResponse, content: Content, request: HTTPRequest, parameters: Parameters, isFromCache: Bool) {
        self.details = ResponseDetails(requestID: requestID, response: response, request: request, parameters: parameters, isFromCache: isFromCache)
        self.content = content
    }

    /// The request as a `curl` command with credentials and signatures shown as `***`.
    public var requestDescription: String { request.curlCommand(revealingSecrets: false) }

    /// The same response with other content (what a reformer or a paging helper hands on).
    ///
    /// - Parameter transform: Makes the new content from the old.
    /// - Returns: The response carrying the new content.
    public func map<Other: Sendable>(_ transform: (Content) throws -> Other) rethrows -> APIResponse<Other> {
        APIResponse<Other>(sharing: details, content: try transform(content))
    }

    private init(sharing details: ResponseDetails, content: Content) {
        self.details = details
        self.content = content
    }
}

/// The part of an ``APIResponse`` that does not depend on its content type (not generic, so
/// responses of every content type share it and its type metadata costs no lookup).
private final class ResponseDetails: Sendable {
    let requestID: RequestID
    let statusCode: Int
    let headers: HTTPHeaders
    let data: Data
    let request: HTTPRequest
    let parameters: Parameters
    let isFromCache: Bool
    let metrics: TransferMetrics

    init(requestID: RequestID, response: HTTPResponse, request: HTTPRequest, parameters: Parameters, isFromCache: Bool) {
        self.requestID = requestID
        self.statusCode = response.statusCode
        self.headers = response.headers
        self.data = response.body
        self.request = request
        self.parameters = parameters
        self.isFromCache = isFromCache
        self.metrics = response.metrics
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
