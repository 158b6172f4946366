// The product's dependency, swift-openapi-runtime, comes only with the package's `OpenAPI`
// trait, so that packages using the core library alone never resolve it:
//     .package(url: "…/AIFNetworking.git", from: "…", traits: ["OpenAPI"])
#if OpenAPI
import AIFNetworking
import AIFTransport
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A swift-openapi-generator client's transport on libcurl: a ``/AIFTransport/CurlTransport``
/// underneath, with its HTTP/2, its connection limits and settings (client certificates, Unix
/// sockets, host overrides) and its timeouts.
///
/// ```swift
/// let client = Client(serverURL: URL(string: "https://api.shop.example/v1")!, transport: CurlClientTransport())
/// let goods = try await client.getGoods(path: .init(id: 42)).ok.body.json
/// ```
///
/// Bodies stream both ways. A request body of known length up to 4 MiB that can be read again
/// is collected first (so a 307 or 308 can send it again); any other is streamed as it is read,
/// with its `Content-Length` when known. The response returns when its body begins, and the
/// body arrives as the client reads it: a reader that falls behind pauses the transfer once
/// `bufferLimit` bytes wait, so a download of any size takes constant memory. Cancelling the
/// calling task, or the task reading the body, or letting go of the body unread, cancels the
/// transfer.
///
/// Timeouts are the transport's (``/AIFTransport/CurlTransport/Configuration/timeouts``), an
/// operation's own (``init(_:timeouts:operationTimeouts:bufferLimit:)``), or one call's
/// (``withTimeouts(_:operation:)``); the total timeout covers the whole body. Errors are
/// ``/AIFTransport/TransportError``s, which the generated client wraps in its `ClientError`.
public struct CurlClientTransport: ClientTransport {
    /// The transport requests go through: a ``/AIFTransport/CurlTransport`` (or, in tests, any
    /// other, such as a stub).
    public let transport: any HTTPTransport
    /// Timeouts for every operation without its own; `nil` for the transport's.
    public var timeouts: AIFTransport.HTTPRequest.Timeouts?
    /// Timeouts by operation ID (the document's `operationId`).
    public var operationTimeouts: [String: AIFTransport.HTTPRequest.Timeouts]
    /// How many bytes of a response body may wait for the reader before the transfer pauses.
    public var bufferLimit: Int

    /// One call's timeouts, set by ``withTimeouts(_:operation:)``.
    @TaskLocal static var callTimeouts: AIFTransport.HTTPRequest.Timeouts?

    /// Creates a transport for a generated client.
    ///
    /// - Parameters:
    ///   - transport: The transport underneath; the shared one by default.
    ///   - timeouts: Timeouts for every operation; the transport's by default.
    ///   - operationTimeouts: Timeouts of particular operations, by operation ID.
    ///   - bufferLimit: How many response bytes may wait for the reader; 1 MiB by default.
    public init(
        _ transport: any HTTPTransport = CurlTransport.shared, timeouts: AIFTransport.HTTPRequest.Timeouts? = nil, operationTimeouts: [String: AIFTransport.HTTPRequest.Timeouts] = [:],
        bufferLimit: Int = 1 << 20
    ) {
        self.transport = transport
        self.timeouts = timeouts
        self.operationTimeouts = operationTimeouts
        self.bufferLimit = max(1, bufferLimit)
    }

    /// Runs `operation` (calls of a generated client) with these timeouts for each request it
    /// sends through a ``CurlClientTransport``, over the operation's and the transport's.
    ///
    /// ```swift
    /// let report = try await CurlClientTransport.withTimeouts(AIFTransport.HTTPRequest.Timeouts(total: .seconds(120))) {
    ///     try await client.exportReport()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - timeouts: The timeouts.
    ///   - operation: The calls.
    /// - Returns: What `operation` returns.
    public static func withTimeouts<Result>(_ timeouts: AIFTransport.HTTPRequest.Timeouts, operation: () async throws -> Result) async rethrows -> Result {
        try await $callTimeouts.withValue(timeouts, operation: operation)
    }

    /// Sends one request of a generated client.
    ///
    /// - Parameters:
    ///   - request: The request: method, path and query, headers.
    ///   - body: Its body, if any.
    ///   - baseURL: The server URL.
    ///   - operationID: The operation's ID, to find its timeouts.
    /// - Returns: The response head, and its body to read as it arrives.
    /// - Throws: ``/AIFTransport/TransportError``.
    public func send(_ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let method = HTTPMethod(rawValue: request.method.rawValue)
        var outgoing = AIFTransport.HTTPRequest(method: method, url: try MessageConversion.url(of: request, baseURL: baseURL), headers: MessageConversion.headers(request.headerFields))
        outgoing.body = try await MessageConversion.requestBody(body)
        outgoing.timeouts = Self.callTimeouts ?? operationTimeouts[operationID] ?? timeouts
        let response = try await transport.stream(outgoing, bufferLimit: bufferLimit)
        let url = outgoing.location.text
        return (
            try MessageConversion.response(statusCode: response.statusCode, headers: response.headers, url: url),
            MessageConversion.responseBody(response.body, headers: response.headers, method: method, statusCode: response.statusCode)
        )
    }
}
#endif
