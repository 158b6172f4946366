import AIFNetworking
import AIFNetworkingDiskCache
import AIFNetworkingLifecycle
import AIFNetworkingTesting
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

// A Swift server that calls a backend through the SDK: a Hummingbird app whose route
// `GET /goods/{id}` loads the backend's article with an `Endpoint` (cached, on disk when given a
// folder), run in a swift-service-lifecycle `ServiceGroup` beside the proxy's lifecycle service.
// On SIGTERM or SIGINT the proxy shuts down first — new loads refused (answered 503), those under
// way given the deadline, the rest ended — then the server finishes its requests.
//
// Usage: ServerSample [--backend URL] [--port N] [--cache DIRECTORY | --no-cache] [--deadline SECONDS]
//
// With --backend it serves until it is stopped, then prints how its loads ended and the sockets
// it opened and left open (none, when its shutdown closed everything). Without, it starts a small backend of its own, sends a few
// requests through itself, shuts down as on SIGTERM and prints the same (what `make demo` runs).

struct Options {
    var backend: URL?
    var port = 0
    var cache: URL?
    /// Whether articles are kept a minute; with `--no-cache` every request goes on to the
    /// backend (what `make bench` measures: the calls, not the cache).
    var caches = true
    var deadline = Duration.seconds(10)

    init(_ arguments: [String]) {
        var rest = arguments[...]
        func value(_ name: String) -> String {
            guard let value = rest.popFirst() else { Self.fail("\(name) needs a value") }
            return value
        }
        while let name = rest.popFirst() {
            switch name {
            case "--backend":
                guard let url = URL(string: value(name)), url.scheme != nil else { Self.fail("--backend needs a URL") }
                backend = url
            case "--port":
                guard let port = Int(value(name)) else { Self.fail("--port needs a number") }
                self.port = port
            case "--cache":
                cache = URL(filePath: value(name))
            case "--no-cache":
                caches = false
            case "--deadline":
                guard let seconds = Double(value(name)), seconds >= 0 else { Self.fail("--deadline needs a number of seconds") }
                deadline = .milliseconds(Int64(seconds * 1000))
            default:
                Self.fail("unknown argument \(name)")
            }
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("ServerSample: \(message)\nusage: ServerSample [--backend URL] [--port N] [--cache DIRECTORY | --no-cache] [--deadline SECONDS]\n".utf8))
        exit(64)
    }
}

