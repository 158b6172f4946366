import Foundation

/// A successful load: the decoded content with everything about how it was obtained.
public struct APIResponse<Content: Sendable>: Sendable {
    /// The load's ID.
    public let requestID: RequestID
    /// The HTTP status.
    public let statusCode: Int
    /// The response headers.
    public let headers: HTTPHeaders
    /// The body as received.
    public let data: Data
    /// The body decoded into the manager's content type.
    public let content: Content
    /// The request that was sent, signature included (see ``requestDescription`` for a form
    /// safe to show).
    public let request: HTTPRequest
    /// The parameters the load was made with, after reforming (before the service's common
    /// parameters and signing).
    public let parameters: Parameters
    /// Whether it was served from the cache (no request was sent for this load).
    public let isFromCache: Bool
    /// How the transfer went; for a cached response, the transfer that filled the cache.
    public let metrics: TransferMetrics

    /// Creates a response; managers do this, and tests of reformers.
    ///
    /// - Parameters:
    ///   - requestID: The load's ID.
    ///   - response: The HTTP response.
    ///   - content: The decoded content.
    ///   - request: The request sent.
    ///   - parameters: The parameters used.
    ///   - isFromCache: Whether it came from the cache.
    public init(requestID: RequestID, response: HTTPResponse, content: Content, request: HTTPRequest, parameters: Parameters, isFromCache: Bool) {
        self.requestID = requestID
        self.statusCode = response.statusCode
        self.headers = response.headers
        self.data = response.body
        self.content = content
        self.request = request
        self.parameters = parameters
        self.isFromCache = isFromCache
        self.metrics = response.metrics
    }

    /// The request as a `curl` command with credentials and signatures shown as `***`.
    public var requestDescription: String { request.curlCommand(revealingSecrets: false) }

    /// The same response with other content (what a reformer or a paging helper hands on).
    ///
    /// - Parameter transform: Makes the new content from the old.
    /// - Returns: The response carrying the new content.
    public func map<Other: Sendable>(_ transform: (Content) throws -> Other) rethrows -> APIResponse<Other> {
        APIResponse<Other>(copying: self, content: try transform(content))
    }

    private init<Other>(copying other: APIResponse<Other>, content: Content) {
        requestID = other.requestID
        statusCode = other.statusCode
        headers = other.headers
        data = other.data
        self.content = content
        request = other.request
        parameters = other.parameters
        isFromCache = other.isFromCache
        metrics = other.metrics
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
