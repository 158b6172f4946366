#if OpenAPI
import AIFNetworking
import AIFTransport
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A swift-openapi-generator client's transport through a registered service: each operation
/// is a load of that service, as a manager's — its active environment's base URL and version,
/// common headers, signing, its ``/AIFServices/Authenticator``'s credential with single-flight
/// refresh, its retry policy and error policies, the proxy's observers and log, a load ID
/// to cancel it by — on the proxy's transport.
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(), transport: ServiceClientTransport(service: "shop"))
/// let goods = try await client.getGoods(path: .init(id: 42)).ok.body.json
/// ```
///
/// The environment decides where requests go: an operation's path (and query, as the client
/// wrote it) follows the environment's base URL and version, and the server URL given to the
/// client is not used. Any status the service does not retry is handed to the client as the
/// response, for it to decode (a documented `404`, say); a 2xx body streams as it arrives, with
/// the same back-pressure as ``CurlClientTransport``'s, and any other status's body comes whole.
/// A request body of known length up to 4 MiB that can be read again is collected, so that it
/// can be signed and retried; a longer one streams, and is sent once. Failures are
/// ``/AIFNetworking/APIError``s (the generated client wraps them in its `ClientError`).
public struct ServiceClientTransport: ClientTransport {
    /// An operation's own settings over the service's.
    public struct Operation: Sendable {
        /// Its timeouts, or `nil` for the service's.
        public var timeouts: AIFTransport.HTTPRequest.Timeouts?
        /// Its retry policy, or `nil` for the service's.
        public var retryPolicy: RetryPolicy?
        /// Whether its requests carry the service's credential.
        public var usesAuthenticator: Bool

        /// Creates an operation's settings.
        ///
        /// - Parameters:
        ///   - timeouts: Its timeouts; the service's by default.
        ///   - retryPolicy: Its retry policy; the service's by default.
        ///   - usesAuthenticator: Whether it carries the credential; yes by default.
        public init(timeouts: AIFTransport.HTTPRequest.Timeouts? = nil, retryPolicy: RetryPolicy? = nil, usesAuthenticator: Bool = true) {
            self.timeouts = timeouts
            self.retryPolicy = retryPolicy
            self.usesAuthenticator = usesAuthenticator
        }
    }

    /// The service the operations are loads of.
    public let service: ServiceName
    /// Where loads are started, observed and cancelled.
    public let proxy: APIProxy
    /// Where the service is registered.
    public let registry: ServiceRegistry
    /// Operations' own settings, by operation ID.
    public var operations: [String: Operation]
    /// How many bytes of a response body may wait for the reader before the transfer pauses.
    public var bufferLimit: Int

    /// Creates a transport through a registered service.
    ///
    /// - Parameters:
    ///   - service: The service's name.
    ///   - proxy: The proxy; the shared one by default.
    ///   - registry: The registry; the shared one by default.
    ///   - operations: Settings of particular operations, by operation ID.
    ///   - bufferLimit: How many response bytes may wait for the reader; 1 MiB by default.
    public init(
        service: ServiceName, proxy: APIProxy = .shared, registry: ServiceRegistry = .shared, operations: [String: Operation] = [:], bufferLimit: Int = 1 << 20
    ) {
        self.service = service
        self.proxy = proxy
        self.registry = registry
        self.operations = operations
        self.bufferLimit = max(1, bufferLimit)
    }

    /// Loads one operation of a generated client.
    ///
    /// - Parameters:
    ///   - request: The request: method, path and query, headers.
    ///   - body: Its body, if any.
    ///   - baseURL: The server URL (not used: the service's environment decides).
    ///   - operationID: The operation's ID, for its settings and in errors.
    /// - Returns: The response head, and its body to read as it arrives.
    /// - Throws: ``/AIFNetworking/APIError``.
    public func send(_ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let method = HTTPMethod(rawValue: request.method.rawValue)
        var path = Substring(request.path ?? "")
        while path.hasPrefix("/") { path = path.dropFirst() }
        let settings = operations[operationID] ?? Operation()
        let endpoint = Endpoint<NoContent>(
            service: service, path: String(path), method: method, timeouts: CurlClientTransport.callTimeouts ?? settings.timeouts,
            retryPolicy: settings.retryPolicy, usesAuthenticator: settings.usesAuthenticator)
        var arguments = CallArguments()
        arguments.headers = MessageConversion.headers(request.headerFields)
        arguments.rawBody = try await MessageConversion.requestBody(body)
        arguments.bufferLimit = bufferLimit
        let manager = APIManager(endpoint, proxy: proxy, registry: registry, cache: .shared)
        let shown = "service \(service), operation \(operationID)"
        let outcome: Result<AIFTransport.HTTPResponse.Streaming, APIError>
        do {
            outcome = .success(try await manager.stream(arguments))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let streamed):
            return (
                try MessageConversion.response(statusCode: streamed.statusCode, headers: streamed.headers, url: shown),
                MessageConversion.responseBody(streamed.body, headers: streamed.headers, method: method, statusCode: streamed.statusCode)
            )
        case .failure(let error):
            // A status the service's policies do not retry (or whose retries are spent), and a
            // credential still refused once renewed, are the answer, for the client to decode;
            // any other failure is the error.
            guard error.kind == .httpStatus || error.kind == .authenticationFailed, let response = error.response else { throw error }
            return (
                try MessageConversion.response(statusCode: response.statusCode, headers: response.headers, url: shown),
                MessageConversion.responseBody(response.body, method: method, statusCode: response.statusCode)
            )
        }
    }
}
#endif