/// Written straight to the descriptor: a print would wait in a buffer when the output is a pipe.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The sockets the process has open (Linux), by inode: each as its kind and, for TCP, its two
/// ends (`tcp 127.0.0.1:8080 127.0.0.1:52044`).
func openSockets() -> [String: String] {
    let files = FileManager.default
    let inodes = ((try? files.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { descriptor -> String? in
        guard let target = try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"), target.hasPrefix("socket:[") else { return nil }
        return String(target.dropFirst("socket:[".count).dropLast())
    }
    // /proc/net/tcp: "sl local rem st … inode …", addresses in hexadecimal, little-endian IPv4.
    func address(_ hex: Substring) -> String {
        let parts = hex.split(separator: ":")
        guard parts.count == 2, let ip = UInt32(parts[0], radix: 16), let port = UInt16(parts[1], radix: 16) else { return String(hex) }
        return "\(ip & 0xff).\(ip >> 8 & 0xff).\(ip >> 16 & 0xff).\(ip >> 24):\(port)"
    }
    var tcp: [String: String] = [:]
    for table in ["tcp", "tcp6"] {
        let lines = ((try? String(contentsOfFile: "/proc/self/net/\(table)", encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
        for line in lines {
            let fields = line.split(separator: " ")
            if fields.count > 9 { tcp[String(fields[9])] = "tcp \(address(fields[1])) \(address(fields[2]))" }
        }
    }
    // /proc/net/unix: "Num RefCount Protocol Flags Type St Inode [Path]".
    var unix: [String: String] = [:]
    for line in ((try? String(contentsOfFile: "/proc/self/net/unix", encoding: .utf8)) ?? "").split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        if fields.count > 6 { unix[String(fields[6])] = "unix \(fields.count > 7 ? String(fields[7]) : "(unnamed)")" }
    }
    return Dictionary(inodes.map { ($0, tcp[$0] ?? unix[$0] ?? "socket \($0)") }, uniquingKeysWith: { first, _ in first })
}

/// The backend of the demo run: three articles, the third slow to come.
func startDemoBackend() async throws -> LocalServer {
    let router = Router()
    router.get("v1/goods/:id") { _, context -> Response in
        let id = try context.parameters.require("id", as: Int.self)
        guard (1...3).contains(id) else { return Response(status: .notFound) }
        if id == 3 { try await Task.sleep(for: .seconds(5)) }
        let body = #"{"id":\#(id),"title":"Article \#(id)","price_cents":\#(id * 250)}"#
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
    return try await LocalServer.start(router: router)
}

// What the process was started with (a parent's sockets it inherited): not the server's to close.
let inherited = openSockets()
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .notice
    return handler
}
let logger = Logger(label: "ServerSample")
var options = Options(Array(CommandLine.arguments.dropFirst()))
let demoBackend = options.backend == nil ? try await startDemoBackend() : nil
if options.backend == nil { options.deadline = .seconds(1) }
let backend = options.backend ?? demoBackend!.baseURL()

if let folder = options.cache {
    ResponseCache.shared.persistentStore = try DiskCache(directory: folder)
}
// A transport of the server's own, which the proxy's shutdown stops (its connections closed),
// with room for as many requests to the backend at once as a busy server makes.
let transport = CurlTransport(configuration: CurlTransport.Configuration(connectionPool: .init(maxConnectionsPerHost: 64)))
let proxy = APIProxy(transport: transport, logger: logger)
let registry = ServiceRegistry()
registry.register(CatalogueBackend(baseURL: backend))
var goodsDetail = Endpoint.goodsDetail
if !options.caches { goodsDetail.cachePolicy = nil }
let routes = CatalogueRoutes(proxy: proxy, registry: registry, goodsDetail: goodsDetail)
let router = Router()
routes.add(to: router)

let (listening, announce) = AsyncStream<Int>.makeStream()
let application = Application(
    router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: options.port), serverName: nil),
    onServerRunning: { channel in
        announce.yield(channel.localAddress?.port ?? 0)
        announce.finish()
    }, logger: logger)
// The proxy after the server: on the signal it shuts down first, then the server.
let group = ServiceGroup(
    services: [application, APIProxyService(proxy: proxy, shutdownDeadline: options.deadline)],
    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
let running = Task { try await group.run() }
guard let port = await listening.first(where: { _ in true }) else {
    try await running.value
    Options.fail("the server did not start")
}
say("listening on http://127.0.0.1:\(port) (backend \(backend.absoluteString))")

if demoBackend != nil {
    // Two quick articles, a missing one, then the slow one — still loading when the shutdown
    // begins — and one asked for after it.
    let client = CurlTransport()
    func get(_ id: Int) async -> String {
        guard let response = try? await client.send(AIFNetworking.HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/goods/\(id)")!)) else { return "no answer" }
        return "\(response.statusCode) \(String(decoding: response.body, as: UTF8.self))"
    }
    for id in [1, 2, 4] { say("GET /goods/\(id): \(await get(id))") }
    async let slow = get(3)
    try await Task.sleep(for: .milliseconds(200))
    say("shutting down gracefully (deadline 1 s), as on SIGTERM")
    await group.triggerGracefulShutdown()
    try await Task.sleep(for: .milliseconds(200))
    say("GET /goods/1, asked for during the shutdown: \(await get(1))")
    say("GET /goods/3, under way as the shutdown began: \(await slow)")
    client.shutdown()
}
try await running.value
await demoBackend?.stop()
let left = openSockets().filter { inherited[$0.key] == nil }.values.sorted()
say("stopped: loads \(routes.outcomes.summary); sockets left open \(left.count)\(left.isEmpty ? "" : ": " + left.joined(separator: ", "))")
