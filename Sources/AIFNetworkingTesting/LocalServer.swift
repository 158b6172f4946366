#if TestServer
import AIFServices
import AIFTransport
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

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
    /// The address it listens on, `127.0.0.1` unless told otherwise (`localhost` for a server
    /// on a Unix-domain socket).
    public let host: String
    /// The port it listens on (0 for a server on a Unix-domain socket).
    public let port: Int
    /// The Unix-domain socket it listens on, or `nil` for TCP.
    public let unixSocketPath: String?
    private let running: Running

    private init(host: String, port: Int, unixSocketPath: String?, running: Running) {
        self.host = host
        self.port = port
        self.unixSocketPath = unixSocketPath
        self.running = running
    }

    /// The application's run: its service group and the task that runs it.
    private struct Running: Sendable {
        let group: ServiceGroup
        let task: Task<Void, any Error>

        /// Stops the application: a graceful shutdown first — the server stops accepting,
        /// serves every connection it accepted, and closes — then, if requests still run after
        /// `grace` (a stream that never ends, a route that answers late on purpose), a
        /// cancellation. Cancelling first would drop the connections SwiftNIO had accepted but
        /// the server had not yet taken up, and a connection dropped so traps in SwiftNIO
        /// ("Deinited NIOAsyncWriter without calling finish()", apple/swift-nio#2637).
        func stop(grace: Duration = .seconds(2)) async {
            await group.triggerGracefulShutdown()
            let ended = await withTaskGroup(of: Bool.self) { waits in
                waits.addTask { _ = await task.result; return true }
                waits.addTask {
                    try? await Task.sleep(for: grace)
                    return false
                }
                defer { waits.cancelAll() }
                return await waits.next() ?? false
            }
            if !ended { task.cancel() }
            _ = await task.result
        }
    }

    /// `http://host:port` (or `https` when `secure`), without a trailing slash; for a server on
    /// a Unix-domain socket, `http://localhost` (the host only names the server: requests
    /// reach it with `HTTPRequest.Connection.unixSocket(_:)`).
    ///
    /// - Parameter secure: Whether the server speaks TLS.
    /// - Returns: The base URL.
    public func baseURL(secure: Bool = false) -> URL {
        let scheme = secure ? "https" : "http"
        return URL(string: unixSocketPath == nil ? "\(scheme)://\(host):\(port)" : "\(scheme)://\(host)")!
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
        let (application, listening) = run(router: router, server: server, address: .hostname(host, port: port), backlog: backlog, logger: logger)
        for await port in listening where port > 0 {
            return LocalServer(host: host, port: port, unixSocketPath: nil, running: application)
        }
        await application.stop()
        throw LocalServerError.didNotStart(host: host)
    }

    /// Starts a server on a Unix-domain socket and returns once it is accepting connections.
    /// A file already at the path is replaced; the socket file is left when the server stops.
    ///
    /// - Parameters:
    ///   - router: The routes.
    ///   - server: The channel setup: HTTP/1.1 by default.
    ///   - unixSocketPath: Where the socket is made (at most 107 bytes).
    ///   - logger: The server's logger; quiet by default.
    /// - Returns: The running server.
    /// - Throws: When the server cannot bind.
    public static func start<Context: RequestContext>(
        router: Router<Context>,
        server: HTTPServerBuilder = .http1(),
        unixSocketPath: String,
        logger: Logger = Logger(label: "LocalServer", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> LocalServer where Context.Source == ApplicationRequestContextSource {
        try? FileManager.default.removeItem(atPath: unixSocketPath)
        let (application, listening) = run(router: router, server: server, address: .unixDomainSocket(path: unixSocketPath), backlog: 256, logger: logger)
        for await _ in listening {
            return LocalServer(host: "localhost", port: 0, unixSocketPath: unixSocketPath, running: application)
        }
        await application.stop()
        throw LocalServerError.didNotStart(host: unixSocketPath)
    }

    /// Runs the application; the stream yields the bound port (0 for a socket) once it listens,
    /// and ends without a value if it never does.
    private static func run<Context: RequestContext>(
        router: Router<Context>, server: HTTPServerBuilder, address: BindAddress, backlog: Int, logger: Logger
    ) -> (Running, AsyncStream<Int>) where Context.Source == ApplicationRequestContextSource {
        let (listening, sink) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: address, serverName: nil, backlog: backlog),
            onServerRunning: { channel in
                sink.yield(channel.localAddress?.port ?? 0)
                sink.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        let task = Task {
            defer { sink.finish() }
            try await group.run()
        }
        return (Running(group: group, task: task), listening)
    }

    /// Stops the server and waits until it has: it stops accepting, finishes the requests it
    /// is serving (for up to two seconds; then they are cut off) and closes.
    public func stop() async {
        await running.stop()
    }
}

/// Why a ``LocalServer`` could not start.
public enum LocalServerError: Error, CustomStringConvertible {
    /// The server exited before it listened on this address (a host, or a socket's path).
    case didNotStart(host: String)

    /// The reason in plain words.
    public var description: String {
        switch self {
        case .didNotStart(let address): "the local server on \(address) exited before it started listening"
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
