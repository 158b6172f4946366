#if TestServer
import AIFNetworking
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// A real HTTP server (Hummingbird) running in the test's own process, on a loopback address
/// and a port the system picks (or a given one) — what the library's own tests, its demo shop
/// and its samples run against. Comes with the package trait `TestServer`.
///
/// ```swift
/// let router = Router()
/// router.get("v1/goods/:id") { _, context in "{\"id\": \(context.parameters.get("id") ?? "")}" }
/// let server = try await LocalServer.start(router: router)
/// defer { Task { await server.stop() } }
/// // baseURL for the service's environment: server.baseURL()
/// ```
public final class LocalServer: Sendable {
    /// The address it listens on, `127.0.0.1` unless told otherwise.
    public let host: String
    /// The port it listens on.
    public let port: Int
    private let task: Task<Void, any Error>

    private init(host: String, port: Int, task: Task<Void, any Error>) {
        self.host = host
        self.port = port
        self.task = task
    }

    /// `http://host:port` (or `https` when `secure`), without a trailing slash.
    ///
    /// - Parameter secure: Whether the server speaks TLS.
    /// - Returns: The base URL.
    public func baseURL(secure: Bool = false) -> URL {
        URL(string: "\(secure ? "https" : "http")://\(host):\(port)")!
    }

    /// Starts a server and returns once it is accepting connections.
    ///
    /// - Parameters:
    ///   - router: The routes.
    ///   - server: The channel setup: HTTP/1.1 by default; TLS or HTTP/2 with the Hummingbird
    ///     TLS and HTTP2 modules.
    ///   - host: The loopback address to bind.
    ///   - port: The port; 0 (the default) for one the system picks.
    ///   - backlog: How many connections may wait to be accepted; 256 by default.
    ///   - logger: The server's logger; quiet by default.
    /// - Returns: The running server.
    /// - Throws: When the server cannot bind.
    public static func start<Context: RequestContext>(
        router: Router<Context>,
        server: HTTPServerBuilder = .http1(),
        host: String = "127.0.0.1",
        port: Int = 0,
        backlog: Int = 256,
        logger: Logger = Logger(label: "LocalServer", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> LocalServer where Context.Source == ApplicationRequestContextSource {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil, backlog: backlog),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: logger
        )
        let task = Task {
            defer { portSink.finish() }
            try await application.run()
        }
        for await port in ports where port > 0 {
            return LocalServer(host: host, port: port, task: task)
        }
        task.cancel()
        _ = await task.result
        throw LocalServerError.didNotStart(host: host)
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// Why a ``LocalServer`` could not start.
public enum LocalServerError: Error, CustomStringConvertible {
    /// The server exited before it listened.
    case didNotStart(host: String)

    /// The reason in plain words.
    public var description: String {
        switch self {
        case .didNotStart(let host): "the local server on \(host) exited before it started listening"
        }
    }
}

extension ReceivedRequest {
    /// A request as the local server received it, to check its signature with a
    /// ``SignatureVerifier`` in a route or a middleware.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: Its body, collected (`try await request.body.collect(upTo:)`).
    public init(_ request: Request, body: ByteBuffer) {
        var headers = HTTPHeaders()
        for field in request.headers { headers.add(name: field.name.rawName, value: field.value) }
        self.init(
            method: request.method.rawValue, authority: request.head.authority, path: request.uri.path, query: request.uri.query ?? "",
            headers: headers, body: Array(buffer: body))
    }
}
#endif
